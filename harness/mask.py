"""The mask list of a masked-receipt roster: what the frozen benchmark copy must not contain.

A receipt question is the subject of a commit; its gold is the session that made the commit. In a raw
history that subject sits verbatim in the ``git commit`` call and its output, so plain BM25 finds the
session almost every time. A **masked** receipt benchmark runs on a frozen copy of the corpus
(`harness.mask_corpus`) in which, for every question, the commit's ``git commit`` calls and their
results are removed and every verbatim occurrence of its subject line and its hash is replaced: the arm
has to find the session from the work itself (edits, discussion, errors).

The mask list says exactly that, per question: the hashes (full and as printed), the subject lines as
git printed them, and per session the ids of the ``git commit`` tool calls to remove -- the call that
printed the hash and every other ``git commit`` call whose ``-m`` message is the same subject (a hook
refused it first). It is written beside the draft roster (``rosters/NAME.mask.json``), sorted and
deterministic, and carries a sha256 over its body; the corpus manifest records that sha256
(`harness.freeze.manifest`). The user's live memory is never masked: only the copy is.

The mask file quotes commit subjects as git printed them (before redaction): keep it with the private
draft, not in a public repository.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.mine import MIN_SUBJECT, MinedRoster, Receipt, write_json

__all__ = ["MASK_FILE", "MASK_VERSION", "Mask", "MaskEntry", "MaskError", "build_mask", "mask_path"]

MASK_VERSION = 1
MASK_FILE = "MASK.json"  # the copy of the mask inside a masked corpus folder


class MaskError(ValueError):
    """A mask list cannot be built, read or trusted."""


@dataclass(frozen=True, kw_only=True)
class MaskEntry:
    """What is removed for one question."""

    qid: str
    hashes: tuple[str, ...]  # full hashes and the hashes as printed, sorted
    subjects: tuple[str, ...]  # subject lines as printed, sorted
    calls: Mapping[str, tuple[str, ...]]  # session id -> git commit tool_use ids, sorted

    def __post_init__(self) -> None:
        object.__setattr__(self, "calls", MappingProxyType(dict(sorted(self.calls.items()))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "qid": self.qid,
            "hashes": list(self.hashes),
            "subjects": list(self.subjects),
            "calls": {sid: list(ids) for sid, ids in self.calls.items()},
        }


@dataclass(frozen=True, kw_only=True)
class Mask:
    """The mask list of one roster, sorted by qid."""

    name: str
    entries: tuple[MaskEntry, ...]

    def body(self) -> dict[str, Any]:
        """Everything the sha256 covers."""
        return {
            "name": self.name,
            "version": MASK_VERSION,
            "entries": [e.to_dict() for e in self.entries],
        }

    @property
    def sha256(self) -> str:
        return digest(self.body())

    def to_json(self) -> dict[str, Any]:
        return {**self.body(), "sha256": self.sha256}

    def hashes(self) -> set[str]:
        return {h for e in self.entries for h in e.hashes}

    def subjects(self) -> set[str]:
        return {s for e in self.entries for s in e.subjects}

    def call_ids(self) -> set[str]:
        return {i for e in self.entries for ids in e.calls.values() for i in ids}

    def write(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, self.to_json())
        return path

    @classmethod
    def load(cls, path: Path) -> Mask:
        """Read a mask file and check its sha256.

        Raises:
            MaskError: the file is missing, not a mask, or its body does not match its sha256.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            mask = cls(
                name=str(data["name"]),
                entries=tuple(
                    MaskEntry(
                        qid=str(e["qid"]),
                        hashes=tuple(str(h) for h in e["hashes"]),
                        subjects=tuple(str(s) for s in e["subjects"]),
                        calls={str(k): tuple(str(i) for i in v) for k, v in e["calls"].items()},
                    )
                    for e in data["entries"]
                ),
            )
            recorded, version = data["sha256"], data["version"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            msg = (
                f"{path} is not a readable mask list ({type(exc).__name__}: {exc}); write it with "
                "`recallbench roster mine --kind masked-receipts ... --out rosters/NAME.json`"
            )
            raise MaskError(msg) from exc
        if version != MASK_VERSION or recorded != mask.sha256:
            msg = (
                f"{path}: its body does not match its sha256 {recorded} (version {version}); the "
                "mask was edited by hand or is damaged -- mine it again rather than edit it"
            )
            raise MaskError(msg)
        return mask


def digest(body: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a mask body."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def mask_path(roster_path: Path) -> Path:
    """Where the mask list of a draft roster goes: ``<stem>.mask.json`` beside it."""
    return Path(roster_path).with_name(f"{Path(roster_path).stem}.mask.json")


def build_mask(mined: MinedRoster, *, min_subject: int = MIN_SUBJECT) -> Mask:
    """The mask list of every question of `mined` (see the module docstring).

    Raises:
        MaskError: a question has nothing to mask (no subject line) -- it could not be masked.
    """
    entries = [_entry(r, mined, min_subject) for r in mined.receipts]
    return Mask(name=mined.name, entries=tuple(sorted(entries, key=lambda e: e.qid)))


def _entry(receipt: Receipt, mined: MinedRoster, min_subject: int) -> MaskEntry:
    hashes: set[str] = set()
    subjects: set[str] = set()
    calls: dict[str, set[str]] = {}
    for c in receipt.commits:
        hashes.add(c.short)
        if c.full is not None:
            hashes.add(c.full)
        # A subject too short to be a question ("wip") is not masked corpus-wide.
        if c.printed and c.subject and (len(c.subject) >= min_subject or c.subject == receipt.text):
            subjects.add(c.printed.strip())
        calls.setdefault(c.session_id, set()).add(c.call_id)
    wanted = {_fold(s) for s in subjects}
    for sid, attempts in mined.attempts.items():
        for attempt in attempts:
            if attempt.message is not None and _fold(attempt.message) in wanted:
                calls.setdefault(sid, set()).add(attempt.call_id)
    if not subjects:
        msg = f"question {receipt.qid} has no subject line to mask; drop it from the draft"
        raise MaskError(msg)
    return MaskEntry(
        qid=receipt.qid,
        hashes=tuple(sorted(hashes)),
        subjects=tuple(sorted(subjects)),
        calls={sid: tuple(sorted(ids)) for sid, ids in calls.items()},
    )


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()

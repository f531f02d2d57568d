"""Sealed rosters: ``questions.json`` + ``key.json`` committed to by a ``SEAL.sha256`` file.

``SEAL.sha256`` is written in ``sha256sum`` format with paths relative to the sealed folder, so
``cd sealed/<name> && sha256sum -c SEAL.sha256`` verifies a roster without this project's code.
The *roster seal* a protocol records is the sha256 of the ``SEAL.sha256`` bytes: one hash that
commits to the raw bytes of both files.

A private roster may keep ``key.json`` out of the repository; the seal still commits to it, and
`verify_sealed` checks a key file kept elsewhere against the seal before anything is scored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.hashing import sha256_file
from harness.roster import (
    Draft,
    RosterError,
    SealedKey,
    gold_to_json,
    load_draft,
    load_questions,
    parse_key_file,
    question_to_json,
)

__all__ = [
    "KEY_FILE",
    "QUESTIONS_FILE",
    "SEAL_FILE",
    "SealError",
    "SealInfo",
    "canonical_json_bytes",
    "load_sealed_key",
    "seal_draft",
    "seal_roster",
    "sha256_file",
    "verify_sealed",
]

QUESTIONS_FILE = "questions.json"
KEY_FILE = "key.json"
SEAL_FILE = "SEAL.sha256"
_SEALED_FILES = (QUESTIONS_FILE, KEY_FILE)


class SealError(Exception):
    """A sealed roster is missing, altered, or would be overwritten."""


@dataclass(frozen=True, kw_only=True)
class SealInfo:
    """The hashes that identify one sealed roster."""

    directory: Path
    seal: str  # sha256 of the SEAL.sha256 bytes: what protocols record
    questions_sha256: str
    key_sha256: str
    key_path: Path

    def __post_init__(self) -> None:
        for name in ("seal", "questions_sha256", "key_sha256"):
            value = getattr(self, name)
            if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
                msg = f"SealInfo.{name} must be 64 lowercase hex digits, got {value!r}"
                raise SealError(msg)

    @property
    def name(self) -> str:
        """The sealed folder's name (the roster's name when sealed by `seal_roster`)."""
        return self.directory.name

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form for results and locks."""
        return {
            "directory": str(self.directory),
            "seal": self.seal,
            "questions_sha256": self.questions_sha256,
            "key_sha256": self.key_sha256,
            "key_path": str(self.key_path),
        }


def canonical_json_bytes(obj: Any) -> bytes:
    """Sorted keys, indent 2, UTF-8, trailing newline: the same data always gives the same bytes."""
    return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def seal_roster(
    draft_path: Path | str, out_dir: Path | str, *, key_path: Path | str | None = None
) -> SealInfo:
    """Seal a draft roster into `out_dir` (``questions.json``, ``key.json``, ``SEAL.sha256``).

    Args:
        draft_path: the draft roster JSON (questions with their gold).
        out_dir: the sealed folder to create, conventionally ``sealed/<name>``.
        key_path: write the key here instead of ``out_dir/key.json`` (a private key kept outside
            the repository); the seal still lists it as ``key.json``.

    Raises:
        RosterError: the draft is invalid.
        SealError: `out_dir` (or `key_path`) already holds files; sealed folders are append-only.
    """
    return seal_draft(load_draft(draft_path), out_dir, key_path=key_path)


def with_qid_prefix(draft: Draft, prefix: str) -> Draft:
    """The draft with every qid (and every control reference) prefixed by `prefix`.

    For training rosters made by the same generator as a test roster (another seed, the same qid
    scheme): a fit refuses training questions that share a qid with a test question.
    """
    if not prefix:
        return draft
    return Draft(
        name=draft.name,
        unit=draft.unit,
        description=draft.description,
        questions=tuple(dataclasses.replace(q, qid=prefix + q.qid) for q in draft.questions),
        key={
            prefix + qid: dataclasses.replace(
                g, control=prefix + g.control if g.control is not None else None
            )
            for qid, g in draft.key.items()
        },
    )


def seal_draft(
    draft: Draft, out_dir: Path | str, *, key_path: Path | str | None = None
) -> SealInfo:
    """Seal an already-loaded `Draft` (see `seal_roster`)."""
    out = Path(out_dir)
    key_file = Path(key_path) if key_path is not None else out / KEY_FILE
    _refuse_overwrite(out, key_file)
    questions_bytes = canonical_json_bytes(
        {"name": draft.name, "questions": [question_to_json(q) for q in draft.questions]}
    )
    key_bytes = canonical_json_bytes(
        {"unit": draft.unit, "key": {qid: gold_to_json(g) for qid, g in draft.key.items()}}
    )
    questions_sha = hashlib.sha256(questions_bytes).hexdigest()
    key_sha = hashlib.sha256(key_bytes).hexdigest()
    # Two spaces between hash and name: sha256sum's text-mode format, which `sha256sum -c` reads.
    seal_bytes = f"{questions_sha}  {QUESTIONS_FILE}\n{key_sha}  {KEY_FILE}\n".encode("ascii")

    out.mkdir(parents=True, exist_ok=True)
    key_file.parent.mkdir(parents=True, exist_ok=True)
    _write_new(out / QUESTIONS_FILE, questions_bytes)
    _write_new(key_file, key_bytes)
    # The seal file goes last so a half-written folder never looks sealed.
    _write_new(out / SEAL_FILE, seal_bytes)
    return SealInfo(
        directory=out,
        seal=hashlib.sha256(seal_bytes).hexdigest(),
        questions_sha256=questions_sha,
        key_sha256=key_sha,
        key_path=key_file,
    )


def verify_sealed(directory: Path | str, key_path: Path | str | None = None) -> SealInfo:
    """Check a sealed folder's files against its ``SEAL.sha256``.

    Args:
        directory: the sealed folder.
        key_path: a key file kept elsewhere (e.g. outside the repository) to check in place of
            ``directory/key.json``.

    Raises:
        SealError: a file is missing or its sha256 differs; the message names the file and both
            hashes (``Expected sha256 of key.json to be … but got …``).
    """
    directory = Path(directory)
    seal_path = directory / SEAL_FILE
    if not seal_path.is_file():
        msg = (
            f"Missing {SEAL_FILE} in {directory}: this folder is not a sealed roster; "
            "seal the draft with `recallbench roster seal`"
        )
        raise SealError(msg)
    seal_bytes = seal_path.read_bytes()
    expected = _parse_seal(seal_bytes, seal_path)
    key_file = Path(key_path) if key_path is not None else directory / KEY_FILE
    paths = {QUESTIONS_FILE: directory / QUESTIONS_FILE, KEY_FILE: key_file}
    actual: dict[str, str] = {}
    for name, path in paths.items():
        if not path.is_file():
            hint = (
                "pass the private key's location (key_path / --key)"
                if name == KEY_FILE and key_path is None
                else "restore it from the sealed copy"
            )
            msg = f"Missing {name} for sealed roster {directory}: {path} does not exist; {hint}"
            raise SealError(msg)
        actual[name] = sha256_file(path)
        if actual[name] != expected[name]:
            label = name if path == directory / name else f"{name} ({path})"
            msg = (
                f"Expected sha256 of {label} to be {expected[name]} but got {actual[name]} "
                f"(sealed in {seal_path}); the file changed after sealing: restore it, or seal "
                "a new roster under a new name"
            )
            raise SealError(msg)
    return SealInfo(
        directory=directory,
        seal=hashlib.sha256(seal_bytes).hexdigest(),
        questions_sha256=actual[QUESTIONS_FILE],
        key_sha256=actual[KEY_FILE],
        key_path=key_file,
    )


def load_sealed_key(path: Path | str, *, sealed_dir: Path | str | None = None) -> SealedKey:
    """Check a key against its roster's seal, then parse it.

    Args:
        path: the key file, or a sealed folder holding ``key.json``.
        sealed_dir: the sealed folder whose ``SEAL.sha256`` commits to the key; defaults to the
            folder holding the key. Pass it when the key is kept outside the repository.

    Raises:
        SealError: the key, the questions or the seal file do not match.
        RosterError: the key file is malformed or disagrees with the sealed questions.
    """
    path = Path(path)
    if path.is_dir():
        sealed = Path(sealed_dir) if sealed_dir is not None else path
        key_path = path / KEY_FILE
    else:
        sealed = Path(sealed_dir) if sealed_dir is not None else path.parent
        key_path = path
    verify_sealed(sealed, key_path=key_path)
    key = parse_key_file(key_path)
    qids = [q.qid for q in load_questions(sealed)]
    if sorted(qids) != sorted(key.gold):
        missing = sorted(set(qids) - set(key.gold))
        extra = sorted(set(key.gold) - set(qids))
        msg = (
            f"{key_path}: key and sealed questions disagree (questions without gold: {missing}, "
            f"gold without question: {extra}); reseal the roster from its draft"
        )
        raise RosterError(msg)
    return key


def _parse_seal(data: bytes, seal_path: Path) -> dict[str, str]:
    """Read ``<hex>  <name>`` lines; both sealed files must be listed exactly once."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as err:
        msg = f"{seal_path} is not an ASCII sha256sum file; restore it or reseal under a new name"
        raise SealError(msg) from err
    entries: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep:
            # sha256sum's binary mode writes " *name"; accept it since `sha256sum -c` does.
            digest, sep, name = line.partition(" *")
        valid_hex = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        if not sep or not valid_hex or name not in _SEALED_FILES or name in entries:
            msg = (
                f"{seal_path} line {lineno} is not '<sha256>  questions.json' or "
                f"'<sha256>  key.json' (or repeats one): {line!r}; restore the seal file"
            )
            raise SealError(msg)
        entries[name] = digest
    missing = [name for name in _SEALED_FILES if name not in entries]
    if missing:
        msg = (
            f"{seal_path} does not list {missing}; restore the seal file or reseal under a new name"
        )
        raise SealError(msg)
    return entries


def _refuse_overwrite(out: Path, key_file: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        msg = (
            f"Refusing to seal into {out}: it already exists and is not empty. Sealed rosters are "
            "append-only; seal under a new name (e.g. sealed/<name>-v2)"
        )
        raise SealError(msg)
    if key_file.exists():
        msg = f"Refusing to overwrite existing key file {key_file}; choose a new key path"
        raise SealError(msg)


def _write_new(path: Path, data: bytes) -> None:
    """Write bytes to a file that must not exist yet (exclusive create), flushed to disk."""
    with path.open("xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())

"""Corpus freeze: a manifest of the raw transcript bytes and the contamination scan.

The manifest commits to exactly the bytes a benchmark read (sorted relative paths, sizes, per-file
sha256, the parser and sanitizer versions, and one sha256 over all of it). Each version is the one
these bytes are read under (`engine.sanitize.VersionScan`, `engine.parser_versions.ParserScan`): a rule
or parser change added later counts only for a corpus that holds the lines it acts on, so a corpus it
cannot change keeps its sha256. A masked copy built by
`harness.mask_corpus` holds its mask list as ``MASK.json``; the manifest then hashes the mask's sha256
too (a folder without one hashes exactly what it always did); likewise a corpus's ``settles.json``
(`harness.settles`: what a person settled, applied after import). The scan reports what would
make a benchmark dishonest — this project's own self-transcripts and scaffolding, sealed questions found
verbatim in the corpus, sessions after the cutoff — with the session ids it flags, so that a protocol's
pre-declared exclusions can be applied mechanically.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.model import Author
from engine.parser_versions import BASE_PARSER_VERSION, VERSION_CHANGES, ParserScan
from engine.sanitize import BASE_SANITIZE_VERSION, VersionScan, sanitize
from engine.transcripts import StreamState, TranscriptFile, discover, parse_file
from harness.mask import MASK_FILE, Mask, MaskError
from harness.settles import SETTLES_FILE

# Counted scrubs that are this project's own scaffolding (a sanitizer that silently stops firing
# shows up as a drop in these counts).
SCAFFOLDING_KINDS = ("injected_context", "own_mcp_call", "own_mcp_result")
FLAGS = ("self_transcript", "after_cutoff", "roster_leak")
_SPACE = re.compile(r"\s+")


class FreezeError(RuntimeError):
    """The corpus cannot be frozen (missing, empty or unreadable)."""


@dataclass(frozen=True, kw_only=True)
class ManifestEntry:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """What a corpus is, byte for byte."""

    entries: tuple[ManifestEntry, ...]
    parser_version: str
    sanitize_version: str
    sha256: str
    mask_sha256: str | None = None  # the mask list a masked copy was built with (MASK.json)
    settles_sha256: str | None = None  # the settles applied after import (settles.json), if any

    def sha256_under(self, parser_version: str, sanitize_version: str) -> str:
        """The manifest's sha256 had the same bytes been read under these versions: the hash of the
        canonical body (files, versions, and the mask's and the settles' hashes when there are any)."""
        body: dict[str, Any] = {
            "parser_version": parser_version,
            "sanitize_version": sanitize_version,
            "files": [[e.path, e.size, e.sha256] for e in self.entries],
        }
        if self.mask_sha256 is not None:
            body["mask_sha256"] = self.mask_sha256
        if self.settles_sha256 is not None:
            body["settles_sha256"] = self.settles_sha256
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(canonical).hexdigest()

    def read_before(self, locked_sha256: str) -> str | None:
        """Why a lock's manifest differs when only the versions do: the same bytes, read under an
        older parser or sanitizer, hash to `locked_sha256`. None when no older pair of versions
        gives it (the bytes, the mask or the settles changed)."""
        for parser in _older(self.parser_version, BASE_PARSER_VERSION):
            for sanitizer in _older(self.sanitize_version, BASE_SANITIZE_VERSION):
                if (parser, sanitizer) == (self.parser_version, self.sanitize_version):
                    continue
                if self.sha256_under(parser, sanitizer) == locked_sha256:
                    return _versions_hint(self, parser, sanitizer)
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sha256": self.sha256,
            "parser_version": self.parser_version,
            "sanitize_version": self.sanitize_version,
            "files": len(self.entries),
            "bytes": sum(e.size for e in self.entries),
            "entries": [{"path": e.path, "size": e.size, "sha256": e.sha256} for e in self.entries],
        }
        if self.mask_sha256 is not None:
            out["mask_sha256"] = self.mask_sha256
        if self.settles_sha256 is not None:
            out["settles_sha256"] = self.settles_sha256
        return out


def manifest(root: Path) -> Manifest:
    """Hash every `.jsonl` file under `root` (sorted by relative POSIX path), and the corpus's mask
    list and settles file when it has them (a folder without either hashes what it always did)."""
    root = Path(root)
    if not root.is_dir():
        msg = f"corpus folder {root} does not exist; generate or point to a transcript tree first"
        raise FreezeError(msg)
    entries: list[ManifestEntry] = []
    scan = VersionScan()
    parser_scan = ParserScan()
    for path in sorted(root.rglob("*.jsonl"), key=lambda p: p.relative_to(root).as_posix()):
        if not path.is_file():
            continue
        digest = hashlib.sha256()
        size = 0
        with path.open("rb") as fh:
            for line in fh:
                digest.update(line)
                size += len(line)
                scan.feed(line)
                parser_scan.feed(line)
        entries.append(
            ManifestEntry(
                path=path.relative_to(root).as_posix(), size=size, sha256=digest.hexdigest()
            )
        )
    if not entries:
        msg = f"corpus folder {root} holds no .jsonl transcripts"
        raise FreezeError(msg)
    mask_sha256 = _mask_sha256(root)
    settles = root / SETTLES_FILE
    settles_sha256 = hashlib.sha256(settles.read_bytes()).hexdigest() if settles.is_file() else None
    read = Manifest(
        entries=tuple(entries),
        parser_version=parser_scan.version,
        sanitize_version=scan.version,
        sha256="",
        mask_sha256=mask_sha256,
        settles_sha256=settles_sha256,
    )
    return replace(read, sha256=read.sha256_under(parser_scan.version, scan.version))


def _older(version: str, base: str) -> list[str]:
    """`version` and every version down to `base`, newest first."""
    return [str(v) for v in range(int(version), int(base) - 1, -1)]


def _versions_hint(manifest: Manifest, parser: str, sanitizer: str) -> str:
    changed = []
    if parser != manifest.parser_version:
        since = [
            VERSION_CHANGES[str(v)]
            for v in range(int(parser) + 1, int(manifest.parser_version) + 1)
            if str(v) in VERSION_CHANGES
        ]
        changed.append(
            f"parser version {manifest.parser_version}, not {parser} ({'; '.join(since)})"
        )
    if sanitizer != manifest.sanitize_version:
        changed.append(f"sanitizer version {manifest.sanitize_version}, not {sanitizer}")
    return (
        "the corpus holds the bytes registered, but this code reads them under "
        f"{' and '.join(changed)}: register the protocol again under a new name to run on what "
        'they now read as (docs/transcripts.md, "Versions")'
    )


def _mask_sha256(root: Path) -> str | None:
    """The sha256 of the mask list in a masked copy, None for an unmasked corpus."""
    path = root / MASK_FILE
    if not path.exists():
        return None
    try:
        return Mask.load(path).sha256
    except MaskError as exc:
        msg = f"corpus {root} holds a mask that cannot be trusted: {exc}"
        raise FreezeError(msg) from exc


@dataclass(kw_only=True)
class SessionInfo:
    session_id: str
    project: str | None = None
    started: str | None = None
    files: list[str] = field(default_factory=list)
    self_transcript: bool = False


@dataclass(kw_only=True)
class ContaminationReport:
    """What the scan found, with the session ids behind every count."""

    sessions: dict[str, SessionInfo]
    self_transcripts: list[str]
    scrubbed: dict[str, int]
    roster_leaks: list[dict[str, Any]]  # {"roster", "qid", "sessions": [...]}
    after_cutoff: list[str]
    skipped: dict[str, int]

    @property
    def scaffolding(self) -> dict[str, int]:
        return {k: self.scrubbed.get(k, 0) for k in SCAFFOLDING_KINDS}

    def flagged(self, flags: Iterable[str]) -> set[str]:
        """Session ids carrying any of `flags` (names from FLAGS)."""
        out: set[str] = set()
        for flag in flags:
            if flag == "self_transcript":
                out.update(self.self_transcripts)
            elif flag == "after_cutoff":
                out.update(self.after_cutoff)
            elif flag == "roster_leak":
                for leak in self.roster_leaks:
                    out.update(leak["sessions"])
            else:
                msg = f"unknown contamination flag {flag!r}; choose one of {', '.join(FLAGS)}"
                raise FreezeError(msg)
        return out

    def files_excluding(self, sessions: set[str]) -> list[str]:
        """Relative paths of transcript files whose session is not in `sessions`."""
        return sorted(
            f for sid, info in self.sessions.items() if sid not in sessions for f in info.files
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": len(self.sessions),
            "self_transcripts": {
                "count": len(self.self_transcripts),
                "sessions": self.self_transcripts,
            },
            "scaffolding": self.scaffolding,
            "scrubbed": dict(sorted(self.scrubbed.items())),
            "roster_leaks": {"count": len(self.roster_leaks), "items": self.roster_leaks},
            "after_cutoff": {"count": len(self.after_cutoff), "sessions": self.after_cutoff},
            "skipped": dict(sorted(self.skipped.items())),
        }


def normalise(text: str) -> str:
    """Whitespace collapsed and case-folded, for verbatim matching."""
    return _SPACE.sub(" ", text).strip().casefold()


def scan(
    root: Path,
    *,
    questions: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    cutoff: datetime | None = None,
) -> ContaminationReport:
    """Scan a transcript tree for contamination.

    Args:
        root: the corpus folder.
        questions: roster name -> (qid, text) pairs of sealed questions to look for verbatim.
        cutoff: sessions that start after it are flagged `after_cutoff`.

    A roster question counts as leaked when it appears verbatim (whitespace-normalised, case-folded) in
    a *User*-authored message: someone typed or pasted the question into a recorded session. Assistant
    text and tool output are not searched, because a receipt question is by construction the text of a
    commit that its authoring session ran.
    """
    files, skipped = discover([Path(root)])
    sessions: dict[str, SessionInfo] = {}
    scrubbed: Counter[str] = Counter()
    user_text: dict[str, list[str]] = {}
    ordered: list[TranscriptFile] = files  # main files come before their subagents
    for tf in ordered:
        info = sessions.setdefault(tf.session_id, SessionInfo(session_id=tf.session_id))
        info.files.append(tf.path.relative_to(root).as_posix())
        state = StreamState()
        if tf.agent_id is not None and info.self_transcript:
            state.self_transcript = True
        parsed = parse_file(tf.path, 0, state, session_id=tf.session_id)
        skipped.update(parsed.skipped)
        clean = sanitize(parsed.messages, state, scrubbed)
        if state.self_transcript:
            info.self_transcript = True
        info.project = info.project or state.cwd or parsed.cwd
        stamps = [m.timestamp for m in parsed.messages if m.timestamp]
        if stamps and (info.started is None or min(stamps) < info.started):
            info.started = min(stamps)
        user_text.setdefault(tf.session_id, []).extend(
            normalise(m.text) for m in clean if m.author is Author.USER
        )
    self_ids = sorted(sid for sid, info in sessions.items() if info.self_transcript)
    leaks = _leaks(questions or {}, user_text)
    late: list[str] = []
    if cutoff is not None:
        for sid, info in sorted(sessions.items()):
            started = _parse(info.started)
            if started is not None and started > cutoff:
                late.append(sid)
    return ContaminationReport(
        sessions=dict(sorted(sessions.items())),
        self_transcripts=self_ids,
        scrubbed=dict(scrubbed),
        roster_leaks=leaks,
        after_cutoff=late,
        skipped=dict(skipped),
    )


def _leaks(
    questions: Mapping[str, Sequence[tuple[str, str]]], user_text: Mapping[str, list[str]]
) -> list[dict[str, Any]]:
    haystacks = {sid: "\n".join(texts) for sid, texts in user_text.items()}
    leaks: list[dict[str, Any]] = []
    for roster in sorted(questions):
        for qid, text in questions[roster]:
            needle = normalise(text)
            if not needle:
                continue
            hit = sorted(sid for sid, hay in haystacks.items() if needle in hay)
            if hit:
                leaks.append({"roster": roster, "qid": qid, "sessions": hit})
    return leaks


def _parse(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        value = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None

"""What the running Claude Code session already has in context, for the prompt hook (and which
session a resumed or forked one continues, for the SessionStart brief).

The prompt hook injects only what the model's context lacks:

- **The running session's own lines, unless a compaction took them out.** `/compact`, or Claude Code's
  automatic compaction, writes a `system` line of subtype `compact_boundary` to the transcript; from then
  on the model holds a summary of what came before, not the lines. A chunk of the running session's main
  transcript is injected again when at least one of its lines comes before the last boundary. Its other
  chunks (every one, when it was never compacted), and its subagents' chunks, are left out.
- **Another session's copy of what the context holds.** A resumed or forked session is written to a new
  file under a new session id, starting with a copy of the earlier lines under the same line uuids, so
  the earlier session's chunks of those lines are in context too. A chunk of another session is left out
  when the running session holds every one of its lines (since its last compaction, when it had one). A
  chunk that also packs a line the running session lacks (the original went on after the fork) is kept:
  it says something the context does not.

Where the lines are read from: the transcript at the hook's `transcript_path`. Its last `TAIL_BYTES` are
searched from their end for the last boundary, and the line uuids after it read. A transcript never
compacted (there) says nothing the store does not once the session is imported (the Stop hook imports
it after every turn): the store answers then (`TextReads.held_messages`), and the whole transcript, a
regular file of at most `MAX_TRANSCRIPT_BYTES`, only before that (the first prompt of a resumed
session). A transcript that cannot be read (missing, not a file) counts as never compacted.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from engine.api import ChunkRecord
from engine.transcript_files import is_main_stream

__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "TAIL_BYTES",
    "compaction_lines",
    "not_in_context",
    "resumed_from",
    "transcript_uuids",
]

# A transcript line's `"uuid": "<id>"` (compact or spaced JSON). `parentUuid`, `leafUuid`,
# `logicalParentUuid` and a uuid quoted inside a string value (escaped quotes) do not match; a
# `progress` line's copy of a subagent's line does.
_LINE_UUID = re.compile(rb'"uuid"\s*:\s*"([^"\\]{1,200})"')
# A compaction's marker line. Inside a string value the key's quotes are escaped and do not match.
_BOUNDARY_VALUE = b'"compact_boundary"'
_BOUNDARY = re.compile(rb'(?<!\\)"subtype"\s*:\s*"compact_boundary"')
MAX_TRANSCRIPT_BYTES = 64 << 20
# How far from its end a transcript is searched for its last compaction. Compaction comes when the
# context is full: in the five compacted transcripts of ../shared/data/real-claude-code, 0.55 to
# 1.41 MB of lines came after the last one, 1.5 to 2.9 MB before it.
TAIL_BYTES = 16 << 20


class HeldReads(Protocol):
    """The read the filter needs (`engine.text_reads.TextReads`)."""

    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None: ...


def not_in_context(
    records: Sequence[ChunkRecord], reads: HeldReads, payload: Mapping[str, Any]
) -> list[ChunkRecord]:
    """`records` in order, less those the running session has in context (`payload`: the hook's stdin):
    its own chunks, unless a compaction took one of their lines out, and other sessions' chunks whose
    every line it holds."""
    current = _field(payload, "session_id")
    if not current:
        return list(records)
    uuids = sorted({u for r in records if r.session_id != current for u in r.message_uuids})
    if not uuids and not any(r.session_id == current for r in records):
        return list(records)
    raw = _field(payload, "transcript_path")
    path = Path(raw).expanduser() if raw else None
    since = compaction_lines(path) if path is not None else None
    if since is not None:
        return [r for r in records if _after_compaction(r, current, since)]
    stored = reads.held_messages(current, uuids) if uuids else set()
    found = transcript_uuids(path) if stored is None and path is not None else None
    held = frozenset(stored) if stored is not None else (found or frozenset())
    return [
        r
        for r in records
        if r.session_id != current and not (r.message_uuids and held.issuperset(r.message_uuids))
    ]


# SessionStart's `source` when the session continues another one's lines.
RESUMED_SOURCES = frozenset({"resume", "fork"})


def resumed_from(openings: Sequence[ChunkRecord], payload: Mapping[str, Any]) -> set[str]:
    """The sessions (of `openings`, each session's opening chunk) whose opening lines the transcript
    of a resumed or forked session holds: the session it continues, already in its context. Empty
    for any other start, or when the transcript cannot be read (the SessionStart hook's stdin)."""
    if _field(payload, "source") not in RESUMED_SOURCES:
        return set()
    raw = _field(payload, "transcript_path")
    held = transcript_uuids(Path(raw).expanduser()) if raw else None
    if not held:
        return set()
    return {r.session_id for r in openings if r.message_uuids and held.issuperset(r.message_uuids)}


def _after_compaction(record: ChunkRecord, current: str, since: frozenset[str]) -> bool:
    """Whether `record` is out of the context of `current`, compacted, which holds lines `since`."""
    lines = record.message_uuids
    if record.session_id != current:
        return not (lines and since.issuperset(lines))
    return is_main_stream(record.stream, current) and not since.issuperset(lines)


def compaction_lines(path: Path, tail_bytes: int = TAIL_BYTES) -> frozenset[str] | None:
    """The uuids of the lines from the transcript's last `compact_boundary` line on, looked for in its
    last `tail_bytes`; None when there is none there or the transcript cannot be read."""
    try:
        with _opened(path, None) as opened:
            if opened is None:
                return None
            fh, size = opened
            fh.seek(max(0, size - tail_bytes))
            data = fh.read(min(size, tail_bytes))
    except OSError:
        return None
    cut = _last_boundary(data)
    return None if cut is None else _uuids(data, cut)


def transcript_uuids(path: Path, max_bytes: int = MAX_TRANSCRIPT_BYTES) -> frozenset[str] | None:
    """The uuids of every line of the transcript at `path`; None when it cannot be read."""
    try:
        with _opened(path, max_bytes) as opened:
            if opened is None:
                return None
            fh, size = opened
            data = fh.read(size)  # a file still growing is cut at the size it had
    except OSError:
        return None
    return _uuids(data, 0)


@contextmanager
def _opened(path: Path, max_bytes: int | None) -> Iterator[tuple[BinaryIO, int] | None]:
    """The transcript at `path`, open, and its size; None when it is not a regular file (a FIFO would
    block the hook, a device never end) or is larger than `max_bytes` (when given). Raises OSError."""
    # O_NONBLOCK: opening a FIFO for reading would wait for a writer (no effect on a file).
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode) or (max_bytes is not None and info.st_size > max_bytes):
        os.close(fd)  # a folder, FIFO or device is never wrapped in a file object
        yield None
        return
    with os.fdopen(fd, "rb") as fh:
        yield fh, info.st_size


def _last_boundary(data: bytes) -> int | None:
    """Where the last `compact_boundary` line starts, or None when there is none."""
    end = len(data)
    while (at := data.rfind(_BOUNDARY_VALUE, 0, end)) >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        if _BOUNDARY.search(data, start, len(data) if stop < 0 else stop):
            return start
        end = start  # the whole line was searched: go on before it
    return None


def _uuids(data: bytes, start: int) -> frozenset[str]:
    return frozenset(m.decode("utf-8", "replace") for m in _LINE_UUID.findall(data, start))


def _field(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""

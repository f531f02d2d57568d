"""What the running Claude Code session already has in context, for the prompt hook.

The hook never injects the running session's own chunks. A resumed or forked session is written to a new
file under a new session id, starting with a copy of the earlier lines under the same line uuids, so the
earlier session's chunks of those lines are in the model's context too. `not_in_context` leaves out
every chunk of another session whose messages the running session all holds. It learns which lines
that session holds from:

- the store, once the running session is imported (the Stop hook imports it after every turn):
  `TextReads.held_messages`;
- before that (the first prompt of a resumed session), the transcript at the hook's `transcript_path`:
  its lines' uuids, read with one pattern over the bytes when the file is at most
  `MAX_TRANSCRIPT_BYTES`. Larger or unreadable, nothing is left out for it.

A chunk that also packs a line the running session lacks (the original went on after the fork) is
kept: it says something the context does not.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from engine.api import ChunkRecord

__all__ = ["MAX_TRANSCRIPT_BYTES", "not_in_context", "transcript_uuids"]

# A transcript line's `"uuid": "<id>"` (compact or spaced JSON). `parentUuid`, `leafUuid` and a uuid
# quoted inside a string value (escaped quotes) do not match.
_LINE_UUID = re.compile(rb'"uuid"\s*:\s*"([^"\\]{1,200})"')
# About 10 ms of pattern per 14 MB on one core; the read happens only before the session is imported.
MAX_TRANSCRIPT_BYTES = 64 << 20


class HeldReads(Protocol):
    """The read the filter needs (`engine.text_reads.TextReads`)."""

    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None: ...


def not_in_context(
    records: Sequence[ChunkRecord], reads: HeldReads, payload: Mapping[str, Any]
) -> list[ChunkRecord]:
    """`records` in order, less the running session's own chunks and the chunks of other sessions
    whose every message the running session holds (`payload`: the hook's stdin)."""
    current = _field(payload, "session_id")
    others = [r for r in records if r.session_id != current]
    uuids = sorted({u for r in others for u in r.message_uuids})
    if not current or not uuids:
        return others
    held = reads.held_messages(current, uuids)
    if held is None:
        held = _from_transcript(_field(payload, "transcript_path"), set(uuids))
    return [r for r in others if not (r.message_uuids and held.issuperset(r.message_uuids))]


def transcript_uuids(path: Path, max_bytes: int = MAX_TRANSCRIPT_BYTES) -> set[str] | None:
    """The line uuids of the transcript at `path`; None when it is missing, unreadable, not a
    regular file (a FIFO would block the hook, a device never end) or larger than `max_bytes`."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer (no effect on a file).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = fh.read(max_bytes + 1)  # a file still growing is cut here too
    except OSError:
        return None
    if len(data) > max_bytes:
        return None
    return {m.decode("utf-8", "replace") for m in _LINE_UUID.findall(data)}


def _from_transcript(raw: str, wanted: set[str]) -> set[str]:
    found = transcript_uuids(Path(raw).expanduser()) if raw else None
    return set() if found is None else found & wanted


def _field(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""

"""One chunk as it is shown whole: its fields under the names the MCP tool `get_memory` uses, and its
neighbours in its session. `recallbench show` and `get_memory` both read chunks through here, so the
two surfaces cannot drift apart; both read a chunk by the first characters of its id when they name
one chunk in scope (`read_chunk`), as git reads a short hash.

Only the standard library and the engine's numpy-free modules are imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from engine.chunking import chunk_id
from recallbench.present import status_line

if TYPE_CHECKING:
    from engine.api import ChunkRecord
    from engine.scope import Scope


# The fewest characters of an id that are read as the id's start; a shorter one is only ever whole.
MIN_SHORT_ID = 4


class ChunkReads(Protocol):
    """The read a neighbour lookup makes (`engine.memory.Memory`, `engine.text_reads.TextReads`)."""

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...


class IdReads(ChunkReads, Protocol):
    """What reads a chunk by the start of its id (`engine.memory.Memory`, `TextReads`)."""

    def ids_starting_with(
        self, kind: str, prefix: str, scope: Scope, limit: int
    ) -> tuple[list[str], int]: ...


def read_chunk(
    reads: IdReads, given: str, scope: Scope
) -> tuple[ChunkRecord | None, list[str], int]:
    """The chunk `given` names in `scope`: by its whole id, else (from `MIN_SHORT_ID` characters) the
    one chunk in scope whose id starts with it. Otherwise None, with up to five ids in scope that
    start with it and how many there are (none for a short id of fewer characters)."""
    found = reads.chunks([given], scope)
    if found:
        return found[0], [], 0
    starting, count = reads.ids_starting_with("chunk", given, scope, 5)
    if count == 1 and len(given) >= MIN_SHORT_ID:
        return reads.chunks(starting, scope)[0], starting, count
    return None, starting, count


def neighbours(
    reads: ChunkReads, record: ChunkRecord, scope: Scope, indexes: Iterable[int]
) -> list[ChunkRecord]:
    """The chunks at `indexes` of `record`'s stream that lie in `scope`, in stream order."""
    wanted = {chunk_id(record.stream, i): i for i in indexes if i >= 0}
    found = reads.chunks(list(wanted), scope)
    # an id is derived from (stream, index), so a record at another place is not that neighbour
    placed = [r for r in found if r.stream == record.stream and wanted.get(r.id) == r.index]
    return sorted(placed, key=lambda r: r.index)


def previous_and_next(
    reads: ChunkReads, record: ChunkRecord, scope: Scope
) -> tuple[str | None, str | None]:
    """The ids of the chunks just before and after `record` in its stream, each None when it is not
    there or not in `scope` (an id is only offered if it can be read)."""
    adjacent = neighbours(reads, record, scope, (record.index - 1, record.index + 1))
    previous = next((r.id for r in adjacent if r.index < record.index), None)
    following = next((r.id for r in adjacent if r.index > record.index), None)
    return previous, following


def chunk_fields(
    record: ChunkRecord, previous: str | None = None, following: str | None = None
) -> dict[str, object]:
    """The chunk under the names the MCP tool `get_memory` uses."""
    return {
        "chunk_id": record.id,
        "session_id": record.session_id,
        "project": record.project,
        "stream": record.stream,
        "index": record.index,
        "author": record.author.label,
        "ts_start": record.ts_start,
        "ts_end": record.ts_end,
        "session_start": record.session_start,
        "text": record.text,
        "previous_chunk_id": previous,
        "next_chunk_id": following,
        "status": status_line(record),
    }

"""Copies in a ranked answer: the chunks a resumed or forked session holds of another session's lines.

Claude Code writes a resumed or forked session to a new file under a new session id, and that file
starts with a copy of the earlier lines under the same line uuids. Both sessions are stored, so a
search that reaches the shared history finds it twice: the original chunk and the fork's copy, with the
same text, the same vector and nearly the same score, side by side in the answer.

`collapse` keeps the first of them. A hit is a *copy* of a hit ranked above it when the two lie in
different sessions, every message of the lower one is a message of the upper one (by line uuid), and
the lower one's text lies inside the upper one's. The fork's chunk that packs the last copied lines
together with lines of its own holds more than the original's last chunk, so it is never the copy
dropped, and the original's chunk below it is. The three conditions together keep apart what is not a
copy: the parts of one message longer than a chunk (one uuid, different text, and one session), two
sessions that say the same short thing (the same text, different uuids), and chunks of one session.

The dropped hit is listed against the hit that stands for it, so that the settles written against the
copy can be read as settles of the hit shown (`engine.trust_order.settle_ranked`). The module imports
neither numpy nor SQL, so the prompt hook can use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from engine.api import ChunkRecord


class _Ranked(Protocol):
    @property
    def chunk_id(self) -> str: ...


T = TypeVar("T", bound=_Ranked)


def collapse(items: Sequence[T], records: Sequence[ChunkRecord]) -> tuple[list[T], dict[str, str]]:
    """`items` (best first) without the copies of a higher-ranked item (see the module docstring),
    and each dropped chunk id -> the id of the item that stands for it.

    An item without a record (gone, or out of the records' scope) is kept and stands for nothing.
    """
    by_id = {r.id: r for r in records}
    kept: list[T] = []
    shown: list[ChunkRecord] = []
    stands_for: dict[str, str] = {}
    for item in items:
        record = by_id.get(item.chunk_id)
        if record is None:
            kept.append(item)
            continue
        keeper = next((upper for upper in shown if _copies(record, upper)), None)
        if keeper is None:
            kept.append(item)
            shown.append(record)
        else:
            stands_for[record.id] = keeper.id
    return kept, stands_for


def _copies(lower: ChunkRecord, upper: ChunkRecord) -> bool:
    """Whether `lower` is a copy of `upper`: another session, its messages and its text inside upper's."""
    return (
        lower.session_id != upper.session_id
        and bool(lower.message_uuids)
        and set(lower.message_uuids) <= set(upper.message_uuids)
        and lower.text in upper.text
    )

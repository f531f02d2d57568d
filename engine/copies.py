"""Copies in a ranked answer: the chunks a resumed or forked session holds of another session's lines.

Claude Code writes a resumed or forked session to a new file under a new session id, and that file
starts with a copy of the earlier lines under the same line uuids. Both sessions are stored, so a
search that reaches the shared history finds it twice: the original chunk and the fork's copy, with the
same text, the same vector and nearly the same score, side by side in the answer.

`collapse` shows each once. A chunk is a *copy* of another when the two lie in different sessions,
every message of the first is a message of the other (by line uuid), and the first one's text lies
inside the other's. A copy ranked below the chunk it copies is dropped. The fork's chunk that packs the
last copied lines together with lines of its own holds the original's last chunk; when it ranks below
that chunk it takes its place (the higher of the two), since it says all the original says and more.
The three conditions together keep apart what is not a copy: the parts of one message longer than a
chunk (one uuid, different text, and one session), two sessions that say the same short thing (the
same text, different uuids), and chunks of one session.

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
    """`items` (best first) with each copy shown once (see the module docstring), and each dropped
    chunk id -> the id of the item that stands for it.

    A copy below the chunk it copies is dropped. A chunk below its own copy (the fork's chunk that
    adds lines of its own, ranked under the original's chunk) takes the copy's place, the higher of
    the two. An item without a record (gone, or out of the records' scope) is kept and stands for
    nothing.
    """
    by_id = {r.id: r for r in records}
    kept: list[T] = []
    shown: list[ChunkRecord | None] = []  # the record of each kept item, in the same order
    stands_for: dict[str, str] = {}
    for item in items:
        record = by_id.get(item.chunk_id)
        if record is None:
            kept.append(item)
            shown.append(None)
            continue
        keeper = next((up for up in shown if up is not None and _copies(record, up)), None)
        if keeper is not None:
            stands_for[record.id] = keeper.id
            continue
        held = {i: up.id for i, up in enumerate(shown) if up is not None and _copies(up, record)}
        if not held:
            kept.append(item)
            shown.append(record)
            continue
        gone = set(held.values())
        for was, keeper_id in stands_for.items():
            if keeper_id in gone:
                stands_for[was] = record.id
        stands_for.update(dict.fromkeys(gone, record.id))
        first, *rest = sorted(held)
        kept[first], shown[first] = item, record
        for i in reversed(rest):
            del kept[i], shown[i]
    return kept, stands_for


def _copies(copy: ChunkRecord, of: ChunkRecord) -> bool:
    """Whether `copy` is a copy of `of`: another session, its messages and its text inside `of`'s."""
    return (
        copy.session_id != of.session_id
        and bool(copy.message_uuids)
        and set(copy.message_uuids) <= set(of.message_uuids)
        and copy.text in of.text
    )

"""A settle's chunk ids follow their text when the store chunks a stream again.

A chunk id is (stream, position). A rebuild by newer code (another chunking or parser version) and a
forget (a message taken out of a stream moves every later chunk) can put a stream's messages at other
positions, and a settle that kept its ids would name other text: a corrected statement back in search,
an innocent chunk hidden. Before the store chunks a stream again, the places of its settled chunks are
read (`places`: stream, message uuids, text sha256); after, each is found again (`relocate`): the chunk
of the same stream with the same text (its own id first), else the one holding the most of its
messages (the first in stream order on a tie). A chunk none of whose messages the stream holds any
more is gone. `follow` marks undone, by the person whose forget took the text out, an active settle
whose old chunk (what it hides or ranks lower) is gone or lost a message to the forget, or whose
replacement is gone, unless it is `corrected` (the statement stays wrong without its correction); `engine.trust.carry_over` (a rebuild, which removes nothing) keeps the id of a
chunk none of whose messages the new memory holds. A settle whose old chunk the forget took moves
instead to a chunk that still says the same (the same text of `MIN_SAME_TEXT` characters or more, to
which it applied with the old one), so forgetting the statement does not bring its repeats back
unmarked; an `open` one whose new chunk the forget took moves the same way (both sides are in
dispute); a `changed` one whose replacement is gone is undone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime

from engine import audit, trust_sql
from engine.audit import PERSON

Places = dict[str, tuple[str, trust_sql.ChunkPlace]]
# The reasons of the audit rows `follow` writes (the targets name the settle and its chunks).
_UNDONE = "forget: what it settled is not there as it was"
_MOVED = "forget chunked its stream again: its chunks' text is now under these ids"
_SAID_AGAIN = "forget took the settled chunk: the same words stay in this one, settled as they were"


def places(conn: sqlite3.Connection, streams: Sequence[str]) -> Places:
    """Where the settled chunks of `streams` are now (read before the streams are chunked again)."""
    return trust_sql.chunk_places(conn, trust_sql.settled_in(conn, streams))


def relocate(conn: sqlite3.Connection, before: Places) -> tuple[dict[str, str], set[str]]:
    """(old id -> the id of the chunk in its place now, where that is another id; the ids of the
    chunks none of whose messages their stream holds now)."""
    moved: dict[str, str] = {}
    gone: set[str] = set()
    for cid, (stream, (_, uuids, sha)) in before.items():
        candidates = trust_sql.stream_places(conn, stream)
        same = [c for c, _, s in candidates if s == sha]
        if cid in same:
            continue
        if same:
            moved[cid] = same[0]
            continue
        held = set(uuids)
        best = max(candidates, key=lambda c: len(held.intersection(c[1])), default=None)
        if best is None or not held.intersection(best[1]):
            gone.add(cid)
        elif best[0] != cid:
            moved[cid] = best[0]
    return moved, gone


def moved_ids(row: trust_sql.SettlementRow, moved: dict[str, str]) -> tuple[str, str]:
    """The (old, new) chunk ids `row` names once `moved` is applied; its own when both would then be
    one chunk (a settle needs two)."""
    old, new = moved.get(row[1], row[1]), moved.get(row[2], row[2])
    return (row[1], row[2]) if old == new else (old, new)


def follow(
    conn: sqlite3.Connection, before: Places, *, now: datetime, removed: Collection[str] = ()
) -> tuple[int, int]:
    """After the streams of `before` were chunked again: write each settle naming a moved chunk
    again on the chunk in its place, and mark undone (by the person, at `when`) each active settle
    whose old chunk is gone or lost one of its messages to the forget (`removed`: their uuids), or,
    unless it is `corrected`, whose replacement is gone: what it settled is not there as it was, and
    the person can settle what is left; unless the words of each side it took stay in another
    chunk (`_said_again`), where the settle moves instead. A corrected statement stays hidden when
    only its correction is forgotten. Returns (settles moved, settles undone)."""
    moved, gone = relocate(conn, before)
    when = audit.utc_text(now)
    taken = set(removed)
    changed = gone | {c for c, (_, (_, uuids, _)) in before.items() if taken.intersection(uuids)}
    followed = undone = 0
    for row in trust_sql.naming(conn, sorted(moved.keys() | changed)):
        targets = [f"settlement:{row[0]}", row[1], row[2]]
        holders = _said_again(conn, row, before, (changed, gone, moved))
        if holders is not None:  # the words stay elsewhere: the settle applies to them there
            _move(conn, row, holders, now, _SAID_AGAIN)
            followed += 1
            continue
        if row[7] is None and (row[1] in changed or (row[2] in gone and row[3] != "corrected")):
            trust_sql.mark_undone(conn, row[0], when, PERSON)
            audit.record(
                conn, time=now, actor=PERSON, action="undo", targets=targets, reason=_UNDONE
            )
            undone += 1
            continue
        ids = moved_ids(row, moved)
        if ids != (row[1], row[2]):
            _move(conn, row, ids, now, _MOVED)
            followed += 1
    return followed, undone


def _move(
    conn: sqlite3.Connection,
    row: trust_sql.SettlementRow,
    ids: tuple[str, str],
    now: datetime,
    reason: str,
) -> None:
    """Write settle `row` again naming (old, new) `ids`, with its audit row (`settle.move`)."""
    trust_sql.move_row(conn, row, *ids)
    targets = [f"settlement:{row[0]}", row[1], row[2], *ids]
    audit.record(conn, time=now, actor=PERSON, action="settle.move", targets=targets, reason=reason)


def _said_again(
    conn: sqlite3.Connection,
    row: trust_sql.SettlementRow,
    before: Places,
    taken: tuple[Collection[str], Collection[str], dict[str, str]],
) -> tuple[str, str] | None:
    """For an active settle a side of which the forget took (`taken`: the old chunks changed, the
    chunks gone, the moved ids): its (old, new) with each taken side replaced by a chunk that still
    says what it said (the same text of `MIN_SAME_TEXT` characters or more, to which the settle
    applied with it), so the settle moves there rather than being undone and letting those words
    back unmarked: hidden still when `corrected`, ranked below the replacement when `changed`, with
    the other when `open`. The new side counts as taken only when it is gone and the settle is not
    `corrected`, and only an `open` one's moves (a changed settle whose replacement is gone is
    undone). None when nothing was taken or a taken side has no such chunk."""
    changed, gone, moved = taken
    old, new = row[1], row[2]
    old_taken, new_taken = old in changed, new in gone and row[3] != "corrected"
    if row[7] is not None or not (old_taken or new_taken):
        return None
    if new_taken and (row[3] != "open" or new not in before):
        return None
    if old_taken and old not in before:
        return None
    old_to = (
        trust_sql.said_again(conn, before[old][1][2], old, new)
        if old_taken
        else moved.get(old, old)
    )
    new_to = (
        trust_sql.said_again(conn, before[new][1][2], new, old)
        if new_taken
        else moved.get(new, new)
    )
    return None if old_to is None or new_to is None else (old_to, new_to)


def note(followed: int, undone: int) -> str:
    """What a forget says of the settles `follow` moved and undid: '' when none."""
    parts = []
    if followed == 1:
        parts.append("1 settle moved to the chunk that holds its text now")
    elif followed:
        parts.append(f"{followed} settles moved to the chunks that hold their text now")
    if undone == 1:
        parts.append("1 settle undone: what it settled is not there as it was")
    elif undone:
        parts.append(f"{undone} settles undone: what they settled is not there as it was")
    return "".join(f", {part}" for part in parts)

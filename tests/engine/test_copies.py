"""engine.copies and the final stage's use of it (engine.trust_order.settle_ranked), on hand-made records.

A copy is a lower-ranked chunk of another session whose messages and text a higher-ranked chunk holds:
what a resumed or forked session stores of the lines it copied. Each case below is worked out from the
three conditions of `engine.copies`, with the near miss beside it that one condition keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.api import ChunkRecord, Settlement, SettlementKind
from engine.copies import collapse
from engine.scope import Scope
from engine.trust_order import REPLACES, settle_ranked
from tests.engine.records import chunk_record

SCOPE = Scope.of("/home/dev/alpha")


@dataclass(frozen=True)
class Item:
    chunk_id: str
    via: str = "fts"


def record(cid: str, session: str, uuids: Sequence[str], text: str) -> ChunkRecord:
    return chunk_record(cid, session, uuids, text, project="/home/dev/alpha")


def ids(items: Sequence[Item]) -> list[str]:
    return [i.chunk_id for i in items]


def test_an_exact_copy_in_another_session_is_dropped_below_its_original() -> None:
    records = [
        record("orig", "s1", ["m1", "m2"], "use argon2\n\nbcrypt truncates"),
        record("fork", "s2", ["m1", "m2"], "use argon2\n\nbcrypt truncates"),
        record("other", "s3", ["m9"], "use argon2 for hashing"),
    ]
    kept, stands_for = collapse([Item("orig"), Item("fork"), Item("other")], records)
    assert ids(kept) == ["orig", "other"]  # control: a third session's chunk on the topic stays
    assert stands_for == {"fork": "orig"}
    # Either order: the higher-ranked one is kept.
    kept, stands_for = collapse([Item("fork"), Item("orig")], records)
    assert (ids(kept), stands_for) == (["fork"], {"orig": "fork"})


def test_the_forks_chunk_that_adds_its_own_lines_is_shown_in_place_of_the_original() -> None:
    records = [
        record("orig-last", "s1", ["m5", "m6"], "t5\n\nt6"),
        record("fork-edge", "s2", ["m5", "m6", "f7"], "t5\n\nt6\n\nt7 of the fork"),
    ]
    # The fork's chunk holds all of the original's, so the original below it is the copy dropped...
    kept, stands_for = collapse([Item("fork-edge"), Item("orig-last")], records)
    assert (ids(kept), stands_for) == (["fork-edge"], {"orig-last": "fork-edge"})
    # ...and ranked below the original, the fork's chunk takes its place: it says all of it, and more.
    kept, stands_for = collapse([Item("orig-last"), Item("x"), Item("fork-edge")], records)
    assert (ids(kept), stands_for) == (["fork-edge", "x"], {"orig-last": "fork-edge"})


def test_a_holder_below_two_shown_chunks_takes_the_first_place_and_stands_for_their_copies() -> (
    None
):
    records = [
        record("a", "s1", ["m1"], "t1"),
        record("a-copy", "s2", ["m1"], "t1"),
        record("b", "s3", ["m2"], "t2"),
        record("both", "s4", ["m1", "m2"], "t1\n\nt2"),
    ]
    order = [Item("a"), Item("a-copy"), Item("x"), Item("b"), Item("both")]
    kept, stands_for = collapse(order, records)
    assert ids(kept) == ["both", "x"]
    assert stands_for == {"a-copy": "both", "a": "both", "b": "both"}


def test_what_is_not_a_copy_stays() -> None:
    records = [
        # The two parts of one long message: one uuid, one session, different text.
        record("part1", "s1", ["long"], "aaaa"),
        record("part2", "s1", ["long"], "bbbb"),
        # The fork's copy of part 2 ranked below the original's part 1: same uuid, other text.
        record("fork-part2", "s2", ["long"], "bbbb"),
        # Two sessions that said the same short thing: same text, different messages.
        record("yes1", "s1", ["y1"], "yes"),
        record("yes2", "s3", ["y2"], "yes"),
        # The same session's chunk holding the same messages and text (a re-chunked stream): no copy.
        record("same1", "s4", ["q1"], "same"),
        record("same2", "s4", ["q1"], "same"),
    ]
    # The parts of one message; the fork's part 2 below the original's part 1; the same short saying.
    order = ["part1", "part2", "yes1", "yes2", "same1", "same2", "unknown"]
    kept, stands_for = collapse([Item(c) for c in order], records)
    assert (ids(kept), stands_for) == (order, {})  # `unknown` has no record (gone): kept
    kept, stands_for = collapse([Item("part1"), Item("fork-part2")], records)
    assert (ids(kept), stands_for) == (["part1", "fork-part2"], {})
    # Control: the fork's part 2 below the original's part 2 is a copy.
    kept, stands_for = collapse([Item("part2"), Item("fork-part2")], records)
    assert (ids(kept), stands_for) == (["part2"], {"fork-part2": "part2"})


class Reader:
    """The two reads settle_ranked makes, over fixed records and settles; records the ids asked."""

    def __init__(self, records: Sequence[ChunkRecord], settles: Sequence[Settlement]) -> None:
        self.records = {r.id: r for r in records}
        self.settles = list(settles)

    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]:
        return [s for s in self.settles if s.old in ids or s.new in ids]

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        return [self.records[i] for i in ids if i in self.records]


def settle(sid: int, old: str, new: str, kind: SettlementKind) -> Settlement:
    return Settlement(
        id=sid, old=old, new=new, kind=kind, reason="r", actor="user", time="2026-05-01T09:30:00Z"
    )


RECORDS = [
    record("orig", "s1", ["m1"], "the port is 5432"),
    record("fork", "s2", ["m1"], "the port is 5432"),
    record("moved", "s3", ["m7"], "the port moved to 6543"),
    record("pool", "s4", ["m8"], "the pool holds twenty"),
]


def test_settle_ranked_drops_copies_and_returns_the_same_list_when_there_are_none() -> None:
    items = [Item("orig"), Item("pool")]
    assert settle_ranked(items, Reader(RECORDS, []), SCOPE) is items  # nothing to do: same list
    items = [Item("orig"), Item("fork"), Item("pool")]
    assert ids(settle_ranked(items, Reader(RECORDS, []), SCOPE)) == ["orig", "pool"]


def test_a_settle_written_against_a_dropped_copy_applies_to_the_hit_shown_for_it() -> None:
    # The copy `fork` was changed to `moved`; `orig` is shown for it, so `moved` is brought in above.
    reader = Reader(RECORDS, [settle(1, "fork", "moved", "changed")])
    out = settle_ranked([Item("orig"), Item("fork"), Item("pool")], reader, SCOPE)
    assert ids(out) == ["moved", "orig", "pool"]
    assert out[0].via == REPLACES
    assert out[1].via == "fts"
    # Control: without the copy in the answer, the settle touches nothing shown.
    out = settle_ranked([Item("orig"), Item("pool")], reader, SCOPE)
    assert ids(out) == ["orig", "pool"]


def test_a_settle_between_a_chunk_and_its_own_copy_is_left_out() -> None:
    # `orig` "changed" to its own copy says nothing about which to show: the answer is the copy-free one.
    reader = Reader(RECORDS, [settle(1, "orig", "fork", "changed")])
    out = settle_ranked([Item("orig"), Item("fork"), Item("pool")], reader, SCOPE)
    assert ids(out) == ["orig", "pool"]

"""Each text once in an answer: hits that say the same thing word for word are shown as one.

A project's history holds much the same text more than once. Every session that reads a file stores
the lines it read, a subagent stores what it read for its parent, and two sessions that run the same
command store the same output; none of these is a copy by line uuid (`engine.copies`), so the arms
rank them side by side with the same words, the same vector and the same score. An answer that shows
them all spends its places, and the prompt hook its budget, on one text.

The rule, for every answer the application shows (`recallbench search`, `search_memory`, the prompt
hook), applied after the running session's context is left out (`recallbench.running_session`):

- a hit whose text lies whole in a higher-ranked hit shown (the same text, or one of at least
  `MIN_INSIDE` characters inside a longer one: the same file read with and without the call after it)
  is left out, and its id is listed under that hit (`HitRow.same_text`), in rank order;
- a hit whose text holds a higher-ranked hit's that way says all it says and more: it takes that hit's
  place (the highest of them, when it holds several), and they are listed under it;
- a hit whose text lies whole in what the running session has in context (one of the answer's own
  hits that the context rule left out) is left out too: the model holds those words already;
- a hit that takes part in an active settle (`engine.trust`) is left out for its text only under a
  higher-ranked hit with the same part in the same settles (a settle applies to every chunk that says
  what its old chunk says, so the same file read in three sessions shows one status line, not three),
  and only such hits are listed under it: its status line must stay in sight.
- a hit that says nearly what a higher-ranked hit shown says (`nearly_same`: texts of at least
  `MIN_INSIDE` characters whose character `GRAM`-grams are at least `NEAR` alike: the same file read
  again after a small edit, a command's output run again with other timings) is shown once: the
  later of the two, in the higher place; the other is listed under it (`HitRow.nearly_same`), in rank
  order. What differs may be the news (a line the edit removed), so its id stays in sight; the later
  is what the file or the command said last. Settled hits are not folded this way (their rule above
  is exact), nor against what the running session holds in context (its own may be the older).

This is how answers are shown, not how arms rank: the arms, and every benchmark, see every hit.
`fill` asks again, with as many more hits as the rules left out, so an answer still holds what was
asked for. Only the standard library is imported: the prompt hook uses it without numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from engine.api import MIN_SAME_TEXT, ChunkRecord
from recallbench.present import HitRow, RankedHit, hit_rows, without_line_numbers
from recallbench.running_session import HeldReads, not_in_context

# The arm is asked again at most this many times for hits to replace those left out.
RETRIES = 2
# A text this long that lies whole inside another's is the other's words; a shorter one ("Done.",
# "yes, go ahead") says too little to be the same thing. The engine's bar for the same statement.
MIN_INSIDE = MIN_SAME_TEXT
# Two such texts say nearly the same when the Dice coefficient of their sets of character `GRAM`-grams
# (whitespace runs read as one space, line numbers left out) is at least `NEAR`. In the top-10 answers
# to 117 questions of the spotter history, every pair at or above it was at least 0.75 alike by
# `difflib`'s ratio (docs/architecture.md); it costs about 25 µs a pair where `difflib` took 7.5 ms.
NEAR = 0.9
GRAM = 5


class _Hit(Protocol):
    @property
    def chunk_id(self) -> str: ...


H = TypeVar("H", bound=_Hit)


@dataclass(frozen=True)
class Shown:
    """The records an answer shows (best first), and under each shown id the ids left out because
    it holds their words, best first (only where there are any)."""

    records: list[ChunkRecord]
    same_text: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # under each shown id, the ids left out because it says nearly what they say and is later
    nearly_same: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def first(self, k: int) -> Shown:
        """The first `k` records, with what is listed under them."""
        records = self.records[:k]
        ids = {r.id for r in records}
        return Shown(
            records,
            {i: v for i, v in self.same_text.items() if i in ids},
            {i: v for i, v in self.nearly_same.items() if i in ids},
        )

    def rows(self, hits: Sequence[RankedHit]) -> list[HitRow]:
        """The rows of `hits` shown (`hits_of`'s order), with what is listed under each."""
        return hit_rows(self.hits_of(hits), self.records, self.same_text, self.nearly_same)

    def hits_of(self, hits: Sequence[H]) -> list[H]:
        """The hits of the records shown, in the order they are shown (a hit that holds a higher
        one's text, or says nearly what it says and is later, is shown in that one's place)."""
        by_id = {h.chunk_id: h for h in hits}
        return [by_id[r.id] for r in self.records if r.id in by_id]


def once_each(records: Sequence[ChunkRecord], held: Sequence[ChunkRecord] = ()) -> Shown:
    """`records` (best first) with each text shown once, less the texts of `held` (what the running
    session has in context). See the module docstring."""
    rank = {r.id: i for i, r in enumerate(records)}
    held_texts = [r.text for r in held]
    kept: list[ChunkRecord] = []
    under: dict[str, list[str]] = {}
    near: dict[str, list[str]] = {}

    def take_place(record: ChunkRecord, places: list[int], *, holds: bool) -> None:
        """`record` in the first of `places`, the others gone: what was there is listed under it, as
        the same text when it `holds` their words, else as nearly the same."""
        hosts = [kept[i].id for i in places]
        theirs = [x for h in hosts for x in (h, *under.pop(h, ()))]
        nearby = [x for h in hosts for x in near.pop(h, ())]
        if holds:
            under[record.id] = sorted(theirs, key=rank.__getitem__)
        else:
            nearby += theirs
        if nearby:
            near[record.id] = sorted(nearby, key=rank.__getitem__)
        kept[places[0]] = record
        for i in reversed(places[1:]):
            del kept[i]

    for record in records:
        if record.settled:  # only under a hit that shows the same status line
            same = (s for s in kept if s.settled == record.settled and inside(record.text, s.text))
            host = next(same, None)
            if host is None:
                kept.append(record)
            else:
                under.setdefault(host.id, []).append(record.id)
            continue
        if any(inside(record.text, text) for text in held_texts):
            continue
        host = next((s for s in kept if not s.settled and inside(record.text, s.text)), None)
        if host is not None:
            under.setdefault(host.id, []).append(record.id)
            continue
        held_here = [i for i, s in enumerate(kept) if not s.settled and inside(s.text, record.text)]
        if held_here:  # it says all they say, and more: it takes the highest one's place
            take_place(record, held_here, holds=True)
            continue
        alike = (
            i for i, s in enumerate(kept) if not s.settled and nearly_same(record.text, s.text)
        )
        place = next(alike, None)
        if place is None:
            kept.append(record)
        elif _later(record, kept[place]):  # the later of the two, in the higher place
            take_place(record, [place], holds=False)
        else:
            near.setdefault(kept[place].id, []).append(record.id)
    return Shown(kept, _tuples(under), _tuples(near))


def _tuples(listed: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {k: tuple(v) for k, v in listed.items()}


def _later(record: ChunkRecord, other: ChunkRecord) -> bool:
    """Whether `record` was written after `other` (an undated chunk is the earliest)."""
    return (record.ts_end or "") > (other.ts_end or "")


def nearly_same(text: str, other: str) -> bool:
    """Whether two texts of at least `MIN_INSIDE` characters say nearly the same: the Dice
    coefficient of their character `GRAM`-gram sets is at least `NEAR`."""
    if min(len(text), len(other)) < MIN_INSIDE:
        return False
    a, b = _grams(text), _grams(other)
    small, large = sorted((len(a), len(b)))
    if 2 * small < NEAR * (small + large):  # they cannot share enough
        return False
    return 2 * len(a & b) >= NEAR * (len(a) + len(b))


@lru_cache(maxsize=512)
def _grams(text: str) -> frozenset[str]:
    # an edit above the lines a Read returned shifts every number: they are not compared
    flat = " ".join(without_line_numbers(text).split())
    return frozenset(flat[i : i + GRAM] for i in range(max(1, len(flat) - GRAM + 1)))


def inside(text: str, other: str) -> bool:
    """Whether `text` says nothing `other` does not: the same text, or one of at least `MIN_INSIDE`
    characters found whole inside it."""
    return text == other or (len(text) >= MIN_INSIDE and text in other)


def outside_context(
    records: Sequence[ChunkRecord], reads: HeldReads, payload: Mapping[str, Any]
) -> Shown:
    """What an answer shows of `records` (best first) for the running session that `payload` names
    (the hook's stdin, or the server's session): what its context lacks
    (`recallbench.running_session.not_in_context`), each text once, none that the context holds."""
    lacking = not_in_context(records, reads, payload)
    ids = {r.id for r in lacking}
    return once_each(lacking, [r for r in records if r.id not in ids])


def fill(
    ask: Callable[[int], list[H]],
    records_of: Callable[[list[H]], list[ChunkRecord]],
    keep: Callable[[list[ChunkRecord]], Shown],
    k: int,
) -> tuple[list[H], Shown]:
    """What `keep` shows of `ask(n)`'s hits' records (`records_of` reads them, in the hits' order), at
    most `k`, and the hits shown, in that order; asked again (at most `RETRIES` times) with as many
    more hits as `keep` left out, while the hits run to what was asked."""
    n = k
    for _ in range(RETRIES + 1):
        hits = ask(n)
        shown = keep(records_of(hits))
        if len(shown.records) >= k or len(hits) < n:
            break
        n += k - len(shown.records)
    shown = shown.first(k)
    return shown.hits_of(hits), shown

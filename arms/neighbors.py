"""Context propagation: a chunk gains λ × the best score of its adjacent chunks in the same stream.

Evidence often spans adjacent turns: the question is asked in one chunk and answered in the next, and
only one of them shares the query's words. `propagate` is a stage that re-scores any arm's scored
candidates this way; the `neighbors` arm runs it over the whole fused pool of `cc` or `rrf`.

Adjacency is read from the candidates' own records (`ReadAPI.chunks`, one call): two chunks are adjacent
when they share a session and a stream and their stream indexes differ by one. No SQL of its own, no
engine change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from arms.base import Hit, Query
from arms.cc import CCArm, CCParams
from arms.rrf import RRFArm, RRFParams
from arms.spec import SpecError, check_float, check_int
from engine.api import ChunkRecord, ReadAPI
from engine.chunking import chunk_id
from engine.scope import Scope

Base = Literal["cc", "rrf"]
BASES: tuple[Base, ...] = ("cc", "rrf")
NEIGHBOR_VIA = "neighbor"

# A chunk's place: (session id, stream, index in the stream).
Place = tuple[str, str, int]


@dataclass(frozen=True, kw_only=True)
class NeighborsParams:
    """`lam`: λ, the share of the best adjacent score a chunk gains, in [0, 1]; `base`: the fusion whose
    pool is re-scored ("cc" or "rrf", at that arm's defaults but for `pool` and `min_score`); `pool`:
    hits per channel of the base; `min_score`: its vector channel's cosine floor; `expand`: let an
    adjacent chunk that is not a candidate enter the ranking; `stem`: the base's lexical channel reads
    the Porter-stemmed index.
    """

    lam: float = 0.3
    base: Base = "cc"
    pool: int = 20
    min_score: float = 0.20
    expand: bool = False
    stem: bool = False

    def __post_init__(self) -> None:
        check_float("neighbors", "lam", self.lam, low=0.0, high=1.0)
        if self.base not in BASES:
            msg = f"neighbors: base must be one of {', '.join(BASES)}, got {self.base!r}"
            raise SpecError(msg)
        check_int("neighbors", "pool", self.pool, minimum=1)
        check_float("neighbors", "min_score", self.min_score, low=-1.0, high=1.0)
        expand: object = self.expand
        if not isinstance(expand, bool):
            msg = f"neighbors: expand must be True or False, got {self.expand!r}"
            raise SpecError(msg)


class NeighborsArm:
    """The base fusion's whole pool (both channels, `pool` deep each), re-scored by `propagate`, cut to k.

    The base is `cc` by default: its min-max scores lie in [0, 1], so λ reads as "a neighbour's full
    match is worth λ of one's own". With `base="rrf"` the same λ applies to RRF scores. Scores and `via`
    are `propagate`'s.
    """

    name = "neighbors"

    def __init__(self, memory: ReadAPI, params: NeighborsParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else NeighborsParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks after propagation, ties by chunk id."""
        p = self.params
        if p.base == "cc":
            pool = CCArm(
                self.memory, CCParams(pool=p.pool, min_score=p.min_score, stem=p.stem)
            ).fuse(query)
        else:
            # Two channels of `pool` hits hold at most 2·pool chunks: asking for that many is the pool.
            rrf = RRFArm(self.memory, RRFParams(pool=p.pool, min_score=p.min_score, stem=p.stem))
            pool = rrf.search(dataclasses.replace(query, k=2 * p.pool))
        return propagate(self.memory, pool, query.scope, lam=p.lam, expand=p.expand)[: query.k]


def propagate(
    memory: ReadAPI, hits: Sequence[Hit], scope: Scope, *, lam: float, expand: bool = False
) -> list[Hit]:
    """Re-score `hits`: each gains `lam · max(0, best base score among its adjacent candidates)`.

    Scores are read before any gain (one step, so the order hits come in does not matter). A negative
    best (z-scores) adds nothing: propagation only lifts. A boosted hit's `via` gets " + neighbor".
    With `expand`, an adjacent chunk that is not a candidate enters with the gain alone (`via`
    "neighbor") when that gain is above 0; its id is `engine.chunking.chunk_id(stream, index)`, and it
    counts only if `memory.chunks` returns it in `scope` at that very place.

    A hit whose record `memory.chunks(ids, scope)` does not return (outside `scope`, or gone) is dropped,
    so nothing outside the scope is ever returned. Sorted by (−score, chunk id); nothing is cut.
    """
    base = {h.chunk_id: h for h in _best_hit_per_chunk(hits)}
    records = memory.chunks(list(base), scope)
    place_of = {r.id: _place(r) for r in records if r.id in base}
    at_place = {place: cid for cid, place in place_of.items()}
    out: list[Hit] = []
    for cid, place in place_of.items():
        gain = lam * max(0.0, _best_adjacent(place, at_place, base))
        hit = base[cid]
        if gain > 0.0:
            hit = Hit(chunk_id=cid, score=hit.score + gain, via=f"{hit.via} + {NEIGHBOR_VIA}")
        out.append(hit)
    if expand:
        out.extend(_entrants(memory, scope, lam, place_of, at_place, base))
    return sorted(out, key=lambda h: (-h.score, h.chunk_id))


def _entrants(
    memory: ReadAPI,
    scope: Scope,
    lam: float,
    place_of: dict[str, Place],
    at_place: dict[Place, str],
    base: dict[str, Hit],
) -> list[Hit]:
    """Adjacent chunks that are not candidates, scored by the gain alone (one `chunks` call)."""
    wanted: dict[str, Place] = {}
    for session, stream, index in place_of.values():
        for near in (index - 1, index + 1):
            place = (session, stream, near)
            if near >= 0 and place not in at_place:
                wanted[chunk_id(stream, near)] = place
    if not wanted:
        return []
    found = memory.chunks(sorted(wanted), scope)
    out: list[Hit] = []
    for record in found:
        # The id is derived, so accept it only where the record says it really sits.
        if wanted.get(record.id) != _place(record):
            continue
        gain = lam * max(0.0, _best_adjacent(_place(record), at_place, base))
        if gain > 0.0:
            out.append(Hit(chunk_id=record.id, score=gain, via=NEIGHBOR_VIA))
    return out


def _best_adjacent(place: Place, at_place: dict[Place, str], base: dict[str, Hit]) -> float:
    """The best base score among the candidates at index ± 1 of the same stream; −inf when none."""
    session, stream, index = place
    scores = [
        base[at_place[near]].score
        for near in ((session, stream, index - 1), (session, stream, index + 1))
        if near in at_place
    ]
    return max(scores, default=float("-inf"))


def _place(record: ChunkRecord) -> Place:
    return (record.session_id, record.stream, record.index)


def _best_hit_per_chunk(hits: Sequence[Hit]) -> list[Hit]:
    """Each chunk once, with its best-scored hit (ties by the order given)."""
    best: dict[str, Hit] = {}
    for h in hits:
        if h.chunk_id not in best or h.score > best[h.chunk_id].score:
            best[h.chunk_id] = h
    return list(best.values())

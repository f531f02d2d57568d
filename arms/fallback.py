"""The `fallback` arm: what the Rust engine ships in its search tool (vector first, lexical when weak)."""

from __future__ import annotations

from dataclasses import dataclass, field

from arms.base import Hit, Query
from arms.decay import decay, parse_ts
from arms.rerank import rerank
from arms.spec import OMIT_DEFAULT, check_bool, check_float, check_int
from engine.api import ChunkRecord, ReadAPI

VIA_VECTOR = "vector"
VIA_LEXICAL = "fallback-fts"


@dataclass(frozen=True, kw_only=True)
class FallbackParams:
    """Constants of ARMS.md's `fallback`.

    `fetch = min(k + max(k, fetch_pool), fetch_factor · k)`; the lexical channel runs only when the best
    decayed cosine is below `gate`, and its new hits enter at `lexical_score` (decayed) or
    `lexical_score_undated` when the chunk has no parseable timestamp. `stem`: the lexical channel
    reads the Porter-stemmed index (named in the spec only when True).
    """

    gate: float = 0.5
    lexical_score: float = 0.45
    lexical_score_undated: float = 0.40
    min_score: float = 0.20
    decay_w: float = 0.3
    decay_half_life_days: float = 90.0
    fetch_pool: int = 20
    fetch_factor: int = 3
    stem: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_float("fallback", "gate", self.gate)
        check_float("fallback", "lexical_score", self.lexical_score)
        check_float("fallback", "lexical_score_undated", self.lexical_score_undated)
        check_float("fallback", "min_score", self.min_score, low=-1.0, high=1.0)
        check_float("fallback", "decay_w", self.decay_w, low=0.0, high=1.0)
        check_float("fallback", "decay_half_life_days", self.decay_half_life_days, low=1e-9)
        check_int("fallback", "fetch_pool", self.fetch_pool, minimum=1)
        check_int("fallback", "fetch_factor", self.fetch_factor, minimum=1)
        check_bool("fallback", "stem", self.stem)


class FallbackArm:
    """Vector hits (decayed), lexical hits at a constant when the vector channel is weak, `recall` rerank.

    Returned hits carry the *reranked* score (decayed base plus rerank signals), which is the score the arm
    ranks by, so the list is sorted by its own scores. `via` is "vector" or "fallback-fts".
    """

    name = "fallback"

    def __init__(self, memory: ReadAPI, params: FallbackParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else FallbackParams()

    def fetch(self, k: int) -> int:
        """How many hits each channel fetches for a cutoff of k."""
        p = self.params
        return min(k + max(k, p.fetch_pool), p.fetch_factor * k)

    def search(self, query: Query) -> list[Hit]:
        """The top k after the gate, the lexical top-up and the `recall` rerank."""
        p = self.params
        limit = self.fetch(query.k)
        q = self.memory.embed_query(query.text)
        semantic = self.memory.nearest(q, query.scope, limit, p.min_score)
        records = _by_id(self.memory.chunks([s.chunk_id for s in semantic], query.scope))
        pool: dict[str, tuple[float, str]] = {}
        for s in sorted(semantic, key=lambda s: (-s.score, s.chunk_id)):
            rec = records.get(s.chunk_id)
            if rec is None or s.chunk_id in pool:
                continue
            pool[s.chunk_id] = (self._decay(s.score, rec, query), VIA_VECTOR)
        best = max((score for score, _ in pool.values()), default=None)
        if best is None or best < p.gate:
            lexical = self.memory.lexical(query.text, query.scope, limit, stem=p.stem)
            new_ids = [s.chunk_id for s in lexical if s.chunk_id not in pool]
            lexical_records = _by_id(self.memory.chunks(new_ids, query.scope))
            for s in sorted(lexical, key=lambda s: (-s.score, s.chunk_id)):
                rec = lexical_records.get(s.chunk_id)
                if rec is None or s.chunk_id in pool:
                    continue
                records[s.chunk_id] = rec
                pool[s.chunk_id] = (self._lexical_score(rec, query), VIA_LEXICAL)
        candidates = [(records[cid], score, via) for cid, (score, via) in pool.items()]
        ranked = rerank(candidates, "recall")[: query.k]
        return [Hit(chunk_id=r.record.id, score=r.adjusted, via=r.via) for r in ranked]

    def _decay(self, score: float, rec: ChunkRecord, query: Query) -> float:
        p = self.params
        return decay(score, _timestamp(rec), query.now, p.decay_w, p.decay_half_life_days)

    def _lexical_score(self, rec: ChunkRecord, query: Query) -> float:
        ts = _timestamp(rec)
        if ts is None:
            return self.params.lexical_score_undated
        return self._decay(self.params.lexical_score, rec, query)


def _timestamp(rec: ChunkRecord) -> str | None:
    """The chunk's first parseable timestamp (start, else end), or None."""
    for ts in (rec.ts_start, rec.ts_end):
        if parse_ts(ts) is not None:
            return ts
    return None


def _by_id(records: list[ChunkRecord]) -> dict[str, ChunkRecord]:
    return {r.id: r for r in records}

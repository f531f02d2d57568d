"""The `fts` arm: the engine's lexical (FTS5 BM25) channel alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from arms.base import Hit, Query
from arms.pools import lexical_text
from arms.spec import OMIT_DEFAULT, SpecError, check_bool, check_int
from engine.api import ReadAPI

ScoreMode = Literal["rank", "bm25"]
SCORE_MODES: tuple[ScoreMode, ...] = ("rank", "bm25")


@dataclass(frozen=True, kw_only=True)
class FtsParams:
    """`pool`: how many lexical hits to fetch (at least k); `score`: "rank" (1/rank) or "bm25" (raw);
    `stem`: read the Porter-stemmed index ("running" finds "run"); `stop`: read the question without
    its function words (`arms.pools.lexical_text`); each named in the spec only when True."""

    pool: int = 20
    score: ScoreMode = "rank"
    stem: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    stop: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_int("fts", "pool", self.pool, minimum=1)
        check_bool("fts", "stem", self.stem)
        check_bool("fts", "stop", self.stop)
        if self.score not in SCORE_MODES:
            msg = f"fts: score must be one of {', '.join(SCORE_MODES)}, got {self.score!r}"
            raise SpecError(msg)


class FtsArm:
    """`lexical(query, max(k, pool))` truncated to k.

    The returned score is 1/rank (rank 1-based, after sorting by (−BM25 score, chunk id)) by default,
    so scores are comparable across queries; `score="bm25"` returns the engine's raw BM25-derived score
    (higher is better) instead. Either way the order is the engine's BM25 order. `via` is "fts".
    """

    name = "fts"

    def __init__(self, memory: ReadAPI, params: FtsParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else FtsParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k lexical hits."""
        p = self.params
        text = lexical_text(query.text, p.stop)
        found = self.memory.lexical(text, query.scope, max(query.k, p.pool), stem=p.stem)
        # Re-sorted so ties fall by chunk id even if a backend returned them in another order.
        ranked = sorted(found, key=lambda s: (-s.score, s.chunk_id))[: query.k]
        if self.params.score == "bm25":
            return [Hit(chunk_id=s.chunk_id, score=s.score, via="fts") for s in ranked]
        return [
            Hit(chunk_id=s.chunk_id, score=1.0 / rank, via="fts")
            for rank, s in enumerate(ranked, start=1)
        ]

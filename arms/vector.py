"""The `vector` arm: cosine nearest neighbours of the embedded query."""

from __future__ import annotations

from dataclasses import dataclass

from arms.base import Hit, Query
from arms.spec import check_float, check_int
from engine.api import ReadAPI


@dataclass(frozen=True, kw_only=True)
class VectorParams:
    """`pool`: neighbours fetched; `min_score`: the cosine floor below which a chunk is not a hit."""

    pool: int = 20
    min_score: float = 0.20

    def __post_init__(self) -> None:
        check_int("vector", "pool", self.pool, minimum=1)
        check_float("vector", "min_score", self.min_score, low=-1.0, high=1.0)


class VectorArm:
    """`nearest(embed(query), max(k, pool), min_score)` truncated to k; score = cosine, `via` "vector".

    ARMS.md fetches `pool` (20); `max(k, pool)` is the same for every k <= 20 and keeps a deeper cutoff
    from being silently capped at 20.
    """

    name = "vector"

    def __init__(self, memory: ReadAPI, params: VectorParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else VectorParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks by cosine to the query."""
        q = self.memory.embed_query(query.text)
        found = self.memory.nearest(
            q, query.scope, max(query.k, self.params.pool), self.params.min_score
        )
        ranked = sorted(found, key=lambda s: (-s.score, s.chunk_id))[: query.k]
        return [Hit(chunk_id=s.chunk_id, score=s.score, via="vector") for s in ranked]

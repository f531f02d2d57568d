"""The `vector` arm: cosine nearest neighbours of the embedded query."""

from __future__ import annotations

from dataclasses import dataclass, field

from arms.base import Hit, Query
from arms.pools import vector_pool
from arms.spec import OMIT_DEFAULT, check_bool, check_float, check_int
from engine.api import ReadAPI


@dataclass(frozen=True, kw_only=True)
class VectorParams:
    """`pool`: neighbours fetched; `min_score`: the cosine floor below which a chunk is not a hit;
    `sentences`: rescore by the person's sentence vectors (`arms.pools.vector_pool`; named in the
    spec only when True)."""

    pool: int = 20
    min_score: float = 0.20
    sentences: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_bool("vector", "sentences", self.sentences)
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
        p = self.params
        found = vector_pool(
            self.memory, q, query.scope, max(query.k, p.pool), p.min_score, sentences=p.sentences
        )
        ranked = found[: query.k]
        return [Hit(chunk_id=s.chunk_id, score=s.score, via="vector") for s in ranked]

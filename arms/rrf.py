"""The `rrf` arm: reciprocal rank fusion of the vector and lexical pools (the published benchmark's winner)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arms import pools
from arms.base import Hit, Query
from arms.pools import ordered
from arms.spec import OMIT_DEFAULT, check_bool, check_float, check_int
from engine.api import ReadAPI


@dataclass(frozen=True, kw_only=True)
class RRFParams:
    """`pool`: hits per channel; `rrf_k`: the RRF constant (>= 1); `min_score`: the vector channel's cosine floor;
    `stem`: the lexical channel reads the Porter-stemmed index; `stop`: it reads the question without
    its function words (`arms.pools.lexical_text`); `sentences`: the vector channel is rescored by the
    person's sentence vectors (`arms.pools.vector_pool`); each named in the spec only when True.

    `rrf_k=0` is refused: it turns fusion into 1/rank, which the published method never uses.
    """

    pool: int = 20
    rrf_k: int = 60
    min_score: float = 0.20
    stem: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    sentences: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    stop: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_bool("rrf", "stem", self.stem)
        check_bool("rrf", "stop", self.stop)
        check_bool("rrf", "sentences", self.sentences)
        check_int("rrf", "pool", self.pool, minimum=1)
        check_int("rrf", "rrf_k", self.rrf_k, minimum=1)
        check_float("rrf", "min_score", self.min_score, low=-1.0, high=1.0)


class RRFArm:
    """`score(c) = Σ over pools holding c of 1 / (rrf_k + rank)`, rank 1-based; no rerank, no decay.

    Cormack, Clarke & Büttcher (2009), "Reciprocal rank fusion outperforms Condorcet and individual rank
    learning methods", SIGIR. Returned score is the fused RRF score; `via` is "rrf" and the channels
    whose pools held the chunk: "rrf (fts+vector)", "rrf (fts)" or "rrf (vector)".
    """

    name = "rrf"

    def __init__(self, memory: ReadAPI, params: RRFParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else RRFParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks by fused score, ties by chunk id."""
        p = self.params
        q = self.memory.embed_query(query.text)
        vector_pool = pools.vector_pool(
            self.memory, q, query.scope, p.pool, p.min_score, sentences=p.sentences
        )
        text = pools.lexical_text(query.text, p.stop)
        lexical_pool = self.memory.lexical(text, query.scope, p.pool, stem=p.stem)
        fused: dict[str, float] = {}
        channels: dict[str, list[str]] = {}
        for channel, pool in (("vector", vector_pool), ("fts", lexical_pool)):
            for rank, scored in enumerate(ordered(pool)[: p.pool], start=1):
                fused[scored.chunk_id] = fused.get(scored.chunk_id, 0.0) + 1.0 / (p.rrf_k + rank)
                channels.setdefault(scored.chunk_id, []).append(channel)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: query.k]
        return [
            Hit(chunk_id=cid, score=score, via=via_label(channels[cid])) for cid, score in ranked
        ]


def via_label(channels: Sequence[str]) -> str:
    """`rrf (fts+vector)`, `rrf (fts)` or `rrf (vector)`: the fused score means little to a person,
    the channels that found the chunk do."""
    return f"rrf ({'+'.join(sorted(channels))})"

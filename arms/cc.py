"""The `cc` arm: a convex combination of per-query normalised vector and lexical scores.

Rank fusion (`rrf`) throws the scores away and keeps only ranks, so a chunk that BM25 scores far above
the rest counts no more than one that barely leads. Bruch, Gai & Ingber (2023), "An Analysis of Fusion
Functions for Hybrid Retrieval", ACM TOIS 42(1), find that a convex combination of normalised scores is
at least as effective as RRF and needs only its one weight tuned. This arm is that combination; the weight
is a parameter, fixed in the spec (or chosen by a pre-registered fit).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from arms.base import Hit, Query
from arms.spec import SpecError, check_float, check_int
from engine.api import ReadAPI, Scored

Norm = Literal["minmax", "zscore"]
NORMS: tuple[Norm, ...] = ("minmax", "zscore")
CHANNELS = ("vector", "fts")  # the order channels are read in; `via` sorts them anyway


@dataclass(frozen=True, kw_only=True)
class CCParams:
    """`weight`: the vector channel's share, in [0, 1] (the lexical one gets `1 − weight`);
    `norm`: "minmax" or "zscore"; `pool`: hits per channel; `min_score`: the vector channel's cosine floor;
    `stem`: the lexical channel reads the Porter-stemmed index.
    """

    weight: float = 0.5
    norm: Norm = "minmax"
    pool: int = 20
    min_score: float = 0.20
    stem: bool = False

    def __post_init__(self) -> None:
        check_float("cc", "weight", self.weight, low=0.0, high=1.0)
        if self.norm not in NORMS:
            msg = f"cc: norm must be one of {', '.join(NORMS)}, got {self.norm!r}"
            raise SpecError(msg)
        check_int("cc", "pool", self.pool, minimum=1)
        check_float("cc", "min_score", self.min_score, low=-1.0, high=1.0)


class CCArm:
    """`score(c) = weight · norm(cosine) + (1 − weight) · norm(BM25)` over the union of both pools.

    Each channel's pool (`pool` hits; the vector one above `min_score`) is normalised per query:
    - `minmax`: `(s − min) / (max − min)`, so each channel's best hit gets 1 and its worst 0. A chunk the
      channel did not return gets 0, the normalised minimum: it scored no better than the worst hit.
    - `zscore`: `(s − mean) / sd` (population sd over the pool). A chunk the channel did not return gets
      the channel's lowest z-score, not 0: 0 is the pool's mean, and giving it to an absent chunk would
      rank "not found" above every below-average hit. The lowest retrieved score is the tightest bound the
      pool gives on a score it never showed (the pool was cut off, or the cosine floor held the chunk out).
    A channel whose hits all score the same (one hit, or a tie) cannot be normalised: in both modes its
    hits get 1 and an absent chunk 0, so being found still counts (one lexical hit is often the exact key).
    A channel with no hits adds 0 to every chunk.

    Lexical scores are the engine's `-bm25` (FTS5's bm25 is negative, lower better; the engine negates
    it), so higher is better in both channels. Scores depend only on the pools, never on `k`: the pools
    are `pool` deep whatever `k` is, and the result is cut to `k` after fusion. Ties fall by chunk id.
    The returned score is the fused one; `via` names the channels whose pools held the chunk:
    "cc (fts+vector)", "cc (fts)" or "cc (vector)".
    """

    name = "cc"

    def __init__(self, memory: ReadAPI, params: CCParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else CCParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks by fused score, ties by chunk id."""
        return self.fuse(query)[: query.k]

    def fuse(self, query: Query) -> list[Hit]:
        """Every chunk of either pool with its fused score, best first (ties by chunk id); ignores k."""
        p = self.params
        q = self.memory.embed_query(query.text)
        pools = {
            "vector": _best_per_chunk(self.memory.nearest(q, query.scope, p.pool, p.min_score)),
            "fts": _best_per_chunk(
                self.memory.lexical(query.text, query.scope, p.pool, stem=p.stem)
            ),
        }
        weights = {"vector": p.weight, "fts": 1.0 - p.weight}
        fused: dict[str, float] = {cid: 0.0 for pool in pools.values() for cid in pool}
        for channel in CHANNELS:
            normalised, absent = normalise(pools[channel].values(), p.norm)
            for cid in fused:
                raw = pools[channel].get(cid)
                value = absent if raw is None else normalised[raw]
                fused[cid] += weights[channel] * value
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        return [
            Hit(
                chunk_id=cid,
                score=score,
                via=_via([c for c in CHANNELS if cid in pools[c]]),
            )
            for cid, score in ranked
        ]


def normalise(scores: Iterable[float], norm: Norm) -> tuple[dict[float, float], float]:
    """(each raw score's normalised value, the value a chunk absent from the pool gets).

    See `CCArm` for the rules; an empty pool gives ({}, 0.0).
    """
    raw = list(scores)
    if not raw:
        return {}, 0.0
    low, high = min(raw), max(raw)
    if low == high:
        return dict.fromkeys(raw, 1.0), 0.0
    if norm == "minmax":
        return {s: (s - low) / (high - low) for s in raw}, 0.0
    mean = statistics.fmean(raw)
    sd = statistics.pstdev(raw, mu=mean)
    z = {s: (s - mean) / sd for s in raw}
    return z, min(z.values())


def _best_per_chunk(pool: Sequence[Scored]) -> dict[str, float]:
    """Each chunk's best score in a channel's pool (a backend should list a chunk once; be sure)."""
    best: dict[str, float] = {}
    for s in pool:
        if s.chunk_id not in best or s.score > best[s.chunk_id]:
            best[s.chunk_id] = s.score
    return best


def _via(channels: Sequence[str]) -> str:
    """`cc (fts+vector)`, `cc (fts)` or `cc (vector)`: the channels whose pools held the chunk."""
    return f"cc ({'+'.join(sorted(channels))})"

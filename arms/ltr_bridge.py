"""The `ltrb` arm: the learned reranker's ranking (`ltr`) fused with the file bridge (`bridge`).

`ltr` ranks the union of the deep lexical and vector pools with a fitted model and keeps BM25's rank
where rrf gives it up; `bridge` finds, for a question that names a code identifier, the sessions that
edited the files the identifier was edited in, which neither pool reaches. `ltrb` puts them together:

1. the question's bridged hits, exactly as `bridge` builds them (`BridgeArm.bridge`);
2. no bridged hit (no identifier, or nothing found through its files): `ltr`'s answer, hit for hit;
3. otherwise reciprocal rank fusion of `ltr`'s top `depth` and the bridged list's top `depth`:
   score(c) = ltr_w / (fuse_k + rank in ltr) + bridge_w / (fuse_k + rank in the bridge), ties by chunk id.

`ltr_w` defaults to 2.0 because ltr's one list stands in for the two lists (vector and BM25) that
rrf fuses in `bridge`: with `bridge_w` 2.0 the bridged list keeps the share it has there.

Fitted like `ltr`, with `ltr`'s fit: the artifact holds ltr's model for the `ltr` part of the params.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from arms.base import Hit, Query
from arms.bridge import BridgeArm, BridgeParams, HopParams, bridge_via
from arms.fitting import Example, Fitted
from arms.ltr import OBJECTIVES, LtrArm, LtrParams, Objective, fit_ltr
from arms.spec import OMIT_DEFAULT, SpecError, check_bool, check_float, check_int
from engine.api import ReadAPI


@dataclass(frozen=True, kw_only=True)
class LtrbParams(HopParams):
    """`pool`, `min_score`, `rrf_k`, `objective`: ltr's (hits per channel, vector floor, constant of
    its `rrf` feature, training objective); `depth`: how many of ltr's ranking and of the bridged list
    enter the fusion (and the bridge's lexical hits per file); `fuse_k`: the fusion's constant;
    `ltr_w`: the weight of ltr's list (`bridge_w` that of the bridged one); `sentences`: ltr's vector
    channel is rescored by the person's sentence vectors (named in the spec only when True); `dates`:
    ltr also reads the date a question names (`arms.ltr_features.DATE_FEATURES`; named only when
    True); the rest is the hop's (`arms.bridge.HopParams`)."""

    pool: int = 100
    min_score: float = 0.0
    rrf_k: int = 60
    objective: Objective = "pointwise"
    depth: int = 20
    fuse_k: int = 60
    ltr_w: float = 2.0
    sentences: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    dates: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_bool("ltrb", "sentences", self.sentences)
        check_bool("ltrb", "dates", self.dates)
        for name in ("pool", "rrf_k", "depth", "fuse_k"):
            check_int("ltrb", name, getattr(self, name), minimum=1)
        check_float("ltrb", "min_score", self.min_score, low=-1.0, high=1.0)
        check_float("ltrb", "ltr_w", self.ltr_w, low=0.0, high=10.0)
        self.check_hop("ltrb")
        if self.objective not in OBJECTIVES:
            msg = f"ltrb: objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}"
            raise SpecError(msg)

    def ltr(self) -> LtrParams:
        """The params of the `ltr` part (what the model is fitted for)."""
        return LtrParams(
            pool=self.pool,
            min_score=self.min_score,
            rrf_k=self.rrf_k,
            objective=self.objective,
            sentences=self.sentences,
            dates=self.dates,
        )

    def bridge(self) -> BridgeParams:
        """The params of the bridged list (`BridgeArm.bridge` reads only the bridge's own fields)."""
        return BridgeParams(
            pool=self.depth,
            rrf_k=self.fuse_k,
            bridge_w=self.bridge_w,
            max_keys=self.max_keys,
            seeds=self.seeds,
            files_per_seed=self.files_per_seed,
            max_files=self.max_files,
            sessions_per_file=self.sessions_per_file,
            stem=self.stem,
        )


class LtrbArm:
    """ltr's ranking, fused with the file bridge when the question has one (module docstring)."""

    name = "ltrb"

    def __init__(self, memory: ReadAPI, params: LtrbParams, model: Mapping[str, Any]) -> None:
        self.params = params
        self.ltr = LtrArm(memory, params.ltr(), model)
        self.bridged = BridgeArm(memory, params.bridge())

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks by fused score (ltr's own answer when nothing is bridged)."""
        p = self.params
        bridged, files = self.bridged.bridge(query.text, query.scope)
        if not bridged:
            return self.ltr.search(query)
        ranking = self.ltr.search(replace(query, k=max(p.depth, query.k)))
        fused: dict[str, float] = {}
        from_ltr: set[str] = set()
        for rank, hit in enumerate(ranking[: p.depth], start=1):
            fused[hit.chunk_id] = p.ltr_w / (p.fuse_k + rank)
            from_ltr.add(hit.chunk_id)
        for rank, scored in enumerate(bridged[: p.depth], start=1):
            fused[scored.chunk_id] = fused.get(scored.chunk_id, 0.0) + p.bridge_w / (
                p.fuse_k + rank
            )
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: query.k]
        return [
            Hit(
                chunk_id=cid,
                score=score,
                via=bridge_via("ltr" if cid in from_ltr else "", files.get(cid)),
            )
            for cid, score in ranked
        ]


def fit_ltrb(
    memory: ReadAPI, params: LtrbParams, examples: tuple[Example, ...], seed: int
) -> Fitted:
    """ltr's fit for the `ltr` part of `params` (the bridge has no learned state)."""
    return fit_ltr(memory, params.ltr(), examples, seed)

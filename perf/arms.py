"""Arm latency: every registered arm over the same queries, with the query embedding excluded."""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arms import registry
from arms.base import Arm, Query
from arms.ltr import hand_model
from engine.api import ChunkRecord, ReadAPI, Scored, Settlement
from engine.memory import Memory
from engine.scope import Scope
from perf.measures import summary


class PreEmbedded:
    """`ReadAPI` over a `Memory` whose `embed_query` answers from precomputed vectors.

    Arms call `embed_query` first; serving it from a dict excludes the embedding from their latency,
    which is measured on its own. A text without a precomputed vector is embedded by the memory.
    """

    def __init__(self, memory: Memory, vectors: dict[str, NDArray[np.float32]]) -> None:
        self.memory = memory
        self.vectors = vectors

    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        return self.memory.lexical(text, scope, limit, stem=stem)

    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        return self.memory.nearest(vector, scope, limit, min_score)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        found = self.vectors.get(text)
        return self.memory.embed_query(text) if found is None else found

    def sentence_scores(
        self, vector: NDArray[np.float32], ids: Sequence[str], scope: Scope
    ) -> dict[str, float]:
        return self.memory.sentence_scores(vector, ids, scope)

    def vector(self, chunk_id: str) -> NDArray[np.float32] | None:
        return self.memory.vector(chunk_id)

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        return self.memory.chunks(ids, scope)

    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]:
        return self.memory.files_for_session(session_id, scope, limit)

    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]:
        return self.memory.sessions_for_file(path, scope, limit, exclude)

    def previous_session(self, session_id: str, scope: Scope) -> str | None:
        return self.memory.previous_session(session_id, scope)

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None:
        return self.memory.best_in_session(vector, session_id, scope)

    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]:
        return self.memory.settlements_of(ids, scope)


# A fitted arm's cost does not depend on its fitted numbers, so it is timed with a stand-in model of
# the right shape; every fitted arm needs one here.
STAND_IN_MODELS: dict[str, Mapping[str, Any]] = {
    "ltr": hand_model({"rrf": 1.0}),
    "ltrb": hand_model({"rrf": 1.0}),
}


def build_timed(name: str, api: ReadAPI) -> Arm:
    """Arm `name` with its default spec; a fitted arm with its stand-in model.

    Raises:
        KeyError: a fitted arm has no stand-in model in `STAND_IN_MODELS`.
    """
    if not registry.entry(name).fitted:
        return registry.build(name, api)
    if name not in STAND_IN_MODELS:
        msg = f"perf times the fitted arm {name!r} with a stand-in model: add one to perf.arms.STAND_IN_MODELS"
        raise KeyError(msg)
    return registry.build(name, api, STAND_IN_MODELS[name])


# Specs timed beside every registered arm's default, by the name the report gives them: options that
# change what an arm costs. sbridge and psbridge read sentence vectors, so they are timed only over a
# store that has them (the per-size stores: `perf.corpus.fill_vectors`; not the real-vector tier);
# psbridge also reads the best lexical hit's text to count the question's terms in it, and tpsbridge
# the 20 best candidates' times when the question asks about the present.
EXTRA_SPECS: dict[str, str] = {
    "sbridge": "bridge(sentences=True,stem=True)",
    "psbridge": "bridge(cover=0.5,sentences=True,stem=True,vector_w=2.0)",
    "tpsbridge": "bridge(cover=0.5,recency_w=1.0,sentences=True,stem=True,vector_w=2.0)",
}


# Arms timed again with each query's scope narrowed to a time window (`Scope.within`), as
# `search --since` asks: over the newer half of the chunks (`<arm>@window`), where a windowed read
# keeps the window's hits of a read of the snapshot or the hnswlib partitions, and over the newest
# hundredth of them (`<arm>@narrow`, a day of a long history), where few such hits are in the
# window and the read falls back to reading the window itself (`engine.window_reads`).
WINDOW_ARMS = ("fts", "vector", "rrf", "ltr")
WINDOWS: dict[str, float] = {"window": 0.5, "narrow": 0.01}  # name: share of the chunks in it


def measure_arms(
    api: ReadAPI, queries: Sequence[Query], warmup: int, *, extra: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """p50/p95 latency per registered arm (default spec) and per `extra` spec, arms interleaved
    query by query."""
    arms: dict[str, Arm] = {name: build_timed(name, api) for name in registry.names()}
    specs = {name: registry.full_canonical(name) for name in arms}
    for name, spec in (extra or {}).items():
        arms[name] = registry.build(spec, api)
        specs[name] = registry.full_canonical(spec)
    return _timed(arms, specs, queries, warmup)


def measure_windowed(
    api: ReadAPI, queries: Sequence[Query], warmup: int, since: datetime, name: str = "window"
) -> dict[str, dict[str, Any]]:
    """p50/p95 latency of each of `WINDOW_ARMS` over `queries` narrowed to the chunks written at or
    after `since`, under the name `<arm>@<name>`."""
    windowed = [replace(q, scope=q.scope.within(since, None)) for q in queries]
    arms = {f"{arm}@{name}": build_timed(arm, api) for arm in WINDOW_ARMS}
    specs = {f"{arm}@{name}": registry.full_canonical(arm) for arm in WINDOW_ARMS}
    return _timed(arms, specs, windowed, warmup)


def _timed(
    arms: Mapping[str, Arm], specs: Mapping[str, str], queries: Sequence[Query], warmup: int
) -> dict[str, dict[str, Any]]:
    for query in queries[:warmup]:
        for arm in arms.values():
            arm.search(query)
    times: dict[str, list[float]] = {name: [] for name in arms}
    gc.collect()
    for query in queries:
        for name, arm in arms.items():
            t0 = time.perf_counter_ns()
            arm.search(query)
            times[name].append((time.perf_counter_ns() - t0) / 1e6)
    return {name: {"spec": specs[name], **summary(sample)} for name, sample in times.items()}

"""Vector search: the engine's hnswlib partitions against an exact numpy scan (speed, recall@10).

The exact scan reads every stored vector through `Memory.vector_matrix`; the approximate side is
`Memory.nearest` itself, plus an ef sweep that loads the engine's partition files into hnswlib directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np
from numpy.typing import NDArray

from arms.base import Query
from engine.api import Scored
from engine.embed import Embedder
from engine.memory import Memory
from engine.scope import Scope
from engine.vectors import IndexParams, exact_search
from perf.config import TOP_K
from perf.measures import median, summary, timed

EF_SWEEP = (100, 300, 600, 1000)
Truth = tuple[NDArray[np.int64], float]  # the exact top-k labels and the exact k-th score


class ExactScan:
    """Every stored vector of one embedder in a matrix, searched exactly (all of it, or one scope)."""

    def __init__(
        self, memory: Memory, embedder: Embedder, rows: Sequence[tuple[int, str, str, str]]
    ) -> None:
        self.labels, self.matrix = memory.vector_matrix(embedder.id, embedder.dim)
        project_of = {r[0]: r[2] for r in rows}
        self._id_of = {r[0]: r[1] for r in rows}
        self._label_of = {r[1]: r[0] for r in rows}
        self._projects = np.asarray([project_of[int(x)] for x in self.labels], dtype=object)
        self._masks: dict[Scope, NDArray[np.bool_]] = {}

    def top(self, vector: NDArray[np.float32]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The exact top-10 labels and scores over every vector."""
        return exact_search(self.matrix, self.labels, vector, TOP_K)

    def scoped_ids(self, vector: NDArray[np.float32], scope: Scope) -> set[str]:
        """The chunk ids of the exact top-10 within `scope`."""
        mask = self._masks.get(scope)
        if mask is None:
            mask = (
                np.ones(len(self.labels), dtype=bool)
                if scope.all_projects
                else np.isin(self._projects, sorted(scope.projects))
            )
            self._masks[scope] = mask
        found, _ = exact_search(self.matrix[mask], self.labels[mask], vector, TOP_K, -1.0)
        return {self._id_of[int(x)] for x in found}

    def labels_of(self, hits: Sequence[Scored]) -> NDArray[np.int64]:
        return np.asarray([self._label_of[h.chunk_id] for h in hits], dtype=np.int64)

    def recall_ties(
        self, vector: NDArray[np.float32], approx: NDArray[np.int64], truth: Truth
    ) -> float:
        """Share of the returned items whose exact score reaches the exact k-th score (ties count)."""
        exact, kth = truth
        if len(exact) == 0:
            return 1.0
        scores = self.matrix[np.searchsorted(self.labels, approx)] @ vector
        return float(np.sum(scores >= kth - 1e-6)) / len(exact)


def recall(exact: NDArray[np.int64], approx: NDArray[np.int64]) -> float:
    """Share of the exact top-k labels that the approximate search returned."""
    return len(set(exact.tolist()) & set(approx.tolist())) / max(len(exact), 1)


def measure_hnsw(
    memory: Memory,
    embedder: Embedder,
    rows: Sequence[tuple[int, str, str, str]],
    queries: Sequence[Query],
    qvecs: dict[str, NDArray[np.float32]],
) -> dict[str, Any]:
    """The engine's hnswlib search against an exact numpy scan, unscoped and scoped.

    Unscoped is `Memory.nearest` with `Scope.everywhere()` (every project partition, merged); scoped
    is the question's own scope. Recall@10 is reported strictly (share of the exact top-10 labels
    returned) and tie-aware (share of returned items scoring at least the exact 10th score, as
    ann-benchmarks counts it), because near-duplicate chunks tie. An ef sweep over the same partition
    files shows what recall costs.
    """
    parts = memory.ensure_index()
    scan = ExactScan(memory, embedder, rows)
    everywhere = Scope.everywhere()
    times: dict[str, list[float]] = {"hnsw": [], "exact": [], "scoped_nearest": []}
    strict: list[float] = []
    ties: list[float] = []
    scoped: list[float] = []
    truths: list[Truth] = []
    for query in queries:
        vec = qvecs[query.text]
        (exact, exact_scores), ms = timed(scan.top, vec)
        times["exact"].append(ms)
        hits, ms = timed(memory.nearest, vec, everywhere, TOP_K, -1.0)
        times["hnsw"].append(ms)
        approx = scan.labels_of(hits)
        truths.append((exact, float(exact_scores[-1]) if len(exact_scores) else -1.0))
        strict.append(recall(exact, approx))
        ties.append(scan.recall_ties(vec, approx, truths[-1]))
        truth = scan.scoped_ids(vec, query.scope)
        found, ms = timed(memory.nearest, vec, query.scope, TOP_K, -1.0)
        times["scoped_nearest"].append(ms)
        scoped.append(len(truth & {s.chunk_id for s in found}) / max(len(truth), 1))
    params = next(iter(parts.values())).params if parts else IndexParams()
    return {
        "queries": len(queries),
        "vectors": len(scan.labels),
        "partitions": len(parts),
        "partition_sizes": sorted(len(index) for index in parts.values()),
        **{name: summary(sample) for name, sample in times.items()},
        "recall_at_10": float(np.mean(strict)),
        "recall_at_10_ties": float(np.mean(ties)),
        "scoped_recall_at_10": float(np.mean(scoped)),
        "params": params.to_dict(),
        "ef_sweep": ef_sweep(
            [index.path for index in parts.values()], embedder.dim, scan, queries, qvecs, truths
        ),
    }


def ef_sweep(
    paths: Sequence[Path],
    dim: int,
    scan: ExactScan,
    queries: Sequence[Query],
    qvecs: dict[str, NDArray[np.float32]],
    truths: Sequence[Truth],
) -> list[dict[str, float]]:
    """Unscoped recall@10 and latency of the engine's partition files at several ef (hnswlib directly)."""
    if not paths:
        return []
    indexes = []
    for path in paths:
        index = hnswlib.Index(space="cosine", dim=dim)
        index.load_index(str(path))
        indexes.append(index)
    out: list[dict[str, float]] = []
    for ef in EF_SWEEP:
        for index in indexes:
            index.set_ef(ef)
        times: list[float] = []
        strict: list[float] = []
        ties: list[float] = []
        for query, truth in zip(queries, truths, strict=True):
            vec = qvecs[query.text]
            approx, ms = timed(_merged_knn, indexes, vec)
            times.append(ms)
            strict.append(recall(truth[0], approx))
            ties.append(scan.recall_ties(vec, approx, truth))
        out.append(
            {
                "ef": ef,
                "recall_at_10": float(np.mean(strict)),
                "recall_at_10_ties": float(np.mean(ties)),
                "p50_ms": median(times),
            }
        )
    return out


def _merged_knn(indexes: Sequence[Any], vector: NDArray[np.float32]) -> NDArray[np.int64]:
    """The top-10 labels over every partition, merged by distance then label, as the engine merges."""
    found_parts = []
    dist_parts = []
    for index in indexes:
        k = min(TOP_K, int(index.get_current_count()))
        found, dist = index.knn_query(vector, k=k, num_threads=1)
        found_parts.append(np.asarray(found[0], dtype=np.int64))
        dist_parts.append(np.asarray(dist[0], dtype=np.float64))
    merged = np.concatenate(found_parts)
    order = np.lexsort((merged, np.concatenate(dist_parts)))[:TOP_K]
    result: NDArray[np.int64] = merged[order]
    return result

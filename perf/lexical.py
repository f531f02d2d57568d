"""Lexical search: FTS5 against rank-bm25, and the in-memory lexical index against FTS5.

The FTS5 reference is a `Memory` opened with `lexical_index="off"`, whose `lexical` asks FTS5 for every
query; the arms' lexical reads come from a `lexical_index="sync"` memory over the same database, which
answers from the in-memory index. Both must return the same ids, order and scores.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arms.base import Query
from engine.memory import Memory
from engine.scope import Scope
from harness.stats import percentile
from perf.config import TOP_K
from perf.measures import RBO_P, overlap_at_k, rbo_at_k, summary, timed

_WORD = re.compile(r"[\w-]+", re.UNICODE)
# FTS5's unicode61 tokenizer keeps letters and digits only; `_` and `-` separate tokens.
_UNICODE61 = re.compile(r"[^\W_]+", re.UNICODE)


def bm25_tokens(text: str) -> list[str]:
    """`text` split and folded as FTS5's unicode61 tokenizer does (ASCII case folding suffices here)."""
    return [t.lower() for t in _UNICODE61.findall(text)]


def bm25_query_tokens(text: str) -> list[str]:
    """The lexical read's query words (2+ characters, first occurrence kept) split as unicode61 would."""
    kept: list[str] = []
    for raw in text.split():
        for token in _WORD.findall(raw):
            if len(token) >= 2 and token not in kept:
                kept.append(token)
    return [piece for token in kept for piece in bm25_tokens(token)]


class RankBM25:
    """rank-bm25's BM25Okapi over every chunk, with FTS5's parameters, answering scoped top-k ids."""

    def __init__(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        from rank_bm25 import BM25Okapi  # a test extra: imported only when this comparison runs

        self._ids = [r[1] for r in rows]
        self._id_order = np.asarray(self._ids, dtype=object)
        self._projects = np.asarray([r[2] for r in rows], dtype=object)
        self._masks: dict[Scope, NDArray[np.bool_]] = {}
        t0 = time.perf_counter()
        # FTS5's bm25(): k1 = 1.2, b = 0.75, and a term in more than half the documents weighs ~0.
        self._bm25 = BM25Okapi([bm25_tokens(r[3]) for r in rows], k1=1.2, b=0.75, epsilon=0.0)
        self.build_s = time.perf_counter() - t0

    def top(self, text: str, scope: Scope, k: int = TOP_K) -> list[str]:
        """The ids of the `k` best-scoring chunks in `scope` (ties by id), positive scores only."""
        mask = self._mask(scope)
        scores = np.asarray(self._bm25.get_scores(bm25_query_tokens(text)), dtype=np.float64)
        scores = np.where(mask & (scores > 0), scores, -np.inf)
        best = np.argpartition(-scores, min(k, len(scores) - 1))[: k * 4]
        ranked = sorted(
            (int(i) for i in best if np.isfinite(scores[i])),
            key=lambda i: (-scores[i], self._id_order[i]),
        )[:k]
        return [self._ids[i] for i in ranked]

    def _mask(self, scope: Scope) -> NDArray[np.bool_]:
        mask = self._masks.get(scope)
        if mask is None:
            mask = (
                np.ones(len(self._ids), dtype=bool)
                if scope.all_projects
                else np.isin(self._projects, sorted(scope.projects))
            )
            self._masks[scope] = mask
        return mask


def measure_bm25(
    fts: Memory,
    snapshot: Memory,
    rows: Sequence[tuple[int, str, str, str]],
    queries: Sequence[Query],
) -> dict[str, Any]:
    """FTS5 (`fts`, opened with `lexical_index="off"`) against rank-bm25's BM25Okapi on the same
    scoped queries, and the in-memory index (`snapshot`, `lexical_index="sync"`) against FTS5 (speed,
    and whether the top 10 are identical)."""
    reference = RankBM25(rows)
    everywhere = Scope.everywhere()
    fts.lexical("warm up", everywhere, TOP_K)  # opens its connection outside the timings
    snapshot.lexical("warm up", everywhere, TOP_K)  # builds the in-memory index outside them
    times: dict[str, list[float]] = {"fts5": [], "snapshot": [], "rank_bm25": []}
    overlaps: list[float] = []
    rbos: list[float] = []
    identical: list[bool] = []
    max_score_diff = 0.0
    for query in queries:
        fts_hits, ms = timed(fts.lexical, query.text, query.scope, TOP_K)
        times["fts5"].append(ms)
        snap_hits, ms = timed(snapshot.lexical, query.text, query.scope, TOP_K)
        times["snapshot"].append(ms)
        other, ms = timed(reference.top, query.text, query.scope)
        times["rank_bm25"].append(ms)
        ids = [s.chunk_id for s in fts_hits]
        identical.append([s.chunk_id for s in snap_hits] == ids)
        for a, b in zip(fts_hits, snap_hits, strict=False):
            max_score_diff = max(max_score_diff, abs(a.score - b.score))
        overlaps.append(overlap_at_k(ids, other))
        rbos.append(rbo_at_k(ids, other))
    fts_p50 = percentile(times["fts5"], 50)
    return {
        "queries": len(queries),
        "fts5": summary(times["fts5"]),
        "snapshot": summary(times["snapshot"]),
        "snapshot_identical_top10": float(np.mean(identical)) if identical else 1.0,
        "snapshot_max_score_diff": max_score_diff,
        "rank_bm25": summary(times["rank_bm25"]),
        "rank_bm25_build_s": reference.build_s,
        "speedup_p50": percentile(times["rank_bm25"], 50) / max(fts_p50, 1e-9),
        "overlap_at_10": float(np.mean(overlaps)),
        "rbo_at_10": float(np.mean(rbos)),
        "rbo_p": RBO_P,
    }

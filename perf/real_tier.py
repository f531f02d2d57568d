"""The real-vector tier: one corpus whose chunks carry the run's real embedder's vectors (MiniLM by
default), measured beside the static tiers: hnswlib recall@10 against an exact scan, and the arm latencies.

The vectors come from `perf.vector_cache` (content hash + embedder id), so only the first run at a size
pays for embedding it. Everything goes through `Memory`'s public methods, as `perf.run` does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.embed import Embedder
from engine.memory import Memory
from harness.roster import Question
from perf.arms import PreEmbedded, measure_arms
from perf.config import PerfConfig, Progress
from perf.corpus import Built, store_in_batches, to_query
from perf.vector_cache import cached_embed
from perf.vectors import measure_hnsw


def store_cached_vectors(
    db: Path, real: Embedder, cache_root: Path, say: Progress
) -> dict[str, Any]:
    """Give every chunk of `db` without a `real` vector one, from the cache or embedded into it."""
    memory = Memory(db, None)
    try:
        pending = memory.pending_texts(real.id)
        vectors, stats = cached_embed(real, [text for _, text in pending], cache_root, say)
        store_s = store_in_batches(memory, real.id, pending, vectors)
    finally:
        memory.close()
    return {**stats.to_dict(), "store_s": store_s}


def measure_real_tier(
    built: Built,
    cfg: PerfConfig,
    real: Embedder,
    questions: Sequence[Question],
    cache_root: Path,
    say: Progress,
) -> dict[str, Any]:
    """Real vectors for every chunk of `built`, then hnswlib vs exact and every arm's latency."""
    say(f"real-vector tier: {built.chunks} chunks with {real.id} vectors")
    vectors = store_cached_vectors(built.db, real, cache_root, say)
    memory = Memory(built.db, real, lexical_index="sync")
    try:
        t0 = time.perf_counter()
        memory.ensure_index()
        index_s = time.perf_counter() - t0
        memory.warm_lexical()
        queries = [to_query(q) for q in questions]
        texts = sorted({q.text for q in queries})
        qvecs = dict(zip(texts, real.embed(texts), strict=True))
        arms = measure_arms(PreEmbedded(memory, qvecs), queries, cfg.warmup)
        hnsw = measure_hnsw(memory, real, memory.chunk_rows(), queries, qvecs)
    finally:
        memory.close()
    say(
        f"real-vector tier at {built.chunks}: recall@10 {hnsw['recall_at_10']:.4f}, "
        f"vector p50 {arms['vector']['p50_ms']:.2f} ms, rrf p50 {arms['rrf']['p50_ms']:.2f} ms"
        if "vector" in arms and "rrf" in arms
        else f"real-vector tier at {built.chunks}: recall@10 {hnsw['recall_at_10']:.4f}"
    )
    return {
        "size": built.size,
        "chunks": built.chunks,
        "embedder_id": real.id,
        "cache_dir": str(cache_root),
        "vectors": vectors,
        "index_build_s": index_s,
        "arms": arms,
        "hnsw_vs_exact": hnsw,
    }

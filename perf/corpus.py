"""The corpora a perf run measures: generated, imported without embedding, then given vectors.

Everything goes through `Memory`'s public methods (`import_paths`, `pending_texts`, `store_vectors`);
the queries are the generated rosters' questions.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arms.base import Query
from engine.embed import Embedder
from engine.ingest import embed_sentences
from engine.memory import Memory
from engine.scope import Scope
from harness.roster import Question, load_draft
from harness.synthetic import SyntheticConfig, generate
from perf.config import NOW, TOP_K, PerfConfig, PerfError, Progress
from perf.static_vectors import StaticMiniLM
from perf.vector_cache import cached_embed

# Vectors are stored this many at a time, each batch in its own transaction.
STORE_BATCH = 5000


@dataclass(frozen=True, kw_only=True)
class Built:
    """One generated and imported corpus."""

    size: int
    root: Path
    db: Path
    sessions: int
    chunks: int
    generate_s: float
    import_s: float
    files: int


def min_sessions(base: SyntheticConfig) -> int:
    """The fewest sessions the generator accepts for `base` (its dedicated sessions + 2 per project)."""
    dedicated = base.self_transcripts + base.echo_sessions + base.near_duplicates
    # each project needs room for its share of the planted commits, at most 3 a session
    return dedicated + max(2 * base.projects, -(-base.commits // 3) + base.projects)


def chunk_count(memory: Memory) -> int:
    """How many chunks `memory` holds."""
    return int(str(memory.status()["chunks"]))


def build_corpus(size: int, sessions: int, cfg: PerfConfig, work: Path, say: Progress) -> Built:
    """Generate a synthetic corpus of `sessions` sessions and import it without embedding."""
    root = work / f"corpus-{size}"
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    generate(root / "gen", replace(cfg.base, seed=cfg.seed, sessions=sessions))
    generate_s = time.perf_counter() - t0
    say(f"{size}: generated {sessions} sessions in {generate_s:.1f}s; importing")
    db = root / "memory.db"
    memory = Memory(db, None)
    t0 = time.perf_counter()
    report = memory.import_paths([root / "gen" / "projects"], embed=False)
    import_s = time.perf_counter() - t0
    if report.files_failed:
        first = next(iter(report.files_failed.items()))
        msg = f"{len(report.files_failed)} generated files failed to import, e.g. {first}"
        raise PerfError(msg)
    chunks = chunk_count(memory)
    memory.close()
    say(f"{size}: imported {chunks} chunks in {import_s:.1f}s ({chunks / import_s:.0f} chunks/s)")
    return Built(
        size=size,
        root=root,
        db=db,
        sessions=sessions,
        chunks=chunks,
        generate_s=generate_s,
        import_s=import_s,
        files=report.files_imported,
    )


def store_in_batches(
    memory: Memory,
    embedder_id: str,
    pending: Sequence[tuple[str, str]],
    vectors: NDArray[np.float32],
) -> float:
    """Store `vectors` (one per (sha256, text) of `pending`) under `embedder_id`, `STORE_BATCH` per
    transaction; the seconds it took."""
    t0 = time.perf_counter()
    for start in range(0, len(pending), STORE_BATCH):
        part = pending[start : start + STORE_BATCH]
        memory.store_vectors(
            embedder_id, [sha for sha, _ in part], vectors[start : start + STORE_BATCH]
        )
    return time.perf_counter() - t0


def fill_vectors(
    built: Built, cfg: PerfConfig, real: Embedder, say: Progress, cache_root: Path | None = None
) -> tuple[Embedder, dict[str, Any]]:
    """Give every chunk a vector (static MiniLM or the real embedder) and return the embedder used.

    Real vectors come from the vector cache under `cache_root` where it has them (`perf.vector_cache`).
    """
    memory = Memory(built.db, None)
    cache: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        if cfg.vectors == "static":
            static = StaticMiniLM()
            pending = memory.pending_texts(static.id)
            vectors = static.fit([text for _, text in pending])
            used: Embedder = static
        else:
            pending = memory.pending_texts(real.id)
            texts = [text for _, text in pending]
            if cache_root is None:
                vectors = real.embed(texts)
            else:
                vectors, stats = cached_embed(real, texts, cache_root, say)
                cache = {"cache_hits": stats.hits, "embedded": stats.embedded}
            used = real
        embed_s = time.perf_counter() - t0
        store_s = store_in_batches(memory, used.id, pending, vectors)
        t0 = time.perf_counter()
        # The person's chunks' sentence vectors, by the same embedder as the chunk vectors (static
        # ones for the static sizes); `perf.arms.EXTRA_SPECS` reads them. The real-vector tier
        # (`perf.real_tier`) stores none and times no extra spec.
        sentence_texts = embed_sentences(memory.conn, used)
        sentence_s = time.perf_counter() - t0
    finally:
        memory.close()
    say(
        f"{built.size}: {len(pending)} {cfg.vectors} vectors in {embed_s:.1f}s + {store_s:.1f}s store; "
        f"sentences of {sentence_texts} texts in {sentence_s:.1f}s"
    )
    return used, {
        "method": cfg.vectors,
        "embedder_id": used.id,
        "distinct_texts": len(pending),
        "embed_s": embed_s,
        "store_s": store_s,
        "sentence_texts": sentence_texts,
        "sentence_s": sentence_s,
        **cache,
    }


def load_queries(corpus_root: Path, count: int, seed: int) -> list[Question]:
    """`count` roster questions of a generated corpus, in a seeded shuffled order."""
    questions: list[Question] = []
    for path in sorted((corpus_root / "gen" / "rosters").glob("*.json")):
        questions.extend(load_draft(path).questions)
    if not questions:
        msg = f"no roster questions under {corpus_root / 'gen' / 'rosters'}; regenerate the corpus"
        raise PerfError(msg)
    questions.sort(key=lambda q: q.qid)
    order = np.random.default_rng(seed).permutation(len(questions))
    picked = [questions[int(i)] for i in order]
    while len(picked) < count:  # a tiny corpus has fewer questions than asked for: repeat them
        picked.extend(picked[: count - len(picked)])
    return picked[:count]


def to_query(question: Question) -> Query:
    """The arm query of a roster question, at the fixed `NOW` and the report's top k."""
    scope = Scope.everywhere() if question.scope == "*" else Scope.of(question.scope)
    return Query(text=question.text, scope=scope, now=NOW, k=TOP_K)

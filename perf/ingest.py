"""What embedding costs: ingest (`import_paths` end to end) against raw encode, and one query's vector."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine import sentence_sql
from engine.embed import Embedder
from engine.memory import Memory
from perf.config import PerfConfig, Progress
from perf.corpus import Built, chunk_count
from perf.measures import median, summary

INGEST_ROUNDS = 2


@dataclass(frozen=True, kw_only=True)
class IngestSample:
    """Whole session files copied under `tree`, the distinct chunk texts they hold, and the sentences
    the import embeds beside them (`engine.sentence_sql`: those of the person's chunk texts)."""

    tree: Path
    sessions: int
    chunks: int
    texts: list[str]
    sentences: list[str]


def ingest_sample(built: Built, cfg: PerfConfig, real: Embedder) -> IngestSample:
    """Whole session files of `built`, taken in order until they hold `ingest_chunks` chunks."""
    sample_root = built.root / "ingest-sample"
    shutil.rmtree(sample_root, ignore_errors=True)
    projects = built.root / "gen" / "projects"
    scratch = Memory(sample_root / "scratch.db", None)
    chosen: list[Path] = []
    chunks = 0
    for path in sorted(projects.glob("*/*.jsonl")):
        scratch.import_paths([path], embed=False)
        chosen.append(path)
        chunks = chunk_count(scratch)
        if chunks >= cfg.ingest_chunks:
            break
    texts = [text for _, text in scratch.pending_texts(real.id)]
    sentences = [
        sentence
        for _, text in sentence_sql.missing(scratch.conn, real.id)
        for sentence in sentence_sql.split(text)
    ]
    scratch.close()
    tree = sample_root / "projects"
    for path in chosen:
        target = tree / path.relative_to(projects)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return IngestSample(
        tree=tree, sessions=len(chosen), chunks=chunks, texts=texts, sentences=sentences
    )


def measure_ingest(built: Built, cfg: PerfConfig, real: Embedder, say: Progress) -> dict[str, Any]:
    """Ingest (`import_paths` with the real embedder) against raw encode of what it embeds: the
    distinct chunk texts, and the sentences of the person's chunk texts (`engine.sentence_sql`).

    A sample of whole session files is taken until it holds `ingest_chunks` chunks; raw encode and a
    fresh end-to-end import alternate (`INGEST_ROUNDS` imports between raw runs) and the ratio is the
    median over imports of (mean raw seconds of the runs around it / import seconds).
    `raw_texts_per_s` is the chunk texts' raw rate alone.
    """
    sample = ingest_sample(built, cfg, real)
    texts, sentences = sample.texts, sample.sentences
    say(
        f"ingest: sample of {sample.sessions} sessions, {sample.chunks} chunks, "
        f"{len(texts)} distinct texts, {len(sentences)} sentences"
    )
    real.embed(texts[:8])  # load the model and warm its kernels outside every timing
    raw_s: list[float] = []
    sentence_s: list[float] = []
    ingest_s: list[float] = []
    chunks_written = vectors_added = 0
    # raw, ingest, raw, ingest, raw: each ingest is compared with the raw runs on either side of it, so
    # load from other processes that drifts during the measurement weighs on both sides alike.
    for step in range(2 * INGEST_ROUNDS + 1):
        if step % 2 == 0:
            t0 = time.perf_counter()
            real.embed(texts)
            raw_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            if sentences:
                real.embed(sentences)
            sentence_s.append(time.perf_counter() - t0)
            continue
        memory = Memory(sample.tree.parent / f"ingest-{step}.db", real)
        t0 = time.perf_counter()
        report = memory.import_paths([sample.tree], embed=True)
        ingest_s.append(time.perf_counter() - t0)
        memory.close()
        chunks_written, vectors_added = report.chunks_written, report.vectors_added
        say(
            f"ingest: raw {len(texts) / raw_s[-1]:.1f} texts/s, "
            f"import_paths {vectors_added / ingest_s[-1]:.1f} texts/s"
        )
    raw_all = [a + b for a, b in zip(raw_s, sentence_s, strict=True)]
    ratios = [(raw_all[i] + raw_all[i + 1]) / 2 / ingest_s[i] for i in range(len(ingest_s))]
    result = {
        "sample_sessions": sample.sessions,
        "sample_chunks": chunks_written,
        "distinct_texts": len(texts),
        "vectors_added": vectors_added,
        "raw_encode_s": raw_s,
        "sentences": len(sentences),
        "raw_sentence_s": sentence_s,
        "ingest_s": ingest_s,
        "raw_texts_per_s": len(texts) / float(np.mean(raw_s)),
        "ingest_texts_per_s": vectors_added / float(np.mean(ingest_s)),
        "ingest_chunks_per_s": chunks_written / float(np.mean(ingest_s)),
        "ratios": ratios,
        "ratio": median(ratios),
        "embedder": real.id,
        "embedder_batch_size": getattr(real, "batch_size", None),
    }
    say(f"ingest: ratio {result['ratio']:.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)})")
    return result


def measure_query_embedding(real: Embedder, texts: Sequence[str], warmup: int) -> dict[str, Any]:
    """Latency of embedding one query text at a time, as `Memory.embed_query` does.

    With torch loaded it is measured at torch's configured thread count and again at one thread: on a
    busy two-core machine intra-op threads wait for each other, which can cost more than the model.
    """
    result: dict[str, Any] = dict(_embed_latency(real, texts, warmup))
    torch = sys.modules.get("torch")
    if torch is not None:
        configured = int(torch.get_num_threads())
        result["torch_threads"] = configured
        if configured != 1:
            torch.set_num_threads(1)
            try:
                result["one_thread"] = _embed_latency(real, texts, warmup)
            finally:
                torch.set_num_threads(configured)
    return result


def _embed_latency(real: Embedder, texts: Sequence[str], warmup: int) -> dict[str, float]:
    for text in texts[:warmup]:
        real.embed([text])
    times: list[float] = []
    for text in texts:
        t0 = time.perf_counter_ns()
        real.embed([text])
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return summary(times)

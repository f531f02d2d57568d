"""One perf run: every corpus size measured in turn, then the costs that do not depend on the size.

`run(cfg)` returns the report that `perf.report` prints and writes as `perf.json`.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.embed import Embedder, get_embedder
from engine.memory import Memory
from engine.scope import Scope
from harness.roster import Question
from perf.arms import EXTRA_SPECS, WINDOWS, PreEmbedded, measure_arms, measure_windowed
from perf.bootstrap import measure_bootstrap
from perf.catchup import measure_catchup
from perf.cli_search import measure_cli_search
from perf.config import GIB, PerfConfig, PerfError, Progress
from perf.corpus import Built, build_corpus, fill_vectors, load_queries, min_sessions, to_query
from perf.embed_rates import measure_embed_forms
from perf.hooks import measure_hook_latency
from perf.ingest import measure_ingest, measure_query_embedding
from perf.lexical import measure_bm25
from perf.machine import loadavg, machine_info, rss_bytes
from perf.real_tier import measure_real_tier
from perf.sanitizer import measure_sanitizer
from perf.search_process import measure_search_process
from perf.targets import growth, judge_targets
from perf.vector_cache import default_cache_dir
from perf.vectors import measure_hnsw


def run(
    cfg: PerfConfig, say: Progress | None = None, real: Embedder | None = None
) -> dict[str, Any]:
    """Run every measurement and return the report (see `perf.report`)."""
    say = say or Progress(enabled=False)
    started = datetime.now(UTC)
    load_start = loadavg()
    t_start = time.perf_counter()
    work = cfg.work_dir or Path(tempfile.mkdtemp(prefix="recallbench-perf-"))
    work.mkdir(parents=True, exist_ok=True)
    real = real or get_embedder(cfg.embedder)
    try:
        report = _run(cfg, say, real, work)
    finally:
        if cfg.work_dir is None:  # a temporary folder; a given work_dir is kept for inspection
            shutil.rmtree(work, ignore_errors=True)
    report["started"] = started.isoformat(timespec="seconds")
    report["loadavg_start"] = load_start
    report["wall_s"] = time.perf_counter() - t_start
    return report


def _run(cfg: PerfConfig, say: Progress, real: Embedder, work: Path) -> dict[str, Any]:
    cache_root = cfg.cache_dir or default_cache_dir()
    tiers = _measure_tiers(cfg, say, real, work, cache_root)
    built, used, questions = tiers.built, tiers.used, tiers.questions
    query_embedding = measure_query_embedding(
        real, [q.text for q in questions[: cfg.embed_queries]], cfg.warmup
    )
    say(f"query embedding ({real.id}) p50 {query_embedding['p50_ms']:.2f} ms")
    bootstrap = measure_bootstrap(cfg)
    say(f"bootstrap: {bootstrap['seconds_per_pair_p50']:.3f} s per arm pair")
    search = measure_search_process(built, cfg, used, questions[: cfg.rss_queries], work)
    say(f"search process peak RSS {search['peak_rss_bytes'] / GIB:.2f} GiB")
    hook = (
        measure_hook_latency(
            work,
            seed=cfg.seed,
            embedder=cfg.embedder,
            runs=cfg.hook_runs,
            ship=cfg.hook_ship,
            say=say,
        )
        if cfg.hook_runs
        else None
    )
    cli = measure_cli_search(built, cfg, used, real, questions, work, say) if cfg.cli_runs else None
    # after every other use of the largest store: this imports one more session into it
    catchup = measure_catchup(
        built.db, work, cfg.seed, [to_query(q) for q in questions[: cfg.bm25_queries]], say
    )
    # last: the encode rates import torch into this process
    forms = measure_embed_forms(
        work,
        [q.text for q in questions[: cfg.query_load_queries]],
        texts=cfg.embed_rate_texts,
        seed=cfg.seed,
        embedder=cfg.embedder,
        say=say,
    )
    sanitizer = measure_sanitizer(say)
    report: dict[str, Any] = {
        "config": cfg.to_dict(),
        "machine": machine_info(),
        "vectors_note": vectors_note(cfg, real, tiers.ingest, tiers.sizes),
        "ingest": tiers.ingest,
        "query_embedding": {"embedder": real.id, **query_embedding},
        "sizes": tiers.sizes,
        "real_vectors": tiers.real_tier,
        "bootstrap": bootstrap,
        "search_process": search,
        "hook": hook,
        "search_command": cli,
        "lexical_catchup": catchup,
        "embedding_forms": forms,
        "sanitizer": sanitizer,
        "vector_cache_dir": str(cache_root),
    }
    report["growth"] = growth(tiers.sizes)
    report["targets"] = judge_targets(report)
    return report


@dataclass(frozen=True, kw_only=True)
class Tiers:
    """The corpora measured: one row per static size, the real-vector tier, and what later steps use."""

    sizes: list[dict[str, Any]]
    real_tier: dict[str, Any] | None
    ingest: dict[str, Any]
    built: Built  # the largest corpus
    used: Embedder  # the embedder whose vectors the largest corpus searched
    questions: list[Question]


def _measure_tiers(
    cfg: PerfConfig, say: Progress, real: Embedder, work: Path, cache_root: Path
) -> Tiers:
    sizes: list[dict[str, Any]] = []
    cps = cfg.chunks_per_session
    built: Built | None = None
    used: Embedder | None = None
    ingest: dict[str, Any] | None = None
    real_tier: dict[str, Any] | None = None
    questions: list[Question] = []
    for size in cfg.sizes:
        sessions = max(min_sessions(cfg.base), round(size / cps))
        if built is not None:
            shutil.rmtree(built.root / "gen", ignore_errors=True)
        built = build_corpus(size, sessions, cfg, work, say)
        cps = built.chunks / built.sessions  # calibrate the next size on what this one produced
        if ingest is None:
            ingest = measure_ingest(built, cfg, real, say)
            questions = load_queries(built.root, cfg.queries, cfg.seed)
        row, used = measure_size(built, cfg, real, questions, say, cache_root)
        sizes.append(row)
        if size == cfg.real_size:  # the real-vector tier reuses this corpus
            real_tier = measure_real_tier(built, cfg, real, questions, cache_root, say)
    if built is None or used is None or ingest is None:
        msg = "no corpus was measured; give at least one size"
        raise PerfError(msg)
    if cfg.real_size and real_tier is None:
        sessions = max(min_sessions(cfg.base), round(cfg.real_size / cps))
        own = build_corpus(cfg.real_size, sessions, cfg, work, say)
        shutil.rmtree(own.root / "gen", ignore_errors=True)
        real_tier = measure_real_tier(own, cfg, real, questions, cache_root, say)
    return Tiers(
        sizes=sizes,
        real_tier=real_tier,
        ingest=ingest,
        built=built,
        used=used,
        questions=questions,
    )


def measure_size(
    built: Built,
    cfg: PerfConfig,
    real: Embedder,
    questions: Sequence[Question],
    say: Progress,
    cache_root: Path | None = None,
) -> tuple[dict[str, Any], Embedder]:
    """Every per-size figure for one imported corpus (real vectors through the cache at `cache_root`)."""
    used, vector_info = fill_vectors(built, cfg, real, say, cache_root)
    memory = Memory(built.db, used, lexical_index="sync")
    fts = Memory(built.db, used, lexical_index="off")  # the FTS5 reference for the lexical figures
    t0 = time.perf_counter()
    parts = memory.ensure_index()
    index_s = time.perf_counter() - t0
    say(f"{built.size}: hnswlib index built in {index_s:.1f}s")
    rss_before = rss_bytes()
    t0 = time.perf_counter()
    memory.warm_lexical()
    lexical_s = time.perf_counter() - t0
    lexical_rss = rss_bytes() - rss_before
    say(f"{built.size}: in-memory lexical index built in {lexical_s:.1f}s")
    queries = [to_query(q) for q in questions]
    texts = sorted({q.text for q in queries})
    qvecs = dict(zip(texts, used.embed(texts), strict=True))
    arms = measure_arms(PreEmbedded(memory, qvecs), queries, cfg.warmup, extra=EXTRA_SPECS)
    for name, share in WINDOWS.items():
        since = window_start(memory, share)
        arms |= measure_windowed(PreEmbedded(memory, qvecs), queries, cfg.warmup, since, name)
        say(
            f"{built.size}: <arm>@{name} read the chunks written since {since:%Y-%m-%d %H:%M} "
            f"(the newest {share:.0%})"
        )
    say(
        f"{built.size}: arm p50 ms "
        + ", ".join(f"{name} {row['p50_ms']:.2f}" for name, row in arms.items())
    )
    rows = memory.chunk_rows()
    hnsw = measure_hnsw(memory, used, rows, queries, qvecs)
    say(
        f"{built.size}: hnsw p50 {hnsw['hnsw']['p50_ms']:.2f} ms vs exact "
        f"{hnsw['exact']['p50_ms']:.2f} ms, recall@10 {hnsw['recall_at_10']:.3f}"
    )
    bm25 = measure_bm25(fts, memory, rows, queries[: cfg.bm25_queries])
    say(
        f"{built.size}: fts5 p50 {bm25['fts5']['p50_ms']:.2f} ms vs rank-bm25 "
        f"{bm25['rank_bm25']['p50_ms']:.1f} ms, overlap@10 {bm25['overlap_at_10']:.3f}"
    )
    index_files = [memory.index_path]
    for index in parts.values():
        index_files += [index.path, index.meta_path]
    memory.close()
    fts.close()
    return {
        "size": built.size,
        "chunks": built.chunks,
        "sessions": built.sessions,
        "files": built.files,
        "generate_s": built.generate_s,
        "import_s": built.import_s,
        "import_chunks_per_s": built.chunks / built.import_s,
        "vectors": vector_info,
        "index_build_s": index_s,
        "lexical_build_s": lexical_s,
        "lexical_rss_bytes": lexical_rss,
        "db_bytes": disk_bytes([built.db, Path(f"{built.db}-wal")]),
        "index_bytes": disk_bytes(index_files),
        "arms": arms,
        "fts_vs_bm25": bm25,
        "hnsw_vs_exact": hnsw,
    }, used


def window_start(memory: Memory, share: float) -> datetime:
    """The time from which about `share` of the store's dated chunks were written (0.5: the median)."""
    ids = [row[1] for row in memory.chunk_rows()]
    times = sorted(
        datetime.fromisoformat(r.ts_start)
        for r in memory.chunks(ids, Scope.everywhere())
        if r.ts_start is not None
    )
    return times[min(len(times) - 1, int(len(times) * (1 - share)))]


def disk_bytes(paths: Iterable[Path]) -> int:
    """Bytes on disk of the files among `paths` that exist."""
    return sum(p.stat().st_size for p in paths if p.exists())


def vectors_note(
    cfg: PerfConfig, real: Embedder, ingest: dict[str, Any], sizes: Sequence[dict[str, Any]]
) -> str:
    """Which vectors were searched, in words, for the report's header."""
    if cfg.vectors == "embed":
        return f"every chunk was embedded for real with {real.id}"
    largest = max(int(s["chunks"]) for s in sizes)
    minutes = largest / float(ingest["raw_texts_per_s"]) / 60
    return (
        "searched vectors are static MiniLM vectors (idf-weighted mean of MiniLM's word-piece input "
        "embeddings, mean-centred, L2-normalised, 384-d), computed in this run and stored with "
        f"Memory.store_vectors; real {real.id} vectors for {largest} chunks would take about "
        f"{minutes:.0f} min at this run's raw encode rate ({ingest['raw_texts_per_s']:.1f} texts/s). "
        f"{real.id} itself is measured for the ingest ratio and the query-embedding cost"
        + (
            f"; the real-vector tier below searches real {real.id} vectors."
            if cfg.real_size
            else "."
        )
    )

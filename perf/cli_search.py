"""`recallbench search` end to end, process start to exit, over the largest corpus: without a server
(the command embeds the query itself through ONNX Runtime) and with a running `recallbench serve` over
the same database (the command asks its socket first). Also the peak memory of the serverless command.

The commands run as a person runs them (the console script, a home folder of their own, `--db` the
corpus) under `perf.child_usage`, which reports each one's wall time and peak resident set. The search
reads the run embedder's vectors: in a static run the corpus's static vectors are stored again under
the real embedder's id (the cost measured is loading an index of that many vectors and embedding the
query with the real model; the ranking itself is not judged here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.embed import Embedder
from engine.memory import Memory
from harness.roster import Question
from perf.config import MIB, PerfConfig, PerfError, Progress
from perf.corpus import Built, store_in_batches
from perf.hooks import (
    LEXICAL_READY,
    LISTENING,
    bytecode_note,
    distinct_prompts,
    process_env,
    recallbench_command,
    start_server,
    stop_server,
)
from perf.measures import summary

# `recallbench search` targets of issue 17 (p95 seconds, peak MB = 10^6 bytes).
CLI_TARGETS = {"no_server_p95_s": 1.0, "with_server_p95_s": 0.3, "no_server_peak_rss_mb": 300.0}
MB = 1_000_000
WARMUP = 2  # the first runs write Python's bytecode cache, as a person's first search does
SERVED = "answered by the server"
_ROOT = Path(__file__).resolve().parents[1]


def prepare_store(built: Built, used: Embedder, real: Embedder, say: Progress) -> dict[str, Any]:
    """Vectors under `real.id` for every chunk of `built` (the searched ones, if `used` is another
    embedder) and the hnswlib index the command will load."""
    memory = Memory(built.db, used)
    try:
        pending = memory.pending_texts(real.id)
        t0 = time.perf_counter()
        if pending:
            store_in_batches(memory, real.id, pending, used.embed([text for _, text in pending]))
        store_s = time.perf_counter() - t0
    finally:
        memory.close()
    memory = Memory(built.db, real)
    try:
        t0 = time.perf_counter()
        memory.ensure_index()
        index_s = time.perf_counter() - t0
    finally:
        memory.close()
    say(f"search command: {len(pending)} vectors stored under {real.id}, index in {index_s:.1f}s")
    return {
        "vectors": "real" if used.id == real.id else f"{used.id} vectors stored under {real.id}",
        "stored": len(pending),
        "store_s": store_s,
        "index_build_s": index_s,
    }


def scope_args(question: Question) -> list[str]:
    """The `recallbench search` options that scope the search as the question is scoped."""
    if question.scope == "*":
        return ["--all-projects"]
    return [arg for project in question.scope for arg in ("--project", project)]


def distinct_searches(questions: Sequence[Question], count: int) -> list[tuple[str, Question]]:
    """`count` different query texts, each with the question whose scope it is searched in.

    The server keeps recent query vectors, so a repeated text would time that cache, not the search
    (`perf.hooks.distinct_prompts` adds lead-ins once every question has been asked).
    """
    unique = list({q.text: q for q in questions}.values())
    if not unique:
        msg = "the search command needs at least one question"
        raise PerfError(msg)
    texts = distinct_prompts([q.text for q in unique], count)
    return [(text, unique[i % len(unique)]) for i, text in enumerate(texts)]


def _run_one(command: Sequence[str], env: dict[str, str], folder: Path) -> dict[str, Any]:
    out, err = folder / "stdout.txt", folder / "stderr.txt"
    launcher = [sys.executable, "-m", "perf.child_usage", str(out), str(err), "--", *command]
    done = subprocess.run(
        launcher, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    if done.returncode != 0:
        msg = f"perf.child_usage failed (exit {done.returncode}): {done.stderr[-1000:]}"
        raise PerfError(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    stderr = err.read_text(encoding="utf-8", errors="replace")
    if result["returncode"] != 0:
        msg = f"`{' '.join(command)}` exited {result['returncode']}: {stderr[-1000:]}"
        raise PerfError(msg)
    result["served"] = SERVED in stderr
    result["hits_printed"] = out.stat().st_size > 0
    return result


def time_searches(
    env: dict[str, str], db: Path, asked: Sequence[tuple[str, Question]], folder: Path
) -> dict[str, Any]:
    """Each (text, question) searched by a fresh command; the runs after `WARMUP` summarised."""
    folder.mkdir(parents=True, exist_ok=True)
    runs = []
    for text, question in asked:
        command = [
            *recallbench_command(),
            "search",
            "--db",
            str(db),
            "--verbose",
            *scope_args(question),
            "--",
            text,
        ]
        runs.append(_run_one(command, env, folder))
    kept = runs[WARMUP:]
    peaks = [int(r["peak_rss_bytes"]) for r in kept]
    return {
        **summary([1000.0 * float(r["wall_s"]) for r in kept]),
        "peak_rss_bytes": max(peaks),
        "peak_rss_p50_bytes": sorted(peaks)[len(peaks) // 2],
        "launcher_peak_rss_bytes": max(int(r["launcher_peak_rss_bytes"]) for r in kept),
        "answered_by_server": sum(bool(r["served"]) for r in kept),
        "printed_hits": sum(bool(r["hits_printed"]) for r in kept),
    }


def measure_cli_search(
    built: Built,
    cfg: PerfConfig,
    used: Embedder,
    real: Embedder,
    questions: Sequence[Question],
    work: Path,
    say: Progress,
) -> dict[str, Any]:
    """`recallbench search` process start to exit over `built`, without and with a running server."""
    prepared = prepare_store(built, used, real, say)
    home = work / "search-home"
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)  # the command refuses a home folder others could write
    env, bytecode_disabled = process_env(home, cfg.embedder)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
    count = cfg.cli_runs + WARMUP
    asked = distinct_searches(questions, 2 * count)
    say(f"search command: {cfg.cli_runs} runs without a server over {built.chunks} chunks")
    alone = time_searches(env, built.db, asked[:count], work / "search-alone")
    say(
        f"search command without a server: p95 {alone['p95_ms']:.0f} ms, "
        f"peak RSS {alone['peak_rss_bytes'] / MIB:.0f} MiB; starting `recallbench serve`"
    )
    t0 = time.perf_counter()
    # Timed once the server is warm: its socket listens and its first lexical snapshot is held
    # (until then FTS5 answers the lexical side while the build shares the CPU); how long that took
    # is reported beside it.
    server = start_server(env, ["--db", str(built.db)], ready=(LISTENING, LEXICAL_READY))
    server_start_s = time.perf_counter() - t0
    try:
        served = time_searches(env, built.db, asked[count:], work / "search-served")
    finally:
        stop_server(server)
    say(f"search command with a server: p95 {served['p95_ms']:.0f} ms")
    return {
        "chunks": built.chunks,
        "embedder": cfg.embedder,
        "command": " ".join(recallbench_command()) + " search --db DB --verbose SCOPE -- QUERY",
        "store": prepared,
        "no_server": alone,
        "with_server": served,
        "server_start_s": server_start_s,
        "warmup_runs": WARMUP,
        "bytecode_cache": bytecode_note(bytecode_disabled),
        "targets": CLI_TARGETS,
    }

"""Peak memory of a search process: a fresh interpreter loads the embedder and the index, runs every arm.

The parent writes a spec file and runs `python -m perf --search-process SPEC`; the child prints one JSON
line of resident-set figures.
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

import numpy as np
from numpy.typing import NDArray

from arms import registry
from engine.embed import Embedder, get_embedder
from engine.memory import Memory
from harness.roster import Question
from perf.arms import PreEmbedded, build_timed
from perf.config import PerfConfig, PerfError
from perf.corpus import Built, to_query
from perf.machine import peak_rss_bytes, rss_bytes
from perf.static_vectors import StaticMiniLM

# The folder that holds the `perf` package, put on the child's path so that it imports this tree.
_ROOT = Path(__file__).resolve().parents[1]


def measure_search_process(
    built: Built,
    cfg: PerfConfig,
    used: Embedder,
    questions: Sequence[Question],
    work: Path,
) -> dict[str, Any]:
    """Peak RSS of a fresh process that loads the embedder and the index and runs every arm."""
    spec: dict[str, Any] = {
        "db": str(built.db),
        "embedder": cfg.embedder,
        "static_state": None,
        "queries": [{"text": q.text, "scope": q.scope} for q in questions],
        "warmup": cfg.warmup,
    }
    if isinstance(used, StaticMiniLM):
        state_path = work / f"static-{built.size}.npz"
        state = used.state()
        np.savez(state_path, idf=state["idf"], mean=state["mean"])
        spec["static_state"] = str(state_path)
    spec_path = work / f"search-process-{built.size}.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "perf", "--search-process", str(spec_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        msg = f"the search process failed with exit code {proc.returncode}: {proc.stderr[-2000:]}"
        raise PerfError(msg)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["chunks"] = built.chunks
    return result


def search_process(spec_path: Path) -> dict[str, Any]:
    """The body of the measured search process (run with `--search-process SPEC`)."""
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    rss_start = rss_bytes()
    real = get_embedder(spec["embedder"])
    used: Embedder = real
    if spec["static_state"] is not None:
        static = StaticMiniLM()
        with np.load(spec["static_state"]) as state:
            static.load_state(state["idf"], state["mean"])
        used = static
    real.embed(["warm the model up"])
    rss_model = rss_bytes()
    memory = Memory(Path(spec["db"]), used, lexical_index="sync")
    memory.ensure_index()
    memory.warm_lexical()
    rss_index = rss_bytes()
    queries = [
        to_query(
            Question(
                qid=f"q{i}",
                text=q["text"],
                scope=q["scope"] if q["scope"] == "*" else tuple(q["scope"]),
                category="perf",
            )
        )
        for i, q in enumerate(spec["queries"])
    ]
    t0 = time.perf_counter()
    vectors: dict[str, NDArray[np.float32]] = {}
    for query in queries:
        real.embed([query.text])  # the production cost and memory of embedding each query
        vectors[query.text] = used.embed([query.text])[0]
    api = PreEmbedded(memory, vectors)
    arms = {name: build_timed(name, api) for name in registry.names()}
    for query in queries:
        for arm in arms.values():
            arm.search(query)
    seconds = time.perf_counter() - t0
    return {
        "queries": len(queries),
        "arms": sorted(arms),
        "seconds": seconds,
        "rss_start_bytes": rss_start,
        "rss_after_model_bytes": rss_model,
        "rss_after_index_bytes": rss_index,
        "peak_rss_bytes": peak_rss_bytes(),
        "embedder": real.id,
        "vectors_embedder": used.id,
    }

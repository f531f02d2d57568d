"""The in-memory lexical index catching up after one session's import, against a full rebuild.

A server keeps an in-memory snapshot of FTS5 (`engine.lexical_reads`); every import bumps the store's
generation. Measured at the largest corpus, after every other figure (the import changes the store):

1. a full snapshot build (what every import cost before `engine.lexical_layers`);
2. one new session imported through `Memory.import_paths` (the largest session file of a small
   synthetic corpus generated with another seed, so its chunks are new);
3. the snapshot brought up to date (`Memory.warm_lexical`): the catch-up;
4. a full rebuild of the same store, and the two indexes compared on every query: ids, order and
   scores must be identical.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from arms.base import Query
from engine.lexical_index import LexicalIndex
from engine.lexical_layers import LayeredIndex, max_delta_rows
from engine.memory import Memory
from harness.synthetic import SyntheticConfig, generate
from perf.config import TOP_K, PerfError, Progress
from perf.corpus import chunk_count
from perf.measures import summary, timed


def one_session(work: Path, seed: int) -> Path:
    """A folder holding one new session file (the largest of a small corpus: the catch-up's cost
    grows with the rows it adds), as `projects/<project>/<session>.jsonl`."""
    gen = work / "catchup-gen"
    shutil.rmtree(gen, ignore_errors=True)
    generate(gen, replace(SyntheticConfig.small(), seed=seed + 1))
    files = sorted((gen / "projects").rglob("*.jsonl"), key=lambda p: (p.stat().st_size, str(p)))
    if not files:
        msg = f"the catch-up corpus under {gen} has no session files"
        raise PerfError(msg)
    chosen = files[-1]
    folder = work / "catchup-session"
    shutil.rmtree(folder, ignore_errors=True)
    target = folder / chosen.relative_to(gen)
    target.parent.mkdir(parents=True)
    shutil.copy2(chosen, target)
    return folder


def measure_catchup(
    db: Path, work: Path, seed: int, queries: Sequence[Query], say: Progress
) -> dict[str, Any]:
    """Full build, one session's import, catch-up, rebuild and comparison (see the module docstring)."""
    memory = Memory(db, None, lexical_index="sync")
    try:
        t0 = time.perf_counter()
        memory.warm_lexical()
        build_s = time.perf_counter() - t0
        before = chunk_count(memory)
        folder = one_session(work, seed)
        report = memory.import_paths([folder], embed=False)
        if report.files_failed or report.files_imported != 1:
            msg = (
                f"the catch-up session did not import: {report.files_failed or 'nothing imported'}"
            )
            raise PerfError(msg)
        added = chunk_count(memory) - before
        t0 = time.perf_counter()
        memory.warm_lexical()
        catchup_s = time.perf_counter() - t0
        caught = memory.lexical_snapshot()
        if caught is None or not caught.is_current(memory.conn):
            msg = "the lexical snapshot is not current after warm_lexical"
            raise PerfError(msg)
        t0 = time.perf_counter()
        rebuilt = LexicalIndex.build(memory.conn)
        rebuild_s = time.perf_counter() - t0
        compared = _compare(caught, rebuilt, queries)
    finally:
        memory.close()
    say(
        f"lexical catch-up after one session (+{added} chunks): {catchup_s:.3f}s vs full rebuild "
        f"{rebuild_s:.2f}s; identical top {TOP_K} on {compared['identical']:.3f} of queries"
    )
    return {
        "chunks_before": before,
        "chunks_added": added,
        "layered": isinstance(caught, LayeredIndex),
        "max_delta_rows": max_delta_rows(
            caught.base if isinstance(caught, LayeredIndex) else caught
        ),
        "first_build_s": build_s,
        "catchup_s": catchup_s,
        "rebuild_s": rebuild_s,
        "speedup": rebuild_s / max(catchup_s, 1e-9),
        **compared,
    }


def _compare(
    caught: LexicalIndex, rebuilt: LexicalIndex, queries: Sequence[Query]
) -> dict[str, Any]:
    """Whether both indexes give the same ids, order and scores, and what a query costs on each."""
    same: list[bool] = []
    times: dict[str, list[float]] = {"caught_up": [], "rebuilt": []}
    for query in queries:
        allowed = None if query.scope.all_projects else frozenset(query.scope.projects)
        got, ms = timed(caught.search_text, query.text, allowed, TOP_K)
        times["caught_up"].append(ms)
        want, ms = timed(rebuilt.search_text, query.text, allowed, TOP_K)
        times["rebuilt"].append(ms)
        same.append(got == want)
    return {
        "queries": len(same),
        "identical": sum(same) / len(same) if same else 1.0,
        "query_caught_up": summary(times["caught_up"]),
        "query_rebuilt": summary(times["rebuilt"]),
    }

"""`perf.catchup`: one session imported into a store, the lexical snapshot caught up, and the caught-up
index compared with a full rebuild on real queries."""

from __future__ import annotations

from pathlib import Path

from engine.memory import Memory
from harness.synthetic import SyntheticConfig, generate
from perf.catchup import measure_catchup, one_session
from perf.config import Progress
from perf.corpus import chunk_count, load_queries, to_query


def test_one_session_is_one_new_file(tmp_path: Path) -> None:
    folder = one_session(tmp_path, seed=5)
    files = list(folder.rglob("*.jsonl"))
    assert len(files) == 1
    assert files[0].relative_to(folder).parts[0] == "projects"


def test_catchup_after_one_session_matches_a_rebuild(tmp_path: Path) -> None:
    generate(tmp_path / "gen", SyntheticConfig.small(seed=9))
    db = tmp_path / "memory.db"
    memory = Memory(db, None)
    memory.import_paths([tmp_path / "gen" / "projects"], embed=False)
    before = chunk_count(memory)
    memory.close()
    queries = [to_query(q) for q in load_queries(tmp_path, 40, seed=9)]
    out = measure_catchup(db, tmp_path / "work", 9, queries, Progress(enabled=False))
    after = chunk_count(Memory(db, None))
    assert out["chunks_before"] == before
    assert out["chunks_added"] == after - before > 0
    assert out["layered"] is True  # caught up, not rebuilt
    assert out["queries"] == 40
    assert out["identical"] == 1.0
    assert out["speedup"] == out["rebuild_s"] / out["catchup_s"]

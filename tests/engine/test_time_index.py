"""The chunks' time index (migration 10, `engine.reads.TIME_INDEX`): a narrow window's exact vector
scan reads a range of it instead of walking every vector of the embedder, and answers as before."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from engine import store
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from engine.window_reads import nearest_in_window, window_vectors_sql
from tests.engine.old_store import store_at_version
from tests.engine.window_corpus import QUERY, session_id, write_window_corpus

JAN_20 = datetime(2026, 1, 20, tzinfo=UTC)


def imported(tmp_path: Path) -> Path:
    db = tmp_path / "memory.db"
    memory = Memory(db, HashEmbedder())
    try:
        assert memory.import_paths([write_window_corpus(tmp_path) / "projects"]).files_failed == {}
    finally:
        memory.close()
    return db


def plan(conn: sqlite3.Connection, scope: Scope) -> str:
    sql, params = window_vectors_sql(HashEmbedder().id, scope)
    return " | ".join(str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_a_windowed_vector_scan_reads_a_range_of_the_time_index(tmp_path: Path) -> None:
    conn = store.connect(imported(tmp_path))
    try:
        windowed = plan(conn, Scope.everywhere().within(JAN_20, None))
        assert "SEARCH c USING INDEX chunks_time" in windowed
        assert "chunks_time" not in plan(conn, Scope.everywhere())  # control: no window, no range
    finally:
        conn.close()


def test_the_scan_answers_the_window_in_score_then_id_order(tmp_path: Path) -> None:
    db = imported(tmp_path)
    conn = store.connect(db)
    try:
        vector = HashEmbedder().embed([QUERY])[0]
        hits = nearest_in_window(
            conn, HashEmbedder().id, vector, Scope.everywhere().within(JAN_20, None), 10, -1.0
        )
        ids = {str(r[0]): str(r[1]) for r in conn.execute("SELECT id, session_id FROM chunks")}
    finally:
        conn.close()
    # Sessions 2, 3 and 4 were written on or after 2026-01-20; session 1 (the best match) before.
    assert sorted(ids[h.chunk_id] for h in hits) == [session_id(n) for n in (2, 3, 4)]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert len(hits) == 3


def test_a_store_made_before_the_index_gets_it_on_open(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store_at_version(db, 9)
    conn = sqlite3.connect(db)
    assert (
        conn.execute("SELECT name FROM sqlite_master WHERE name = 'chunks_time'").fetchall() == []
    )
    conn.close()
    migrated = store.connect(db)
    try:
        found = migrated.execute("SELECT name FROM sqlite_master WHERE name = 'chunks_time'")
        assert found.fetchall() == [("chunks_time",)]
        # and every migration after it: 11, the strings `forget --redact` keeps out
        assert int(migrated.execute("PRAGMA user_version").fetchone()[0]) == 11
    finally:
        migrated.close()

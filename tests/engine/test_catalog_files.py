"""A one-shot memory (`Memory(one_shot=True)`, what `recallbench search` opens) answers nearest reads
from the current partition files and a few indexed reads, never reading the whole catalog, with the
snapshot path's hits; when the files are stale or missing it reads through the snapshot as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import catalog_sql
from engine.api import Scored
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.test_catalog_scoped import C, catalog_reads, store_of
from tests.engine.test_memory import A, B, _many_sessions, open_memory

# (limit, min_score): a short list, a floor that drops some hits, and more than B holds.
READS = ((5, 0.0), (40, 0.1), (500, -1.0))
SCOPES = (Scope.of(A), Scope.of(B), Scope.of(C), Scope.of(A, B), Scope.everywhere())
PROBES = ("deploy the retry parser", "commit the vector index", "zebra quokka marmot")


def one_shot(tmp_path: Path) -> Memory:
    """A new process's one-shot memory over the same database and index files."""
    return Memory(tmp_path / "m.db", open_memory(tmp_path, "other.db").embedder, one_shot=True)


def snapshot_answers(tmp_path: Path) -> dict[tuple[str, Scope, int, float], list[Scored]]:
    """Every (probe, scope, limit, floor) read through the snapshot path, in a memory of its own."""
    reference = open_memory(tmp_path)
    try:
        return {
            (text, scope, limit, floor): reference.nearest(
                reference.embed_query(text), scope, limit, floor
            )
            for text in PROBES
            for scope in SCOPES
            for limit, floor in READS
        }
    finally:
        reference.close()


def test_a_one_shot_memory_reads_the_partition_files_and_gives_the_snapshot_paths_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_of(tmp_path)
    want = snapshot_answers(tmp_path)
    # B (2 sessions) has no partition; A and C (50 sessions each) do.
    assert len(want["zebra quokka marmot", Scope.of(B), 500, -1.0]) <= 256
    assert len(want["zebra quokka marmot", Scope.everywhere(), 500, -1.0]) == 500
    asked = catalog_reads(monkeypatch)
    memory = one_shot(tmp_path)
    for (text, scope, limit, floor), hits in want.items():
        assert memory.nearest(memory.embed_query(text), scope, limit, floor) == hits
    catalog = memory._require_vectors()
    assert catalog._snapshot is None
    assert catalog._scoped == {}
    # The only catalog rows read were B's, the project scanned exactly; A's and C's were never read.
    assert asked
    assert all(projects == [B] for projects in asked)
    assert set(catalog._held[1]) == {A, C}
    # Control: a memory that is not one-shot reads the catalog for the same reads.
    asked.clear()
    other = Memory(tmp_path / "m.db", open_memory(tmp_path, "other.db").embedder)
    probe = other.embed_query(PROBES[0])
    assert (
        other.nearest(probe, Scope.everywhere(), 5) == want[PROBES[0], Scope.everywhere(), 5, 0.0]
    )
    assert asked == [None]
    assert other._require_vectors()._snapshot is not None


def test_a_one_shot_read_after_an_import_reads_through_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_of(tmp_path)
    memory = one_shot(tmp_path)
    probe = memory.embed_query("zebra quokka marmot")
    before = memory.nearest(probe, Scope.of(A), 500, -1.0)
    assert memory._require_vectors()._snapshot is None  # control: the files answered
    _many_sessions(tmp_path / "more", A, 300, 1, seed=11)
    memory.import_paths([tmp_path / "more"])
    asked = catalog_reads(monkeypatch)
    after = memory.nearest(probe, Scope.of(A), 500, -1.0)
    # The partitions were written for the previous generation: the snapshot path answered.
    assert asked[0] == [A]
    reference = open_memory(tmp_path)
    assert after == reference.nearest(probe, Scope.of(A), 500, -1.0)
    added = {s.chunk_id for s in after} - {s.chunk_id for s in before}
    assert added  # the new session's chunks are found
    assert memory.index_state() == "current"  # the read brought the partitions up to date


def test_a_missing_partition_file_sends_a_one_shot_read_through_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_of(tmp_path)
    want = snapshot_answers(tmp_path)[PROBES[1], Scope.of(C), 40, 0.1]
    reference = open_memory(tmp_path)
    c_file = reference.partition_path(C)
    reference.close()
    c_file.unlink()
    asked = catalog_reads(monkeypatch)
    memory = one_shot(tmp_path)
    assert memory.nearest(memory.embed_query(PROBES[1]), Scope.of(C), 40, 0.1) == want
    assert asked == [[C], None]  # the scoped snapshot, then every row to rebuild C
    assert c_file.exists()
    # Control: with every file current again, the next one-shot process reads no catalog rows.
    asked.clear()
    again = one_shot(tmp_path)
    assert again.nearest(again.embed_query(PROBES[1]), Scope.of(C), 40, 0.1) == want
    assert asked == []


def test_chunk_projects_lists_each_project_with_a_chunk_once(tmp_path: Path) -> None:
    empty = open_memory(tmp_path, "empty.db")
    assert catalog_sql.chunk_projects(empty.conn) == []
    store_of(tmp_path)
    memory = open_memory(tmp_path)
    assert catalog_sql.chunk_projects(memory.conn) == sorted([A, B, C])
    rowids = [int(r[0]) for r in memory.conn.execute("SELECT rowid FROM chunks LIMIT 3")]
    ids = catalog_sql.chunk_ids(memory.conn, [*rowids, rowids[0], 10**9])
    assert sorted(ids) == sorted(rowids)  # the unknown rowid is absent, the repeat counted once

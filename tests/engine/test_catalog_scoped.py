"""A read scoped to some projects reads only their catalog rows and loads only their partitions (what a
one-shot `recallbench search` in one project costs); a read over every project, or a partition in
scope that is missing, still uses the whole snapshot and every partition, with the same answers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from engine import catalog_sql
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.test_memory import A, B, _many_sessions, open_memory

C = "/home/dev/gamma"


def catalog_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """Record the projects each catalog read asked for (None: every project)."""
    asked: list[list[str] | None] = []
    real = catalog_sql.catalog_rows

    def counting(
        conn: object, embedder: str, projects: Sequence[str] | None = None
    ) -> tuple[int, list[tuple[int, str, str, str, str]]]:
        asked.append(None if projects is None else list(projects))
        return real(conn, embedder, projects)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog_sql, "catalog_rows", counting)
    return asked


def store_of(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    _many_sessions(root, A, 0, 50, seed=3)  # over 256 chunks each: real hnswlib partitions
    _many_sessions(root, C, 200, 50, seed=7)
    _many_sessions(root, B, 100, 2, seed=5)  # a small project: scanned exactly
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    memory.ensure_index()
    memory.close()
    return tmp_path / "m.db"


def fresh(tmp_path: Path) -> Memory:
    """A new process's memory over the same database and index files."""
    return Memory(tmp_path / "m.db", open_memory(tmp_path, "other.db").embedder)


def test_a_scoped_read_reads_its_projects_rows_and_loads_only_their_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_of(tmp_path)
    reference = open_memory(tmp_path)
    probe = reference.embed_query("deploy the retry parser")
    want_a = reference.nearest(probe, Scope.of(A), 5)
    want_ab = reference.nearest(probe, Scope.of(A, B), 8)
    want_all = reference.nearest(probe, Scope.everywhere(), 8)
    reference.close()
    counts = {
        p: int(n)
        for p, n in fresh(tmp_path).conn.execute(
            "SELECT project, count(*) FROM chunks GROUP BY project"
        )
    }
    assert min(counts[A], counts[C]) > 256
    assert counts[B] <= 256

    asked = catalog_reads(monkeypatch)
    memory = Memory(db, open_memory(tmp_path, "other.db").embedder)
    catalog = memory._require_vectors()
    assert memory.nearest(probe, Scope.of(A), 5) == want_a
    assert asked == [[A]]  # only A's rows were read
    held = catalog._held[1]
    assert set(held) == {A}  # only A's graph was loaded (and checksummed)
    assert catalog._snapshot is None  # no whole snapshot was taken
    assert memory.nearest(probe, Scope.of(A, B), 8) == want_ab
    assert asked == [[A], [A, B]]  # sorted; B is scanned exactly, it has no graph
    assert set(catalog._held[1]) == {A}
    # Control: every project reads every row and loads every graph, with the same answer.
    assert memory.nearest(probe, Scope.everywhere(), 8) == want_all
    assert asked == [[A], [A, B], None]
    assert set(catalog._held[1]) == {A, C}
    # Once the whole snapshot is held, a scoped read uses it: no further catalog read.
    assert memory.nearest(probe, Scope.of(A), 5) == want_a
    assert asked == [[A], [A, B], None]


def test_a_missing_partition_in_scope_builds_every_partition_from_the_whole_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_of(tmp_path)
    reference = open_memory(tmp_path)
    probe = reference.embed_query("commit the vector index")
    want = reference.nearest(probe, Scope.of(C), 6)
    c_file = reference.partition_path(C)
    reference.close()
    c_file.unlink()
    asked = catalog_reads(monkeypatch)
    memory = Memory(db, open_memory(tmp_path, "other.db").embedder)
    assert memory.nearest(probe, Scope.of(C), 6) == want
    # The scoped snapshot came first; the rebuild needed every row.
    assert asked == [[C], None]
    assert c_file.exists()  # rebuilt and listed again
    assert memory.index_state() == "current"


def test_a_scoped_snapshot_follows_the_store_after_an_import(tmp_path: Path) -> None:
    db = store_of(tmp_path)
    memory = Memory(db, open_memory(tmp_path, "other.db").embedder)
    probe = memory.embed_query("zebra quokka marmot")
    before = {s.chunk_id for s in memory.nearest(probe, Scope.of(B), 500, -1.0)}
    catalog = memory._require_vectors()
    first = next(iter(catalog._scoped.values()))
    _many_sessions(tmp_path / "more", B, 300, 1, seed=11)
    memory.import_paths([tmp_path / "more"])
    after = {s.chunk_id for s in memory.nearest(probe, Scope.of(B), 500, -1.0)}
    added = {
        str(r[0])
        for r in memory.conn.execute(
            "SELECT id FROM chunks WHERE session_id = ?", ("44444444-0000-4000-8000-000000000300",)
        )
    }
    assert added  # the new session was stored
    assert after == before | added  # every new chunk is found, nothing old is lost
    assert next(iter(catalog._scoped.values())) is not first  # a new generation's snapshot

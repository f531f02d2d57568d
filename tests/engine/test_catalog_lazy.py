"""The vector catalog reads vectors only when a search needs them: none for a search the current
hnswlib partitions answer, only a small project's for its exact scan; a vector removed after the
snapshot was taken makes the read start over on a new snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from engine import catalog_sql, store
from engine.catalog import StaleCatalogError
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.test_memory import A, B, _many_sessions, open_memory


def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record each vector read: ("all", 0) or ("some", number of hashes asked for)."""
    calls: list[tuple[str, int]] = []
    all_vectors, vectors_of = catalog_sql.all_vectors, catalog_sql.vectors_of

    def count_all(conn: object, embedder: str) -> dict[str, bytes]:
        calls.append(("all", 0))
        return all_vectors(conn, embedder)  # type: ignore[arg-type]

    def count_some(conn: object, embedder: str, shas: Sequence[str]) -> dict[str, bytes]:
        calls.append(("some", len(shas)))
        return vectors_of(conn, embedder, shas)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog_sql, "all_vectors", count_all)
    monkeypatch.setattr(catalog_sql, "vectors_of", count_some)
    return calls


def store_of(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    _many_sessions(root, A, 0, 50, seed=3)  # over 256 chunks: a real hnswlib partition
    _many_sessions(root, B, 100, 2, seed=5)  # a small project: scanned exactly
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    memory.ensure_index()
    memory.close()
    return tmp_path / "m.db"


def test_a_search_the_partitions_answer_reads_no_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_of(tmp_path)
    reference = open_memory(tmp_path)
    probe = reference.embed_query("deploy the api")
    want_a = reference.nearest(probe, Scope.of(A), 5)
    want_b = reference.nearest(probe, Scope.of(B), 5)
    reference.close()
    calls = counted(monkeypatch)
    memory = Memory(db, open_memory(tmp_path).embedder)  # a fresh process's catalog
    assert memory.nearest(probe, Scope.of(A), 5) == want_a
    assert calls == []  # the partition answered; no vector bytes were read
    small = int(
        memory.conn.execute("SELECT count(*) FROM chunks WHERE project = ?", (B,)).fetchone()[0]
    )
    assert memory.nearest(probe, Scope.of(B), 5) == want_b  # control: the exact scan reads
    assert calls == [("some", small)]  # only the small project's vectors


def test_a_vector_removed_after_the_snapshot_makes_the_read_start_over(tmp_path: Path) -> None:
    store_of(tmp_path)
    memory = open_memory(tmp_path)
    probe = memory.embed_query("deploy the api")
    before = memory.nearest(probe, Scope.of(B), 50)
    assert len(before) > 1
    gone = before[0].chunk_id
    catalog = memory._require_vectors()
    snapshot = catalog.snapshot()
    # Another writer removes the chunk and its vector between this read's snapshot and its vector
    # read (the generation is left alone here to force exactly that interleaving).
    with store.write(memory.conn):
        sha = memory.conn.execute("SELECT sha256 FROM chunks WHERE id = ?", (gone,)).fetchone()[0]
        memory.conn.execute("DELETE FROM chunks WHERE id = ?", (gone,))
        memory.conn.execute("DELETE FROM vectors WHERE sha256 = ?", (sha,))
    rows = snapshot.by_project[B]
    with pytest.raises(StaleCatalogError, match="removed since generation"):
        snapshot.rows_matrix(rows)
    assert catalog.snapshot() is snapshot  # still the held one: only the failed read tells
    after = memory.nearest(probe, Scope.of(B), 50)  # starts over on a new snapshot
    assert catalog.snapshot() is not snapshot
    assert [s.chunk_id for s in after] == [s.chunk_id for s in before[1:]]  # the rest, in order

"""`engine.held_vectors`: each embedder's vectors in a memory, and dropping one embedder's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.audit import AuditLog
from engine.embed import HashEmbedder
from engine.held_vectors import (
    DropRefusedError,
    HeldVectors,
    drop_vectors,
    held_vectors,
    index_files_of,
)
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

NOW = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
KEPT, DROPPED = HashEmbedder(512), HashEmbedder(4096)


def _memory(tmp_path: Path) -> Path:
    """Two one-chunk sessions in two projects, embedded by both hash embedders."""
    root = tmp_path / "transcripts"
    write_jsonl(
        root / "s1.jsonl",
        simple_session(session_id="11111111-0000-4000-8000-000000000001", cwd="/w/a", prefix="a"),
    )
    write_jsonl(
        root / "s2.jsonl",
        simple_session(
            "Where is the retry loop? It moved last week.",
            session_id="11111111-0000-4000-8000-000000000002",
            cwd="/w/b",
            prefix="b",
        ),
    )
    db = tmp_path / "home" / "memory.db"
    for embedder in (KEPT, DROPPED):
        memory = Memory(db, embedder)
        memory.import_paths([root])
        memory.ensure_index()  # writes the embedder's index manifest beside the database
        memory.close()
    return db


def _by_id(db: Path) -> dict[str, HeldVectors]:
    return {h.embedder: h for h in held_vectors(db)}


def test_each_embedder_is_listed_with_its_rows_bytes_and_index_files(tmp_path: Path) -> None:
    db = _memory(tmp_path)
    held = _by_id(db)
    assert sorted(held) == ["hash-4096-v1", "hash-512-v1"]
    kept, dropped = held["hash-512-v1"], held["hash-4096-v1"]
    # Two distinct chunk texts, one float32 vector each: 2 × 512 × 4 and 2 × 4096 × 4 bytes.
    assert (kept.chunk_vectors, kept.chunk_bytes) == (2, 4096)
    assert (dropped.chunk_vectors, dropped.chunk_bytes) == (2, 32768)
    # The same texts give the same sentences under both; each is dim × 4 bytes.
    assert kept.sentence_texts == dropped.sentence_texts == 2
    assert kept.sentence_vectors == dropped.sentence_vectors > 0
    assert kept.sentence_bytes == kept.sentence_vectors * 512 * 4
    assert dropped.sentence_bytes == dropped.sentence_vectors * 4096 * 4
    assert [p.name for p in dropped.index_files] == ["memory.hash-4096-v1.hnsw.json"]
    assert dropped.index_bytes == (db.parent / "memory.hash-4096-v1.hnsw.json").stat().st_size
    assert dropped.total_bytes == 32768 + dropped.sentence_bytes + dropped.index_bytes


def test_a_drop_removes_one_embedders_rows_and_files_records_it_and_shrinks_the_file(
    tmp_path: Path,
) -> None:
    db = _memory(tmp_path)
    before = _by_id(db)
    report = drop_vectors(db, "hash-4096-v1", keep={"hash-512-v1"}, now=NOW)

    assert report.dropped == before["hash-4096-v1"]
    assert report.compacted, report.note
    # VACUUM gives back at least the blobs' bytes (each 16 KB vector fills overflow pages).
    freed = report.dropped.chunk_bytes + report.dropped.sentence_bytes
    assert report.size_before - report.size_after >= freed
    assert report.size_after == db.stat().st_size  # the write-ahead log was truncated
    # The kept embedder is untouched (control), the dropped one is gone with its manifest.
    assert _by_id(db) == {"hash-512-v1": before["hash-512-v1"]}
    assert not (db.parent / "memory.hash-4096-v1.hnsw.json").exists()
    assert (db.parent / "memory.hash-512-v1.hnsw.json").exists()
    entries = AuditLog(db).since()
    assert [(e.id, e.actor, e.action, e.targets) for e in entries] == [
        (report.audit_id, "person", "vectors.drop", ("hash-4096-v1",))
    ]
    assert entries[0].time == "2026-12-01T09:30:00Z"
    assert entries[0].reason.startswith("2 chunk vectors, ")

    # The kept embedder still searches by meaning over both chunks.
    memory = Memory(db, KEPT)
    try:
        hits = memory.nearest(KEPT.embed(["retry loop"])[0], Scope.everywhere(), 5, min_score=-1.0)
        assert len(hits) == 2
    finally:
        memory.close()


def test_the_embedder_in_use_and_one_the_memory_lacks_are_refused_with_nothing_removed(
    tmp_path: Path,
) -> None:
    db = _memory(tmp_path)
    before = _by_id(db)
    with pytest.raises(DropRefusedError, match="hash-4096-v1 is the embedder in use"):
        drop_vectors(db, "hash-4096-v1", keep={"hash-4096-v1"}, now=NOW)
    with pytest.raises(DropRefusedError, match="holds: hash-4096-v1, hash-512-v1"):
        drop_vectors(db, "minilm-l6-v2", keep={"hash-512-v1"}, now=NOW)
    assert _by_id(db) == before
    assert AuditLog(db).since() == []
    # Control: the same call with the embedder out of `keep` removes it.
    drop_vectors(db, "hash-4096-v1", keep={"hash-512-v1"}, now=NOW)
    assert sorted(_by_id(db)) == ["hash-512-v1"]


def test_index_files_belong_to_the_embedder_named_between_the_stem_and_the_next_dot(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    names = [
        "memory.db",
        "memory.db-wal",
        "memory.minilm-l6-v2.hnsw.json",  # the manifest
        "memory.minilm-l6-v2.0123456789abcdef.hnsw",  # a partition
        "memory.minilm-l6-v2.0123456789abcdef.hnsw.meta.json",  # its sidecar
        "memory.minilm-l6-v2-tuned-0123456789ab.hnsw.json",  # another embedder, same prefix
        "memory.minilm-l6-v2-tuned-0123456789ab.fedcba9876543210.hnsw",
        "other.minilm-l6-v2.0123456789abcdef.hnsw",  # another database's
        "memory.minilm-l6-v2.notes.txt",  # not an index file
    ]
    for name in names:
        (tmp_path / name).write_text("x")
    assert [p.name for p in index_files_of(db, "minilm-l6-v2")] == [
        "memory.minilm-l6-v2.0123456789abcdef.hnsw",
        "memory.minilm-l6-v2.0123456789abcdef.hnsw.meta.json",
        "memory.minilm-l6-v2.hnsw.json",
    ]
    assert [p.name for p in index_files_of(db, "minilm-l6-v2-tuned-0123456789ab")] == [
        "memory.minilm-l6-v2-tuned-0123456789ab.fedcba9876543210.hnsw",
        "memory.minilm-l6-v2-tuned-0123456789ab.hnsw.json",
    ]
    assert index_files_of(db, "hash-256-v1") == []

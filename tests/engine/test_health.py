"""Store health: private file modes, integrity checks, the vector index check, the rebuild swap."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine import catalog, health, store
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.store_errors import is_damage_report
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

# A word only one session says, to find the pages of the file that hold its text.
MARKER = b"zebramarker"


@contextmanager
def loose_umask() -> Iterator[None]:
    """Run with umask 022 (files 0644, folders 0755 unless their creator says otherwise)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def write_sessions(root: Path, count: int = 9) -> Path:
    for i in range(count):
        sid = f"77777777-0000-4000-8000-{i:012d}"
        marker = " zebramarker" if i == 4 else ""
        write_jsonl(
            root / f"p{i % 3}" / f"{sid}.jsonl",
            simple_session(
                f"Why does test {i} flake on retry {i * 7}?",
                session_id=sid,
                cwd=f"/work/p{i % 3}",
                answer=f"The retry loop {i} used a wall clock{marker}.",
                prefix=f"s{i}-",
            ),
        )
    return root


def imported(db: Path, root: Path) -> Path:
    memory = Memory(db, HashEmbedder())
    memory.import_paths([root])
    memory.close()  # the last connection closed: the WAL is checkpointed into the file and removed
    return db


def damage_marker_pages(db: Path) -> int:
    """Overwrite every page (but the first) holding MARKER with garbage; how many there were."""
    data = bytearray(db.read_bytes())
    size = 4096
    pages = [p for p in range(1, len(data) // size) if MARKER in data[p * size : (p + 1) * size]]
    for p in pages:
        data[p * size : (p + 1) * size] = b"\xa5" * size
    db.write_bytes(bytes(data))
    return len(pages)


def test_a_store_and_its_index_are_created_private_under_a_loose_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every project gets a partition, so the index files are written too.
    monkeypatch.setattr(catalog, "EXACT_THRESHOLD", 0)
    root = write_sessions(tmp_path / "transcripts")
    folder = tmp_path / "home"
    with loose_umask():
        control = tmp_path / "control.txt"
        control.write_text("x", encoding="utf-8")
        assert mode(control) == 0o644  # positive control: the umask really is loose
        memory = Memory(folder / "memory.db", HashEmbedder())
        memory.import_paths([root])
        parts = memory.ensure_index()
        names = sorted(p.name for p in folder.iterdir())
        found = {p: mode(p) for p in [folder, *folder.rglob("*")]}
        memory.close()
    assert len(parts) == 3
    assert {"memory.db", "memory.db-wal", "memory.db-shm"} <= set(names)
    assert sum(n.endswith(".hnsw") for n in names) == 3
    assert sum(n.endswith(".hnsw.meta.json") for n in names) == 3
    assert sum(n.endswith(".hnsw.json") for n in names) == 1
    assert found[folder] == 0o700
    assert {p.name: m for p, m in found.items() if p != folder} == dict.fromkeys(names, 0o600)


def test_database_checks_pass_on_a_sound_store_and_fail_on_damaged_pages(tmp_path: Path) -> None:
    db = imported(tmp_path / "home" / "memory.db", write_sessions(tmp_path / "t"))
    sound = health.database_checks(db)
    assert [(c.name, c.ok) for c in sound] == [
        ("sqlite integrity", True),
        ("full-text index", True),
    ]
    assert damage_marker_pages(db) >= 1
    damaged = health.database_checks(db)
    assert damaged[0].name == "sqlite integrity"
    assert not damaged[0].ok
    assert "malformed" in damaged[0].detail or "page" in damaged[0].detail


def test_the_fts_check_catches_an_index_that_disagrees_with_the_chunks(tmp_path: Path) -> None:
    db = imported(tmp_path / "home" / "memory.db", write_sessions(tmp_path / "t"))
    assert health.database_checks(db)[1].ok  # control: sound before the change below
    conn = sqlite3.connect(db, isolation_level=None)
    # Change a chunk's text behind FTS5's back: its index still holds the old words.
    conn.execute("DROP TRIGGER chunks_au")
    conn.execute("UPDATE chunks SET text = 'entirely different words' WHERE rowid = 1")
    conn.close()
    fts = health.database_checks(db)[1]
    assert fts.name == "full-text index"
    assert not fts.ok
    assert "integrity-check failed" in fts.detail


def test_the_index_check_accepts_a_current_or_stale_index_and_catches_a_damaged_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog, "EXACT_THRESHOLD", 0)
    monkeypatch.setattr(health, "EXACT_THRESHOLD", 0)
    root = write_sessions(tmp_path / "t")
    db = tmp_path / "home" / "memory.db"
    emb = HashEmbedder()
    missing = health.index_check(imported(db, root), emb)
    assert (missing.ok, missing.detail) == (True, "missing; built on the next vector search")
    memory = Memory(db, emb)
    memory.ensure_index()
    partition = memory.partition_path("/work/p1")
    memory.close()
    current = health.index_check(db, emb)
    assert current.ok, current.detail
    # 9 sessions of 1 chunk in 3 projects: 3 partitions of 3 vectors
    assert "3 partition(s) hold 9 vectors" in current.detail
    data = bytearray(partition.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, so the manifest still calls it current
    partition.write_bytes(bytes(data))
    broken = health.index_check(db, emb)
    assert not broken.ok
    assert "partition of /work/p1" in broken.detail
    assert "cannot be loaded" in broken.detail


def test_loose_paths_lists_open_folders_and_files_and_tighten_fixes_them_without_links(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("x", encoding="utf-8")
    (home / "sub" / "log").write_text("x", encoding="utf-8")
    (home / "ok").write_text("x", encoding="utf-8")
    (home / "link").symlink_to(outside)
    os.chmod(home, 0o755)
    os.chmod(home / "sub", 0o750)
    os.chmod(home / "sub" / "log", 0o644)
    os.chmod(home / "ok", 0o600)
    os.chmod(outside, 0o644)
    loose = health.loose_paths([home])
    assert [(p.path.relative_to(tmp_path).as_posix(), p.mode, p.wanted) for p in loose] == [
        ("home", 0o755, 0o700),
        ("home/sub", 0o750, 0o700),
        ("home/sub/log", 0o644, 0o600),
    ]
    assert health.tighten(loose) == []
    assert health.loose_paths([home]) == []
    assert (mode(home), mode(home / "sub"), mode(home / "sub" / "log")) == (0o700, 0o700, 0o600)
    assert mode(outside) == 0o644  # the link was neither reported nor followed


def test_swap_in_keeps_the_old_database_and_its_wal_and_drops_the_old_index(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    db.write_bytes(b"old")
    Path(f"{db}-wal").write_bytes(b"old wal")
    index = tmp_path / "memory.hash-256-v1.0123456789abcdef.hnsw"
    index.write_bytes(b"graph")
    other = tmp_path / "notes.hnsw"  # not this database's
    other.write_bytes(b"keep")
    new = tmp_path / ".memory.db.rebuild-1"
    new.write_bytes(b"new")
    Path(f"{new}-wal").write_bytes(b"")
    with pytest.raises(store.StoreError, match="write-ahead log"):
        health.swap_in(new, db, "T1")
    assert db.read_bytes() == b"old"  # control: nothing moved while the new one is open
    Path(f"{new}-wal").unlink()
    backup = health.swap_in(new, db, "T1")
    assert backup == tmp_path / "memory.db.bak-T1"
    assert (db.read_bytes(), backup.read_bytes()) == (b"new", b"old")
    assert Path(f"{backup}-wal").read_bytes() == b"old wal"
    assert not Path(f"{db}-wal").exists()
    assert not new.exists()
    assert not index.exists()
    assert other.read_bytes() == b"keep"
    newer = tmp_path / ".memory.db.rebuild-2"
    newer.write_bytes(b"newer")
    assert health.swap_in(newer, db, "T1") == tmp_path / "memory.db.bak-T1-1"
    assert db.read_bytes() == b"newer"


def test_a_damage_report_is_told_apart_from_a_lock() -> None:
    assert is_damage_report("DatabaseError: database disk image is malformed")
    assert is_damage_report("DatabaseError: file is not a database")
    assert not is_damage_report("OperationalError: database is locked")
    assert not is_damage_report("UnicodeDecodeError: bad byte")

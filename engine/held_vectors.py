"""What each embedder's vectors take in a memory, and dropping those of an embedder no longer used.

A memory holds vectors per embedder id: chunk vectors and the sentence vectors of the person's prompts
in the database, and an hnswlib index (a manifest and one partition file per project) beside it, named
`<db stem>.<embedder id>.…hnsw…`. Switching embedders (shipping an arm over a fine-tuned encoder, or
setting `$RECALLBENCH_EMBEDDER`) embeds the memory again under the new id and leaves the old vectors
where they were. `held_vectors` lists them all; `drop_vectors` removes one embedder's rows and index
files, records it in the audit trail and compacts the database so that the file shrinks.

Nothing of the transcripts is lost by a drop: an `import` with that embedder selected embeds the chunks
again (slowly: that is what a drop saves room against, so the caller keeps the embedders in use).
Embedder ids hold no `.` (`minilm-l6-v2`, `hash-256-v1`, `minilm-l6-v2-tuned-<12 hex>`), so the part of
an index file's name between the stem and the next `.` is its embedder.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engine import audit, forget_sql, store, vector_sql

__all__ = [
    "INDEX_SUFFIXES",
    "DropRefusedError",
    "DropReport",
    "HeldVectors",
    "drop_vectors",
    "held_vectors",
    "index_files",
    "index_files_of",
]

# The names of a vector index's files: partitions, their sidecars and the manifest.
INDEX_SUFFIXES = (".hnsw.meta.json", ".hnsw.json", ".hnsw")
ACTION = "vectors.drop"


class DropRefusedError(ValueError):
    """A drop that would remove vectors still in use, or that names an embedder the memory lacks."""


@dataclass(frozen=True, kw_only=True)
class HeldVectors(vector_sql.EmbedderRows):
    """One embedder's vectors: its rows and their bytes in the database (`EmbedderRows`), and its
    index files beside it."""

    index_files: tuple[Path, ...]
    index_bytes: int

    @property
    def total_bytes(self) -> int:
        """Database rows and index files together (the rows' page overhead not counted)."""
        return self.chunk_bytes + self.sentence_bytes + self.index_bytes


@dataclass(frozen=True, kw_only=True)
class DropReport:
    """What `drop_vectors` removed, and the database file's size before and after."""

    dropped: HeldVectors
    audit_id: int
    size_before: int
    size_after: int
    compacted: bool  # False when another connection kept the write-ahead log open (see `note`)
    note: str


def _index_embedder(db_path: Path, name: str) -> str | None:
    """The embedder id an index file's `name` belongs to; None for any other file."""
    prefix = f"{db_path.stem}."
    if not name.startswith(prefix):
        return None
    for suffix in INDEX_SUFFIXES:
        if name.endswith(suffix):
            rest = name[len(prefix) : -len(suffix)]
            embedder = rest.split(".", 1)[0]
            return embedder or None
    return None


def index_files(db: Path) -> list[Path]:
    """The vector index files beside the database at `db` (every embedder's), sorted."""
    folder, prefix = db.parent, f"{db.stem}."
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if p.name.startswith(prefix) and p.name.endswith(INDEX_SUFFIXES)
    )


def _index_files(db_path: Path) -> dict[str, list[Path]]:
    """The index files beside the database, by embedder id (regular files and links only)."""
    found: dict[str, list[Path]] = {}
    for path in index_files(db_path):
        embedder = _index_embedder(db_path, path.name)
        if embedder is not None and (path.is_symlink() or path.is_file()):
            found.setdefault(embedder, []).append(path)
    return found


def index_files_of(db_path: Path, embedder: str) -> list[Path]:
    """The index files of `embedder` beside the database at `db_path`, sorted."""
    return _index_files(db_path).get(embedder, [])


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def _held(conn: sqlite3.Connection, db_path: Path) -> list[HeldVectors]:
    rows = {r.embedder: r for r in vector_sql.embedder_rows(conn)}
    files = _index_files(db_path)
    out = []
    for embedder in sorted(rows.keys() | files.keys()):
        r = rows.get(embedder) or vector_sql.EmbedderRows.none(embedder)  # index files alone
        paths = tuple(files.get(embedder, ()))
        out.append(
            HeldVectors(**vars(r), index_files=paths, index_bytes=sum(_size(p) for p in paths))
        )
    return out


def held_vectors(db_path: Path) -> list[HeldVectors]:
    """Every embedder with vectors in the database at `db_path` or index files beside it, by id."""
    conn = store.connect(db_path)
    try:
        with store.read(conn):
            return _held(conn, db_path)
    finally:
        conn.close()


def _db_bytes(db_path: Path) -> int:
    return _size(db_path) + _size(Path(f"{db_path}-wal"))


def drop_vectors(
    db_path: Path,
    embedder: str,
    *,
    keep: Collection[str],
    now: datetime,
    actor: str = audit.PERSON,
) -> DropReport:
    """Remove every vector of `embedder`: its rows in both tables (with an audit entry, in one
    transaction), then its index files, then compact the database (checkpoint, VACUUM, checkpoint).

    A compaction that another connection blocks (a running `recallbench serve` reading) is not an
    error: the rows are gone and `compacted` is False, with the reason in `note`; the file shrinks
    at the next drop or `forget`.

    Raises:
        DropRefusedError: `embedder` is in `keep` (the embedders in use), or the memory holds no
            vectors and no index files of it (the message lists those it holds).
    """
    if embedder in keep:
        msg = (
            f"{embedder} is the embedder in use ({', '.join(sorted(keep))}): its vectors are what "
            "search, serve and the hooks read; switch embedders first if you mean to drop it"
        )
        raise DropRefusedError(msg)
    size_before = _db_bytes(db_path)
    conn = store.connect(db_path)
    try:
        with store.write(conn):
            held = {h.embedder: h for h in _held(conn, db_path)}
            target = held.get(embedder)
            if target is None:
                listed = ", ".join(held) or "none"
                msg = f"the memory holds no vectors of {embedder}; it holds: {listed}"
                raise DropRefusedError(msg)
            audit_id = audit.record(
                conn,
                time=now,
                actor=actor,
                action=ACTION,
                targets=[embedder],
                reason=(
                    f"{target.chunk_vectors} chunk vectors, {target.sentence_vectors} sentence "
                    f"vectors, {len(target.index_files)} index files"
                ),
            )
            vector_sql.delete_embedder(conn, embedder)
        for path in target.index_files:
            path.unlink(missing_ok=True)
        compacted, note = _compact(conn)
    finally:
        conn.close()
    return DropReport(
        dropped=target,
        audit_id=audit_id,
        size_before=size_before,
        size_after=_db_bytes(db_path),
        compacted=compacted,
        note=note,
    )


def _compact(conn: sqlite3.Connection) -> tuple[bool, str]:
    """Checkpoint, VACUUM and checkpoint again: (done, what happened)."""
    try:
        truncated = forget_sql.compact(conn)
    except sqlite3.OperationalError as exc:
        return False, f"the database was not compacted ({exc}); the freed pages are reused"
    if not truncated:
        return False, (
            "another connection kept the write-ahead log open (a running `recallbench serve`?), "
            "so it was not truncated; the freed pages are reused"
        )
    return True, "database vacuumed, write-ahead log checkpointed and truncated"

"""The vector catalog's reads (`engine.catalog`): which chunks have a vector, and the vectors of given
texts, read only when a search needs them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from engine import store

# Hashes bound per statement (SQLite's default limit on variables is 32766).
_BATCH = 900


def catalog_rows(
    conn: sqlite3.Connection, embedder: str, projects: Sequence[str] | None = None
) -> tuple[int, list[tuple[int, str, str, str, str]]]:
    """(generation, (rowid, chunk id, project, session id, text sha256) of every chunk with a vector for
    `embedder`, by rowid), read in one read transaction: no vector bytes. `projects`: only the chunks
    of these projects (None: every project)."""
    where, args = "", [embedder]
    if projects is not None:
        where = f"c.project IN ({','.join('?' * len(projects))}) AND "
        args = [*projects, embedder]
    with store.read(conn):
        gen = store.generation(conn)
        rows = conn.execute(
            "SELECT c.rowid, c.id, c.project, c.session_id, c.sha256 FROM chunks c WHERE "
            f"{where}EXISTS (SELECT 1 FROM vectors v WHERE v.embedder = ? AND v.sha256 = c.sha256) "
            "ORDER BY c.rowid",
            args,
        ).fetchall()
    # The columns are typed (INTEGER PRIMARY KEY, TEXT NOT NULL): the rows are used as read.
    return gen, rows


def vectors_of(conn: sqlite3.Connection, embedder: str, shas: Sequence[str]) -> dict[str, bytes]:
    """The stored vector bytes of `embedder` for each of the text hashes `shas` that has one."""
    found: dict[str, bytes] = {}
    distinct = list(dict.fromkeys(shas))
    for lo in range(0, len(distinct), _BATCH):
        part = distinct[lo : lo + _BATCH]
        marks = ",".join("?" * len(part))
        cursor = conn.execute(
            f"SELECT sha256, vec FROM vectors WHERE embedder = ? AND sha256 IN ({marks})",
            [embedder, *part],
        )
        found.update((str(r[0]), bytes(r[1])) for r in cursor)
    return found


def all_vectors(conn: sqlite3.Connection, embedder: str) -> dict[str, bytes]:
    """Every stored vector of `embedder`, by text hash."""
    cursor = conn.execute("SELECT sha256, vec FROM vectors WHERE embedder = ?", (embedder,))
    return {str(r[0]): bytes(r[1]) for r in cursor}


def chunk_projects(conn: sqlite3.Connection) -> list[str]:
    """Every project that has a chunk, sorted: one index probe per project (`chunks_project`), not a
    scan of every chunk."""
    rows = conn.execute(
        "WITH RECURSIVE p(name) AS (SELECT MIN(project) FROM chunks UNION ALL "
        "SELECT (SELECT MIN(project) FROM chunks WHERE project > p.name) FROM p "
        "WHERE p.name IS NOT NULL) SELECT name FROM p WHERE name IS NOT NULL"
    ).fetchall()
    return [str(r[0]) for r in rows]


def chunk_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    """Chunk rowid -> chunk id, for those of `rowids` that exist."""
    found: dict[int, str] = {}
    distinct = list(dict.fromkeys(int(r) for r in rowids))
    for lo in range(0, len(distinct), _BATCH):
        part = distinct[lo : lo + _BATCH]
        marks = ",".join("?" * len(part))
        cursor = conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", part)
        found.update((int(r[0]), str(r[1])) for r in cursor)
    return found

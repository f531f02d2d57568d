"""Where each project's folder sat in git when its sessions were imported (`engine.git_repo.Checkout`).

The import records it while the folder still exists: a worktree made for one task is usually removed
once the task is merged, and with it the only way to tell which repository it belonged to. Scope
resolution reads the records to join the worktrees of one repository, when the person turns
`scope.worktrees` on (`engine.scope.explain_project`). A record holds paths only, like the sessions
table; `recallbench forget` deletes a project's record with its last session, and `recallbench
rebuild` carries the records into the new database (the folders may be gone by then).

A worktree removed before its first import has no record. The person may state which repository it
belonged to (`recallbench projects join`, `engine.projects`): that record carries the time it was stated
(`joined_at`), an import's never does, and an import that finds the folder on disk replaces the
statement with what it reads there.
"""

from __future__ import annotations

import sqlite3

from engine.git_repo import Checkout

# Applied by `engine.store.MIGRATIONS` (number 8).
SCHEMA = """
CREATE TABLE project_checkouts (
    project TEXT PRIMARY KEY,
    repository TEXT NOT NULL,
    folder TEXT NOT NULL
);
"""
# Applied by `engine.store.MIGRATIONS` (number 9): NULL for a record read from the folder by an
# import, the UTC time for one the person stated (`recallbench projects join`).
JOINED_AT = "ALTER TABLE project_checkouts ADD COLUMN joined_at TEXT;"
SCHEMAS = (SCHEMA, JOINED_AT)


def put(conn: sqlite3.Connection, project: str, checkout: Checkout) -> None:
    """Record (or update) where `project`'s folder sits; the caller holds the write transaction."""
    conn.execute(
        "INSERT INTO project_checkouts(project, repository, folder) VALUES (?, ?, ?) "
        "ON CONFLICT(project) DO UPDATE SET repository = excluded.repository, "
        "folder = excluded.folder, joined_at = NULL",
        (project, checkout.repository, checkout.folder),
    )


def put_joined(conn: sqlite3.Connection, project: str, checkout: Checkout, at: str) -> None:
    """Record the person's statement that `project` was `checkout` (the caller checked that it has
    no record and holds the write transaction)."""
    conn.execute(
        "INSERT INTO project_checkouts(project, repository, folder, joined_at) VALUES (?, ?, ?, ?)",
        (project, checkout.repository, checkout.folder, at),
    )


def delete_joined(conn: sqlite3.Connection, project: str) -> int:
    """Delete `project`'s record if the person stated it (never one an import read); 0 or 1."""
    return conn.execute(
        "DELETE FROM project_checkouts WHERE project = ? AND joined_at IS NOT NULL", (project,)
    ).rowcount


def joined(conn: sqlite3.Connection) -> dict[str, str]:
    """When each project's record was stated by the person, for the records that were."""
    rows = conn.execute(
        "SELECT project, joined_at FROM project_checkouts WHERE joined_at IS NOT NULL"
    ).fetchall()
    return {str(p): str(at) for p, at in rows}


def summaries(conn: sqlite3.Connection) -> list[tuple[str, int, int, str | None]]:
    """(project, sessions, chunks, start of its latest session) for every project, sorted."""
    rows = conn.execute(
        "SELECT s.project, count(*), max(s.started), "
        "(SELECT count(*) FROM chunks c WHERE c.project = s.project) "
        "FROM sessions s GROUP BY s.project ORDER BY s.project"
    ).fetchall()
    return [(str(p), int(n), int(c), None if last is None else str(last)) for p, n, last, c in rows]


def checkouts(conn: sqlite3.Connection) -> dict[str, Checkout]:
    """The record of every project that still has a session (others are not projects any more)."""
    rows = conn.execute(
        "SELECT project, repository, folder FROM project_checkouts c "
        "WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.project = c.project) ORDER BY project"
    ).fetchall()
    return {str(p): Checkout(repository=str(r), folder=str(f)) for p, r, f in rows}


def unrecorded(conn: sqlite3.Connection) -> list[str]:
    """The projects with a session but no record (imported before records were kept), sorted."""
    rows = conn.execute(
        "SELECT DISTINCT project FROM sessions WHERE project NOT IN "
        "(SELECT project FROM project_checkouts) ORDER BY project"
    ).fetchall()
    return [str(r[0]) for r in rows]


def delete_orphans(conn: sqlite3.Connection) -> int:
    """Delete the records of projects left without a session (after a forget); returns how many."""
    return conn.execute(
        "DELETE FROM project_checkouts WHERE project NOT IN (SELECT project FROM sessions)"
    ).rowcount


def put_missing(
    conn: sqlite3.Connection,
    records: dict[str, Checkout],
    joined_at: dict[str, str] | None = None,
) -> int:
    """Record each of `records` whose project has none yet (a rebuild carrying them over: what its
    import found on disk stands), with the time a person stated it where `joined_at` has one;
    returns how many were added. The caller holds the write."""
    stated = joined_at or {}
    added = 0
    for project, checkout in records.items():
        added += conn.execute(
            "INSERT OR IGNORE INTO project_checkouts(project, repository, folder, joined_at) "
            "VALUES (?, ?, ?, ?)",
            (project, checkout.repository, checkout.folder, stated.get(project)),
        ).rowcount
    return added

"""The SQL of the audit trail: its table, the triggers that keep it append-only, one insert, one read.

Kept beside `engine.store` (which holds the numbered migrations and applies this schema as one of
them) because that module is full; like it, nothing outside engine/ imports this module. The rules of
what may be written (known actions, the actor's shape, times in UTC) are `engine.audit`'s.
"""

from __future__ import annotations

import sqlite3

# Applied by `engine.store.MIGRATIONS` (number 3). The triggers make every UPDATE and DELETE of a row
# fail, whoever runs it, so "the audit is never rewritten" is a property of the file, not of our code.
SCHEMA = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    targets TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX audit_time ON audit(time, id);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN
    SELECT RAISE(ABORT, 'audit is append-only: its rows are never updated');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
    SELECT RAISE(ABORT, 'audit is append-only: its rows are never deleted');
END;
"""

AuditRow = tuple[int, str, str, str, str, str]


def insert(
    conn: sqlite3.Connection, time: str, actor: str, action: str, targets: str, reason: str
) -> int:
    """Append one row; returns its id. Runs in the caller's transaction."""
    cur = conn.execute(
        "INSERT INTO audit(time, actor, action, targets, reason) VALUES (?, ?, ?, ?, ?)",
        (time, actor, action, targets, reason),
    )
    return int(cur.lastrowid or 0)


def rows_since(conn: sqlite3.Connection, since: str | None) -> list[AuditRow]:
    """(id, time, actor, action, targets JSON, reason) of the rows at or after `since`, by id."""
    rows = conn.execute(
        "SELECT id, time, actor, action, targets, reason FROM audit "
        "WHERE ? IS NULL OR time >= ? ORDER BY id",
        (since, since),
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5])) for r in rows]


def insert_rows(conn: sqlite3.Connection, rows: list[AuditRow]) -> int:
    """Append rows read from another database under their own ids (a rebuild); a row whose id is
    already taken is left out. Returns the rows added. Runs in the caller's transaction."""
    cur = conn.executemany(
        "INSERT OR IGNORE INTO audit(id, time, actor, action, targets, reason) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    return max(cur.rowcount, 0)

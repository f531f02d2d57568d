"""Which sanitizer version a memory's text was imported under (the `meta` row `sanitize_version`).

Imports never read a file's old lines again, so text imported before a sanitizer version keeps what that
version removes until `recallbench rebuild` imports every transcript afresh. The row is written into a
memory that holds nothing yet (a new one, or a rebuild's), so it names the oldest rules any of its text
was cleaned by; a memory first imported before version 3, which began recording it, has none.
"""

from __future__ import annotations

import sqlite3

from engine.markers import READ_NOTICE_LEAD

# The version this module's reads are for: the read notice is removed from version 3 on.
READ_NOTICE_VERSION = 3


def record_version(conn: sqlite3.Connection) -> None:
    """Record the running sanitizer's version in a memory without files or chunks; else nothing.

    Runs inside the caller's transaction, before the first file's rows are written with it.
    """
    from engine.sanitize import SANITIZE_VERSION  # the sanitizer and its rules: only to import

    conn.execute(
        "INSERT INTO meta(key, value) SELECT 'sanitize_version', ? "
        "WHERE NOT EXISTS (SELECT 1 FROM files) AND NOT EXISTS (SELECT 1 FROM chunks) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (SANITIZE_VERSION,),
    )


def version(conn: sqlite3.Connection) -> str | None:
    """The version the memory's oldest text was imported under; None: before version 3."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'sanitize_version'").fetchone()
    return None if row is None else str(row[0])


def stale_read_notices(conn: sqlite3.Connection) -> int:
    """Chunks still holding Claude Code's file-read notice in a memory imported before version 3
    (0 in a newer one, where the words can only be a file's or a message's quote of it)."""
    held = version(conn)
    if held is not None and int(held) >= READ_NOTICE_VERSION:
        return 0
    phrase = '"' + " ".join(READ_NOTICE_LEAD.replace(",", " ").split()) + '"'
    row = conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
    ).fetchone()
    return int(row[0])

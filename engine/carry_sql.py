"""The SQL of a rebuild that keeps what gone transcripts held: their rows copied, as stored, from the
old database into the new one.

Claude Code deletes transcripts after its `cleanupPeriodDays`, while the memory keeps what it imported
from them, so a rebuild that reads only the transcripts still on disk would lose the rest. `carry_files`
copies, for each recorded transcript file named, its `files` and `file_counts` rows, its stream's
messages, chunks (both FTS5 indexes fill by trigger) and file edits, and the `sessions` rows of the
sessions those hold (a session another file already brought keeps the earlier start and the later end
of the two, and is this project's own transcript if either says so). Chunk ids are kept, so the notes
and settles carried after it still find their chunks, and so are the texts' hashes, so the vectors
carried after it (`engine.vector_sql.carry`) cover them too.
A rebuild carries before it imports: a subagent whose session's main transcript is gone is then read
as part of that session, under its project, and not at all when the session is this project's own.

The copied text was read by whatever parser, sanitizer and chunker imported it, so when anything is
copied the new memory's version rows (`sanitize_version`, `credentials_version`, `parser_version`,
`chunking`) take the old memory's values: `status`
then still counts what the older code left in them. Nothing outside engine/ imports this module;
`engine.memory.Memory.carry_files` is the public call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine import chunked_sql, parsed_sql, sanitized_sql, store

# The `meta` rows that name the code a memory's oldest text was read by.
VERSION_KEYS = (
    sanitized_sql.VERSION_KEY,
    sanitized_sql.CREDENTIALS_KEY,
    parsed_sql.VERSION_KEY,
    chunked_sql.VERSION_KEY,
)
# Every column named, so a copy never depends on the order a migration left them in.
_FILE_COLUMNS = "path, stream, session_id, offset, prefix_sha256, state, imported_at"
_MESSAGE_COLUMNS = "stream, ordinal, uuid, session_id, author, text, ts, api_message_id"
_CHUNK_COLUMNS = (
    "id, session_id, stream, idx, project, text, author, message_uuids, ts_start, ts_end, sha256"
)


@dataclass(frozen=True, kw_only=True)
class Carried:
    """What `carry_files` copied: transcript files, sessions, messages and chunks."""

    files: int = 0
    sessions: int = 0
    messages: int = 0
    chunks: int = 0


def carry_files(conn: sqlite3.Connection, old_db: Path, paths: Sequence[str]) -> Carried:
    """Copy what the database at `old_db` holds of the transcript files `paths` (their recorded
    keys) into this one, in one write transaction; a path it does not record, or one this database
    already records, is skipped.

    `conn` must be in autocommit with no transaction open (ATTACH needs it).
    """
    if not paths:
        return Carried()
    conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
    try:
        with store.write(conn):
            conn.execute("CREATE TEMP TABLE carry_paths(path TEXT PRIMARY KEY)")
            conn.executemany(
                "INSERT OR IGNORE INTO carry_paths(path) SELECT ? "
                "WHERE NOT EXISTS (SELECT 1 FROM main.files WHERE path = ?)",
                [(p, p) for p in paths],
            )
            carried = _copy(conn)
            if carried.files:
                for key in VERSION_KEYS:
                    conn.execute("DELETE FROM main.meta WHERE key = ?", (key,))
                    conn.execute(
                        "INSERT INTO main.meta(key, value) SELECT key, value FROM old.meta "
                        "WHERE key = ?",
                        (key,),
                    )
                store.bump_generation(conn)
            conn.execute("DROP TABLE temp.carry_paths")
    finally:
        conn.execute("DETACH DATABASE old")
    return carried


def _copy(conn: sqlite3.Connection) -> Carried:
    files = conn.execute(
        f"INSERT INTO main.files({_FILE_COLUMNS}) SELECT {_FILE_COLUMNS} FROM old.files "
        "WHERE path IN (SELECT path FROM temp.carry_paths)"
    ).rowcount
    conn.execute(
        "INSERT OR IGNORE INTO main.file_counts(path, kind, reason, n) "
        "SELECT path, kind, reason, n FROM old.file_counts "
        "WHERE path IN (SELECT path FROM temp.carry_paths)"
    )
    streams = "(SELECT stream FROM old.files WHERE path IN (SELECT path FROM temp.carry_paths))"
    messages = conn.execute(
        f"INSERT OR IGNORE INTO main.messages({_MESSAGE_COLUMNS}) SELECT {_MESSAGE_COLUMNS} "
        f"FROM old.messages WHERE stream IN {streams}"
    ).rowcount
    chunks = conn.execute(
        f"INSERT OR IGNORE INTO main.chunks({_CHUNK_COLUMNS}) SELECT {_CHUNK_COLUMNS} "
        f"FROM old.chunks WHERE stream IN {streams} ORDER BY rowid"
    ).rowcount
    conn.execute(
        "INSERT OR IGNORE INTO main.file_edits(stream, session_id, path, n) "
        f"SELECT stream, session_id, path, n FROM old.file_edits WHERE stream IN {streams}"
    )
    rows = conn.execute(
        "SELECT id, project, started, ended, self_transcript FROM old.sessions WHERE id IN "
        f"(SELECT session_id FROM old.files WHERE stream IN {streams} "
        f"UNION SELECT session_id FROM old.chunks WHERE stream IN {streams})"
    ).fetchall()
    for session_id, project, started, ended, own in rows:  # merged as an import merges them
        store.upsert_session(conn, session_id, project, started, ended, bool(own))
    return Carried(files=int(files), sessions=len(rows), messages=int(messages), chunks=int(chunks))

"""The SQL of two reads of the imported files: where a session's main transcript lies, as its last
import recorded it, and when an import last stored anything.

Kept out of `engine.reads` and `engine.store` (both full); like them, nothing outside engine/ imports
this module: `engine.memory.Memory.main_transcript` is the public read. The MCP tools use it to read
the running session's compactions (`recallbench.running_session`), as the prompt hook reads them from
the transcript Claude Code names.
"""

from __future__ import annotations

import sqlite3


def main_transcript(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The recorded path of `session_id`'s main transcript (its stream is `<session id>@<hash>`,
    `engine.transcript_files.stored_stream`; a subagent's is `<session id>/agent-…`); None when no
    import recorded one."""
    row = conn.execute(
        "SELECT path FROM files WHERE session_id = ? AND stream GLOB ? ORDER BY path LIMIT 1",
        (session_id, f"{session_id}@*"),
    ).fetchone()
    return None if row is None else str(row[0])


def freshness(conn: sqlite3.Connection) -> dict[str, str | None]:
    """`last_import`: when an import last stored a file's new lines (`files.imported_at`, UTC);
    `newest_session`: the latest end of a session imported from a transcript (`sessions.ended`;
    recallbench's own transcripts and the person's notes, which have no file, left out); each None
    on an empty memory."""
    imported = conn.execute("SELECT MAX(imported_at) FROM files").fetchone()[0]
    # IN, not a correlated EXISTS: `files` has no index on session_id, and EXISTS scanned it once per
    # session (517 ms for 5,000 sessions and 10,000 files; IN reads it once: 4.8 ms)
    ended = conn.execute(
        "SELECT MAX(s.ended) FROM sessions s WHERE s.self_transcript = 0 "
        "AND s.id IN (SELECT session_id FROM files)"
    ).fetchone()[0]
    return {
        "last_import": None if imported is None else str(imported),
        "newest_session": None if ended is None else str(ended),
    }

"""The SQL of one read: where a session's main transcript lies, as its last import recorded it.

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

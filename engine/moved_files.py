"""A transcript file that moved: the same lines at a new path, its old path gone.

Claude Code's files move with the folder that holds them (a new machine, a renamed home folder,
another `CLAUDE_CONFIG_DIR`). The store keys a file by its resolved path and its stream by a hash of
that path (`engine.transcript_files.stored_stream`), so without this a moved file would be imported
again as a new one: every message stored twice, under a second stream, with chunk ids of its own.

`moved_from` finds the record of the file this one was: the same stream name (the session id, or a
subagent's), a path that no longer exists, and recorded bytes that are this file's first bytes (`prefix_sha256` over the
recorded offset). The import then takes that record over (`move`): the rows keyed by the old path
take the new one, and the stream, its chunk ids, and the settles and notes on them stay; lines the
file gained since are imported as usual. A copy whose original is still on disk is not a move: both
stay, and the arms show the copied lines once (`engine.copies`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from engine.store import FileRecord, get_file
from engine.transcript_files import TranscriptFile


def moved_from(
    conn: sqlite3.Connection,
    tf: TranscriptFile,
    size: int,
    fingerprint: Callable[[Path, int], str],
) -> FileRecord | None:
    """The record of the gone file `tf` (of `size` bytes) is the same file as, or None;
    `fingerprint(path, n)` hashes a file's first `n` bytes as the store does."""
    named = f"{tf.stream}@"
    paths = conn.execute(
        "SELECT path FROM files WHERE substr(stream, 1, ?) = ? ORDER BY path", (len(named), named)
    ).fetchall()
    for (path,) in paths:
        record = None if os.path.lexists(path) else get_file(conn, path)
        if record is None or size < record.offset:
            continue
        if fingerprint(tf.path, record.offset) == record.prefix_sha256:
            return record
    return None


def move(conn: sqlite3.Connection, old: str | None, new: str) -> int:
    """The rows keyed by transcript path `old` take `new`: the file's record, its skip and scrub
    counts, and the byte ranges of what `forget` removed from it. Returns the files moved: 1, or 0
    when `old` is None or gone already (another import moved it)."""
    if old is None:
        return 0
    moved = conn.execute("UPDATE files SET path = ? WHERE path = ?", (new, old)).rowcount
    # A row the new path holds already (a tombstone of the same message, say) stands for the old one.
    for table in ("file_counts", "tombstones"):
        conn.execute(f"UPDATE OR IGNORE {table} SET path = ? WHERE path = ?", (new, old))
        conn.execute(f"DELETE FROM {table} WHERE path = ?", (old,))
    return max(moved, 0)

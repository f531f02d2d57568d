"""The SQL of `recallbench forget`: find what a target names, remove it, leave tombstones, compact.

Kept beside `engine.store` (which is full) like `engine.audit_sql`; only `engine.forget` imports this
module, and nothing the server, the MCP tools or the hooks reach imports that one (the model must never
be able to delete). The rules (what a target covers, the order of the stages) are `engine.forget`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engine import tombstone_sql

_PART = 500  # ids bound per statement (SQLite allows 32766; small parts keep each statement quick)


@dataclass(frozen=True, kw_only=True)
class MessageRow:
    """One stored message, by ids."""

    stream: str
    uuid: str
    session_id: str
    api_message_id: str | None


@dataclass(frozen=True, kw_only=True)
class ChunkRow:
    """One stored chunk, by ids: its stream, session, project and the messages it packs."""

    id: str
    stream: str
    session_id: str
    project: str
    message_uuids: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class FileRow:
    """One imported transcript file: its stream, session, imported byte offset and stream state."""

    path: str
    stream: str
    session_id: str
    offset: int
    state: str


def _parts(values: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), _PART):
        part = ordered[start : start + _PART]
        yield part, ",".join("?" * len(part))


def _message(row: Sequence[Any]) -> MessageRow:
    """A message from a row that starts (stream, uuid, session id, API message id)."""
    return MessageRow(stream=row[0], uuid=row[1], session_id=row[2], api_message_id=row[3])


def _chunk(row: Sequence[object]) -> ChunkRow:
    return ChunkRow(
        id=str(row[0]),
        stream=str(row[1]),
        session_id=str(row[2]),
        project=str(row[3]),
        message_uuids=tuple(str(u) for u in json.loads(str(row[4]))),
    )


# --- what a target names -------------------------------------------------------------------------


def session_known(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether anything is stored for `session_id` (a session row, a message, a chunk or a file)."""
    row = conn.execute(
        "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?) "
        "OR EXISTS(SELECT 1 FROM messages WHERE session_id = ?) "
        "OR EXISTS(SELECT 1 FROM chunks WHERE session_id = ?) "
        "OR EXISTS(SELECT 1 FROM files WHERE session_id = ?)",
        (session_id,) * 4,
    ).fetchone()
    return bool(row[0])


def project_sessions(conn: sqlite3.Connection, project: str) -> list[str]:
    """Every session recorded for `project` or holding a chunk of it, sorted."""
    rows = conn.execute(
        "SELECT id FROM sessions WHERE project = ? "
        "UNION SELECT DISTINCT session_id FROM chunks WHERE project = ? ORDER BY 1",
        (project, project),
    ).fetchall()
    return [str(r[0]) for r in rows]


def session_streams(conn: sqlite3.Connection, session_ids: Iterable[str]) -> list[str]:
    """Every stream holding a message, chunk or file of one of `session_ids`, sorted."""
    out: set[str] = set()
    for part, marks in _parts(session_ids):
        for table in ("messages", "chunks", "files"):
            rows = conn.execute(
                f"SELECT DISTINCT stream FROM {table} WHERE session_id IN ({marks})", part
            ).fetchall()
            out.update(str(r[0]) for r in rows)
    return sorted(out)


def chunk(conn: sqlite3.Connection, chunk_id: str) -> ChunkRow | None:
    row = conn.execute(
        "SELECT id, stream, session_id, project, message_uuids FROM chunks WHERE id = ?",
        (chunk_id,),
    ).fetchone()
    return None if row is None else _chunk(row)


def chunks_containing(conn: sqlite3.Connection, text: str) -> list[ChunkRow]:
    """Chunks whose text contains `text` (exact, case-sensitive), by stream and index."""
    rows = conn.execute(
        "SELECT id, stream, session_id, project, message_uuids FROM chunks "
        "WHERE instr(text, ?) > 0 ORDER BY stream, idx",
        (text,),
    ).fetchall()
    return [_chunk(r) for r in rows]


def messages_containing(conn: sqlite3.Connection, text: str) -> list[MessageRow]:
    """Messages whose text contains `text` (exact, case-sensitive), by stream and ordinal."""
    rows = conn.execute(
        "SELECT stream, uuid, session_id, api_message_id FROM messages "
        "WHERE instr(text, ?) > 0 ORDER BY stream, ordinal",
        (text,),
    ).fetchall()
    return [_message(r) for r in rows]


def messages_before(conn: sqlite3.Connection, at: str) -> list[MessageRow]:
    """Messages written before the time `at` (`tombstone_sql.written_before`: the same rule the import
    applies to the horizon; an undated message is never before it), by stream and ordinal."""
    horizon = tombstone_sql.instant(at)
    rows = conn.execute(
        "SELECT stream, uuid, session_id, api_message_id, ts FROM messages WHERE ts IS NOT NULL "
        "ORDER BY stream, ordinal"
    )
    return [_message(r) for r in rows if tombstone_sql.written_before(r[4], horizon)]


def message_texts(
    conn: sqlite3.Connection, needles: Sequence[str] | None
) -> list[tuple[MessageRow, str]]:
    """Each message with its text, by stream and ordinal: every one (`needles` None), or those whose
    text contains one of `needles`."""
    where = (
        "" if needles is None else " WHERE " + " OR ".join("instr(text, ?) > 0" for _ in needles)
    )
    rows = conn.execute(
        f"SELECT stream, uuid, session_id, api_message_id, text FROM messages{where} "
        "ORDER BY stream, ordinal",
        list(needles or ()),
    ).fetchall()
    return [(_message(r), str(r[4])) for r in rows]


def stream_messages(
    conn: sqlite3.Connection, stream: str, uuids: Iterable[str]
) -> list[MessageRow]:
    """The stored messages of `stream` with these uuids, by ordinal."""
    out: list[tuple[int, MessageRow]] = []
    for part, marks in _parts(uuids):
        rows = conn.execute(
            "SELECT ordinal, uuid, session_id, api_message_id FROM messages "
            f"WHERE stream = ? AND uuid IN ({marks})",
            [stream, *part],
        ).fetchall()
        out.extend(
            (int(r[0]), MessageRow(stream=stream, uuid=r[1], session_id=r[2], api_message_id=r[3]))
            for r in rows
        )
    return [m for _, m in sorted(out, key=lambda pair: pair[0])]


def _stream_rows(
    conn: sqlite3.Connection, select: str, order: str, streams: Iterable[str]
) -> list[tuple[Any, ...]]:
    """`select` (a query without WHERE) over the rows of `streams`, `order`ed within each part of
    streams (the parts come in stream order, so the whole is in that order)."""
    out: list[tuple[Any, ...]] = []
    for part, marks in _parts(streams):
        sql = f"{select} WHERE stream IN ({marks}) ORDER BY {order}"
        out.extend(conn.execute(sql, part).fetchall())
    return out


def stream_message_rows(conn: sqlite3.Connection, streams: Iterable[str]) -> list[MessageRow]:
    """Every stored message of `streams`, by stream and ordinal."""
    select = "SELECT stream, uuid, session_id, api_message_id FROM messages"
    return [_message(r) for r in _stream_rows(conn, select, "stream, ordinal", streams)]


def copies(conn: sqlite3.Connection, of: Sequence[MessageRow]) -> list[MessageRow]:
    """Every stored message, in any stream, that shares a uuid or an API message id with one of `of`,
    by stream and ordinal: the messages themselves and the copies of them that resumed or
    forked sessions hold (Claude Code writes those under a new session id with the same line uuids).

    One pass over the messages table (messages are indexed by stream, not by uuid alone); a forget is
    rare and its own VACUUM costs far more.
    """
    uuids = {m.uuid for m in of}
    api_ids = {m.api_message_id for m in of if m.api_message_id is not None}
    if not uuids:
        return []
    rows = conn.execute(
        "SELECT stream, ordinal, uuid, session_id, api_message_id FROM messages "
        "ORDER BY stream, ordinal"
    )
    return [
        MessageRow(stream=r[0], uuid=r[2], session_id=r[3], api_message_id=r[4])
        for r in rows
        if r[2] in uuids or (r[4] is not None and r[4] in api_ids)
    ]


def chunks_of_messages(conn: sqlite3.Connection, stream: str, uuids: set[str]) -> list[ChunkRow]:
    """The chunks of `stream` that pack any of `uuids`, by index."""
    rows = conn.execute(
        "SELECT id, stream, session_id, project, message_uuids FROM chunks WHERE stream = ? "
        "ORDER BY idx",
        (stream,),
    ).fetchall()
    return [c for c in map(_chunk, rows) if uuids.intersection(c.message_uuids)]


def stream_chunks(conn: sqlite3.Connection, streams: Iterable[str]) -> list[ChunkRow]:
    """Every chunk of `streams`, by stream and index."""
    select = "SELECT id, stream, session_id, project, message_uuids FROM chunks"
    return [_chunk(r) for r in _stream_rows(conn, select, "stream, idx", streams)]


def message_counts(conn: sqlite3.Connection, streams: Iterable[str]) -> dict[str, int]:
    """Stored messages per session id of `streams`."""
    out: dict[str, int] = {}
    for part, marks in _parts(streams):
        rows = conn.execute(
            f"SELECT session_id, COUNT(*) FROM messages WHERE stream IN ({marks}) "
            "GROUP BY session_id",
            part,
        ).fetchall()
        for sid, n in rows:
            out[str(sid)] = out.get(str(sid), 0) + int(n)
    return out


def session_projects(conn: sqlite3.Connection, session_ids: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part, marks in _parts(session_ids):
        rows = conn.execute(f"SELECT id, project FROM sessions WHERE id IN ({marks})", part)
        out.update((str(i), str(p)) for i, p in rows)
    return out


def chunk_texts(conn: sqlite3.Connection, chunk_ids: Sequence[str]) -> list[str]:
    """The texts of `chunk_ids`, in the order given (for the plan's snippets, shown to the person)."""
    texts: list[str] = []
    for cid in chunk_ids:
        row = conn.execute("SELECT text FROM chunks WHERE id = ?", (cid,)).fetchone()
        if row is not None:
            texts.append(str(row[0]))
    return texts


def files(conn: sqlite3.Connection) -> list[FileRow]:
    """Every imported transcript file, by path."""
    rows = conn.execute(
        "SELECT path, stream, session_id, offset, state FROM files ORDER BY path"
    ).fetchall()
    return [
        FileRow(path=r[0], stream=r[1], session_id=r[2], offset=int(r[3]), state=r[4]) for r in rows
    ]


def edit_paths_containing(conn: sqlite3.Connection, text: str) -> int:
    row = conn.execute("SELECT COUNT(*) FROM file_edits WHERE instr(path, ?) > 0", (text,))
    return int(row.fetchone()[0])


def stream_shas(conn: sqlite3.Connection, streams: Iterable[str]) -> set[str]:
    """The content hashes of every chunk of `streams`."""
    out: set[str] = set()
    for part, marks in _parts(streams):
        rows = conn.execute(f"SELECT sha256 FROM chunks WHERE stream IN ({marks})", part)
        out.update(str(r[0]) for r in rows)
    return out


def stream_owner(conn: sqlite3.Connection, stream: str) -> tuple[str, str] | None:
    """(session id, project) of a stream's chunks, or None when it has none."""
    row = conn.execute(
        "SELECT session_id, project FROM chunks WHERE stream = ? ORDER BY idx LIMIT 1", (stream,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


# --- removal ---------------------------------------------------------------------------------------


def secure_delete(conn: sqlite3.Connection) -> None:
    """On this connection: overwrite deleted content with zeros (`secure_delete`), and keep temporary
    tables and indexes (VACUUM's copy among them) in memory rather than in files outside the home."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA temp_store = MEMORY")


def add_tombstone(
    conn: sqlite3.Connection,
    *,
    kind: str,
    session_id: str,
    ref: str,
    api_message_id: str | None,
    span: tuple[str, int | None, int | None],
    at: str,
) -> None:
    """Record one tombstone (ids only); one already recorded is kept as it was."""
    path, start, end = span
    conn.execute(
        "INSERT OR IGNORE INTO tombstones(kind, session_id, ref, api_message_id, path, "
        "start_offset, end_offset, forgotten_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (kind, session_id, ref, api_message_id, path, start, end, at),
    )


def set_horizon(conn: sqlite3.Connection, at: str) -> bool:
    """Move the horizon of `forget --before` to `at` unless it already lies there or later; whether
    it moved."""
    current, moment = tombstone_sql.horizon(conn), tombstone_sql.instant(at)
    if moment is None or (current is not None and current >= moment):
        return False
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (tombstone_sql.HORIZON_KEY, at),
    )
    return True


def put_tombstones(conn: sqlite3.Connection, rows: Sequence[Sequence[object]]) -> int:
    """Record tombstones read from another database (`engine.tombstone_sql.rows`); returns new ones."""
    cur = conn.executemany(
        "INSERT OR IGNORE INTO tombstones(kind, session_id, ref, api_message_id, path, "
        "start_offset, end_offset, forgotten_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [tuple(r) for r in rows],
    )
    return max(cur.rowcount, 0)


def put_redacted(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, int, str]]) -> int:
    """Record strings `forget --redact` keeps out (`engine.redacted_sql`, `Rule.row`, or the rows of
    another database); returns the new ones."""
    cur = conn.executemany(
        "INSERT OR IGNORE INTO redacted_strings(sha256, head, length, redacted_at) "
        "VALUES (?, ?, ?, ?)",
        rows,
    )
    return max(cur.rowcount, 0)


def delete_streams(conn: sqlite3.Connection, streams: Iterable[str]) -> int:
    """Delete the chunks, messages and file edits of `streams`; returns chunks deleted."""
    n = 0
    for part, marks in _parts(streams):
        n += conn.execute(f"DELETE FROM chunks WHERE stream IN ({marks})", part).rowcount
        conn.execute(f"DELETE FROM messages WHERE stream IN ({marks})", part)
        conn.execute(f"DELETE FROM file_edits WHERE stream IN ({marks})", part)
    return n


def delete_sessions(conn: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    for part, marks in _parts(session_ids):
        conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", part)


def delete_messages(conn: sqlite3.Connection, stream: str, uuids: Iterable[str]) -> int:
    n = 0
    for part, marks in _parts(uuids):
        n += conn.execute(
            f"DELETE FROM messages WHERE stream = ? AND uuid IN ({marks})", [stream, *part]
        ).rowcount
    return n


def trim_sessions(
    conn: sqlite3.Connection, session_ids: Iterable[str], streams: Iterable[str]
) -> int:
    """After messages left these sessions and streams (after `rechunk`): a stream with no message left
    loses its file edits; a session with no chunk left goes, and one that keeps some starts and ends
    at its first and last chunk left. Sessions recallbench wrote itself (`self_transcript`, stored
    without chunks) are left alone. Returns the sessions removed."""
    for part, marks in _parts(streams):
        conn.execute(
            f"DELETE FROM file_edits WHERE stream IN ({marks}) AND NOT EXISTS "
            "(SELECT 1 FROM messages m WHERE m.stream = file_edits.stream)",
            part,
        )
    removed = 0
    for part, marks in _parts(session_ids):
        spans = conn.execute(
            f"SELECT session_id, MIN(ts_start), MAX(ts_end) FROM chunks "
            f"WHERE session_id IN ({marks}) GROUP BY session_id",
            part,
        ).fetchall()
        for sid, first, last in spans:
            conn.execute(
                "UPDATE sessions SET started = ?, ended = ? WHERE id = ?", (first, last, sid)
            )
        gone = sorted(set(part) - {str(r[0]) for r in spans})
        if not gone:
            continue
        removed += conn.execute(
            f"DELETE FROM sessions WHERE id IN ({','.join('?' * len(gone))}) "
            "AND self_transcript = 0",
            gone,
        ).rowcount
    return removed


def delete_edit_paths_containing(conn: sqlite3.Connection, text: str) -> int:
    return conn.execute("DELETE FROM file_edits WHERE instr(path, ?) > 0", (text,)).rowcount


def set_message_text(conn: sqlite3.Connection, stream: str, uuid: str, text: str) -> None:
    conn.execute("UPDATE messages SET text = ? WHERE stream = ? AND uuid = ?", (text, stream, uuid))


def set_file_state(conn: sqlite3.Connection, path: str, state: str) -> None:
    conn.execute("UPDATE files SET state = ? WHERE path = ?", (state, path))


def delete_unshared_vectors(conn: sqlite3.Connection, shas: Iterable[str]) -> int:
    """Delete the vectors (every embedder) of these content hashes that no stored chunk still has."""
    return _delete_unshared(conn, "vectors", shas)


def delete_unshared_sentence_vectors(conn: sqlite3.Connection, shas: Iterable[str]) -> int:
    """Delete the sentence-vector rows (every embedder; `engine.sentence_sql`) of these content
    hashes that no stored chunk still has."""
    return _delete_unshared(conn, "sentence_vectors", shas)


def _delete_unshared(conn: sqlite3.Connection, table: str, shas: Iterable[str]) -> int:
    n = 0
    for part, marks in _parts(shas):
        n += conn.execute(
            f"DELETE FROM {table} WHERE sha256 IN ({marks}) "
            "AND sha256 NOT IN (SELECT sha256 FROM chunks)",
            part,
        ).rowcount
    return n


# --- compaction ------------------------------------------------------------------------------------

FTS_TABLES: tuple[str, ...] = ("chunks_fts", "chunks_fts_porter")


def optimize_fts(conn: sqlite3.Connection) -> None:
    """Merge each FTS5 index into one segment, so deleted rows' terms leave its `_data` pages."""
    for table in FTS_TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """`PRAGMA wal_checkpoint(TRUNCATE)`: (busy, WAL frames, frames checkpointed)."""
    row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def vacuum(conn: sqlite3.Connection) -> None:
    """Rebuild the database file, so that no free page keeps an old row."""
    conn.execute("VACUUM")


def compact(conn: sqlite3.Connection) -> bool:
    """Checkpoint (what VACUUM copies must be in the file, not only in the WAL), VACUUM, checkpoint
    again; whether the write-ahead log could be truncated (False: another connection kept it open)."""
    checkpoint(conn)
    vacuum(conn)
    busy, _, _ = checkpoint(conn)
    return not busy

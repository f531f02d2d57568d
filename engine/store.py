"""SQLite storage: WAL, busy timeout, numbered transactional migrations, FTS5, float32 vector BLOBs;
schema, writes and numpy reads. Other reads: `engine.reads` and the `engine.*_sql` modules."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from engine import audit_sql, checkout_sql, reads, sentence_sql, tombstone_sql, trust_sql
from engine.model import Author, Chunk, CleanMessage

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

BUSY_TIMEOUT_MS = 30_000
T = TypeVar("T")


class StoreError(RuntimeError):
    """The database could not be opened or written."""


MIGRATIONS: tuple[str, ...] = (
    # 1: the whole first schema
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        started TEXT,
        ended TEXT,
        self_transcript INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_project ON sessions(project, started, id);
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        stream TEXT NOT NULL,
        session_id TEXT NOT NULL,
        offset INTEGER NOT NULL,
        prefix_sha256 TEXT NOT NULL,
        state TEXT NOT NULL,
        imported_at TEXT NOT NULL
    );
    CREATE TABLE file_counts (
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        reason TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (path, kind, reason)
    );
    CREATE TABLE messages (
        stream TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        uuid TEXT NOT NULL,
        session_id TEXT NOT NULL,
        author INTEGER NOT NULL,
        text TEXT NOT NULL,
        ts TEXT,
        api_message_id TEXT,
        PRIMARY KEY (stream, ordinal)
    );
    CREATE INDEX messages_uuid ON messages(stream, uuid);
    CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        stream TEXT NOT NULL,
        idx INTEGER NOT NULL,
        project TEXT NOT NULL,
        text TEXT NOT NULL,
        author INTEGER NOT NULL,
        message_uuids TEXT NOT NULL,
        ts_start TEXT,
        ts_end TEXT,
        sha256 TEXT NOT NULL
    );
    CREATE INDEX chunks_session ON chunks(session_id);
    CREATE INDEX chunks_stream ON chunks(stream, idx);
    CREATE INDEX chunks_project ON chunks(project);
    CREATE INDEX chunks_sha ON chunks(sha256);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        text, content='chunks', content_rowid='rowid', tokenize='unicode61'
    );
    CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TRIGGER chunks_au AFTER UPDATE OF text ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TABLE vectors (
        embedder TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (embedder, sha256)
    );
    CREATE TABLE file_edits (
        stream TEXT NOT NULL,
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (stream, path)
    );
    CREATE INDEX file_edits_path ON file_edits(path, session_id);
    INSERT INTO meta(key, value) VALUES ('generation', '0');
    """,
    # 2: the chunk text's Porter-stemmed FTS5 index (`lexical(stem=True)`), synced like chunks_fts
    """
    CREATE VIRTUAL TABLE chunks_fts_porter USING fts5(
        text, content='chunks', content_rowid='rowid', tokenize='porter unicode61'
    );
    CREATE TRIGGER chunks_porter_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts_porter(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER chunks_porter_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts_porter(chunks_fts_porter, rowid, text)
        VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TRIGGER chunks_porter_au AFTER UPDATE OF text ON chunks BEGIN
        INSERT INTO chunks_fts_porter(chunks_fts_porter, rowid, text)
        VALUES ('delete', old.rowid, old.text);
        INSERT INTO chunks_fts_porter(rowid, text) VALUES (new.rowid, new.text);
    END;
    INSERT INTO chunks_fts_porter(chunks_fts_porter) VALUES ('rebuild');
    """,
    audit_sql.SCHEMA,  # 3: the append-only audit trail (engine.audit_sql, engine.audit)
    trust_sql.SCHEMA,  # 4: settlements, typed corrections by id (engine.trust_sql, engine.trust)
    tombstone_sql.SCHEMA,  # 5: what `forget` removed, by ids (engine.tombstone_sql, engine.forget)
    sentence_sql.SCHEMA,  # 6: sentence vectors of a person's chunk texts (engine.sentence_sql)
    tombstone_sql.REF_INDEXES,  # 7: a forgotten message looked up by uuid in any session (tombstone_sql)
    *checkout_sql.SCHEMAS,  # 8, 9: each project's place in git, and who said so (checkout_sql)
    reads.TIME_INDEX,  # 10: chunks by the instant they were written (engine.reads.window_sql)
    tombstone_sql.REDACTED_SCHEMA,  # 11: strings `forget --redact` keeps out (engine.redacted_sql)
)


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    return any(word in str(exc).lower() for word in ("locked", "busy"))


def retry_locked(fn: Callable[[], T], attempts: int = 8) -> T:
    """Run `fn`, retrying with jittered backoff while SQLite reports a lock beyond its busy timeout."""
    rng = random.Random()  # jitter only; no effect on results
    for attempt in range(attempts):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + rng.random()))
    msg = "unreachable"
    raise StoreError(msg)


def connect(path: Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """Open (and migrate) the database at `path` in WAL mode. A new folder is made 0700 and a new file
    0600 whatever the umask (SQLite gives the -wal and -shm files the database file's mode)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        msg = f"cannot open database {path}: {exc}"
        raise StoreError(msg) from exc
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL"))
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    retry_locked(lambda: migrate(conn))
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations, each in its own transaction with its `user_version` record."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(MIGRATIONS):
        msg = (
            f"database schema version {version} is newer than this recallbench knows "
            f"({len(MIGRATIONS)}); upgrade recallbench"
        )
        raise StoreError(msg)
    for number in range(version + 1, len(MIGRATIONS) + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if current >= number:  # another process migrated while we waited for the lock
                conn.execute("COMMIT")
                continue
            for statement in _statements(MIGRATIONS[number - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)


def _statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A short write transaction taken with BEGIN IMMEDIATE (lock errors surface here, not mid-way)."""
    retry_locked(lambda: conn.execute("BEGIN IMMEDIATE"))
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def read(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction, so that several statements see one state; joins one the caller holds."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if own:
            conn.execute("COMMIT")


class ThreadConnections:
    """One connection per calling thread to one database (SQLite connections are not shared)."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        """The calling thread's connection, opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close the calling thread's connection, if it opened one."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def bump_generation(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")


def generation(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])


# --- files and streams -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FileRecord:
    path: str
    stream: str
    session_id: str
    offset: int
    prefix_sha256: str
    state: str


def get_file(conn: sqlite3.Connection, path: str) -> FileRecord | None:
    row = conn.execute(
        "SELECT path, stream, session_id, offset, prefix_sha256, state FROM files WHERE path = ?",
        (path,),
    ).fetchone()
    if row is None:
        return None
    return FileRecord(
        path=row[0],
        stream=row[1],
        session_id=row[2],
        offset=row[3],
        prefix_sha256=row[4],
        state=row[5],
    )


def put_file(conn: sqlite3.Connection, record: FileRecord, imported_at: str) -> None:
    conn.execute(
        "INSERT INTO files(path, stream, session_id, offset, prefix_sha256, state, imported_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET stream = excluded.stream, "
        "session_id = excluded.session_id, offset = excluded.offset, "
        "prefix_sha256 = excluded.prefix_sha256, state = excluded.state, "
        "imported_at = excluded.imported_at",
        (
            record.path,
            record.stream,
            record.session_id,
            record.offset,
            record.prefix_sha256,
            record.state,
            imported_at,
        ),
    )


def add_counts(conn: sqlite3.Connection, path: str, kind: str, counts: dict[str, int]) -> None:
    for reason, n in sorted(counts.items()):
        if n:
            conn.execute(
                "INSERT INTO file_counts(path, kind, reason, n) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(path, kind, reason) DO UPDATE SET n = n + excluded.n",
                (path, kind, reason, n),
            )


def total_counts(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for kind, reason, n in conn.execute(
        "SELECT kind, reason, SUM(n) FROM file_counts GROUP BY kind, reason ORDER BY kind, reason"
    ):
        out.setdefault(kind, {})[reason] = int(n)
    return out


def forget_stream(conn: sqlite3.Connection, path: str, stream: str) -> None:
    """Remove everything one transcript file contributed (before a clean re-import)."""
    conn.execute("DELETE FROM chunks WHERE stream = ?", (stream,))
    conn.execute("DELETE FROM messages WHERE stream = ?", (stream,))
    conn.execute("DELETE FROM file_edits WHERE stream = ?", (stream,))
    conn.execute("DELETE FROM file_counts WHERE path = ?", (path,))
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    bump_generation(conn)


# --- sessions ----------------------------------------------------------------------------------


def upsert_session(
    conn: sqlite3.Connection,
    session_id: str,
    project: str,
    started: str | None,
    ended: str | None,
    self_transcript: bool,
) -> None:
    conn.execute(
        "INSERT INTO sessions(id, project, started, ended, self_transcript) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET "
        "started = CASE WHEN sessions.started IS NULL OR (excluded.started IS NOT NULL "
        "AND excluded.started < sessions.started) THEN excluded.started ELSE sessions.started END, "
        "ended = CASE WHEN sessions.ended IS NULL OR (excluded.ended IS NOT NULL "
        "AND excluded.ended > sessions.ended) THEN excluded.ended ELSE sessions.ended END, "
        "self_transcript = MAX(sessions.self_transcript, excluded.self_transcript)",
        (session_id, project, started, ended, int(self_transcript)),
    )


# --- messages and chunks -----------------------------------------------------------------------


def last_message(conn: sqlite3.Connection, stream: str) -> tuple[CleanMessage, str | None] | None:
    """The stream's last stored message and the API message id it was merged from."""
    row = conn.execute(
        "SELECT uuid, session_id, author, text, ts, ordinal, api_message_id FROM messages "
        "WHERE stream = ? ORDER BY ordinal DESC LIMIT 1",
        (stream,),
    ).fetchone()
    return None if row is None else (_message(row), row[6])


def _message(row: Sequence[object]) -> CleanMessage:
    return CleanMessage(
        uuid=str(row[0]),
        session_id=str(row[1]),
        author=Author(int(str(row[2]))),
        text=str(row[3]),
        timestamp=None if row[4] is None else str(row[4]),
        ordinal=int(str(row[5])),
    )


def put_messages(
    conn: sqlite3.Connection,
    stream: str,
    messages: Iterable[CleanMessage],
    api_ids: dict[str, str | None] | None = None,
) -> None:
    """Upsert messages by (stream, ordinal); `api_ids` maps message uuid -> assistant message.id."""
    ids = api_ids or {}
    conn.executemany(
        "INSERT INTO messages(stream, ordinal, uuid, session_id, author, text, ts, api_message_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(stream, ordinal) DO UPDATE SET "
        "uuid = excluded.uuid, author = excluded.author, text = excluded.text, ts = excluded.ts, "
        "api_message_id = excluded.api_message_id",
        [
            (
                stream,
                m.ordinal,
                m.uuid,
                m.session_id,
                int(m.author),
                m.text,
                m.timestamp,
                ids.get(m.uuid),
            )
            for m in messages
        ],
    )


def messages_from(conn: sqlite3.Connection, stream: str, ordinal: int) -> list[CleanMessage]:
    rows = conn.execute(
        "SELECT uuid, session_id, author, text, ts, ordinal FROM messages "
        "WHERE stream = ? AND ordinal >= ? ORDER BY ordinal",
        (stream, ordinal),
    ).fetchall()
    return [_message(r) for r in rows]


def rechunk_start(conn: sqlite3.Connection, stream: str) -> tuple[int, int]:
    """(chunk index, message ordinal) from which re-chunking a grown stream reproduces a full re-chunk.

    Greedy packing restarted at a chunk that begins with the start of a message gives the same chunks as
    packing from the beginning, so only the tail of the stream is rebuilt.
    """
    rows = conn.execute(
        "SELECT idx, message_uuids FROM chunks WHERE stream = ? ORDER BY idx DESC LIMIT 64",
        (stream,),
    ).fetchall()
    for pos, (idx, uuids_json) in enumerate(rows):
        first = json.loads(uuids_json)[0]
        previous = rows[pos + 1] if pos + 1 < len(rows) else None
        if idx == 0 or (previous is not None and json.loads(previous[1])[-1] != first):
            row = conn.execute(
                "SELECT ordinal FROM messages WHERE stream = ? AND uuid = ?", (stream, first)
            ).fetchone()
            if row is not None:
                return int(idx), int(row[0])
    return 0, 0


def put_chunks(
    conn: sqlite3.Connection, project: str, chunks: Sequence[Chunk], shas: Sequence[str]
) -> int:
    """Upsert chunks by id; rows whose text is unchanged are not rewritten. Returns rows changed."""
    cur = conn.executemany(
        "INSERT INTO chunks(id, session_id, stream, idx, project, text, author, message_uuids, "
        "ts_start, ts_end, sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET text = excluded.text, author = excluded.author, "
        "message_uuids = excluded.message_uuids, ts_start = excluded.ts_start, "
        "ts_end = excluded.ts_end, sha256 = excluded.sha256, project = excluded.project "
        "WHERE chunks.sha256 != excluded.sha256 OR chunks.message_uuids != excluded.message_uuids",
        [
            (
                c.id,
                c.session_id,
                c.stream,
                c.index,
                project,
                c.text,
                int(c.author),
                json.dumps(list(c.message_uuids)),
                c.ts_start,
                c.ts_end,
                sha,
            )
            for c, sha in zip(chunks, shas, strict=True)
        ],
    )
    return max(cur.rowcount, 0)


def trim_chunks(conn: sqlite3.Connection, stream: str, count: int) -> int:
    cur = conn.execute("DELETE FROM chunks WHERE stream = ? AND idx >= ?", (stream, count))
    return cur.rowcount


def add_file_edits(
    conn: sqlite3.Connection, stream: str, session_id: str, paths: Sequence[str]
) -> None:
    tally: dict[str, int] = {}
    for p in paths:
        tally[p] = tally.get(p, 0) + 1
    conn.executemany(
        "INSERT INTO file_edits(stream, session_id, path, n) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(stream, path) DO UPDATE SET n = n + excluded.n",
        [(stream, session_id, p, n) for p, n in sorted(tally.items())],
    )


# --- vectors -----------------------------------------------------------------------------------


def missing_vectors(conn: sqlite3.Connection, embedder: str) -> list[tuple[str, str]]:
    """(sha256, text) of chunk contents that have no vector for `embedder`, one per distinct sha."""
    rows = conn.execute(
        "SELECT c.sha256, MIN(c.text) FROM chunks c "
        "LEFT JOIN vectors v ON v.embedder = ? AND v.sha256 = c.sha256 "
        "WHERE v.sha256 IS NULL GROUP BY c.sha256 ORDER BY c.sha256",
        (embedder,),
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def put_vectors(
    conn: sqlite3.Connection, embedder: str, shas: Sequence[str], vectors: NDArray[np.float32]
) -> None:
    import numpy as np

    conn.executemany(
        "INSERT OR IGNORE INTO vectors(embedder, sha256, dim, vec) VALUES (?, ?, ?, ?)",
        [
            (embedder, sha, int(vectors.shape[1]), np.ascontiguousarray(v, dtype="<f4").tobytes())
            for sha, v in zip(shas, vectors, strict=True)
        ],
    )


def vector_rows(
    conn: sqlite3.Connection, embedder: str, dim: int
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """(chunk rowids, float32 matrix) of the chunks that have a vector for `embedder`, by rowid."""
    import numpy as np

    rows = conn.execute(
        "SELECT c.rowid, v.vec FROM chunks c JOIN vectors v "
        "ON v.embedder = ? AND v.sha256 = c.sha256 ORDER BY c.rowid",
        (embedder,),
    ).fetchall()
    labels = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return labels, np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    return labels, matrix.astype(np.float32)


def vector_catalog(
    conn: sqlite3.Connection, embedder: str, dim: int
) -> tuple[int, NDArray[np.int64], list[str], list[str], list[str], NDArray[np.float32], list[str]]:
    """One consistent snapshot of the chunks with a vector for `embedder`, by rowid.

    Returns (generation, rowids, chunk ids, projects, session ids, float32 matrix, text sha256s); the
    generation and the rows are read in one read transaction, so they describe one state of the store.
    """
    import numpy as np

    with read(conn):
        gen = generation(conn)
        rows = conn.execute(
            "SELECT c.rowid, c.id, c.project, c.session_id, v.vec, c.sha256 FROM chunks c JOIN vectors v "
            "ON v.embedder = ? AND v.sha256 = c.sha256 ORDER BY c.rowid",
            (embedder,),
        ).fetchall()
    labels = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if rows:
        matrix = np.frombuffer(b"".join(r[4] for r in rows), dtype="<f4").reshape(len(rows), -1)
        matrix = matrix.astype(np.float32)
    else:
        matrix = np.zeros((0, dim), dtype=np.float32)
    return (
        gen,
        labels,
        [str(r[1]) for r in rows],
        [str(r[2]) for r in rows],
        [str(r[3]) for r in rows],
        matrix,
        [str(r[5]) for r in rows],
    )


def blob_to_vector(blob: bytes) -> NDArray[np.float32]:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4").astype(np.float32)

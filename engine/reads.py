"""The text side of the read API, without numpy: lexical search, chunk records, project listing.

`engine.memory.Memory` answers these reads through the functions here, and so does the prompt hook,
which must start and answer within a budget a numpy import alone would spend a third of.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from engine.model import Author
from engine.scope import Scope, require_scope

_TOKEN = re.compile(r"[\w-]+", re.UNICODE)


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A chunk id with a score where higher is better."""

    chunk_id: str
    score: float


@dataclass(frozen=True, kw_only=True)
class ChunkRecord:
    id: str
    session_id: str
    stream: str
    index: int
    project: str
    text: str
    author: Author
    message_uuids: tuple[str, ...]
    ts_start: str | None
    ts_end: str | None
    session_start: str | None  # the session's first timestamp (for primacy and ordering)
    sha256: str


def fts_query(text: str) -> str | None:
    """Plain words -> a safe FTS5 query: quoted tokens of >= 2 characters joined with OR."""
    tokens: list[str] = []
    for raw in text.split():
        for token in _TOKEN.findall(raw):
            if len(token) >= 2 and token not in tokens:
                tokens.append(token)
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def scope_sql(scope: Scope, column: str) -> tuple[str, list[object]]:
    """An `AND column IN (...)` clause and its parameter for `scope` ("" for every project)."""
    require_scope(scope)
    if scope.all_projects:
        return "", []
    return f" AND {column} IN (SELECT value FROM json_each(?))", [
        json.dumps(sorted(scope.projects))
    ]


def lexical(conn: sqlite3.Connection, text: str, scope: Scope, limit: int) -> list[Scored]:
    """FTS5 BM25 over chunk text; score = -bm25 (higher is better). User text is plain words only."""
    where, params = scope_sql(scope, "c.project")
    query = fts_query(text)
    if query is None or limit < 1:
        return []
    rows = conn.execute(
        "SELECT c.id, bm25(chunks_fts) AS r FROM chunks_fts "
        "JOIN chunks c ON c.rowid = chunks_fts.rowid "
        "WHERE chunks_fts MATCH ?" + where + " ORDER BY r, c.id LIMIT ?",
        (query, *params, limit),
    ).fetchall()
    return [Scored(chunk_id=str(r[0]), score=-float(r[1])) for r in rows]


def chunks(conn: sqlite3.Connection, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
    """Records for `ids` in the order given; ids unknown or outside `scope` are omitted."""
    where, params = scope_sql(scope, "c.project")
    if not ids:
        return []
    rows = conn.execute(
        "SELECT c.id, c.session_id, c.stream, c.idx, c.project, c.text, c.author, "
        "c.message_uuids, c.ts_start, c.ts_end, s.started, c.sha256 FROM chunks c "
        "LEFT JOIN sessions s ON s.id = c.session_id "
        "WHERE c.id IN (SELECT value FROM json_each(?))" + where,
        (json.dumps(list(ids)), *params),
    ).fetchall()
    by_id = {
        str(r[0]): ChunkRecord(
            id=str(r[0]),
            session_id=str(r[1]),
            stream=str(r[2]),
            index=int(r[3]),
            project=str(r[4]),
            text=str(r[5]),
            author=Author(int(r[6])),
            message_uuids=tuple(json.loads(r[7])),
            ts_start=r[8],
            ts_end=r[9],
            session_start=r[10],
            sha256=str(r[11]),
        )
        for r in rows
    }
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


def projects(conn: sqlite3.Connection) -> list[str]:
    """Every project with a recorded session, sorted."""
    rows = conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project")
    return [str(r[0]) for r in rows]

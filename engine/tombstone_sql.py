"""The tombstones `recallbench forget` leaves, and the one read the import makes of them.

A tombstone names what was forgotten by ids only: a whole session, or one message of a session (its
line uuid and the API message id its lines shared), or a chunk id, with the transcript file and the
byte range of it that had been imported when it was forgotten. Never text, never a hash of text: a
tombstone must not keep what the forget removed. The import (`engine.ingest`) drops every message a
tombstone names, inside its own write transaction, so a re-import of the same transcript (from its
last offset or from the start) never brings the text back, while new lines of the file still import.

Only `engine.forget` writes tombstones (through `engine.forget_sql`); this module holds the schema
(`engine.store.MIGRATIONS`) and the read, so that the import, which the hooks reach, never imports
the module that deletes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

# Applied by `engine.store.MIGRATIONS`. `ref` is the message uuid or chunk id ('' for a session);
# `api_message_id` is set for a message whose lines carried one (a re-import from the start may merge
# those lines under another uuid); `path`, `start_offset` and `end_offset` say which bytes of which
# transcript file held it when it was forgotten ('' and NULL when no file was recorded).
SCHEMA = """
CREATE TABLE tombstones (
    kind TEXT NOT NULL CHECK (kind IN ('session', 'message', 'chunk')),
    session_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    api_message_id TEXT,
    path TEXT NOT NULL,
    start_offset INTEGER,
    end_offset INTEGER,
    forgotten_at TEXT NOT NULL,
    PRIMARY KEY (kind, session_id, ref, path)
);
CREATE INDEX tombstones_session ON tombstones(session_id, kind);
"""


@dataclass(frozen=True, kw_only=True)
class Forgotten:
    """What the tombstones say about some sessions: forgotten whole, or message by message."""

    sessions: frozenset[str]
    messages: frozenset[tuple[str, str]]  # (session id, message uuid)
    api_messages: frozenset[tuple[str, str]]  # (session id, API message id)

    def drops(self, stream_session: str, session_id: str, uuid: str, api_id: str | None) -> bool:
        """Whether a message of `session_id` (in a stream of `stream_session`) was forgotten."""
        return (
            stream_session in self.sessions
            or session_id in self.sessions
            or (session_id, uuid) in self.messages
            or (api_id is not None and (session_id, api_id) in self.api_messages)
        )

    @property
    def empty(self) -> bool:
        return not (self.sessions or self.messages or self.api_messages)


def forgotten(conn: sqlite3.Connection, session_ids: Iterable[str]) -> Forgotten:
    """The tombstones of `session_ids` (read in the caller's transaction)."""
    ids = sorted(set(session_ids))
    sessions: set[str] = set()
    messages: set[tuple[str, str]] = set()
    api: set[tuple[str, str]] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            "SELECT kind, session_id, ref, api_message_id FROM tombstones "
            f"WHERE kind IN ('session', 'message') AND session_id IN ({marks})",
            part,
        ).fetchall()
        for kind, sid, ref, api_id in rows:
            if kind == "session":
                sessions.add(str(sid))
                continue
            messages.add((str(sid), str(ref)))
            if api_id is not None:
                api.add((str(sid), str(api_id)))
    return Forgotten(
        sessions=frozenset(sessions), messages=frozenset(messages), api_messages=frozenset(api)
    )


def count(conn: sqlite3.Connection) -> dict[str, int]:
    """Tombstones per kind."""
    rows = conn.execute("SELECT kind, COUNT(*) FROM tombstones GROUP BY kind ORDER BY kind")
    return {str(kind): int(n) for kind, n in rows}


TombstoneRow = tuple[str, str, str, str | None, str, int | None, int | None, str]


def rows(conn: sqlite3.Connection) -> list[TombstoneRow]:
    """Every tombstone as (kind, session id, ref, API message id, path, start, end, forgotten at)."""
    found = conn.execute(
        "SELECT kind, session_id, ref, api_message_id, path, start_offset, end_offset, "
        "forgotten_at FROM tombstones ORDER BY kind, session_id, ref, path"
    ).fetchall()
    return [
        (str(r[0]), str(r[1]), str(r[2]), r[3], str(r[4]), r[5], r[6], str(r[7])) for r in found
    ]

"""The tombstones `recallbench forget` leaves, and the one read the import makes of them.

A tombstone names what was forgotten by ids only: a whole session, or one message of a session (its
line uuid and the API message id its lines shared), or a chunk id, with the transcript file and the
byte range of it that had been imported when it was forgotten. Never text, never a hash of text: a
tombstone must not keep what the forget removed. The import (`engine.ingest`) drops every message a
tombstone names, inside its own write transaction, so a re-import of the same transcript (from its
last offset or from the start) never brings the text back, while new lines of the file still import.

A forgotten message stays out wherever it turns up again: Claude Code writes a resumed or forked
session to a new file under a new session id, holding a copy of every earlier line under the same line
uuid (and API message id). So a message tombstone drops that uuid or API message id in any session, not
only in the one it was forgotten from.

`recallbench forget --before` also sets a horizon (`meta` key `forgotten_before`, a UTC time to the
second): every message written before it is forgotten, and the import drops any message a transcript
holds from before it, wherever it turns up (a project imported for the first time included). It only
moves forward.

Only `engine.forget` writes tombstones (through `engine.forget_sql`); this module holds the schema
(`engine.store.MIGRATIONS`) and the read, so that the import, which the hooks reach, never imports
the module that deletes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from engine import redacted_sql

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
# Migration 11, beside the tombstones: the strings `forget --redact` keeps out (engine.redacted_sql).
REDACTED_SCHEMA = redacted_sql.SCHEMA

# Applied by `engine.store.MIGRATIONS` after `SCHEMA`: the import looks a message's tombstone up by its
# uuid or API message id, whatever session it was forgotten from.
REF_INDEXES = """
CREATE INDEX tombstones_ref ON tombstones(ref) WHERE kind = 'message';
CREATE INDEX tombstones_api ON tombstones(api_message_id) WHERE kind = 'message';
"""


HORIZON_KEY = "forgotten_before"  # the `meta` row holding the horizon


def instant(text: str) -> datetime | None:
    """The instant an ISO-8601 time names (UTC when it names no zone), or None when it is not one."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment if moment.utcoffset() is not None else moment.replace(tzinfo=UTC)


def written_before(timestamp: str | None, horizon: datetime | None) -> bool:
    """Whether a message stamped `timestamp` was written before `horizon` (an undated message never
    was: it lies before no time, as it lies in no search window)."""
    if timestamp is None or horizon is None:
        return False
    moment = instant(timestamp)
    return moment is not None and moment < horizon


def horizon(conn: sqlite3.Connection) -> datetime | None:
    """The horizon `forget --before` set, or None."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (HORIZON_KEY,)).fetchone()
    return None if row is None else instant(str(row[0]))


@dataclass(frozen=True, kw_only=True)
class Forgotten:
    """What the tombstones say about the messages of an import: sessions forgotten whole, and message
    uuids and API message ids forgotten (in whichever session they were forgotten from)."""

    sessions: frozenset[str]
    messages: frozenset[str]  # message uuids
    api_messages: frozenset[str]  # API message ids
    before: datetime | None = None  # the horizon of `forget --before`

    def drops(
        self,
        stream_session: str,
        session_id: str,
        uuid: str,
        api_id: str | None,
        timestamp: str | None = None,
    ) -> bool:
        """Whether a message of `session_id` (in a stream of `stream_session`), stamped `timestamp`,
        was forgotten: its session whole, the message itself (here or as the copy of one forgotten
        elsewhere), or everything written before the horizon."""
        return (
            stream_session in self.sessions
            or session_id in self.sessions
            or uuid in self.messages
            or (api_id is not None and api_id in self.api_messages)
            or written_before(timestamp, self.before)
        )

    @property
    def empty(self) -> bool:
        return not (self.sessions or self.messages or self.api_messages or self.before)


def forgotten(
    conn: sqlite3.Connection,
    session_ids: Iterable[str],
    uuids: Iterable[str] = (),
    api_ids: Iterable[str] = (),
) -> Forgotten:
    """The tombstones that bear on an import (read in the caller's transaction): those of
    `session_ids`, the message tombstones of any session that name one of `uuids` or `api_ids`, and
    the horizon."""
    sessions: set[str] = set()
    messages: set[str] = set()
    api: set[str] = set()
    select = "SELECT kind, session_id, ref, api_message_id FROM tombstones WHERE "
    lookups = (
        ("kind IN ('session', 'message') AND session_id IN ({marks})", session_ids),
        ("kind = 'message' AND ref IN ({marks})", uuids),
        ("kind = 'message' AND api_message_id IN ({marks})", api_ids),
    )
    for where, values in lookups:
        ids = sorted(set(values))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = conn.execute(select + where.format(marks=",".join("?" * len(part))), part)
            for kind, sid, ref, api_id in rows.fetchall():
                if kind == "session":
                    sessions.add(str(sid))
                    continue
                messages.add(str(ref))
                if api_id is not None:
                    api.add(str(api_id))
    return Forgotten(
        sessions=frozenset(sessions),
        messages=frozenset(messages),
        api_messages=frozenset(api),
        before=horizon(conn),
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

"""Which sanitizer version a memory's text was imported under (the `meta` row `sanitize_version`), and
what an older version left in it.

Imports never read a file's old lines again, so text imported before a sanitizer version keeps what that
version removes until `recallbench rebuild` imports every transcript afresh. The row is written into a
memory that holds nothing yet (a new one, or a rebuild's), so it names the oldest rules any of its text
was cleaned by; a memory first imported before version 3, which began recording it, has none.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field

from engine.markers import READ_NOTICE_LEAD
from engine.secret_formats import FORMS_BY_VERSION, LATEST_VERSION, kinds_found_after, triggers

# The `meta` row naming the sanitizer version of the memory's oldest text.
VERSION_KEY = "sanitize_version"
# The `meta` row naming the sanitizer version whose credential rules `recallbench forget --credentials`
# last applied, in place, to every stored message (none until it has run).
CREDENTIALS_KEY = "credentials_version"
# The versions this module's reads are for: the read notice is removed from version 3 on, the
# credential formats of `engine.secret_formats` are redacted from the version that added each (4, 5).
READ_NOTICE_VERSION = 3
# What a memory without a version row counts as: imported before version 3 recorded one.
BEFORE_RECORDED = 2


def record_version(conn: sqlite3.Connection) -> None:
    """Record the running sanitizer's version in a memory without files or chunks; else nothing.

    Runs inside the caller's transaction, before the first file's rows are written with it.
    """
    from engine.sanitize import SANITIZE_VERSION  # the sanitizer and its rules: only to import

    record_in_empty(conn, VERSION_KEY, SANITIZE_VERSION)


def record_in_empty(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set the `meta` row `key` to `value` in a memory without files or chunks; else nothing (a
    version row names the oldest code any of the memory's text was read by)."""
    conn.execute(
        "INSERT INTO meta(key, value) SELECT ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM files) AND NOT EXISTS (SELECT 1 FROM chunks) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    """The `meta` row `key`, None when there is none."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def version(conn: sqlite3.Connection) -> str | None:
    """The version the memory's oldest text was imported under; None: before version 3."""
    return meta_value(conn, VERSION_KEY)


def record_credentials(conn: sqlite3.Connection) -> None:
    """Record that every stored message has been through the running sanitizer's credential rules
    (`forget --credentials`, in the caller's write transaction, after it rewrote them)."""
    from engine.sanitize import SANITIZE_VERSION  # the sanitizer and its rules: only to forget

    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (CREDENTIALS_KEY, SANITIZE_VERSION),
    )


def credentials_version(conn: sqlite3.Connection) -> str | None:
    """The newest sanitizer version whose credential rules every stored text has been through: the
    version the oldest text was imported under, or a later one `forget --credentials` applied in
    place; None: imported before version 3, and never redacted in place."""
    held = [int(v) for v in (version(conn), meta_value(conn, CREDENTIALS_KEY)) if v is not None]
    return str(max(held)) if held else None


def stale_read_notices(conn: sqlite3.Connection) -> int:
    """Chunks still holding Claude Code's file-read notice in a memory imported before version 3
    (0 in a newer one, where the words can only be a file's or a message's quote of it)."""
    if imported_under(conn) >= READ_NOTICE_VERSION:
        return 0
    phrase = '"' + " ".join(READ_NOTICE_LEAD.replace(",", " ").split()) + '"'
    row = conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
    ).fetchone()
    return int(row[0])


@dataclass(frozen=True, kw_only=True)
class StaleCredentials:
    """What an import under an older version left: the chunks holding a credential in a format a later
    version redacts, the kinds found (how many of each), and the sessions those chunks belong to."""

    chunks: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    sessions: tuple[str, ...] = ()


def stale_credentials(conn: sqlite3.Connection) -> StaleCredentials:
    """The chunks holding a credential in a format that a sanitizer version after the memory's
    (`credentials_version`) began to redact (none in a memory imported under the newest, which never
    stores one, or one that `forget --credentials` redacted under it).

    The rules read each stored message whole, as `forget --credentials` does: a message longer than a
    chunk is cut between chunks where it has a space, and a cut between `vault login` and its token
    leaves neither chunk holding the credential. The chunks counted are those that pack such a message.
    """
    redacted = credentials_version(conn)
    held = BEFORE_RECORDED if redacted is None else int(redacted)
    if held >= LATEST_VERSION:
        return StaleCredentials()
    from engine.secrets import (
        find_secrets,
    )  # the rules and detect-secrets: only for an older memory

    # every such credential holds one of the triggers (their literal prefixes): SQL narrows first
    needles = [t for v in FORMS_BY_VERSION if v > held for t in triggers(v)]
    later = set(kinds_found_after(held))
    where = " OR ".join("instr(text, ?) > 0" for _ in needles)
    rows = conn.execute(
        f"SELECT stream, uuid, session_id, text FROM messages WHERE {where}", needles
    )
    holding: dict[str, set[str]] = {}
    kinds, sessions = Counter[str](), set()
    for stream, uuid, session_id, text in rows:
        found = [f.kind for f in find_secrets(str(text)) if f.kind in later]
        if found:
            holding.setdefault(str(stream), set()).add(str(uuid))
            kinds.update(found)
            sessions.add(str(session_id))
    return StaleCredentials(
        chunks=_packing(conn, holding),
        kinds=dict(sorted(kinds.items())),
        sessions=tuple(sorted(sessions)),
    )


def _packing(conn: sqlite3.Connection, holding: dict[str, set[str]]) -> int:
    """How many chunks pack one of the messages `holding` names (stream -> uuids)."""
    count = 0
    for stream, uuids in holding.items():
        rows = conn.execute("SELECT message_uuids FROM chunks WHERE stream = ?", (stream,))
        count += sum(1 for (packed,) in rows if uuids.intersection(json.loads(packed)))
    return count


def imported_under(conn: sqlite3.Connection) -> int:
    """The sanitizer version of the memory's oldest text, `BEFORE_RECORDED` when it has no row."""
    held = version(conn)
    return BEFORE_RECORDED if held is None else int(held)

"""Which parser version a memory's text was imported under (the `meta` row `parser_version`), and what
an older parser left in it that the running one would not store (`engine.parser_versions`).

Imports never read a file's old lines again, so text imported by an older parser keeps what a later
version leaves out until `recallbench rebuild` imports every transcript afresh. The row is written
into a memory that holds nothing yet (a new one, or a rebuild's), so it names the oldest parser any of
its text was read by; a memory first imported before version 4, which began recording it, has none,
and what `stale_parse` finds in it is the answer.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from engine.parser_versions import (
    COMPACTION_AGENT_PREFIX,
    COMPACTION_INSTRUCTIONS_LEAD,
    PARSER_VERSION,
    iso_timestamp,
)
from engine.sanitized_sql import meta_value, record_in_empty

# The `meta` row naming the parser version of the memory's oldest text.
VERSION_KEY = "parser_version"
# What every terminal control sequence begins with: ESC, or the one-character CSI (U+009B). The other
# control characters `engine.render.strip_terminal_control` removes are not looked for: one GLOB class
# of them all took nine times as long as these two `instr` on a memory of 7,541 chunks.
_CONTROL_LEADS = ("\x1b", "\x9b")
# A compaction agent's stream: `<session id>/agent-acompact-<hex>@<hash>` (`stored_stream`), or
# without the session folder where the agent's file lay beside the session's (older layouts).
_COMPACTION_STREAM = f"*agent-{COMPACTION_AGENT_PREFIX}-*"


def record_version(conn: sqlite3.Connection) -> None:
    """Record the running parser's version in a memory without files or chunks; else nothing.

    Runs inside the caller's transaction, before the first file's rows are written with it.
    """
    record_in_empty(conn, VERSION_KEY, PARSER_VERSION)


def version(conn: sqlite3.Connection) -> str | None:
    """The version the memory's oldest text was imported under; None: before version 4."""
    return meta_value(conn, VERSION_KEY)


@dataclass(frozen=True, kw_only=True)
class StaleParse:
    """What an older parser left that the running one does not store: messages stamped with a
    timestamp that is not a time (version 2); the chunks of the instructions Claude Code handed its
    compaction agent, and how many compactions they came from (version 3); chunks holding a terminal
    control sequence (ESC or CSI: version 4)."""

    undated: int = 0
    compaction: int = 0
    compactions: int = 0
    control: int = 0


def stale_parse(conn: sqlite3.Connection) -> StaleParse:
    """What `StaleParse` counts, in a memory imported before the running version (none in a memory
    whose every text the running version read)."""
    if version(conn) == PARSER_VERSION:
        return StaleParse()
    # SQLite's julianday reads fewer forms than Python's ISO reader: it only narrows the candidates.
    stamps = conn.execute(
        "SELECT ts FROM messages WHERE ts IS NOT NULL AND julianday(ts) IS NULL"
    ).fetchall()
    undated = sum(1 for (ts,) in stamps if iso_timestamp(ts) is None)
    # The store keeps no line type, and a subagent's user lines are stored under the assistant: the
    # instructions are found by how they begin, and their chunks by the messages each covers.
    compaction, compactions = conn.execute(
        "SELECT count(DISTINCT c.id), count(DISTINCT m.stream) "
        "FROM messages m JOIN chunks c ON c.stream = m.stream, json_each(c.message_uuids) j "
        "WHERE m.stream GLOB ? AND substr(m.text, 1, ?) = ? AND j.value = m.uuid",
        (_COMPACTION_STREAM, len(COMPACTION_INSTRUCTIONS_LEAD), COMPACTION_INSTRUCTIONS_LEAD),
    ).fetchone()
    (control,) = conn.execute(
        "SELECT count(*) FROM chunks WHERE instr(text, ?) > 0 OR instr(text, ?) > 0", _CONTROL_LEADS
    ).fetchone()
    return StaleParse(
        undated=undated,
        compaction=int(compaction),
        compactions=int(compactions),
        control=int(control),
    )

"""The audit trail: who did what to the memory, when, to which ids, and why. Append-only.

Every forget stage, settle, undo, ship and hooks install/uninstall is recorded as one `AuditEntry`:
a time in UTC given by the caller (the engine never reads the clock, so tests and replays are exact),
an actor (`person`, or `agent:<session id>` for a write the model made through its tool), an action
from `ACTIONS`, the ids it touched and the reason given. No content and no hash of content is ever
recorded: the audit must not keep what a forget removed.

The table refuses UPDATE and DELETE by trigger (`engine.audit_sql`). Writers inside the engine that
already hold a write transaction call `record`; the application uses `AuditLog`, which opens the
database like `Memory` does (creating and migrating it) and writes in a transaction of its own.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from engine import audit_sql, store

PERSON = "person"
AGENT_PREFIX = "agent:"
# The actions that may be recorded. A new kind of write adds its name here first, so that a typo in a
# caller is refused rather than recorded as an action nobody searches for.
ACTIONS: tuple[str, ...] = (
    "ship",  # `recallbench ship`: targets the protocol id, the run id and the arm spec
    "hooks.install",  # targets the Claude Code settings file
    "hooks.uninstall",  # targets the Claude Code settings file
    "forget.stage",  # a stage of `recallbench forget`, recorded before anything is removed
    "settle",  # a correction between two memories (corrected / changed / open)
    "undo",  # a settle taken back
    "settle.move",  # a settle's chunk ids followed their text when forget chunked a stream again
    "vectors.drop",  # `recallbench vectors drop`: targets the embedder id whose vectors were removed
    "projects.join",  # `recallbench projects join`: targets the project stated to be a worktree
    "projects.unjoin",  # `recallbench projects join --undo`: targets the project whose statement went
)
# A Claude Code session id is a UUID; allow any plain id of that alphabet, nothing that could hide text.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


# What opening or writing the database can raise (a damaged, locked or unreachable file), for callers
# outside the engine, which do not import sqlite3.
STORE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, store.StoreError, OSError)


class AuditError(ValueError):
    """An entry the audit refuses: unknown action, malformed actor, a time not in UTC, bad targets."""


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    """One recorded row. `time` is ISO-8601 UTC to the second, e.g. ``2026-05-01T09:30:00Z``."""

    id: int
    time: str
    actor: str
    action: str
    targets: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, object]:
        """The entry as JSON-ready values (targets as a list)."""
        return {
            "id": self.id,
            "time": self.time,
            "actor": self.actor,
            "action": self.action,
            "targets": list(self.targets),
            "reason": self.reason,
        }


def utc_text(moment: datetime) -> str:
    """`moment` as the audit writes times: UTC, to the second, ``Z``. Refuses a naive datetime."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        msg = (
            f"audit times must carry a time zone (got naive {moment.isoformat()}); pass a UTC time"
        )
        raise AuditError(msg)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An ISO-8601 time as given on the command line; one without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        msg = f"not an ISO-8601 time: {text!r} (e.g. 2026-05-01 or 2026-05-01T09:30:00Z)"
        raise AuditError(msg) from exc
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def check_actor(actor: str) -> str:
    """`actor` if it is `person` or `agent:<session id>`, else AuditError naming both shapes."""
    if actor == PERSON:
        return actor
    if actor.startswith(AGENT_PREFIX) and _SESSION_ID.fullmatch(actor[len(AGENT_PREFIX) :]):
        return actor
    msg = f"unknown audit actor {actor!r}: use 'person' or 'agent:<session id>'"
    raise AuditError(msg)


def check_action(action: str) -> str:
    """`action` if it is one of `ACTIONS`, else AuditError listing them."""
    if action in ACTIONS:
        return action
    msg = f"unknown audit action {action!r}; known: {', '.join(ACTIONS)}"
    raise AuditError(msg)


def _targets_json(targets: Sequence[str]) -> str:
    if isinstance(targets, str) or not all(isinstance(t, str) and t for t in targets):
        msg = f"audit targets must be a list of non-empty ids, got {targets!r}"
        raise AuditError(msg)
    return json.dumps(list(targets))


def record(
    conn: sqlite3.Connection,
    *,
    time: datetime,
    actor: str,
    action: str,
    targets: Sequence[str],
    reason: str,
) -> int:
    """Append one checked entry in the caller's write transaction; returns its id."""
    when = utc_text(time)
    return audit_sql.insert(
        conn, when, check_actor(actor), check_action(action), _targets_json(targets), reason
    )


def entries(conn: sqlite3.Connection, since: datetime | None = None) -> list[AuditEntry]:
    """The entries at or after `since` (all when None), oldest first (by id)."""
    bound = None if since is None else utc_text(since)
    return [
        AuditEntry(
            id=row[0],
            time=row[1],
            actor=row[2],
            action=row[3],
            targets=tuple(str(t) for t in json.loads(row[4])),
            reason=row[5],
        )
        for row in audit_sql.rows_since(conn, bound)
    ]


class AuditLog:
    """The audit of one database, for the application: opens (creating and migrating) the file."""

    def __init__(self, db_path: Path, *, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS) -> None:
        self.db_path = Path(db_path)
        self._conn = store.connect(self.db_path, busy_timeout_ms=busy_timeout_ms)

    def record(
        self,
        *,
        time: datetime,
        actor: str,
        action: str,
        targets: Sequence[str],
        reason: str,
    ) -> int:
        """Append one entry in a transaction of its own; returns its id."""
        with store.write(self._conn) as conn:
            return record(
                conn, time=time, actor=actor, action=action, targets=targets, reason=reason
            )

    def since(self, since: datetime | None = None) -> list[AuditEntry]:
        """The entries at or after `since` (all when None), oldest first."""
        with store.read(self._conn) as conn:
            return entries(conn, since)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def carry(old_db: Path, new_db: Path) -> int:
    """Copy every row of the audit of `old_db` into `new_db` under the same ids, before anything is
    recorded there (`recallbench rebuild`: the trail of what was done to the memory outlives the
    file it was first written in). Returns the rows copied."""
    old = store.connect(old_db)
    try:
        with store.read(old):
            rows = audit_sql.rows_since(old, None)
    finally:
        old.close()
    new = store.connect(new_db)
    try:
        with store.write(new):
            return audit_sql.insert_rows(new, rows)
    finally:
        new.close()

"""The audit trail: its migration, record and read with times given by hand, the append-only triggers,
and the entries it refuses."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from engine import audit, store
from engine.audit import AuditError, AuditLog
from tests.engine.old_store import store_at_version

T0 = datetime(2026, 5, 1, 9, 30, 0, tzinfo=UTC)


def tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}


def version_2_store(path: Path) -> None:
    """A store as the schema before the audit left it."""
    store_at_version(path, 2)


def test_a_version_2_store_gains_the_audit_table_and_its_triggers(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    version_2_store(db)
    with sqlite3.connect(db) as raw:
        assert "audit" not in tables(raw)  # control: the old schema lacks it
        assert "chunks_fts_porter" in tables(raw)
    conn = store.connect(db)
    # Every later migration applies too (other tables join after the audit's number 3).
    assert int(conn.execute("PRAGMA user_version").fetchone()[0]) == len(store.MIGRATIONS) >= 3
    assert {"audit", "audit_time", "audit_no_update", "audit_no_delete"} <= tables(conn)
    assert audit.entries(conn) == []
    conn.close()


def test_entries_come_back_in_id_order_and_since_filters_by_time(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "memory.db")  # the file does not exist yet: it is created
    first = log.record(
        time=T0,
        actor="person",
        action="ship",
        targets=["default-2", "run-1", "rrf()"],
        reason="pre-registered rule",
    )
    # Given in another zone: stored as 2026-05-01T10:00:00Z (12:00 at +02:00).
    second = log.record(
        time=datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=2))),
        actor="agent:0b5e-41aa",
        action="settle",
        targets=["c1", "c2"],
        reason="the port changed",
    )
    # Recorded last but earlier in time: id order is kept, the since filter looks at the time.
    third = log.record(
        time=T0 - timedelta(days=1), actor="person", action="undo", targets=[], reason=""
    )
    assert (first, second, third) == (1, 2, 3)
    everything = log.since()
    assert [e.id for e in everything] == [1, 2, 3]
    assert everything[0] == audit.AuditEntry(
        id=1,
        time="2026-05-01T09:30:00Z",
        actor="person",
        action="ship",
        targets=("default-2", "run-1", "rrf()"),
        reason="pre-registered rule",
    )
    assert everything[1].time == "2026-05-01T10:00:00Z"
    assert everything[2].time == "2026-04-30T09:30:00Z"
    # At or after 09:30: entries 1 (exactly 09:30) and 2 (10:00), not 3 (the day before).
    assert [e.id for e in log.since(T0)] == [1, 2]
    assert [e.id for e in log.since(T0 + timedelta(seconds=1))] == [2]
    assert log.since(T0 + timedelta(days=1)) == []
    log.close()


def test_update_and_delete_are_refused_by_the_database_itself(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with AuditLog(db) as log:
        log.record(time=T0, actor="person", action="hooks.install", targets=["/s.json"], reason="")
    raw = sqlite3.connect(db, isolation_level=None)
    count = "SELECT COUNT(*) FROM audit"
    # Positive control: a plain INSERT through sqlite3 works and the count goes from 1 to 2.
    assert raw.execute(count).fetchone()[0] == 1
    raw.execute(
        "INSERT INTO audit(time, actor, action, targets, reason) "
        "VALUES ('2026-05-02T00:00:00Z', 'person', 'undo', '[]', '')"
    )
    assert raw.execute(count).fetchone()[0] == 2
    with pytest.raises(sqlite3.IntegrityError, match="append-only: its rows are never updated"):
        raw.execute("UPDATE audit SET reason = 'rewritten' WHERE id = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only: its rows are never deleted"):
        raw.execute("DELETE FROM audit WHERE id = 1")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        raw.execute("DELETE FROM audit")
    # Nothing changed: both rows, the first with its reason as recorded.
    assert raw.execute("SELECT id, reason FROM audit ORDER BY id").fetchall() == [(1, ""), (2, "")]
    raw.close()


@pytest.mark.parametrize(
    ("actor", "action", "targets", "message"),
    [
        ("root", "ship", [], "unknown audit actor 'root'"),
        ("agent:", "ship", [], "unknown audit actor 'agent:'"),
        ("agent:a b", "ship", [], "unknown audit actor"),
        ("person", "drop", [], "unknown audit action 'drop'"),
        ("person", "Ship", [], "unknown audit action 'Ship'"),
        ("person", "ship", "run-1", "list of non-empty ids"),
        ("person", "ship", [""], "list of non-empty ids"),
    ],
)
def test_malformed_entries_are_refused_and_nothing_is_written(
    tmp_path: Path, actor: str, action: str, targets: list[str], message: str
) -> None:
    with AuditLog(tmp_path / "memory.db") as log:
        with pytest.raises(AuditError, match=message):
            log.record(time=T0, actor=actor, action=action, targets=targets, reason="r")
        assert log.since() == []
        # Positive control: the same log takes a well-formed entry.
        log.record(time=T0, actor="agent:abc-1", action="settle", targets=["c1"], reason="r")
        assert [e.actor for e in log.since()] == ["agent:abc-1"]


def test_a_naive_time_is_refused_and_a_cli_time_without_zone_is_utc() -> None:
    with pytest.raises(AuditError, match="time zone"):
        audit.utc_text(datetime(2026, 5, 1, 9, 30))  # a naive time: refused
    assert audit.utc_text(audit.parse_time("2026-05-01")) == "2026-05-01T00:00:00Z"
    assert audit.utc_text(audit.parse_time("2026-05-01T11:30:00+02:00")) == "2026-05-01T09:30:00Z"
    assert audit.utc_text(audit.parse_time("2026-05-01T09:30:00Z")) == "2026-05-01T09:30:00Z"
    with pytest.raises(AuditError, match="not an ISO-8601 time: 'yesterday'"):
        audit.parse_time("yesterday")

"""A string the person redacted (`recallbench forget --redact`) stays out of what they write later: a
settle's reason (and its audit row), an undo's reason and a note are stored with it replaced, as an
import stores it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from engine import trust
from engine.forget import forget
from engine.forget_parts import Target
from engine.redacted_sql import MARK
from tests.engine.trust_fixtures import SHOP, T1, shop_memory

HOST = "zephyr-collector-01.internal"  # redacted by the person
KEPT = "otel-gateway-02.internal"  # not redacted: the control
NOW = datetime(2026, 5, 3, 10, 0, tzinfo=UTC)


def _bytes_holding(db: Path, needle: str) -> int:
    """How many times `needle` stands in the database's files (the WAL checkpointed first)."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.read_bytes().count(needle.encode()) for p in db.parent.glob(f"{db.name}*"))


def test_a_redacted_string_is_replaced_in_reasons_and_notes(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    db = memory.db_path
    memory.close()
    forget(db, Target(kind="redact", value=HOST), now=T1)
    with closing(sqlite3.connect(db)) as conn:
        note = trust.add_note(
            conn, SHOP, f"The orders database moved to {HOST}, next to {KEPT}.", now=NOW
        )
        made = trust.settle(
            conn,
            ids["old"],
            by=note,
            kind="changed",
            reason=f"moved to {HOST} ({KEPT} stays)",
            actor="person",
            now=NOW,
        )
        undone = trust.undo_settle(
            conn, made.id, actor="person", now=NOW, reason=f"not {HOST} after all"
        )
        text = conn.execute("SELECT text FROM chunks WHERE id = ?", (note,)).fetchone()[0]
        reasons = [r for (r,) in conn.execute("SELECT reason FROM audit ORDER BY id")]
    assert text == f"The orders database moved to {MARK}, next to {KEPT}."
    assert made.reason == f"moved to {MARK} ({KEPT} stays)"
    assert reasons[-2:] == [f"changed: moved to {MARK} ({KEPT} stays)", f"not {MARK} after all"]
    assert undone.id == made.id
    assert _bytes_holding(db, HOST) == 0
    assert _bytes_holding(db, KEPT) >= 3  # control: the rest of what they wrote is stored

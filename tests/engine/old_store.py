"""A store as an older version of recallbench left it, for the tests of each migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine import store


def store_at_version(path: Path, version: int) -> None:
    """A database at `path` holding the first `version` migrations, recorded as that version."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in store.MIGRATIONS[:version]:
        for statement in store._statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {int(version)}")
    conn.close()

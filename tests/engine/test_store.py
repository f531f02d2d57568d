"""The store's connection plumbing: one connection per thread, and read transactions that nest."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from engine import store


def test_each_thread_gets_its_own_connection_and_keeps_it(tmp_path: Path) -> None:
    connections = store.ThreadConnections(tmp_path / "m.db")
    mine = connections.get()
    assert connections.get() is mine  # the same thread gets the same connection back
    theirs: list[object] = []
    worker = threading.Thread(target=lambda: theirs.append(connections.get()))
    worker.start()
    worker.join()
    assert len(theirs) == 1
    assert theirs[0] is not mine
    connections.close()
    assert connections.get() is not mine  # a closed connection is replaced on the next use


def in_transaction(conn: sqlite3.Connection) -> bool:
    """Read afresh each time (a bare attribute would be narrowed by the type checker)."""
    return conn.in_transaction


def test_a_read_transaction_is_taken_once_and_a_callers_transaction_is_left_open(
    tmp_path: Path,
) -> None:
    conn = store.connect(tmp_path / "m.db")
    with store.read(conn):
        assert in_transaction(conn)  # its own transaction...
    assert not in_transaction(conn)  # ...committed on the way out
    conn.execute("BEGIN")
    with store.read(conn):
        assert store.generation(conn) == 0
    assert in_transaction(conn)  # the caller's transaction is joined, not ended
    conn.execute("COMMIT")
    conn.close()

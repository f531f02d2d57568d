"""`serve` loads every project's vector partition before its socket listens (a scoped read would load
only its own project's, so each project's first prompt hook would pay for it), and a failure to do so
is logged without stopping the service."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from engine.memory import Memory
from recallbench.mcp_server import _warm_partitions
from tests.engine.test_catalog_scoped import C, store_of
from tests.engine.test_memory import A, open_memory


def test_the_warm_up_loads_every_projects_partition(tmp_path: Path) -> None:
    db = store_of(tmp_path)
    memory = Memory(db, open_memory(tmp_path, "other.db").embedder)
    catalog = memory._require_vectors()

    def loaded() -> set[str]:
        return set() if catalog._parts is None else set(catalog._parts[1])

    assert loaded() == set()  # nothing loaded yet in this process
    _warm_partitions(memory)
    assert loaded() == {A, C}  # both projects with a graph (B is scanned exactly)


def test_a_warm_up_that_fails_is_logged_and_does_not_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = store_of(tmp_path)
    memory = Memory(db, open_memory(tmp_path, "other.db").embedder)

    def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(memory, "ensure_index", locked)
    with caplog.at_level(logging.WARNING):
        _warm_partitions(memory)  # no exception
    assert any("vector partitions not warmed" in r.getMessage() for r in caplog.records)

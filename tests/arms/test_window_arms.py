"""Every arm keeps to a scope's time window on the real engine (SQLite, FTS5, stored vectors): the
window is enforced in the engine's reads, so no arm's own path (pools, graph hops, neighbours,
sentence vectors, fitted features) can bring back a chunk written outside it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from arms.base import Query
from engine.memory import Memory
from engine.scope import Scope
from tests.arms.test_all_arms import SEARCHING_ARMS, make
from tests.engine.window_corpus import QUERY, P, chunk_of, window_memory

NOW = datetime(2026, 6, 1, tzinfo=UTC)
JAN_15, JAN_25 = datetime(2026, 1, 15, tzinfo=UTC), datetime(2026, 1, 25, tzinfo=UTC)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    return window_memory(Path(tmp_path_factory.mktemp("window")))


@pytest.mark.parametrize("arm_name", SEARCHING_ARMS)
def test_an_arm_returns_only_chunks_written_in_the_window(memory: Memory, arm_name: str) -> None:
    arm = make(arm_name, memory)
    c1, c2 = chunk_of(memory, 1), chunk_of(memory, 2)
    unwindowed = [h.chunk_id for h in arm.search(Query(text=QUERY, scope=Scope.of(P), now=NOW))]
    assert c1 in unwindowed  # control: the best match, written before the window, is found
    windowed = Scope.of(P).within(JAN_15, JAN_25)
    hits = [h.chunk_id for h in arm.search(Query(text=QUERY, scope=windowed, now=NOW))]
    assert hits == [c2]  # the one chunk of P written between Jan 15 and Jan 25

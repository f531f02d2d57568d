"""The `none` arm: the no-memory baseline."""

from __future__ import annotations

from datetime import UTC, datetime

from arms.base import Query
from arms.none import NoneArm
from arms.vector import VectorArm
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0


def test_none_returns_nothing_even_when_memory_holds_a_perfect_match() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_chunk("c1", session="s1", text="the answer", vector=e0())
    mem.add_query("the answer", e0())
    query = Query(text="the answer", scope=Scope.of("/a"), now=datetime(2025, 6, 1, tzinfo=UTC))
    assert NoneArm(mem).search(query) == []
    assert mem.calls == []  # it never reads memory
    assert [h.chunk_id for h in VectorArm(mem).search(query)] == ["c1"]  # control

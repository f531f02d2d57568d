"""The `vector` arm: cosine neighbours above 0.20."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arms.base import Query
from arms.spec import SpecError
from arms.vector import VectorArm, VectorParams
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_chunk("hi", session="s1", text="x", vector=toward(0.9, 1))
    mem.add_chunk("mid", session="s1", text="x", vector=toward(0.5, 2))
    mem.add_chunk("low", session="s1", text="x", vector=toward(0.19, 3))
    mem.add_query("q", e0())
    return mem


def test_vector_returns_cosines_at_or_above_the_floor_in_order() -> None:
    hits = VectorArm(memory()).search(Query(text="q", scope=A, now=NOW))
    assert [(h.chunk_id, h.via) for h in hits] == [("hi", "vector"), ("mid", "vector")]
    assert [h.score for h in hits] == pytest.approx([0.9, 0.5], abs=1e-6)


def test_lowering_the_floor_admits_the_chunk_below_it() -> None:
    hits = VectorArm(memory(), VectorParams(min_score=0.1)).search(
        Query(text="q", scope=A, now=NOW)
    )
    assert [h.chunk_id for h in hits] == ["hi", "mid", "low"]


def test_vector_fetches_the_pool_and_truncates_to_k() -> None:
    mem = memory()
    hits = VectorArm(mem).search(Query(text="q", scope=A, now=NOW, k=1))
    assert [h.chunk_id for h in hits] == ["hi"]
    assert mem.calls_to("nearest")[0][2:] == (20, 0.20)


def test_vector_params_refuse_a_floor_outside_cosine_range() -> None:
    with pytest.raises(SpecError, match=r"min_score must be <= 1\.0"):
        VectorParams(min_score=1.5)
    assert VectorParams(min_score=1.0).min_score == 1.0  # control

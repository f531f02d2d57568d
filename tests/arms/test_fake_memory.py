"""The test fake honours the read contract arms rely on: scope on every read, id tie-breaks."""

from __future__ import annotations

import pytest

from engine.scope import Scope, ScopeError
from tests.arms.fake_memory import FakeMemory, e0, toward

A = Scope.of("/a")
AB = Scope.of("/a", "/b")


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("a1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_session("a2", project="/a", start="2025-01-02T00:00:00Z")
    mem.add_session("b1", project="/b", start="2025-01-03T00:00:00Z")
    mem.add_chunk("ca", session="a1", text="word", vector=toward(0.5, 1))
    mem.add_chunk("cb", session="b1", text="word", vector=toward(0.9, 2))
    mem.add_edit("a1", "f.py")
    mem.add_edit("b1", "f.py")
    return mem


def test_every_read_filters_by_scope_and_lifting_it_reveals_the_other_project() -> None:
    mem = memory()
    mem.add_query("q", e0())
    query_vector = mem.embed_query("q")
    assert [s.chunk_id for s in mem.lexical("word", A, 10)] == ["ca"]
    assert [s.chunk_id for s in mem.lexical("word", AB, 10)] == ["ca", "cb"]
    assert [s.chunk_id for s in mem.nearest(query_vector, A, 10)] == ["ca"]
    assert [s.chunk_id for s in mem.nearest(query_vector, AB, 10)] == ["cb", "ca"]
    assert [r.id for r in mem.chunks(["cb", "ca"], A)] == ["ca"]
    assert [r.id for r in mem.chunks(["cb", "ca"], AB)] == ["cb", "ca"]
    assert mem.sessions_for_file("f.py", A, 10) == ["a1"]
    assert mem.sessions_for_file("f.py", AB, 10) == ["b1", "a1"]
    assert mem.files_for_session("b1", A, 10) == []
    assert mem.files_for_session("b1", AB, 10) == ["f.py"]
    assert mem.best_in_session(query_vector, "b1", A) is None
    assert mem.best_in_session(query_vector, "b1", AB) is not None


def test_a_read_without_a_scope_fails_closed() -> None:
    with pytest.raises(ScopeError, match="a Scope is required"):
        memory().lexical("word", None, 10)  # type: ignore[arg-type]
    assert memory().lexical("word", A, 10) != []  # control


def test_previous_session_stays_in_the_project_and_picks_the_latest_earlier_start() -> None:
    mem = memory()
    assert mem.previous_session("a2", A) == "a1"
    assert mem.previous_session("a1", A) is None
    assert mem.previous_session("b1", AB) is None  # a1 and a2 are earlier but in another project


def test_stemmed_lexical_strips_one_suffix_on_both_sides() -> None:
    mem = FakeMemory()
    mem.add_session("s", project="/a", start=None)
    mem.add_chunk("c1", session="s", text="run runs")  # stemmed: run run -> 2 for "running"
    mem.add_chunk("c2", session="s", text="running late")  # run late
    mem.add_chunk("c3", session="s", text="bus is")  # "bus", "is": too short to lose the "s"
    plain = [(s.chunk_id, s.score) for s in mem.lexical("running bus", A, 10)]
    assert plain == [("c2", 1.0), ("c3", 1.0)]  # control: exact tokens only
    stemmed = [(s.chunk_id, s.score) for s in mem.lexical("running bus", A, 10, stem=True)]
    assert stemmed == [("c1", 2.0), ("c2", 1.0), ("c3", 1.0)]
    assert [args[3] for args in mem.calls_to("lexical")] == [False, True]

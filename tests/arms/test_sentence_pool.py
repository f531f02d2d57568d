"""`arms.pools.vector_pool(sentences=True)`: the vector channel rescored by the person's sentence
vectors, and the arms that take it (`vector`, `rrf`, `bridge`, `ltr`, `ltrb` with `sentences=True`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arms.base import Query
from arms.pools import SENTENCE_DEPTH, vector_pool
from arms.registry import full_canonical
from arms.rrf import RRFArm, RRFParams
from arms.vector import VectorArm, VectorParams
from engine.api import Scored
from engine.model import Author
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_session("t1", project="/b", start="2025-01-01T00:00:00Z")
    # Chunk cosines: b 0.7, a 0.5, d 0.15, c 0.1. a and c were written by the person and have
    # sentence vectors with cosines 0.9 / 0.2 (a) and 0.3 (c); b and d have none.
    user = Author.USER
    mem.add_chunk(
        "a",
        session="s1",
        text="alpha",
        vector=toward(0.5, 1),
        author=user,
        sentences=[toward(0.9, 2), toward(0.2, 3)],
    )
    mem.add_chunk("b", session="s1", text="bravo", vector=toward(0.7, 4))
    mem.add_chunk(
        "c",
        session="s1",
        text="charlie",
        vector=toward(0.1, 5),
        author=user,
        sentences=[toward(0.3, 6)],
    )
    mem.add_chunk("d", session="s1", text="delta", vector=toward(0.15, 7))
    # Another project's chunk with a sentence equal to the query.
    mem.add_chunk(
        "z", session="t1", text="zulu", vector=toward(0.0, 1), author=user, sentences=[e0()]
    )
    mem.add_query("q", e0())
    return mem


def scores(pool: list[Scored]) -> list[tuple[str, float]]:
    return [(s.chunk_id, round(s.score, 6)) for s in pool]


def test_sentences_lift_a_chunk_to_its_best_sentence_and_over_the_floor() -> None:
    mem = memory()
    q = mem.embed_query("q")
    assert scores(vector_pool(mem, q, A, 10, 0.2)) == [("b", 0.7), ("a", 0.5)]
    # a: max(0.5, 0.9, 0.2) = 0.9; c: max(0.1, 0.3) = 0.3 passes the floor; d (0.15, no sentences)
    # stays out, and so does z (another project's chunk, whose sentence is the query itself).
    assert scores(vector_pool(mem, q, A, 10, 0.2, sentences=True)) == [
        ("a", 0.9),
        ("b", 0.7),
        ("c", 0.3),
    ]
    assert scores(vector_pool(mem, q, Scope.of("/b"), 10, 0.2, sentences=True)) == [("z", 1.0)]
    # The channel reads SENTENCE_DEPTH neighbours whatever their cosine, then cuts to the pool.
    assert mem.calls_to("nearest")[1][2:] == (SENTENCE_DEPTH, -1.0)
    assert scores(vector_pool(mem, q, A, 2, 0.2, sentences=True)) == [("a", 0.9), ("b", 0.7)]


def test_vector_and_rrf_with_sentences() -> None:
    query = Query(text="q", scope=A, now=NOW)
    plain = VectorArm(memory()).search(query)
    assert [(h.chunk_id, round(h.score, 6)) for h in plain] == [("b", 0.7), ("a", 0.5)]
    lifted = VectorArm(memory(), VectorParams(sentences=True)).search(query)
    assert [(h.chunk_id, round(h.score, 6)) for h in lifted] == [("a", 0.9), ("b", 0.7), ("c", 0.3)]
    # rrf: no chunk text holds "q", so the lexical pool is empty and the fused score is 1/(60+rank)
    # of the vector rank.
    fused = RRFArm(memory(), RRFParams(sentences=True)).search(query)
    assert [h.chunk_id for h in fused] == ["a", "b", "c"]
    assert [h.score for h in fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_sentences_are_named_in_the_spec_only_when_on() -> None:
    assert full_canonical("rrf") == "rrf(min_score=0.2,pool=20,rrf_k=60)"
    assert (
        full_canonical("rrf(sentences=True)")
        == "rrf(min_score=0.2,pool=20,rrf_k=60,sentences=True)"
    )
    assert full_canonical("vector(sentences=False)") == "vector(min_score=0.2,pool=20)"
    assert "sentences=True" in full_canonical("bridge(sentences=True)")
    assert "sentences=True" in full_canonical("ltr(sentences=True)")
    assert "sentences=True" in full_canonical("ltrb(sentences=True)")
    assert "sentences" not in full_canonical("ltrb")

"""The `rrf` arm: reciprocal rank fusion of a 20-deep vector pool and a 20-deep lexical pool."""

from __future__ import annotations

from datetime import UTC, datetime

from arms.base import Hit, Query
from arms.rrf import RRFArm, RRFParams
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    # Vector ranks: v1 (0.9), v2 (0.8), x (0.7). Lexical ranks: x (3 tokens), l2 (1 token).
    mem.add_chunk("v1", session="s1", text="unrelated", vector=toward(0.9, 1))
    mem.add_chunk("v2", session="s1", text="unrelated", vector=toward(0.8, 2))
    mem.add_chunk("x", session="s1", text="commit deadbeef commit", vector=toward(0.7, 3))
    mem.add_chunk("l2", session="s1", text="deadbeef", vector=toward(0.0, 4))
    mem.add_chunk("far", session="s1", text="unrelated", vector=toward(0.15, 5))
    mem.add_query("commit deadbeef", e0())
    return mem


def test_rrf_sums_one_over_sixty_plus_rank_across_pools_and_names_the_channels() -> None:
    hits = RRFArm(memory()).search(Query(text="commit deadbeef", scope=A, now=NOW))
    assert hits == [
        Hit(chunk_id="x", score=1 / (60 + 3) + 1 / (60 + 1), via="rrf (fts+vector)"),
        Hit(chunk_id="v1", score=1 / (60 + 1), via="rrf (vector)"),
        # l2 (lexical rank 2) and v2 (vector rank 2) tie at 1/62: chunk id breaks the tie.
        Hit(chunk_id="l2", score=1 / (60 + 2), via="rrf (fts)"),
        Hit(chunk_id="v2", score=1 / (60 + 2), via="rrf (vector)"),
    ]


def test_a_chunk_below_the_cosine_floor_with_no_lexical_match_is_left_out() -> None:
    default = RRFArm(memory()).search(Query(text="commit deadbeef", scope=A, now=NOW))
    assert "far" not in [h.chunk_id for h in default]
    lowered = RRFArm(memory(), RRFParams(min_score=0.1)).search(
        Query(text="commit deadbeef", scope=A, now=NOW)
    )
    assert [h.chunk_id for h in lowered][-1] == "far"  # control: lower the floor and it enters
    assert lowered[-1].score == 1 / (60 + 4)


def test_rrf_pools_are_twenty_deep_whatever_k_and_the_result_is_truncated_to_k() -> None:
    mem = memory()
    hits = RRFArm(mem).search(Query(text="commit deadbeef", scope=A, now=NOW, k=2))
    assert [h.chunk_id for h in hits] == ["x", "v1"]
    assert mem.calls_to("nearest")[0][2:] == (20, 0.20)
    assert mem.calls_to("lexical")[0][2] == 20


def test_the_rrf_constant_is_a_parameter() -> None:
    hits = RRFArm(memory(), RRFParams(rrf_k=1)).search(
        Query(text="commit deadbeef", scope=A, now=NOW, k=1)
    )
    assert hits == [Hit(chunk_id="x", score=1 / (1 + 3) + 1 / (1 + 1), via="rrf (fts+vector)")]


def test_stem_reaches_the_lexical_pool_only() -> None:
    mem = memory()
    mem.add_chunk("l3", session="s1", text="commits", vector=toward(0.0, 6))  # stemmed: commit
    plain = RRFArm(mem).search(Query(text="commit deadbeef", scope=A, now=NOW))
    assert "l3" not in [h.chunk_id for h in plain]  # control: "commits" is not "commit"
    stemmed = RRFArm(mem, RRFParams(stem=True)).search(
        Query(text="commit deadbeef", scope=A, now=NOW)
    )
    # Stemmed lexical ranks: x (3 tokens), then l2 and l3 (1 each, by id); vector ranks unchanged.
    assert stemmed[-1] == Hit(chunk_id="l3", score=1 / (60 + 3), via="rrf (fts)")
    assert [args[3] for args in mem.calls_to("lexical")] == [False, True]
    assert len(mem.calls_to("nearest")) == 2  # the vector channel is read the same way both times
    assert mem.calls_to("nearest")[0][1:] == mem.calls_to("nearest")[1][1:]

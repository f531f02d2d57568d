"""The `fts` arm: lexical hits, 1/rank or raw scores, pool of max(k, 20)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arms.base import Hit, Query
from arms.fts import FtsArm, FtsParams
from arms.spec import SpecError
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_chunk("c3", session="s1", text="deploy deploy deploy api")
    mem.add_chunk("c2", session="s1", text="deploy api")
    mem.add_chunk("c1", session="s1", text="api deploy")
    mem.add_chunk("c0", session="s1", text="nothing relevant")
    return mem


def test_fts_scores_are_one_over_rank_with_ties_by_chunk_id() -> None:
    hits = FtsArm(memory()).search(Query(text="deploy api", scope=A, now=NOW, k=10))
    # Fake lexical scores: c3 = 4 matching tokens, c1 = c2 = 2 (tie, so c1 first); c0 matches nothing.
    assert hits == [
        Hit(chunk_id="c3", score=1 / 1, via="fts"),
        Hit(chunk_id="c1", score=1 / 2, via="fts"),
        Hit(chunk_id="c2", score=1 / 3, via="fts"),
    ]


def test_bm25_mode_returns_the_engine_score() -> None:
    arm = FtsArm(memory(), FtsParams(score="bm25"))
    hits = arm.search(Query(text="deploy api", scope=A, now=NOW, k=2))
    assert hits == [
        Hit(chunk_id="c3", score=4.0, via="fts"),
        Hit(chunk_id="c1", score=2.0, via="fts"),
    ]


def test_fts_fetches_max_of_k_and_twenty_and_truncates_to_k() -> None:
    mem = memory()
    arm = FtsArm(mem)
    assert len(arm.search(Query(text="deploy api", scope=A, now=NOW, k=1))) == 1
    arm.search(Query(text="deploy api", scope=A, now=NOW, k=25))
    assert [args[2] for args in mem.calls_to("lexical")] == [20, 25]


def test_a_query_with_no_usable_tokens_returns_nothing() -> None:
    arm = FtsArm(memory())
    assert arm.search(Query(text="a ! ?", scope=A, now=NOW)) == []
    assert arm.search(Query(text="api", scope=A, now=NOW)) != []  # control


def test_fts_params_refuse_bad_values() -> None:
    with pytest.raises(SpecError, match="score must be one of rank, bm25"):
        FtsParams(score="tfidf")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="pool must be >= 1"):
        FtsParams(pool=0)
    assert FtsParams(pool=1).pool == 1  # control


def test_stem_reads_the_stemmed_index_and_finds_other_word_forms() -> None:
    mem = memory()
    mem.add_chunk("c4", session="s1", text="deployed twice")  # stemmed: deploy twice
    query = Query(text="deploying", scope=A, now=NOW, k=10)
    assert FtsArm(mem).search(query) == []  # control: no chunk holds "deploying" verbatim
    hits = FtsArm(mem, FtsParams(stem=True)).search(query)
    # Stemmed, "deploying" is "deploy": c3 holds it 3 times, c1, c2 and c4 once each (ties by id).
    assert [h.chunk_id for h in hits] == ["c3", "c1", "c2", "c4"]
    assert [h.score for h in hits] == [1 / 1, 1 / 2, 1 / 3, 1 / 4]
    assert [args[3] for args in mem.calls_to("lexical")] == [False, True]  # stem passed through

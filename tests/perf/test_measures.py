"""The perf package's small pieces: latency summaries, timing, lexical tokens and references, recall."""

from __future__ import annotations

import numpy as np
import pytest

from engine.scope import Scope
from harness.stats import percentile
from perf.config import PerfConfig, PerfError
from perf.lexical import RankBM25, bm25_query_tokens, bm25_tokens
from perf.measures import median, summary, timed
from perf.vectors import recall


def test_a_latency_summary_takes_its_percentiles_from_the_one_project_helper() -> None:
    sample = [1.0, 2.0, 3.0, 4.0]
    out = summary(sample)
    # numpy's linear interpolation by hand: rank 0.50·3 = 1.5 -> 2.5; rank 0.95·3 = 2.85 -> 3.85
    assert out == {
        "p50_ms": 2.5,
        "p95_ms": pytest.approx(3.85),
        "mean_ms": 2.5,
        "max_ms": 4.0,
        "n": 4,
    }
    assert out["p95_ms"] == percentile(sample, 95)
    assert median([5.0, 1.0, 3.0]) == 3.0


def test_an_empty_latency_sample_is_refused_with_a_reason() -> None:
    assert summary([7.0])["n"] == 1  # positive control
    with pytest.raises(PerfError, match="empty latency sample"):
        summary([])


def test_timed_returns_the_call_result_and_its_milliseconds() -> None:
    result, ms = timed(sorted, [3, 1, 2], reverse=True)
    assert result == [3, 2, 1]
    assert 0.0 <= ms < 1000.0


def test_config_refuses_bools_where_counts_are_expected() -> None:
    assert PerfConfig(queries=1, hook_runs=0).hook_runs == 0  # positive control: 0 hooks is allowed
    with pytest.raises(PerfError, match="queries must be a positive int, got True"):
        PerfConfig(queries=True)
    with pytest.raises(PerfError, match="hook_runs must be an int >= 0, got False"):
        PerfConfig(hook_runs=False)
    with pytest.raises(PerfError, match="sizes must be positive ints"):
        PerfConfig(sizes=(True, 2))


def test_query_words_are_kept_and_split_as_fts5_unicode61_splits_them() -> None:
    assert bm25_tokens("Re-run CI_job, twice") == ["re", "run", "ci", "job", "twice"]
    # one-letter words are dropped and repeats kept once, as the lexical read keeps them
    assert bm25_query_tokens("re-run the CI_job twice, a x the") == [
        "re",
        "run",
        "the",
        "ci",
        "job",
        "twice",
    ]


def test_the_rank_bm25_reference_ranks_by_term_frequency_within_the_scope() -> None:
    rows = [
        (1, "a", "/p1", "alpha beta"),
        (2, "b", "/p2", "alpha alpha"),
        (3, "c", "/p1", "gamma"),
        (4, "d", "/p1", "delta"),
        (5, "e", "/p2", "epsilon"),
    ]
    reference = RankBM25(rows)
    # alpha is in 2 of 5 documents (idf log(3.5/2.5) > 0); b says it twice in as many words as a
    assert reference.top("alpha", Scope.everywhere()) == ["b", "a"]
    assert reference.top("alpha", Scope.of("/p1")) == ["a"]
    assert reference.top("omega", Scope.everywhere()) == []
    assert reference.build_s >= 0.0


def test_recall_counts_the_exact_labels_that_came_back() -> None:
    exact = np.asarray([1, 2, 3, 4], dtype=np.int64)
    assert recall(exact, np.asarray([4, 9, 1], dtype=np.int64)) == 2 / 4
    assert recall(exact, exact) == 1.0
    assert recall(np.asarray([], dtype=np.int64), np.asarray([], dtype=np.int64)) == 0.0

"""Metrics against hand-worked values at both units, and nDCG against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from harness.metrics import (
    Measure,
    MetricError,
    RankedItem,
    control_hit_at_k,
    leak_at_k,
    mean_over_roster,
    parse_measure,
    score_query,
    to_units,
)


def item(chunk: str, session: str, *uuids: str) -> RankedItem:
    return RankedItem(chunk_id=chunk, session_id=session, message_uuids=uuids)


def measures(*names: str) -> list[Measure]:
    return [parse_measure(name) for name in names]


# Chunks ranked so that the distinct sessions in first-seen order are [b, a, c].
SESSIONS_BAC = [item("c1", "b"), item("c2", "a"), item("c3", "c")]


def test_canonical_measure_strings_round_trip_through_the_parser() -> None:
    for text in ["hit@1", "recall@5", "mrr", "mrr@10", "ndcg@10"]:
        assert str(parse_measure(text)) == text
    assert parse_measure("ndcg@10") == Measure(name="ndcg", k=10)
    assert parse_measure("mrr") == Measure(name="mrr", k=None)


def test_unknown_measure_error_lists_the_valid_names() -> None:
    with pytest.raises(MetricError, match=r"unknown measure 'map'.*hit, mrr, ndcg, recall"):
        parse_measure("map@10")
    assert parse_measure("hit@10").name == "hit"


@pytest.mark.parametrize(
    "text",
    ["recall", "ndcg", "hit", "recall@0", "recall@05", "Recall@5", "recall@ 5", "eval(1)", ""],
)
def test_non_canonical_or_cutoff_less_measure_strings_are_rejected(text: str) -> None:
    with pytest.raises(MetricError):
        parse_measure(text)


def test_measure_validates_its_cutoff() -> None:
    with pytest.raises(MetricError, match="needs a cutoff"):
        Measure(name="recall", k=None)
    with pytest.raises(MetricError, match=">= 1"):
        Measure(name="hit", k=0)
    assert str(Measure(name="mrr", k=3)) == "mrr@3"


def test_session_unit_lists_distinct_sessions_in_first_seen_order() -> None:
    ranked = [item("c1", "b"), item("c2", "b"), item("c3", "a"), item("c4", "c"), item("c5", "a")]
    assert to_units(ranked, "session") == ["b", "a", "c"]
    assert to_units(ranked, "message") == ["c1", "c2", "c3", "c4", "c5"]


def test_session_unit_cutoff_counts_distinct_sessions_not_chunks() -> None:
    # Sessions b, b, a, c: session a is the 3rd chunk but the 2nd distinct session.
    ranked = [item("c1", "b"), item("c2", "b"), item("c3", "a"), item("c4", "c")]
    assert score_query(ranked, {"a": 1}, "session", measures("hit@2"))["hit@2"] == 1.0
    assert score_query(ranked, {"c": 1}, "session", measures("hit@2"))["hit@2"] == 0.0
    assert score_query(ranked, {"c": 1}, "session", measures("hit@3"))["hit@3"] == 1.0


def test_session_unit_hit_and_mrr_for_one_gold_session_ranked_second() -> None:
    scores = score_query(SESSIONS_BAC, {"a": 1}, "session", measures("hit@1", "hit@2", "mrr"))
    assert scores == {"hit@1": 0.0, "hit@2": 1.0, "mrr": 1 / 2}


def test_mrr_with_a_cutoff_ignores_relevant_units_below_it() -> None:
    scores = score_query(SESSIONS_BAC, {"c": 1}, "session", measures("mrr@2", "mrr@3", "mrr"))
    assert scores == {"mrr@2": 0.0, "mrr@3": 1 / 3, "mrr": 1 / 3}


def test_session_unit_recall_is_the_share_of_gold_sessions_found() -> None:
    gold = {"a": 1, "c": 1}
    scores = score_query(
        SESSIONS_BAC, gold, "session", measures("recall@1", "recall@2", "recall@3")
    )
    assert scores == {"recall@1": 0 / 2, "recall@2": 1 / 2, "recall@3": 2 / 2}


def test_session_unit_ndcg_uses_exponential_gain_and_the_keys_ideal_ranking() -> None:
    ranked = [item("c1", "a"), item("c2", "b"), item("c3", "c"), item("c4", "d")]
    gold = {"a": 1, "c": 3, "e": 2}  # e is never retrieved but still shapes the ideal
    scores = score_query(ranked, gold, "session", measures("ndcg@1", "ndcg@3"))
    dcg3 = (2**1 - 1) / math.log2(1 + 1) + 0 + (2**3 - 1) / math.log2(3 + 1)
    idcg3 = (
        (2**3 - 1) / math.log2(1 + 1)
        + (2**2 - 1) / math.log2(2 + 1)
        + (2**1 - 1) / math.log2(3 + 1)
    )
    assert scores["ndcg@3"] == pytest.approx(dcg3 / idcg3, rel=1e-12)
    assert scores["ndcg@1"] == pytest.approx(((2**1 - 1) / 1) / ((2**3 - 1) / 1), rel=1e-12)


def test_ndcg_matches_scikit_learn_on_a_graded_fixture() -> None:
    ranked = [item(f"c{i}", s) for i, s in enumerate(["s1", "s2", "s3", "s4", "s5", "s6"])]
    gold = {"s2": 3, "s4": 1, "s5": 2, "s9": 2}
    # sklearn uses linear gain and builds its ideal from every document it is given, so pass the
    # exponential gains as relevances and include the unretrieved gold session s9 below the rest.
    docs = ["s1", "s2", "s3", "s4", "s5", "s6", "s9"]
    y_true = np.array([[2 ** gold.get(d, 0) - 1 for d in docs]], dtype=float)
    y_score = np.array([[6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]])
    for k in range(1, 7):  # up to the ranking's length, so s9 (rank 7 for sklearn) never counts
        ours = score_query(ranked, gold, "session", [Measure(name="ndcg", k=k)])[f"ndcg@{k}"]
        theirs = ndcg_score(y_true, y_score, k=k, ignore_ties=True)
        assert ours == pytest.approx(theirs, rel=1e-12), k
    assert ours < 1.0  # the fixture is not trivially perfect


def test_message_unit_relevance_comes_from_covered_gold_uuids() -> None:
    ranked = [item("x1", "s1", "m1", "m2"), item("x2", "s1", "m3"), item("x3", "s2", "m4", "m5")]
    gold = {"m3": 1, "m5": 2, "m9": 1}
    names = ("hit@1", "hit@2", "mrr", "recall@2", "recall@3", "ndcg@3")
    scores = score_query(ranked, gold, "message", measures(*names))
    dcg3 = 0 + (2**1 - 1) / math.log2(2 + 1) + (2**2 - 1) / math.log2(3 + 1)
    idcg3 = (2**2 - 1) / math.log2(1 + 1) + (2**1 - 1) / math.log2(2 + 1) + 1 / math.log2(3 + 1)
    assert scores["hit@1"] == 0.0
    assert scores["hit@2"] == 1.0
    assert scores["mrr"] == 1 / 2
    assert scores["recall@2"] == 1 / 3
    assert scores["recall@3"] == 2 / 3
    assert scores["ndcg@3"] == pytest.approx(dcg3 / idcg3, rel=1e-12)


def test_message_unit_chunk_grade_is_the_best_grade_it_covers() -> None:
    ranked = [item("x1", "s1", "m1", "m2")]
    gold = {"m1": 1, "m2": 2}
    scores = score_query(ranked, gold, "message", measures("ndcg@1", "ndcg@2", "recall@1"))
    assert scores["ndcg@1"] == (2**2 - 1) / (2**2 - 1)
    assert scores["ndcg@2"] == pytest.approx(
        (2**2 - 1) / ((2**2 - 1) + (2**1 - 1) / math.log2(2 + 1)), rel=1e-12
    )
    assert scores["recall@1"] == 2 / 2


def test_message_split_across_chunks_is_credited_once_in_ndcg() -> None:
    gold = {"m1": 1, "m2": 1}
    # Two pieces of one long message m1: the second piece adds no gain.
    split = [item("p1", "s1", "m1"), item("p2", "s1", "m1")]
    scores = score_query(split, gold, "message", measures("ndcg@2", "recall@2", "mrr"))
    assert scores["ndcg@2"] == pytest.approx(1 / (1 + 1 / math.log2(3)), rel=1e-12)
    assert scores["recall@2"] == 1 / 2
    assert scores["mrr"] == 1.0
    # Control: when the second chunk covers the other gold message, the ranking is ideal.
    distinct = [item("p1", "s1", "m1"), item("p2", "s1", "m2")]
    assert score_query(distinct, gold, "message", measures("ndcg@2"))["ndcg@2"] == 1.0


def test_message_unit_counts_a_repeated_chunk_id_once() -> None:
    ranked = [item("x1", "s1", "m1"), item("x1", "s1", "m1"), item("x2", "s1", "m2")]
    assert to_units(ranked, "message") == ["x1", "x2"]
    scores = score_query(ranked, {"m2": 1}, "message", measures("hit@1", "hit@2", "mrr"))
    assert scores == {"hit@1": 0.0, "hit@2": 1.0, "mrr": 1 / 2}


def test_empty_ranking_scores_zero_and_stays_in_the_roster_mean() -> None:
    names = ("hit@5", "recall@5", "mrr", "ndcg@5")
    gold = {"a": 1}
    empty = score_query([], gold, "session", measures(*names))
    found = score_query([item("c1", "a")], gold, "session", measures(*names))
    assert empty == dict.fromkeys(names, 0.0)
    assert found == dict.fromkeys(names, 1.0)  # positive control: same gold, answered
    per_query = {"q1": found["mrr"], "q2": 0.5, "q3": empty["mrr"]}
    assert mean_over_roster(per_query, ["q1", "q2", "q3"]) == (1.0 + 0.5 + 0.0) / 3
    # A roster question with no score at all (never run) also counts as 0.
    assert mean_over_roster(per_query, ["q1", "q2", "q3", "q4"]) == (1.0 + 0.5 + 0.0 + 0.0) / 4


def test_roster_mean_rejects_scores_for_questions_outside_the_roster() -> None:
    with pytest.raises(MetricError, match="not in the roster"):
        mean_over_roster({"q1": 1.0, "zz": 1.0}, ["q1"])
    with pytest.raises(MetricError, match="empty roster"):
        mean_over_roster({}, [])


def test_a_question_without_gold_cannot_be_scored() -> None:
    with pytest.raises(MetricError, match="gold key is empty"):
        score_query(SESSIONS_BAC, {}, "session", measures("hit@1"))
    with pytest.raises(MetricError, match="integer >= 1"):
        score_query(SESSIONS_BAC, {"a": 0}, "session", measures("hit@1"))
    assert score_query(SESSIONS_BAC, {"a": 1}, "session", measures("hit@3")) == {"hit@3": 1.0}


def test_unknown_unit_and_bad_inputs_are_rejected() -> None:
    with pytest.raises(MetricError, match="choose one of session, message"):
        to_units(SESSIONS_BAC, "chunk")  # type: ignore[arg-type]
    with pytest.raises(MetricError, match="Measure values"):
        score_query(SESSIONS_BAC, {"a": 1}, "session", ["hit@1"])  # type: ignore[list-item]
    with pytest.raises(MetricError, match="tuple"):
        RankedItem(chunk_id="c", session_id="s", message_uuids=["m1"])  # type: ignore[arg-type]


def test_leak_at_k_flags_a_forbidden_session_only_inside_the_cutoff() -> None:
    assert leak_at_k(SESSIONS_BAC, {"c"}, "session", 2) == 0.0
    assert leak_at_k(SESSIONS_BAC, {"c"}, "session", 3) == 1.0
    assert leak_at_k([], {"c"}, "session", 3) == 0.0


def test_leak_at_k_at_message_unit_flags_a_chunk_covering_a_forbidden_uuid() -> None:
    ranked = [item("x1", "s1", "m1"), item("x2", "s1", "m2", "m7")]
    assert leak_at_k(ranked, {"m7"}, "message", 1) == 0.0
    assert leak_at_k(ranked, {"m7"}, "message", 2) == 1.0
    with pytest.raises(MetricError, match="at least one forbidden unit"):
        leak_at_k(ranked, set(), "message", 2)
    with pytest.raises(MetricError, match="cutoff k"):
        leak_at_k(ranked, {"m7"}, "message", 0)


def test_control_hit_at_k_is_hit_at_k_of_the_control() -> None:
    assert control_hit_at_k(SESSIONS_BAC, {"a": 1}, "session", 1) == 0.0
    assert control_hit_at_k(SESSIONS_BAC, {"a": 1}, "session", 2) == 1.0
    assert control_hit_at_k([item("x1", "s", "m1")], {"m1": 1}, "message", 1) == 1.0

"""The `bridge` arm: keys, the file hop, the fusion worked by hand, rrf's answer without a key, scope."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from arms.base import Hit, Query
from arms.bridge import TEMPORAL_CUE, BridgeArm, BridgeParams, keys_of, without_keys
from arms.registry import full_canonical
from arms.rrf import RRFArm
from arms.spec import SpecError
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "In the module that holds `hoist_overdue_remnants`, what is the batch size set to?"


def q(text: str, scope: Scope) -> Query:
    return Query(text=text, scope=scope, now=NOW, k=10)


def triples(hits: list[Hit]) -> list[tuple[str, float, str]]:
    return [(h.chunk_id, round(h.score, 6), h.via) for h in hits]


def memory() -> FakeMemory:
    mem = FakeMemory()
    for n, (session, project) in enumerate(
        (("s1", "/a"), ("s2", "/a"), ("s3", "/a"), ("s4", "/b"))
    ):
        mem.add_session(session, project=project, start=f"2025-01-0{n + 1}T00:00:00Z")
    mem.add_edit("s1", "/a/src/span_ops.rs")
    mem.add_edit("s2", "/a/src/span_ops.rs")
    mem.add_edit("s3", "/a/src/other.rs")
    mem.add_edit("s4", "/a/src/span_ops.rs")  # another project's session, same path
    mem.add_chunk("k1", session="s1", text="Added hoist_overdue_remnants in span_ops.rs")
    mem.add_chunk(
        "gold", session="s2", text="The batch size in span_ops.rs is too high change it to 100"
    )
    mem.add_chunk("decoy", session="s3", text="The batch size in other.rs is set to 50 batch size")
    mem.add_chunk(
        "other-project", session="s4", text="batch size in span_ops.rs hoist_overdue_remnants"
    )
    mem.add_query(QUESTION, e0())
    mem.add_query("what is the batch size set to", e0())
    return mem


def test_keys_are_backticked_spans_else_identifier_shaped_words() -> None:
    assert keys_of("does `foo()` call `bar` or `foo`?", 3) == ["foo", "bar"]
    assert keys_of("call parse_config then loadUser, then parse_config", 3) == [
        "parse_config",
        "loadUser",
    ]
    assert keys_of("plain words, no code here", 3) == []
    assert keys_of("`a1` `b2` `c3` `d4`", 2) == ["a1", "b2"]
    assert without_keys(QUESTION, ["hoist_overdue_remnants"]) == (
        "In the module that holds , what is the batch size set to?"
    )


def test_the_file_bridge_lifts_the_answer_from_the_other_session_worked_by_hand() -> None:
    mem, scope = memory(), Scope.of("/a")
    # rrf alone (no vectors here, so its lexical list): the fake counts matching tokens: decoy 9
    # ("the batch size in is set to batch size"), gold 6, k1 2 ("hoist_overdue_remnants", "in").
    assert [h.chunk_id for h in RRFArm(mem).search(q(QUESTION, scope))] == ["decoy", "gold", "k1"]
    # The key's seed is k1 (session s1), which edited /a/src/span_ops.rs; the question without its
    # key plus "span_ops.rs" ranks decoy 9, gold 7, k1 2, and only the sessions that edited the
    # file (s1, s2) stay: the bridged list is gold, k1, weighted bridge_w = 2 by default.
    hits = BridgeArm(mem).search(q(QUESTION, scope))
    assert triples(hits) == [
        ("gold", round(1 / 62 + 2 / 61, 6), "rrf (fts) + bridge (span_ops.rs)"),  # 0.048916
        ("k1", round(1 / 63 + 2 / 62, 6), "rrf (fts) + bridge (span_ops.rs)"),  # 0.048131
        ("decoy", round(1 / 61, 6), "rrf (fts)"),  # 0.016393
    ]
    assert triples(hits)[0][1] == 0.048916


def test_the_bridge_weight_scales_the_third_list() -> None:
    mem, scope = memory(), Scope.of("/a")
    hits = BridgeArm(mem, BridgeParams(bridge_w=0.5)).search(q(QUESTION, scope))
    # gold 1/62 + 0.5/61 = 0.024326, k1 1/63 + 0.5/62 = 0.023938, decoy 1/61 = 0.016393.
    assert triples(hits)[:2] == [
        ("gold", round(1 / 62 + 0.5 / 61, 6), "rrf (fts) + bridge (span_ops.rs)"),
        ("k1", round(1 / 63 + 0.5 / 62, 6), "rrf (fts) + bridge (span_ops.rs)"),
    ]


def test_without_a_key_the_answer_is_rrfs_hit_for_hit() -> None:
    mem, scope = memory(), Scope.of("/a")
    plain = q("what is the batch size set to", scope)
    rrf = RRFArm(mem).search(plain)
    assert rrf  # the comparison is between real answers
    assert BridgeArm(mem).search(plain) == rrf
    assert not any(call[0] == "files_for_session" for call in mem.calls)  # no hop was made


def test_the_bridge_never_crosses_the_scope() -> None:
    mem = memory()
    only_a = [h.chunk_id for h in BridgeArm(mem).search(q(QUESTION, Scope.of("/a")))]
    assert "other-project" not in only_a
    assert "gold" in only_a  # positive control: the bridge works in this scope
    both = [h.chunk_id for h in BridgeArm(mem).search(q(QUESTION, Scope.of("/a", "/b")))]
    assert "other-project" in both  # and the chunk is found when its project is asked for


@pytest.mark.parametrize(
    ("name", "value"),
    [("bridge_w", -1.0), ("max_files", 0), ("vector_w", -1.0), ("cover", 1.5), ("recency_w", -0.5)],
)
def test_parameters_are_checked(name: str, value: float) -> None:
    bad: dict[str, Any] = {name: value}
    good: dict[str, Any] = {name: 1}
    with pytest.raises(SpecError, match=name):
        BridgeParams(**bad)
    assert getattr(BridgeParams(**good), name) == 1  # the control: an in-range value is accepted


def test_the_options_added_later_are_named_only_when_set() -> None:
    for name in ("vector_w", "cover", "recency_w"):
        assert name not in full_canonical("bridge()")
    assert "cover=0.5" in full_canonical("bridge(vector_w=2.0,cover=0.5)")
    assert "recency_w=1.0" in full_canonical("bridge(recency_w=1.0)")


PARAPHRASED = "which queue technology handles failed payments"
OWN_WORDS = "payments retry notes"


def paraphrase_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/p", start="2025-01-01T00:00:00Z")
    mem.add_session("s2", project="/p", start="2025-01-02T00:00:00Z")
    # The lexical list's only hit shares one word with the paraphrased question and sits below the
    # vector floor (0.1 < 0.2); the vector list's only hit shares no word with it.
    mem.add_chunk("lexhit", session="s1", text="payments retry notes", vector=toward(0.1, 1))
    mem.add_chunk("vechit", session="s2", text="we picked RabbitMQ", vector=toward(0.9, 2))
    mem.add_query(PARAPHRASED, e0())
    mem.add_query(OWN_WORDS, e0())
    return mem


def test_a_paraphrased_question_weights_the_vector_list_worked_by_hand() -> None:
    mem, scope = paraphrase_memory(), Scope.of("/p")
    plain = BridgeArm(mem)
    weighted = BridgeArm(mem, BridgeParams(vector_w=2.0, cover=0.5))
    # PARAPHRASED has 6 terms (which, queue, technology, handles, failed, payments); the best lexical
    # hit holds 1 of them, 1/6 = 0.167 < 0.5: a paraphrase, so the vector list weighs 2.
    assert weighted.vector_weight(PARAPHRASED, mem.lexical(PARAPHRASED, scope, 20), scope) == 2.0
    # Equal weights tie at 1/61 = 0.016393 and the tie goes to the smaller id; weighted, vechit has
    # 2/61 = 0.032787.
    assert triples(plain.search(q(PARAPHRASED, scope))) == [
        ("lexhit", round(1 / 61, 6), "rrf (fts)"),
        ("vechit", round(1 / 61, 6), "rrf (vector)"),
    ]
    assert triples(weighted.search(q(PARAPHRASED, scope))) == [
        ("vechit", round(2 / 61, 6), "rrf (vector)"),
        ("lexhit", round(1 / 61, 6), "rrf (fts)"),
    ]


def test_a_question_in_the_memorys_own_words_keeps_equal_weights() -> None:
    mem, scope = paraphrase_memory(), Scope.of("/p")
    weighted = BridgeArm(mem, BridgeParams(vector_w=2.0, cover=0.5))
    # OWN_WORDS' 3 terms are all in the best lexical hit: 3/3 >= 0.5, weight 1, rrf's answer.
    assert weighted.vector_weight(OWN_WORDS, mem.lexical(OWN_WORDS, scope, 20), scope) == 1.0
    assert weighted.search(q(OWN_WORDS, scope)) == RRFArm(mem).search(q(OWN_WORDS, scope))
    assert [h.chunk_id for h in weighted.search(q(OWN_WORDS, scope))] == ["lexhit", "vechit"]
    # no lexical hit at all counts as a share of 0; cover 0 (the default) never reweights
    assert weighted.vector_weight(PARAPHRASED, [], scope) == 2.0
    assert BridgeArm(mem).vector_weight(PARAPHRASED, [], scope) == 1.0


CUED = "what is the current alerting threshold"
UNCUED = "what is the alerting threshold"


def recency_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("early", project="/p", start="2025-01-01T00:00:00Z")
    mem.add_session("late", project="/p", start="2025-03-01T00:00:00Z")
    mem.add_session("undated", project="/p", start=None)
    # The fake's lexical score counts matching tokens: "old" 7 (the x2, alerting x2, threshold x2,
    # is), "new" 2 (alerting, threshold), "nodate" 1 (threshold). No vectors: the lexical list alone.
    mem.add_chunk(
        "old",
        session="early",
        text="the alerting threshold is 5 for the dispatcher alerting threshold",
    )
    mem.add_chunk("new", session="late", text="alerting threshold now 10")
    mem.add_chunk("nodate", session="undated", text="threshold")
    mem.add_query(CUED, e0())
    mem.add_query(UNCUED, e0())
    return mem


def test_a_question_about_the_present_adds_the_newest_first_list_worked_by_hand() -> None:
    mem, scope = recency_memory(), Scope.of("/p")
    arm = BridgeArm(mem, BridgeParams(recency_w=2.0))
    # Fused: old 1/61, new 1/62, nodate 1/63. "current" is a cue: newest first is new (March),
    # old (January), nodate (undated, last); that list adds 2/61, 2/62, 2/63.
    assert arm.newest_first({"old": 3.0, "new": 2.0, "nodate": 1.0}, scope) == [
        "new",
        "old",
        "nodate",
    ]
    assert triples(arm.search(q(CUED, scope))) == [
        ("new", round(1 / 62 + 2 / 61, 6), "rrf (fts)"),  # 0.048916
        ("old", round(1 / 61 + 2 / 62, 6), "rrf (fts)"),  # 0.048652
        ("nodate", round(1 / 63 + 2 / 63, 6), "rrf (fts)"),  # 0.047619
    ]
    # The control: without a cue the same arm gives rrf's order, oldest answer first.
    assert arm.search(q(UNCUED, scope)) == RRFArm(mem).search(q(UNCUED, scope))
    assert [h.chunk_id for h in arm.search(q(UNCUED, scope))] == ["old", "new", "nodate"]
    # and recency_w 0 (the default) never reorders, cue or not
    assert [h.chunk_id for h in BridgeArm(mem).search(q(CUED, scope))] == ["old", "new", "nodate"]


def test_temporal_cues_are_whole_words() -> None:
    cued = ["As things stand now, what is it?", "What did we finally pick?", "the latest choice"]
    assert all(TEMPORAL_CUE.search(text) for text in cued)
    assert not any(TEMPORAL_CUE.search(t) for t in ["do you know the snowplow", "a finalist"])

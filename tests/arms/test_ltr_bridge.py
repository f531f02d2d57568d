"""The `ltrb` arm: ltr's ranking fused with the file bridge, worked by hand; ltr's answer without a
key; ltr's fit; scope; parameter checks."""

from __future__ import annotations

import json

import pytest

from arms import registry
from arms.bridge import BridgeArm
from arms.ltr import LtrArm, LtrParams, hand_model
from arms.ltr_bridge import LtrbArm, LtrbParams
from arms.spec import SpecError
from engine.scope import Scope
from tests.arms.test_bridge import QUESTION, memory, q, triples
from tests.arms.test_ltr import example, training_memory

# The fake lexical score is the count of the question's tokens in the chunk: a model weighing only
# `lex_score` ranks as BM25 does here.
BY_LEXICAL = hand_model({"lex_score": 1.0})


def test_ltrs_ranking_and_the_bridged_list_are_fused_worked_by_hand() -> None:
    mem, scope = memory(), Scope.of("/a")
    # ltr alone: decoy 9 matching tokens, gold 6, k1 2 (test_bridge's counts).
    ltr = LtrArm(mem, LtrParams(), BY_LEXICAL).search(q(QUESTION, scope))
    assert [h.chunk_id for h in ltr] == ["decoy", "gold", "k1"]
    # The bridged list is gold, k1 (test_bridge). With ltr_w = bridge_w = 2 and fuse_k = 60:
    # gold 2/62 + 2/61 = 0.065045, k1 2/63 + 2/62 = 0.064004, decoy 2/61 = 0.032787.
    hits = LtrbArm(mem, LtrbParams(), BY_LEXICAL).search(q(QUESTION, scope))
    assert triples(hits) == [
        ("gold", 0.065045, "ltr + bridge (span_ops.rs)"),
        ("k1", 0.064004, "ltr + bridge (span_ops.rs)"),
        ("decoy", 0.032787, "ltr"),
    ]
    assert triples(hits)[0][1] == round(2 / 62 + 2 / 61, 6)


def test_the_weights_set_the_balance_between_the_two_lists() -> None:
    mem, scope = memory(), Scope.of("/a")
    # ltr_w 10, bridge_w 0.5: decoy 10/61 = 0.163934, gold 10/62 + 0.5/61 = 0.169487,
    # k1 10/63 + 0.5/62 = 0.166795: gold, k1, decoy.
    params = LtrbParams(ltr_w=10.0, bridge_w=0.5)
    hits = LtrbArm(mem, params, BY_LEXICAL).search(q(QUESTION, scope))
    assert triples(hits) == [
        ("gold", 0.169487, "ltr + bridge (span_ops.rs)"),
        ("k1", 0.166795, "ltr + bridge (span_ops.rs)"),
        ("decoy", 0.163934, "ltr"),
    ]
    # bridge_w 0: the bridged list adds nothing and ltr's order comes back (decoy first).
    flat = LtrbArm(mem, LtrbParams(bridge_w=0.0), BY_LEXICAL).search(q(QUESTION, scope))
    assert [h.chunk_id for h in flat] == ["decoy", "gold", "k1"]


def test_without_a_key_the_answer_is_ltrs_hit_for_hit() -> None:
    mem, scope = memory(), Scope.of("/a")
    plain = q("what is the batch size set to", scope)
    ltr = LtrArm(mem, LtrParams(), BY_LEXICAL).search(plain)
    assert ltr  # the comparison is between real answers
    assert LtrbArm(mem, LtrbParams(), BY_LEXICAL).search(plain) == ltr
    assert not any(call[0] == "files_for_session" for call in mem.calls)  # no hop was made
    # control: with a key the hop is made and the answer differs from ltr's
    keyed = LtrbArm(mem, LtrbParams(), BY_LEXICAL).search(q(QUESTION, scope))
    assert any(call[0] == "files_for_session" for call in mem.calls)
    assert [h.chunk_id for h in keyed] != ["decoy", "gold", "k1"]


def test_the_bridged_list_is_the_bridge_arms_own() -> None:
    mem, scope = memory(), Scope.of("/a")
    bridged, files = LtrbArm(mem, LtrbParams(), BY_LEXICAL).bridged.bridge(QUESTION, scope)
    assert [s.chunk_id for s in bridged] == ["gold", "k1"]
    assert files == {"gold": "span_ops.rs", "k1": "span_ops.rs"}
    assert BridgeArm(mem).bridge(QUESTION, scope) == (bridged, files)


def test_ltrb_never_crosses_the_scope() -> None:
    mem = memory()
    arm = registry.build("ltrb()", mem, BY_LEXICAL)
    only_a = [h.chunk_id for h in arm.search(q(QUESTION, Scope.of("/a")))]
    assert "other-project" not in only_a
    assert "gold" in only_a  # positive control
    both = [h.chunk_id for h in arm.search(q(QUESTION, Scope.of("/a", "/b")))]
    assert "other-project" in both


@pytest.mark.parametrize("dates", ["", "dates=True,"])
def test_ltrbs_fit_is_ltrs_fit_for_the_same_ltr_params(dates: str) -> None:
    mem = training_memory()
    examples = tuple(example(i) for i in range(6))
    ltrb = registry.fit(f"ltrb({dates}pool=50)", mem, examples, seed=3)
    ltr = registry.fit(f"ltr({dates}pool=50)", mem, examples, seed=3)
    assert json.dumps(dict(ltrb.model), sort_keys=True) == json.dumps(
        dict(ltr.model), sort_keys=True
    )
    assert dict(ltrb.counts) == dict(ltr.counts)
    assert ltrb.counts["used"] == 6  # the fit saw the examples (not an empty model)
    # With dates=True the model reads the two date columns after the seventeen; control: without.
    dated = (
        [*LtrParams().features, "date_named", "date_close"] if dates else list(LtrParams().features)
    )
    assert ltrb.model["features"] == dated


def test_ltrb_passes_dates_to_its_ltr_part_and_names_it_only_when_true() -> None:
    assert LtrbParams(dates=True).ltr() == LtrParams(dates=True)
    assert LtrbParams().ltr() == LtrParams()  # control
    assert "dates=True" in registry.full_canonical("ltrb(dates=True)")
    assert "dates" not in registry.full_canonical("ltrb()")
    with pytest.raises(SpecError, match="dates"):
        LtrbParams(dates=1)  # type: ignore[arg-type]


def test_parameters_are_checked_and_the_spec_is_canonical() -> None:
    with pytest.raises(SpecError, match="depth"):
        LtrbParams(depth=0)
    with pytest.raises(SpecError, match="objective"):
        LtrbParams(objective="listwise")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="ltr_w"):
        LtrbParams(ltr_w=-1.0)
    assert registry.full_canonical("ltrb()") == (
        "ltrb(bridge_w=2.0,depth=20,files_per_seed=1,fuse_k=60,ltr_w=2.0,max_files=4,max_keys=3,"
        "min_score=0.0,objective='pointwise',pool=100,rrf_k=60,seeds=3,sessions_per_file=50)"
    )

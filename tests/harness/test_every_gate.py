"""The `every` gate kind (one arm, a hit on every item of a subset) and the protocol fields of issue 16."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.gates import GateError, decide_every_gate, decide_negative_gate, format_gate_line
from harness.metrics import RankedItem
from harness.protocol.load import load_protocol
from harness.protocol.model import Corpus, GateSpec, ProtocolError, Readings
from harness.results import ArmRun
from harness.roster import Gold, Question
from harness.scoring import decide_gates, score_all
from tests.harness.test_protocol import PROTOCOL, _error, _write

RRF = "rrf(pool=20,rrf_k=60)"
READINGS = Readings(
    pass_="every replacement first", fail="one was not first", null="unused", vacuous="no item"
)


def _every(**over: Any) -> GateSpec:
    fields: dict[str, Any] = {
        "id": "CH",
        "kind": "every",
        "roster": "corrections",
        "metric": "hit@1",
        "treatment": RRF,
        "readings": READINGS,
    }
    fields.update(over)
    return GateSpec(**fields)


def test_every_gate_passes_only_when_every_item_hits() -> None:
    passed = decide_every_gate(_every(), np.array([1.0, 1.0, 1.0]))
    assert passed.verdict == "PASS"
    assert dict(passed.counts) == {"n": 3, "hits": 3, "misses": 0}
    assert passed.statistic["hit_rate"] == 1.0
    assert passed.reading == "every replacement first"
    failed = decide_every_gate(_every(), np.array([1.0, 0.0, 1.0]))  # one miss is enough
    assert failed.verdict == "FAIL"
    assert dict(failed.counts) == {"n": 3, "hits": 2, "misses": 1}
    assert failed.statistic["hit_rate"] == pytest.approx(2 / 3)
    assert failed.reading == "one was not first"


def test_every_gate_with_no_item_is_vacuous_and_its_line_shows_the_counts() -> None:
    empty = decide_every_gate(_every(), np.array([]))
    assert empty.verdict == "VACUOUS"
    assert empty.reading == "no item"
    assert dict(empty.counts) == {"n": 0, "hits": 0, "misses": 0}
    line = format_gate_line(decide_every_gate(_every(), np.array([1, 0])))
    assert "Gate CH  FAIL" in line
    assert "hits=1/2 misses=1" in line


def test_every_gate_refuses_flags_that_are_not_hits_and_other_gate_kinds() -> None:
    with pytest.raises(GateError, match="must hold only 0/1"):
        decide_every_gate(_every(), np.array([1.0, 0.5]))
    negative = GateSpec(
        id="CX",
        kind="negative",
        roster="corrections",
        metric="leak@10",
        treatment=RRF,
        readings=READINGS,
    )
    with pytest.raises(GateError, match="decide it with decide_gate or decide_negative_gate"):
        decide_every_gate(negative, np.array([1]))
    with pytest.raises(GateError, match="decide it with decide_gate"):
        decide_negative_gate(_every(), np.array([0]), np.array([1]))


def test_every_gate_spec_needs_hit_at_k_a_vacuous_reading_and_no_baseline() -> None:
    with pytest.raises(ProtocolError, match="an every gate's metric must be hit@k"):
        _every(metric="recall@1")
    with pytest.raises(ProtocolError, match=r"needs readings\.vacuous"):
        _every(readings=Readings(pass_="p", fail="f", null="n"))
    with pytest.raises(ProtocolError, match="has no baseline or test"):
        _every(baseline="vector(pool=20)", test="sign")
    assert _every(metric="hit@3").metric == "hit@3"  # control: any hit@k is accepted


EVERY_GATE = """
[[gates]]
id = "CH"
kind = "every"
roster = "receipts"
metric = "hit@1"
treatment = "rrf(pool=20,rrf_k=60)"
[gates.readings]
pass = "Every item ranked its answer first."
fail = "An item did not rank its answer first."
null = "Not used for every gates."
vacuous = "No item."
"""


def test_a_protocol_loads_an_every_gate_and_a_ship_rule_may_name_its_vacuous_verdict(
    tmp_path: Path,
) -> None:
    text = PROTOCOL.replace("\n[stats]\n", EVERY_GATE + "\n[stats]\n")
    with_rule = text.replace(
        'when = { M = "PASS", N = "PASS" }', 'when = { M = "PASS", CH = ["PASS", "VACUOUS"] }'
    )
    gate = load_protocol(_write(tmp_path, with_rule)).gates[2]
    assert (gate.kind, gate.metric, gate.baseline, gate.test) == ("every", "hit@1", None, None)
    no_vacuous = text.replace('vacuous = "No item."\n', "")
    assert "$.gates[2].readings: 'vacuous' is a required property" in _error(tmp_path, no_vacuous)
    with_test = text.replace('metric = "hit@1"\n', 'metric = "hit@1"\ntest = "sign"\n')
    assert "$.gates[2].test: is not allowed here" in _error(tmp_path, with_test)
    superiority_vacuous = text.replace(
        'when = { M = "PASS", N = "PASS" }', 'when = { M = "VACUOUS", N = "PASS" }'
    )
    assert "gate M is a superiority gate and can never be VACUOUS" in _error(
        tmp_path, superiority_vacuous
    )


def test_the_corpus_corrections_knobs_load_and_belong_to_synthetic_corpora_only(
    tmp_path: Path,
) -> None:
    text = PROTOCOL.replace("size = 200\n", "size = 200\ncorrected_facts = 3\nchanged_facts = 2\n")
    corpus = load_protocol(_write(tmp_path, text)).corpus
    assert (corpus.corrected_facts, corpus.changed_facts) == (3, 2)
    plain = load_protocol(_write(tmp_path)).corpus
    assert (plain.corrected_facts, plain.changed_facts) == (0, 0)  # the default: off
    assert "$.corpus.changed_facts: -1 is less than the minimum of 0" in _error(
        tmp_path, PROTOCOL.replace("size = 200\n", "size = 200\nchanged_facts = -1\n")
    )
    with pytest.raises(ProtocolError, match="plant facts in a synthetic corpus"):
        Corpus(
            source="claude-projects",
            path="x",
            manifest_sha256="a" * 64,
            cutoff=plain.cutoff,
            exclude=(),
            corrected_facts=1,
        )


def _item(chunk: str, uuid: str) -> RankedItem:
    return RankedItem(chunk_id=chunk, session_id="s", message_uuids=(uuid,))


def test_decide_gates_scores_an_every_gate_over_its_subset_with_hit_at_1(tmp_path: Path) -> None:
    text = PROTOCOL.replace("\n[stats]\n", EVERY_GATE + "\n[stats]\n")
    text = text.replace("multi = 'hop == \"multi\"'", "changed = 'kind == \"changed\"'")
    text = text.replace(
        'unit = "session"\n[rosters.subsets]', 'unit = "message"\n[rosters.subsets]'
    )
    text = text.replace(
        'roster = "receipts"\nmetric = "hit@1"',
        'roster = "receipts"\nsubset = "changed"\nmetric = "hit@1"',
    )
    protocol = load_protocol(_write(tmp_path, text))
    questions = {
        "receipts": [
            Question(
                qid="c1", text="port?", scope=("/p",), category="changed", tags={"kind": "changed"}
            ),
            Question(
                qid="c2", text="owner?", scope=("/p",), category="changed", tags={"kind": "changed"}
            ),
            Question(
                qid="r1",
                text="commit?",
                scope=("/p",),
                category="receipt",
                tags={"kind": "receipt"},
            ),
        ],
        "negatives": [],
    }
    keys = {
        "receipts": {
            "c1": Gold(relevant={"new1": 1}),
            "c2": Gold(relevant={"new2": 1}),
            "r1": Gold(relevant={"gold": 1}),
        },
        "negatives": {},
    }
    # c1: replacement first (hit@1 = 1); c2: the old memory first, replacement second (0);
    # r1 misses too, but it is outside the subset, so it cannot change the verdict.
    ranked = {
        "c1": [_item("k1", "new1"), _item("k0", "old1")],
        "c2": [_item("k2", "old2"), _item("k3", "new2")],
        "r1": [_item("k4", "other")],
    }
    run = ArmRun(
        spec=RRF, canonical=RRF, ranked={"receipts": ranked}, latency_ms=[], errors={}, wall_s=0.0
    )
    scores = score_all(protocol, [run], questions, keys)
    gate = next(g for g in decide_gates(protocol, scores, questions, keys) if g.id == "CH")
    assert gate.verdict == "FAIL"
    assert dict(gate.counts) == {"n": 2, "hits": 1, "misses": 1}
    # control: with c2's replacement first the same gate passes
    ranked["c2"] = [_item("k3", "new2"), _item("k2", "old2")]
    scores = score_all(protocol, [run], questions, keys)
    gate = next(g for g in decide_gates(protocol, scores, questions, keys) if g.id == "CH")
    assert (gate.verdict, dict(gate.counts)) == ("PASS", {"n": 2, "hits": 2, "misses": 0})

"""Typed results: committed summaries read back byte for byte, and re-scored to the same verdicts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from harness.protocol.load import load_protocol
from harness.report import arm_labels
from harness.results import ResultsError, Scores, Summary
from harness.roster import load_questions
from harness.scoring import aggregates, decide_gates
from harness.seal import load_sealed_key

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "results").glob("*/*/summary.json"))


def test_there_are_committed_results_to_read_back() -> None:
    assert len(COMMITTED) >= 2


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_committed_summary_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    summary = Summary.from_dict(json.loads(text))
    assert summary.to_json() == text
    assert summary.run_id == path.parent.name
    assert summary.gates[0].reading  # typed all the way down: a GateResult, not a dict


def test_a_summary_that_breaks_the_schema_is_refused_naming_where() -> None:
    data = json.loads(COMMITTED[-1].read_text(encoding="utf-8"))
    data["arms"][0]["latency_ms"].pop("p95")
    with pytest.raises(ResultsError, match=r"at arms/0/latency_ms: 'p95' is a required property"):
        Summary.from_dict(data)


def test_committed_per_query_scores_give_the_committed_gates_and_means() -> None:
    """The scoring the runner uses now, applied to the last committed run's per-query scores."""
    path = COMMITTED[-1]
    committed = Summary.from_dict(json.loads(path.read_text(encoding="utf-8")))
    protocol = load_protocol(ROOT / committed.protocol.path)
    scores = Scores()
    with (path.parent / "per_query.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            scores.put(row["arm"], row["roster"], row["metric"], row["qid"], float(row["value"]))
    questions = {r.name: load_questions(protocol.roster_dir(r.name)) for r in protocol.rosters}
    keys = {r.name: load_sealed_key(protocol.roster_dir(r.name)).gold for r in protocol.rosters}

    gates = decide_gates(protocol, scores, questions, keys)
    assert [g.to_dict() for g in gates] == [g.to_dict() for g in committed.gates]
    rows = aggregates(protocol, scores, questions, keys)
    assert [(r.arm, r.roster, r.subset, r.n) for r in rows] == [
        (r.arm, r.roster, r.subset, r.n) for r in committed.aggregates
    ]
    for now, then in zip(rows, committed.aggregates, strict=True):
        assert list(now.metrics) == list(then.metrics)
        for name, m in now.metrics.items():
            old = then.metrics[name]
            # mean_over_roster sums exactly (math.fsum); the earlier numpy mean could differ in the
            # last bit, never in what the report prints.
            assert m.mean == pytest.approx(old.mean, rel=0, abs=1e-12)
            assert f"{m.mean:.3f}" == f"{old.mean:.3f}"
            assert (m.ci_low, m.ci_high, m.n) == (old.ci_low, old.ci_high, old.n)


def test_arm_labels_are_short_and_unique() -> None:
    labels = arm_labels(["rrf(pool=20)", "fts", "rrf(pool=40)", "rrf(pool=80)"])
    assert labels == {
        "rrf(pool=20)": "rrf",
        "fts": "fts",
        "rrf(pool=40)": "rrf#2",
        "rrf(pool=80)": "rrf#3",
    }

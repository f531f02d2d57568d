"""Score every arm's answers against the sealed key, decide the gates and average per roster subset.

Pure functions over the arms' ranked answers and the gold: nothing here opens the corpus. A question
an arm failed or never answered scores 0 (`Scores.vector` and `mean_over_roster` both count a missing
score as 0.0), so an arm cannot improve its mean by failing the hard questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from harness.gates import (
    GateResult,
    correct_family,
    decide_every_gate,
    decide_gate,
    decide_negative_gate,
)
from harness.metrics import (
    control_hit_at_k,
    leak_at_k,
    mean_over_roster,
    parse_measure,
    score_query,
)
from harness.protocol.model import Protocol, RosterRef
from harness.results import Aggregate, ArmRun, MetricMean, Scores
from harness.roster import Gold, Question
from harness.stats import paired_bootstrap
from harness.subset import select

__all__ = ["aggregates", "decide_gates", "is_negative_metric", "score_all", "subsets"]

Questions = Mapping[str, Sequence[Question]]  # roster -> its sealed questions
Keys = Mapping[str, Mapping[str, Gold]]  # roster -> qid -> gold


def is_negative_metric(metric: str) -> bool:
    """Whether `metric` is scored on negative items (leak@k) or their controls (control_hit@k)."""
    return metric.startswith(("leak@", "control_hit@"))


def score_all(
    protocol: Protocol, runs: Sequence[ArmRun], questions: Questions, keys: Keys
) -> Scores:
    """Score every arm on every question; negatives get leak@k, their controls control_hit@k."""
    measures = [parse_measure(m) for m in _positive_metrics(protocol)]
    negative_ks = sorted(
        {int(g.metric.split("@")[1]) for g in protocol.gates if g.kind == "negative"}
    )
    scores = Scores()
    for run in runs:
        for ref in protocol.rosters:
            gold = keys[ref.name]
            ranked = run.ranked.get(ref.name, {})
            for q in questions[ref.name]:
                g = gold[q.qid]
                items = ranked.get(q.qid, [])
                if g.relevant:
                    for metric, value in score_query(items, g.relevant, ref.unit, measures).items():
                        scores.put(run.spec, ref.name, metric, q.qid, value)
                if g.forbidden:
                    for k in negative_ks:
                        _score_negative(scores, run, ref, q.qid, gold, k)
    return scores


def _positive_metrics(protocol: Protocol) -> list[str]:
    """The protocol's positive metrics, then any every gate's metric not among them."""
    names = [m for m in protocol.metrics.all if not is_negative_metric(m)]
    extra = [g.metric for g in protocol.gates if g.kind == "every" and g.metric not in names]
    return names + sorted(set(extra))


def _score_negative(
    scores: Scores, run: ArmRun, ref: RosterRef, qid: str, gold: Mapping[str, Gold], k: int
) -> None:
    """leak@k of a negative item, and control_hit@k of the control question it names."""
    ranked = run.ranked.get(ref.name, {})
    g = gold[qid]
    scores.put(
        run.spec,
        ref.name,
        f"leak@{k}",
        qid,
        leak_at_k(ranked.get(qid, []), g.forbidden, ref.unit, k),
    )
    control = g.control or ""
    control_gold = gold[control].relevant if control in gold else {}
    hit = (
        control_hit_at_k(ranked.get(control, []), control_gold, ref.unit, k)
        if control_gold
        else 0.0
    )
    scores.put(run.spec, ref.name, f"control_hit@{k}", qid, hit)


def subsets(protocol: Protocol, questions: Questions) -> dict[tuple[str, str], list[str]]:
    """(roster, subset name) -> qids of the subset, in roster order; subset "all" is the roster."""
    out: dict[tuple[str, str], list[str]] = {}
    for ref in protocol.rosters:
        qs = list(questions[ref.name])
        out[(ref.name, "all")] = [q.qid for q in qs]
        for name, expr in sorted(ref.subsets.items()):
            out[(ref.name, name)] = [q.qid for q in select(qs, expr)]
    return out


def decide_gates(
    protocol: Protocol, scores: Scores, questions: Questions, keys: Keys
) -> list[GateResult]:
    """Every pre-registered gate's verdict, from paired per-query scores."""
    groups = subsets(protocol, questions)
    family = set(protocol.correction.gates) if protocol.correction else set()
    results: list[GateResult] = []
    for gate in protocol.gates:
        gold = keys[gate.roster]
        qids = groups[(gate.roster, gate.subset or "all")]
        if gate.kind == "negative":
            negatives = [q for q in qids if gold[q].forbidden]
            k = gate.metric.split("@")[1]
            leaks = scores.vector(gate.treatment, gate.roster, f"leak@{k}", negatives)
            hits = scores.vector(gate.treatment, gate.roster, f"control_hit@{k}", negatives)
            results.append(decide_negative_gate(gate, leaks, hits))
            continue
        if gate.kind == "every":
            items = [q for q in qids if gold[q].relevant]
            flags = scores.vector(gate.treatment, gate.roster, gate.metric, items)
            results.append(decide_every_gate(gate, flags))
            continue
        positives = [q for q in qids if gold[q].relevant]
        baseline = gate.baseline or ""
        t = scores.vector(gate.treatment, gate.roster, gate.metric, positives)
        b = scores.vector(baseline, gate.roster, gate.metric, positives)
        results.append(decide_gate(gate, t, b, protocol.stats, with_p=gate.id in family))
    if protocol.correction is None:
        return results
    return correct_family(
        results,
        {g.id: g for g in protocol.gates},
        family=protocol.correction.gates,
        method=protocol.correction.method,
        alpha=protocol.correction.alpha,
    )


def aggregates(
    protocol: Protocol, scores: Scores, questions: Questions, keys: Keys
) -> list[Aggregate]:
    """Mean of every metric per (arm, roster, subset) over its positive questions, with a CI.

    Means are `harness.metrics.mean_over_roster` over the subset's questions: a question the arm
    never answered counts 0.0. Negative metrics are averaged over the subset's negative items.
    """
    rows: list[Aggregate] = []
    measures = [m for m in protocol.metrics.all if not is_negative_metric(m)]
    for (roster, subset), qids in subsets(protocol, questions).items():
        gold = keys[roster]
        positives = [q for q in qids if gold[q].relevant]
        negatives = [q for q in qids if gold[q].forbidden]
        for arm in protocol.arms:
            metrics: dict[str, MetricMean] = {}
            if positives:
                for metric in measures:
                    metrics[metric] = _measure_mean(
                        protocol, scores, arm, roster, metric, positives
                    )
            if negatives:
                for metric in filter(is_negative_metric, scores.metrics(arm, roster)):
                    mean = _mean(scores, arm, roster, metric, negatives)
                    metrics[metric] = MetricMean(mean=mean, n=len(negatives))
            rows.append(
                Aggregate(arm=arm, roster=roster, subset=subset, n=len(positives), metrics=metrics)
            )
    return rows


def _mean(scores: Scores, arm: str, roster: str, metric: str, qids: Sequence[str]) -> float:
    """The tested rule: `mean_over_roster` over `qids` (scores outside them are not this mean's)."""
    table = scores.table(arm, roster, metric)
    return mean_over_roster({q: table[q] for q in qids if q in table}, qids)


def _measure_mean(
    protocol: Protocol, scores: Scores, arm: str, roster: str, metric: str, qids: Sequence[str]
) -> MetricMean:
    values = scores.vector(arm, roster, metric, qids)
    ci = paired_bootstrap(
        values,
        np.zeros_like(values),
        resamples=protocol.stats.resamples,
        seed=protocol.stats.seed,
        confidence=protocol.stats.confidence,
    )
    return MetricMean(
        mean=_mean(scores, arm, roster, metric, qids), ci_low=ci.ci_low, ci_high=ci.ci_high
    )

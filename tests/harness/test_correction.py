"""Multiple-comparison correction: Holm and Bonferroni by hand, bootstrap p-values, corrected gates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harness.gates import GateError, correct_family, decide_gate, format_gate_line
from harness.protocol.model import GateSpec, Readings, StatsConfig
from harness.stats import StatsError, bonferroni, bootstrap_p_values, holm

STATS = StatsConfig(seed=0, resamples=999, confidence=0.95)
READINGS = Readings(pass_="better", fail="worse", null="no difference")


def test_holm_by_hand() -> None:
    # m = 4. Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> the
    # running max keeps 0.06). Step-down at 0.05: 0.005 < 0.0125, 0.01 < 0.0167, 0.03 >= 0.025 stop.
    out = holm([0.01, 0.04, 0.03, 0.005], 0.05)
    assert [a.p_adjusted for a in out] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [a.reject for a in out] == [True, False, False, True]
    assert [a.p_raw for a in out] == [0.01, 0.04, 0.03, 0.005]


def test_holm_rejects_where_bonferroni_does_not() -> None:
    # Holm: 0.02 x 2 = 0.04, then max(0.04, 0.03 x 1) = 0.04: both below 0.05.
    assert [a.reject for a in holm([0.02, 0.03], 0.05)] == [True, True]
    # Bonferroni: 0.04 and 0.06: only the first.
    bon = bonferroni([0.02, 0.03], 0.05)
    assert [a.p_adjusted for a in bon] == pytest.approx([0.04, 0.06])
    assert [a.reject for a in bon] == [True, False]


def test_holm_ties_and_the_cap_at_one() -> None:
    out = holm([0.02, 0.02, 0.9], 0.05)
    # 0.02 x 3 = 0.06, max(0.06, 0.02 x 2) = 0.06, max(0.06, 0.9 x 1) = 0.9
    assert [a.p_adjusted for a in out] == pytest.approx([0.06, 0.06, 0.9])
    assert not any(a.reject for a in out)
    assert holm([0.6, 0.7], 0.05)[0].p_adjusted == 1.0  # min(1, 1.2)


@pytest.mark.parametrize(
    ("ps", "alpha"), [([], 0.05), ([0.1, 1.5], 0.05), ([0.1], 0.0), ([0.1], 1.0)]
)
def test_family_input_errors(ps: list[float], alpha: float) -> None:
    with pytest.raises(StatsError):
        holm(ps, alpha)


def test_bootstrap_p_values_of_a_constant_difference() -> None:
    # Every resampled mean is 1.0: none is <= 0 and all 99 are >= 0.
    p = bootstrap_p_values([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], resamples=99, seed=3)
    assert p.above_margin == pytest.approx(1 / 100)
    assert p.below_zero == pytest.approx(100 / 100)
    assert p.two_sided == pytest.approx(0.02)
    # Control: with the margin at the difference itself, every resample contradicts "> margin".
    assert bootstrap_p_values([1.0] * 3, [0.0] * 3, margin=1.0, resamples=99).above_margin == 1.0
    # Mirrored: a constant loss is "below zero" with p = 1/100.
    loss = bootstrap_p_values([0.0] * 3, [1.0] * 3, resamples=99, seed=3)
    assert loss.above_margin == pytest.approx(1.0)
    assert loss.below_zero == pytest.approx(0.01)


def test_bootstrap_p_value_of_a_symmetric_difference() -> None:
    # Differences (+1, -1): a resampled mean is 1, 0 or -1 with probability 1/4, 1/2, 1/4, so
    # P(m* <= 0) = 3/4 and P(m* >= 0) = 3/4; 10,000 resamples estimate both within 0.02.
    p = bootstrap_p_values([1.0, 0.0], [0.0, 1.0], resamples=10_000, seed=7)
    assert p.above_margin == pytest.approx(0.75, abs=0.02)
    assert p.below_zero == pytest.approx(0.75, abs=0.02)
    assert p.two_sided == 1.0


def _gate(gate_id: str, **over: Any) -> GateSpec:
    fields: dict[str, Any] = {
        "id": gate_id,
        "roster": "r",
        "metric": "recall@5",
        "treatment": "rrf()",
        "baseline": "fts()",
        "test": "bootstrap",
        "readings": READINGS,
    }
    fields.update(over)
    return GateSpec(**fields)


def test_a_family_demotes_a_raw_pass_that_the_correction_does_not_hold() -> None:
    n = 20
    # A: every query gains 1.0, so every resampled mean is 1.0: p = 2 x 1/1000 = 0.002.
    strong = decide_gate(_gate("A"), np.ones(n), np.zeros(n), STATS, with_p=True)
    # B: 4 gains in 20. A resampled mean is K/20 with K ~ Binomial(20, 0.2): P(K = 0) = 0.8^20 =
    # 0.0115 < 0.025 < P(K <= 1) = 0.069, so the 95% CI starts at 1/20 > 0: a raw PASS. Seeded,
    # 6 of the 999 resamples have K = 0: p = 2 x 7/1000 = 0.014.
    t_b = np.zeros(n)
    t_b[:4] = 1.0
    weak = decide_gate(_gate("B"), t_b, np.zeros(n), STATS, with_p=True)
    assert strong.verdict == "PASS"
    assert strong.statistic["p_value"] == pytest.approx(0.002)
    assert weak.verdict == "PASS"
    assert weak.statistic["p_value"] == pytest.approx(0.014)
    specs = {"A": _gate("A"), "B": _gate("B")}
    # Holm at 0.05: A 0.002 x 2 = 0.004, B max(0.004, 0.014 x 1) = 0.014: both stay PASS.
    out = correct_family([strong, weak], specs, family=["A", "B"], method="holm", alpha=0.05)
    assert [r.verdict for r in out] == ["PASS", "PASS"]
    assert [r.statistic["p_adjusted"] for r in out] == pytest.approx([0.004, 0.014])
    # At 0.01, B's 0.014 is not below alpha: NULL with the NULL reading; A (0.004) stays PASS.
    tight = correct_family([strong, weak], specs, family=["A", "B"], method="holm", alpha=0.01)
    assert [r.verdict for r in tight] == ["PASS", "NULL"]
    assert tight[1].reading == "no difference"
    assert tight[1].statistic["verdict_uncorrected"] == "PASS"
    line = format_gate_line(tight[1])
    assert "holm-adjusted p=0.014" in line
    assert "uncorrected PASS" in line


def test_gates_outside_the_family_are_unchanged_and_bad_families_fail() -> None:
    n = 10
    a = decide_gate(_gate("A"), np.ones(n), np.zeros(n), STATS, with_p=True)
    c = decide_gate(_gate("C"), np.ones(n), np.zeros(n), STATS)  # not in the family: no p_value
    specs = {"A": _gate("A"), "C": _gate("C")}
    out = correct_family([a, c], specs, family=["A"], method="holm", alpha=0.05)
    assert out[1] is c
    assert "p_adjusted" in out[0].statistic
    with pytest.raises(GateError, match="no p-value"):
        correct_family([a, c], specs, family=["A", "C"], method="holm", alpha=0.05)
    with pytest.raises(GateError, match="not decided"):
        correct_family([a], specs, family=["A", "Z"], method="holm", alpha=0.05)
    with pytest.raises(GateError, match="Unknown correction"):
        correct_family([a], specs, family=["A"], method="sidak", alpha=0.05)

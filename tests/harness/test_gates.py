"""Gate verdicts on constructed score arrays whose statistics can be worked out by hand."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from harness.gates import (
    GateError,
    choose_ship,
    decide_gate,
    decide_negative_gate,
    format_gate_line,
)
from harness.protocol.model import GateSpec, ProtocolError, Readings, Ship, ShipRule, StatsConfig

WALK = "walk(hops=2)"
RRF = "rrf(pool=20,rrf_k=60)"
VECTOR = "vector(pool=20)"
STATS = StatsConfig(seed=0, resamples=10_000, confidence=0.95)
READINGS = Readings(pass_="walk wins", fail="walk loses", null="no difference")


def _gate(**over: Any) -> GateSpec:
    fields: dict[str, Any] = {
        "id": "M",
        "roster": "receipts",
        "metric": "recall@5",
        "treatment": WALK,
        "baseline": RRF,
        "test": "bootstrap",
        "readings": READINGS,
    }
    fields.update(over)
    return GateSpec(**fields)


def _negative_gate() -> GateSpec:
    return GateSpec(
        id="N",
        kind="negative",
        roster="negatives",
        metric="leak@5",
        treatment=RRF,
        readings=Readings(
            pass_="no leak", fail="leaks", null="unused", vacuous="control missed: proves nothing"
        ),
    )


def _const(value: float, n: int = 8) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.full(n, value)


def test_bootstrap_gate_passes_when_a_constant_gain_clears_the_margin() -> None:
    # Every difference is 0.75 - 0.5 = 0.25, so every resampled mean and both CI ends are 0.25.
    result = decide_gate(_gate(margin=0.1), _const(0.75), _const(0.5), STATS)

    assert result.verdict == "PASS"
    assert result.statistic["ci_low"] == 0.25
    assert result.statistic["ci_high"] == 0.25
    assert result.counts == {"n": 8, "wins": 8, "losses": 0, "ties": 0}
    assert result.reading == "walk wins"


def test_bootstrap_gate_fails_when_the_ci_lies_below_zero() -> None:
    result = decide_gate(_gate(), _const(0.5), _const(0.75), STATS)

    assert result.verdict == "FAIL"
    assert (result.statistic["ci_low"], result.statistic["ci_high"]) == (-0.25, -0.25)
    assert result.reading == "walk loses"


def test_bootstrap_gate_is_null_when_the_gain_does_not_clear_the_margin() -> None:
    # 0.3 - 0.25 = 0.05 > 0 everywhere, but not above a 0.1 margin.
    result = decide_gate(_gate(margin=0.1), _const(0.3), _const(0.25), STATS)
    assert result.verdict == "NULL"
    assert result.reading == "no difference"
    assert decide_gate(_gate(margin=0.0), _const(0.3), _const(0.25), STATS).verdict == "PASS"


def test_bootstrap_gate_is_null_when_the_ci_straddles_zero() -> None:
    # Differences alternate +1/-1 over 10 queries: a resampled mean is (2B - 10) / 10 with
    # B ~ Binomial(10, 1/2). P(B <= 1) = 11/1024 < 0.025 < P(B <= 2) = 56/1024, so the 2.5%
    # percentile is (2*2 - 10) / 10 = -0.6 and, by symmetry, the 97.5% percentile is +0.6.
    treatment = np.tile([1.0, 0.0], 5)
    baseline = np.tile([0.0, 1.0], 5)

    result = decide_gate(_gate(), treatment, baseline, STATS)

    assert result.verdict == "NULL"
    assert result.statistic["mean_diff"] == 0.0
    assert result.statistic["ci_low"] == pytest.approx(-0.6)
    assert result.statistic["ci_high"] == pytest.approx(0.6)
    assert result.counts == {"n": 10, "wins": 5, "losses": 5, "ties": 0}


def test_direction_less_mirrors_the_rules() -> None:
    less = _gate(direction="less", metric="leak@5")
    assert decide_gate(less, _const(0.5), _const(0.75), STATS).verdict == "PASS"
    assert decide_gate(less, _const(0.75), _const(0.5), STATS).verdict == "FAIL"


def test_sign_gate_uses_the_exact_two_sided_p_value() -> None:
    # 10 wins, 0 losses, 2 ties: p = 2 * (1/2)**10 = 2/1024.
    treatment = np.array([1.0] * 10 + [0.0, 1.0])
    baseline = np.array([0.0] * 10 + [0.0, 1.0])
    gate = _gate(id="S", test="sign", alpha=0.05, metric="hit@5")

    passed = decide_gate(gate, treatment, baseline, STATS)
    failed = decide_gate(gate, baseline, treatment, STATS)

    assert passed.verdict == "PASS"
    assert passed.statistic["p_value"] == pytest.approx(2 / 1024)
    assert passed.counts == {"n": 12, "wins": 10, "losses": 0, "ties": 2}
    assert passed.statistic["mean_diff"] == pytest.approx(10 / 12)
    assert failed.verdict == "FAIL"
    assert failed.counts == {"n": 12, "wins": 0, "losses": 10, "ties": 2}


def test_sign_gate_is_null_when_p_is_not_below_alpha() -> None:
    # 6 wins, 2 losses: p = 2 * (C(8,6) + C(8,7) + C(8,8)) / 2**8 = 2 * 37 / 256.
    treatment = np.array([1.0] * 6 + [0.0] * 2)
    baseline = np.array([0.0] * 6 + [1.0] * 2)

    result = decide_gate(_gate(test="sign", alpha=0.05), treatment, baseline, STATS)

    assert result.verdict == "NULL"
    assert result.statistic["p_value"] == pytest.approx(74 / 256)


def test_sign_gate_pass_also_needs_the_mean_gain_above_the_margin() -> None:
    # 10 wins of +1 among 100 queries: p = 2/1024, mean difference 10/100 = 0.1.
    treatment = np.array([1.0] * 10 + [0.0] * 90)
    baseline = np.zeros(100)
    assert (
        decide_gate(_gate(test="sign", alpha=0.05, margin=0.05), treatment, baseline, STATS).verdict
        == "PASS"
    )
    assert (
        decide_gate(_gate(test="sign", alpha=0.05, margin=0.2), treatment, baseline, STATS).verdict
        == "NULL"
    )


def test_randomization_gate_decides_on_the_flip_p_value() -> None:
    gate = _gate(id="R", test="randomization", alpha=0.05)
    # Alternating +1/-1: the observed sum is 0 and every flipped |sum| >= 0, so
    # p = (10000 + 1) / (10000 + 1) = 1.
    null = decide_gate(gate, np.tile([1.0, 0.0], 6), np.tile([0.0, 1.0], 6), STATS)
    assert null.verdict == "NULL"
    assert null.statistic["p_value"] == 1.0

    # A constant +1 over 12 queries is matched only by the all-plus or all-minus flips
    # (probability 2/4096), far below alpha.
    passed = decide_gate(gate, _const(1.0, 12), _const(0.0, 12), STATS)
    failed = decide_gate(gate, _const(0.0, 12), _const(1.0, 12), STATS)
    assert passed.verdict == "PASS"
    assert float(passed.statistic["p_value"] or 1.0) < 0.05
    assert failed.verdict == "FAIL"


def test_negative_gate_with_a_missed_control_is_vacuous_never_pass() -> None:
    gate = _negative_gate()

    vacuous = decide_negative_gate(gate, np.array([0, 0, 0]), np.array([1, 1, 0]))
    passed = decide_negative_gate(gate, np.array([0, 0, 0]), np.array([1, 1, 1]))

    assert vacuous.verdict == "VACUOUS"
    assert vacuous.reading == "control missed: proves nothing"
    assert vacuous.counts == {
        "n": 3,
        "leaks": 0,
        "controls": 3,
        "controls_hit": 2,
        "controls_missed": 1,
    }
    assert passed.verdict == "PASS"
    assert passed.reading == "no leak"


def test_negative_gate_fails_on_any_leak_when_controls_hit() -> None:
    gate = _negative_gate()

    failed = decide_negative_gate(gate, np.array([0, 1, 0]), np.array([True, True, True]))

    assert failed.verdict == "FAIL"
    assert failed.counts["leaks"] == 1
    assert failed.statistic["leak_rate"] == pytest.approx(1 / 3)
    assert decide_negative_gate(gate, np.array([0, 0, 0]), np.ones(3)).verdict == "PASS"


def test_negative_gate_without_items_or_controls_is_vacuous() -> None:
    gate = _negative_gate()
    assert decide_negative_gate(gate, np.array([]), np.array([1])).verdict == "VACUOUS"
    assert decide_negative_gate(gate, np.array([0]), np.array([])).verdict == "VACUOUS"
    assert decide_negative_gate(gate, np.array([0]), np.array([1])).verdict == "PASS"


def test_gate_kinds_and_flag_values_are_checked() -> None:
    with pytest.raises(GateError, match=r"decide it with decide_negative_gate"):
        decide_gate(_negative_gate(), _const(1.0), _const(0.0), STATS)
    with pytest.raises(GateError, match=r"decide it with decide_gate"):
        decide_negative_gate(_gate(), np.array([0]), np.array([1]))
    with pytest.raises(GateError, match=r"leaks must hold only 0/1"):
        decide_negative_gate(_negative_gate(), np.array([0, 2]), np.array([1]))
    with pytest.raises(GateError, match=r"equal length"):
        decide_gate(_gate(), _const(1.0, 3), _const(0.0, 4), STATS)


def test_gate_line_prints_verdict_statistic_counts_and_reading() -> None:
    boot = decide_gate(_gate(), _const(0.5), _const(0.75), STATS)
    sign = decide_gate(
        _gate(id="S", test="sign", alpha=0.05, metric="hit@5", subset="multi"),
        np.array([1.0] * 10 + [0.0, 1.0]),
        np.array([0.0] * 10 + [0.0, 1.0]),
        STATS,
    )
    neg = decide_negative_gate(_negative_gate(), np.array([0, 0, 0]), np.array([1, 1, 0]))

    assert format_gate_line(boot) == (
        f"Gate M  FAIL  {WALK} vs {RRF}  recall@5  Δ=-0.250 [95% CI -0.25, -0.25] n=8  — walk loses"
    )
    assert format_gate_line(sign) == (
        f"Gate S  PASS  {WALK} vs {RRF}  hit@5 [multi]  Δ=+0.833 sign p=0.001953 wins=10 "
        "losses=0 ties=2 n=12  — walk wins"
    )
    assert format_gate_line(neg) == (
        f"Gate N  VACUOUS  {RRF}  leak@5  leaks=0/3 controls hit=2/3  — control missed: proves nothing"
    )


def test_gate_result_round_trips_through_json() -> None:
    result = decide_gate(_gate(), _const(0.75), _const(0.5), STATS)

    data = json.loads(json.dumps(result.to_dict()))

    assert data["verdict"] == "PASS"
    assert data["statistic"]["resamples"] == 10_000
    assert data["statistic"]["seed"] == 0
    assert data["counts"]["n"] == 8
    assert data["reading"] == "walk wins"


def test_choose_ship_takes_the_first_matching_rule_else_the_default() -> None:
    ship = Ship(
        rules=(
            ShipRule(when={"M": "PASS", "N": "PASS"}, arm=WALK),
            ShipRule(when={"M": "PASS"}, arm=VECTOR),
        ),
        default=RRF,
    )

    assert choose_ship(ship, {"M": "PASS", "N": "PASS"}) == WALK
    assert choose_ship(ship, {"M": "PASS", "N": "VACUOUS"}) == VECTOR
    assert choose_ship(ship, {"M": "NULL", "N": "PASS"}) == RRF
    with pytest.raises(GateError, match=r"need verdicts for gate\(s\) \['N'\]"):
        choose_ship(ship, {"M": "PASS"})


def test_a_ship_condition_may_accept_any_of_several_verdicts() -> None:
    # "not worse than fts on MRR": gate L may PASS or be NULL, never FAIL
    ship = Ship(rules=(ShipRule(when={"R": "PASS", "L": ("PASS", "NULL")}, arm=WALK),), default=RRF)
    assert ship.rules[0].when == {"R": ("PASS",), "L": ("PASS", "NULL")}
    assert choose_ship(ship, {"R": "PASS", "L": "NULL"}) == WALK
    assert choose_ship(ship, {"R": "PASS", "L": "PASS"}) == WALK
    assert choose_ship(ship, {"R": "PASS", "L": "FAIL"}) == RRF
    assert choose_ship(ship, {"R": "NULL", "L": "PASS"}) == RRF
    with pytest.raises(ProtocolError, match="names no verdict"):
        ShipRule(when={"L": ()}, arm=WALK)
    with pytest.raises(ProtocolError, match="'MAYBE' is not one of"):
        ShipRule(when={"L": ("PASS", "MAYBE")}, arm=WALK)  # type: ignore[dict-item]


def test_gate_specs_refuse_inconsistent_settings() -> None:
    with pytest.raises(ProtocolError, match=r"needs a baseline"):
        _gate(baseline=None)
    with pytest.raises(ProtocolError, match=r"a sign gate needs alpha"):
        _gate(test="sign")
    with pytest.raises(ProtocolError, match=r"needs readings\.vacuous"):
        GateSpec(
            id="N", kind="negative", roster="r", metric="leak@5", treatment=RRF, readings=READINGS
        )
    assert _gate(test="sign", alpha=0.05).alpha == 0.05

"""Non-inferiority gates: verdicts on score vectors whose bootstrap CI is bounded by hand, their checks
in the model, the schema and the loader, and their exclusion from corrected families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.gates import GateError, GateResult, correct_family, decide_gate, format_gate_line
from harness.protocol.load import load_protocol
from harness.protocol.model import GateSpec, ProtocolError, Readings, StatsConfig
from tests.harness.test_protocol import PROTOCOL, _error, _write

FP32 = "rrf(pool=20,rrf_k=60)"
INT8 = "rrf(pool=20,rrf_k=60)@int8"
STATS = StatsConfig(seed=0, resamples=10_000, confidence=0.95)
READINGS = Readings(pass_="int8 loses at most m", fail="int8 loses more than m", null="undecided")


def _gate(**over: Any) -> GateSpec:
    fields: dict[str, Any] = {
        "id": "NI",
        "kind": "non-inferiority",
        "roster": "temporal",
        "metric": "recall@5",
        "treatment": INT8,
        "baseline": FP32,
        "test": "bootstrap",
        "margin": 0.25,
        "readings": READINGS,
    }
    fields.update(over)
    return GateSpec(**fields)


def _const(value: float, n: int = 8) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.full(n, value)


def test_a_constant_loss_inside_the_margin_passes_and_one_outside_fails() -> None:
    # Every difference is 0.5 - 0.625 = -0.125, so both CI ends are -0.125, above -0.25: PASS.
    inside = decide_gate(_gate(), _const(0.5), _const(0.625), STATS)
    assert inside.verdict == "PASS"
    assert (inside.statistic["ci_low"], inside.statistic["ci_high"]) == (-0.125, -0.125)
    assert inside.statistic["ni_bound"] == -0.25
    assert inside.counts == {"n": 8, "wins": 0, "losses": 8, "ties": 0}
    assert inside.reading == "int8 loses at most m"
    # Every difference is 0.25 - 0.75 = -0.5: both ends below -0.25: FAIL.
    outside = decide_gate(_gate(), _const(0.25), _const(0.75), STATS)
    assert outside.verdict == "FAIL"
    assert (outside.statistic["ci_low"], outside.statistic["ci_high"]) == (-0.5, -0.5)
    assert outside.reading == "int8 loses more than m"


def test_a_loss_exactly_at_the_margin_is_null_both_inequalities_being_strict() -> None:
    # Both CI ends are -0.25 = -m: not above it (no PASS) and not below it (no FAIL).
    result = decide_gate(_gate(), _const(0.5), _const(0.75), STATS)
    assert result.verdict == "NULL"
    assert (result.statistic["ci_low"], result.statistic["ci_high"]) == (-0.25, -0.25)
    assert result.reading == "undecided"
    # Control: a margin a little wider than the loss passes.
    assert decide_gate(_gate(margin=0.3), _const(0.5), _const(0.75), STATS).verdict == "PASS"


def test_no_difference_passes_non_inferiority_where_superiority_is_null() -> None:
    # Every difference is 0: CI [0, 0]. Non-inferiority: 0 > -0.25, PASS. Superiority with the same
    # margin: 0 is neither above 0.25 nor below 0, NULL. The two gate kinds ask different questions.
    t, b = _const(0.5), _const(0.5)
    assert decide_gate(_gate(), t, b, STATS).verdict == "PASS"
    superiority = _gate(kind="superiority")
    assert decide_gate(superiority, t, b, STATS).verdict == "NULL"


def test_a_wide_ci_straddling_minus_the_margin_is_null() -> None:
    # Differences (+1, -1): a resampled mean is 1, 0 or -1 with probability 1/4, 1/2, 1/4, so the
    # 2.5% and 97.5% percentiles are -1 and 1 (P(-1) = 1/4 > 2.5%): the CI [-1, 1] contains -0.25.
    result = decide_gate(_gate(), [1.0, 0.0], [0.0, 1.0], STATS)
    assert result.verdict == "NULL"
    assert (result.statistic["ci_low"], result.statistic["ci_high"]) == (-1.0, 1.0)


def test_losses_bounded_by_hand_decide_without_a_degenerate_ci() -> None:
    # Differences in {0, -0.125}: every resampled mean lies in [-0.125, 0], so the whole CI does,
    # above -0.25 whatever the draws: PASS.
    small = decide_gate(_gate(), [1.0, 1.0, 1.0, 0.875], [1.0, 1.0, 1.0, 1.0], STATS)
    assert small.verdict == "PASS"
    assert -0.125 <= float(small.statistic["ci_low"] or 0) <= 0.0
    # Differences in {-0.5, -1}: every resampled mean lies in [-1, -0.5], below -0.25: FAIL.
    large = decide_gate(_gate(), [0.5, 0.0, 0.5, 0.0], [1.0, 1.0, 1.0, 1.0], STATS)
    assert large.verdict == "FAIL"
    assert -1.0 <= float(large.statistic["ci_low"] or 0) <= float(large.statistic["ci_high"] or 0)
    assert float(large.statistic["ci_high"] or 0) <= -0.5


def test_three_losses_in_32_cannot_show_a_two_point_margin() -> None:
    # embedders-1's temporal shape: 3 of 32 questions lost (Δ = -1), 29 ties; mean -3/32 = -0.09375.
    # P(a resample draws no loss) = (29/32)^32 = 0.043 > 2.5%, so the CI's upper end is 0 > -0.02:
    # no FAIL; and 0.043 < 97.5%, so the lower end is at most -1/32 = -0.031 < -0.02: no PASS.
    t = np.ones(32)
    t[:3] = 0.0
    result = decide_gate(_gate(margin=0.02), t, np.ones(32), STATS)
    assert result.verdict == "NULL"
    assert result.statistic["mean_diff"] == pytest.approx(-0.09375)
    assert result.statistic["ci_high"] == 0.0
    assert float(result.statistic["ci_low"] or 0) <= -1 / 32
    # Control: with no loss at all the same roster passes.
    assert decide_gate(_gate(margin=0.02), np.ones(32), np.ones(32), STATS).verdict == "PASS"


def test_direction_less_mirrors_the_rule_against_plus_the_margin() -> None:
    # Lower is better: Δ = 0.625 - 0.5 = +0.125 is a loss of 0.125 < 0.25: PASS, bound +0.25.
    less = _gate(direction="less")
    passed = decide_gate(less, _const(0.625), _const(0.5), STATS)
    assert passed.verdict == "PASS"
    assert passed.statistic["ni_bound"] == 0.25
    # Δ = +0.5: a loss of 0.5 > 0.25: FAIL. Control: the same scores pass with direction "greater".
    assert decide_gate(less, _const(1.0), _const(0.5), STATS).verdict == "FAIL"
    assert decide_gate(_gate(), _const(1.0), _const(0.5), STATS).verdict == "PASS"


def test_the_gate_line_shows_the_ci_to_three_places_and_the_bound() -> None:
    result = decide_gate(_gate(margin=0.02), _const(0.5), _const(0.5), STATS)
    assert format_gate_line(result) == (
        f"Gate NI  PASS  {INT8} vs {FP32}  recall@5  Δ=+0.000 [95% CI 0.000, 0.000] n=8 "
        "non-inferiority bound -0.020  — int8 loses at most m"
    )


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"test": "sign", "alpha": 0.05}, "its test must be 'bootstrap', got 'sign'"),
        ({"alpha": 0.05}, "has no alpha"),
        ({"margin": 0.0}, "needs margin > 0"),
        ({"margin": -0.02}, "needs margin > 0"),
        ({"baseline": None}, "needs a baseline"),
        ({"baseline": INT8}, "treatment and baseline are both"),
        (
            {"readings": Readings(pass_="p", fail="f", null="n", vacuous="v")},
            "readings.vacuous only applies",
        ),
    ],
)
def test_the_model_refuses_a_malformed_non_inferiority_gate(
    over: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ProtocolError, match=needle.replace("(", r"\(")):
        _gate(**over)
    assert _gate().kind == "non-inferiority"  # control: the well-formed gate builds


def test_a_non_inferiority_result_is_never_vacuous_and_has_no_p_value() -> None:
    result = decide_gate(_gate(), _const(0.5), _const(0.5), STATS)
    with pytest.raises(GateError, match="only negative and every gates can be VACUOUS"):
        GateResult(**{**result.to_dict(), "verdict": "VACUOUS"})
    with pytest.raises(GateError, match="no p-value for a corrected family"):
        decide_gate(_gate(), _const(0.5), _const(0.5), STATS, with_p=True)
    superiority = _gate(id="S", kind="superiority", margin=0.0)
    sup = decide_gate(superiority, _const(0.75), _const(0.5), STATS, with_p=True)
    specs = {"NI": _gate(), "S": superiority}
    with pytest.raises(GateError, match="Gate NI has no p-value"):
        correct_family([result, sup], specs, family=["NI", "S"], method="holm", alpha=0.05)
    # Control: the superiority gate alone is corrected.
    (alone,) = correct_family([sup], specs, family=["S"], method="holm", alpha=0.05)
    assert alone.statistic["family_size"] == 1


GATE_M = 'test = "bootstrap"\nconfidence = 0.95\nmargin = 0.0\n'
NI_M = 'kind = "non-inferiority"\ntest = "bootstrap"\nconfidence = 0.95\nmargin = 0.02\n'
NI_PROTOCOL = PROTOCOL.replace(GATE_M, NI_M)


def test_a_protocol_with_a_non_inferiority_gate_loads(tmp_path: Path) -> None:
    assert GATE_M in PROTOCOL
    gate = load_protocol(_write(tmp_path, NI_PROTOCOL)).gate("M")
    assert (gate.kind, gate.test, gate.margin, gate.alpha) == (
        "non-inferiority",
        "bootstrap",
        0.02,
        None,
    )


@pytest.mark.parametrize(
    ("new", "needle"),
    [
        ('kind = "non-inferiority"\ntest = "bootstrap"\n', "'margin' is a required property"),
        ('kind = "non-inferiority"\ntest = "bootstrap"\nmargin = 0.0\n', "$.gates[0].margin: 0.0"),
        (
            'kind = "non-inferiority"\ntest = "sign"\nalpha = 0.05\nmargin = 0.02\n',
            "$.gates[0].test",
        ),
        (
            'kind = "non-inferiority"\ntest = "bootstrap"\nalpha = 0.05\nmargin = 0.02\n',
            "$.gates[0].alpha: is not allowed here",
        ),
    ],
)
def test_the_schema_refuses_a_malformed_non_inferiority_gate(
    tmp_path: Path, new: str, needle: str
) -> None:
    assert needle in _error(tmp_path, PROTOCOL.replace(GATE_M, new))


def test_a_non_inferiority_gate_cannot_join_a_correction_family(tmp_path: Path) -> None:
    family = '\n[correction]\nmethod = "holm"\nalpha = 0.05\ngates = ["M"]\n'
    message = _error(tmp_path, NI_PROTOCOL + family)
    assert "is a non-inferiority gate" in message
    assert "no p-value for a Holm or Bonferroni family to adjust" in message
    # Control: the same family over the superiority gate M loads.
    assert load_protocol(_write(tmp_path, PROTOCOL + family)).correction is not None


def test_a_ship_rule_cannot_wait_for_a_vacuous_non_inferiority_gate(tmp_path: Path) -> None:
    text = NI_PROTOCOL.replace('when = { M = "PASS", N = "PASS" }', 'when = { M = "VACUOUS" }')
    assert "gate M is a non-inferiority gate and can never be VACUOUS" in _error(tmp_path, text)
    # Control: N, a negative gate, may be VACUOUS in a rule.
    ok = NI_PROTOCOL.replace('when = { M = "PASS", N = "PASS" }', 'when = { N = "VACUOUS" }')
    assert load_protocol(_write(tmp_path, ok)).ship.rules[0].when == {"N": ("VACUOUS",)}

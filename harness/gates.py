"""Tri-state gates decided mechanically from the pre-registered rule, and the ship decision.

A superiority gate compares per-query scores of a treatment arm with a baseline arm:

* ``bootstrap``: PASS when the CI of (treatment − baseline) lies entirely above the margin, FAIL
  when it lies entirely below zero, NULL otherwise.
* ``sign`` / ``randomization``: PASS when the test rejects (p < alpha) in the pre-registered
  direction and the mean difference exceeds the margin; FAIL when it rejects in the other
  direction; NULL otherwise. The sign test's direction is that of wins − losses (what it tests);
  the randomization test's is that of the mean difference.

``direction = "less"`` mirrors every rule (the treatment must score lower, e.g. on leak@k).

A non-inferiority gate (bootstrap only) asks whether the treatment is shown to lose at most its
margin m > 0: PASS when the CI of (treatment − baseline) lies entirely above −m, FAIL when it lies
entirely below −m (shown to lose more than m), NULL otherwise. ``direction = "less"`` mirrors it
(PASS when the CI lies below +m). It has no p-value, so it cannot join a corrected family.

A negative gate is decided from leak and positive-control counts: any missed control makes it
VACUOUS (a test that could not have failed proves nothing), else zero leaks PASS and any leak FAIL.

An every gate is decided from per-item hits of one arm (``hit@k``): PASS when every item hits, FAIL
when any misses, VACUOUS when there is no item (nothing could have failed). With ``hit@1`` on the
replacements of changed memories it checks that each replacement ranks first.

Every result carries the reading committed in the protocol for its verdict, verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from engine.checks import is_number
from harness.protocol.model import VERDICTS, GateKind, GateSpec, Ship, StatsConfig, Verdict
from harness.stats import (
    bonferroni,
    bootstrap_p_values,
    holm,
    paired_bootstrap,
    randomization_test,
    sign_test,
)

__all__ = [
    "GateError",
    "GateResult",
    "Verdict",
    "choose_ship",
    "correct_family",
    "decide_every_gate",
    "decide_gate",
    "decide_negative_gate",
    "format_gate_line",
]

Statistic = Mapping[str, float | int | str | None]


class GateError(ValueError):
    """A gate cannot be decided from the inputs given."""


@dataclass(frozen=True, kw_only=True)
class GateResult:
    """The verdict of one gate with the counts, statistic and committed reading behind it."""

    id: str
    kind: GateKind
    verdict: Verdict
    roster: str
    subset: str | None
    metric: str
    treatment: str
    baseline: str | None
    test: str  # "bootstrap" | "sign" | "randomization" | "negative" | "every"
    # kind "non-inferiority" is always test "bootstrap"
    counts: Mapping[str, int]
    statistic: Statistic
    reading: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            msg = f"Gate {self.id}: verdict must be one of {list(VERDICTS)}, got {self.verdict!r}"
            raise GateError(msg)
        if self.verdict == "VACUOUS" and self.kind in ("superiority", "non-inferiority"):
            msg = f"Gate {self.id}: only negative and every gates can be VACUOUS"
            raise GateError(msg)
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "statistic", MappingProxyType(dict(self.statistic)))

    def __hash__(self) -> int:
        return hash((self.id, self.verdict, tuple(sorted(self.counts.items()))))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``summary.json``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "verdict": self.verdict,
            "roster": self.roster,
            "subset": self.subset,
            "metric": self.metric,
            "treatment": self.treatment,
            "baseline": self.baseline,
            "test": self.test,
            "counts": dict(self.counts),
            "statistic": dict(self.statistic),
            "reading": self.reading,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateResult:
        """Read `to_dict`'s form back (a committed ``summary.json``'s gates)."""
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def decide_gate(
    gate: GateSpec,
    treatment: ArrayLike,
    baseline: ArrayLike,
    stats_cfg: StatsConfig,
    *,
    with_p: bool = False,
) -> GateResult:
    """Decide a superiority or non-inferiority gate from paired per-query scores (same query order).

    Uses the paired bootstrap (Sakai 2006), the exact sign test (Dixon & Mood 1946) or the
    paired randomization test (Smucker, Allan & Carterette 2007) from `harness.stats`, with the
    seed and resamples of `stats_cfg`; a bootstrap gate's own confidence overrides the protocol's.
    With `with_p` (a gate in a corrected family) a bootstrap gate also reports its p-values
    (`harness.stats.bootstrap_p_values`, same resamples), so that every member has a ``p_value``.

    Raises:
        GateError: the gate is a negative or every gate, a non-inferiority gate is asked for a
            p-value (`with_p`), or the score arrays are unusable.
    """
    if (
        gate.kind not in ("superiority", "non-inferiority")
        or gate.baseline is None
        or not gate.test
    ):
        msg = f"Gate {gate.id} is a {gate.kind} gate; decide it with decide_negative_gate"
        raise GateError(msg)
    if gate.kind == "non-inferiority" and with_p:
        msg = (
            f"Gate {gate.id} is a non-inferiority gate: it has no p-value for a corrected family; "
            "leave it out of correction.gates"
        )
        raise GateError(msg)
    t, b = _paired(gate.id, treatment, baseline)
    diffs = t - b
    counts = {
        "n": int(diffs.size),
        "wins": int(np.count_nonzero(diffs > 0)),
        "losses": int(np.count_nonzero(diffs < 0)),
        "ties": int(np.count_nonzero(diffs == 0)),
    }
    # Deciding on the mirrored difference keeps one set of rules for both directions.
    sign = 1.0 if gate.direction == "greater" else -1.0
    verdict: Verdict
    statistic: dict[str, float | int | str | None]
    if gate.test == "bootstrap":
        verdict, statistic = _bootstrap(gate, t, b, sign, stats_cfg, with_p=with_p)
    elif gate.test == "sign":
        st = sign_test(t, b)
        alpha = _alpha(gate)
        mean_diff = float(diffs.mean())
        favoured = sign * (st.wins - st.losses)
        rejects = st.p_value < alpha
        if rejects and favoured > 0 and sign * mean_diff > gate.margin:
            verdict = "PASS"
        elif rejects and favoured < 0:
            verdict = "FAIL"
        else:
            verdict = "NULL"
        statistic = {"test": "sign", "mean_diff": mean_diff, "alpha": alpha, **st.to_dict()}
    else:
        rt = randomization_test(t, b, resamples=stats_cfg.resamples, seed=stats_cfg.seed)
        alpha = _alpha(gate)
        effect = sign * rt.mean_diff
        rejects = rt.p_value < alpha
        # margin >= 0, so effect > margin also means the effect is in the registered direction.
        verdict = (
            "PASS"
            if rejects and effect > gate.margin
            else "FAIL"
            if rejects and effect < 0
            else "NULL"
        )
        statistic = {"test": "randomization", "alpha": alpha, "n": counts["n"], **rt.to_dict()}
    statistic.update({"margin": gate.margin, "direction": gate.direction})
    return _result(gate, verdict, counts, statistic, test=gate.test)


def _bootstrap(
    gate: GateSpec,
    t: NDArray[np.float64],
    b: NDArray[np.float64],
    sign: float,
    stats_cfg: StatsConfig,
    *,
    with_p: bool,
) -> tuple[Verdict, dict[str, float | int | str | None]]:
    """A bootstrap gate's verdict and its statistic.

    Superiority: the CI against the margin (PASS above it) and zero (FAIL below it).
    Non-inferiority: the CI against −margin only (PASS above it, FAIL below it).
    """
    confidence = gate.confidence if gate.confidence is not None else stats_cfg.confidence
    boot = paired_bootstrap(
        t, b, resamples=stats_cfg.resamples, seed=stats_cfg.seed, confidence=confidence
    )
    low, high = sorted((sign * boot.ci_low, sign * boot.ci_high))
    verdict: Verdict
    statistic: dict[str, float | int | str | None] = {"test": "bootstrap", **boot.to_dict()}
    if gate.kind == "non-inferiority":
        bound = -gate.margin
        verdict = "PASS" if low > bound else "FAIL" if high < bound else "NULL"
        # The bound on the unmirrored Δ = treatment − baseline: −m, or +m for direction "less".
        statistic["ni_bound"] = sign * bound
        return verdict, statistic
    verdict = "PASS" if low > gate.margin else "FAIL" if high < 0 else "NULL"
    if with_p:
        # Mirrored for direction "less": the claim is then that baseline − treatment > margin.
        first, second = (t, b) if sign > 0 else (b, t)
        p = bootstrap_p_values(
            first,
            second,
            margin=gate.margin,
            resamples=stats_cfg.resamples,
            seed=stats_cfg.seed,
        )
        statistic.update(
            p_value=p.two_sided, p_above_margin=p.above_margin, p_below_zero=p.below_zero
        )
    return verdict, statistic


def decide_negative_gate(gate: GateSpec, leaks: ArrayLike, control_hits: ArrayLike) -> GateResult:
    """Decide a negative gate from per-item leak flags and per-control hit flags (0/1 each).

    VACUOUS when any control was missed (or there is no negative item or no control: nothing
    could have failed); otherwise PASS with zero leaks and FAIL with any.

    Raises:
        GateError: the gate is not a negative gate, or a flag array is not 1-d of 0/1 values.
    """
    if gate.kind != "negative":
        msg = f"Gate {gate.id} is a {gate.kind} gate; decide it with decide_gate"
        raise GateError(msg)
    leak = _flags(gate.id, "leaks", leaks)
    hit = _flags(gate.id, "control_hits", control_hits)
    counts = {
        "n": int(leak.size),
        "leaks": int(leak.sum()),
        "controls": int(hit.size),
        "controls_hit": int(hit.sum()),
        "controls_missed": int(hit.size - hit.sum()),
    }
    verdict: Verdict
    if leak.size == 0 or hit.size == 0 or counts["controls_missed"] > 0:
        verdict = "VACUOUS"
    elif counts["leaks"] == 0:
        verdict = "PASS"
    else:
        verdict = "FAIL"
    statistic: dict[str, float | int | str | None] = {
        "test": "negative",
        "leak_rate": counts["leaks"] / leak.size if leak.size else None,
        "control_hit_rate": counts["controls_hit"] / hit.size if hit.size else None,
    }
    return _result(gate, verdict, counts, statistic, test="negative")


def decide_every_gate(gate: GateSpec, hits: ArrayLike) -> GateResult:
    """Decide an every gate from per-item hit flags (0/1, one per item of the gate's subset).

    VACUOUS when there is no item; otherwise PASS when every item hit and FAIL when any missed.

    Raises:
        GateError: the gate is not an every gate, or `hits` is not 1-d of 0/1 values.
    """
    if gate.kind != "every":
        msg = f"Gate {gate.id} is a {gate.kind} gate; decide it with decide_gate or decide_negative_gate"
        raise GateError(msg)
    hit = _flags(gate.id, "hits", hits)
    counts = {"n": int(hit.size), "hits": int(hit.sum()), "misses": int(hit.size - hit.sum())}
    verdict: Verdict = "VACUOUS" if hit.size == 0 else "PASS" if counts["misses"] == 0 else "FAIL"
    statistic: dict[str, float | int | str | None] = {
        "test": "every",
        "hit_rate": counts["hits"] / hit.size if hit.size else None,
    }
    return _result(gate, verdict, counts, statistic, test="every")


def format_gate_line(result: GateResult) -> str:
    """One line per gate for reports, e.g.
    ``Gate M  FAIL  walk vs rrf  recall@5  Δ=-0.232 [95% CI -0.30, -0.17] n=396  — <reading>``.
    """
    arms = (
        result.treatment if result.baseline is None else f"{result.treatment} vs {result.baseline}"
    )
    metric = result.metric if result.subset is None else f"{result.metric} [{result.subset}]"
    s, c = result.statistic, result.counts
    if result.test == "bootstrap" and result.kind == "non-inferiority":
        level = f"{round(float(_num(s['confidence'])) * 100, 6):g}%"
        detail = (
            f"Δ={_num(s['mean_diff']):+.3f} [{level} CI {_num(s['ci_low']):.3f}, "
            f"{_num(s['ci_high']):.3f}] n={c['n']} non-inferiority bound "
            f"{_num(s['ni_bound']):+.3f}"
        )
    elif result.test == "bootstrap":
        level = f"{round(float(_num(s['confidence'])) * 100, 6):g}%"
        detail = (
            f"Δ={_num(s['mean_diff']):+.3f} [{level} CI {_num(s['ci_low']):.2f}, "
            f"{_num(s['ci_high']):.2f}] n={c['n']}"
        )
    elif result.test == "sign":
        detail = (
            f"Δ={_num(s['mean_diff']):+.3f} sign p={_num(s['p_value']):.4g} wins={c['wins']} "
            f"losses={c['losses']} ties={c['ties']} n={c['n']}"
        )
    elif result.test == "randomization":
        detail = (
            f"Δ={_num(s['mean_diff']):+.3f} randomization p={_num(s['p_value']):.4g} n={c['n']}"
        )
    elif result.test == "every":
        detail = f"hits={c['hits']}/{c['n']} misses={c['misses']}"
    else:
        detail = f"leaks={c['leaks']}/{c['n']} controls hit={c['controls_hit']}/{c['controls']}"
    if "p_adjusted" in s:
        detail += (
            f" p={_num(s['p_value']):.4g} {s['correction']}-adjusted p={_num(s['p_adjusted']):.4g}"
            f" (family of {s['family_size']}, uncorrected {s['verdict_uncorrected']})"
        )
    return f"Gate {result.id}  {result.verdict}  {arms}  {metric}  {detail}  — {result.reading}"


def correct_family(
    results: Sequence[GateResult],
    specs: Mapping[str, GateSpec],
    *,
    family: Sequence[str],
    method: str,
    alpha: float,
) -> list[GateResult]:
    """Correct the gates named in `family` together for multiple comparisons.

    Each member's p-value (``statistic["p_value"]``: the sign or randomization test's, or the
    bootstrap's two-sided p) is adjusted by Holm's step-down procedure (`method` "holm") or by
    Bonferroni ("bonferroni") at the family's `alpha`. A member keeps its uncorrected verdict only
    when its adjusted p is below alpha; otherwise it becomes NULL, with the reading committed for
    NULL. The statistic records the raw and adjusted p, the method, the family size and the
    uncorrected verdict. Gates outside the family are returned unchanged, in the given order.

    Raises:
        GateError: a family member is missing, is not a superiority gate (negative, every and
            non-inferiority gates have no p-value), or has no p-value.
    """
    by_id = {r.id: r for r in results}
    missing = [g for g in family if g not in by_id]
    if missing:
        msg = f"The correction family names gate(s) {missing} that were not decided"
        raise GateError(msg)
    members = [by_id[g] for g in family]
    for r in members:
        if r.kind != "superiority" or not is_number(r.statistic.get("p_value")):
            msg = (
                f"Gate {r.id} has no p-value and cannot be corrected with the family {list(family)}"
            )
            raise GateError(msg)
    raw = [_num(r.statistic["p_value"]) for r in members]
    if method == "holm":
        adjusted = holm(raw, alpha)
    elif method == "bonferroni":
        adjusted = bonferroni(raw, alpha)
    else:
        msg = f"Unknown correction method {method!r}; use 'holm' or 'bonferroni'"
        raise GateError(msg)
    corrected: dict[str, GateResult] = {}
    for r, adj in zip(members, adjusted, strict=True):
        verdict: Verdict = r.verdict if adj.reject else "NULL"
        statistic = {
            **r.statistic,
            "p_adjusted": adj.p_adjusted,
            "correction": method,
            "family_alpha": alpha,
            "family_size": len(members),
            "verdict_uncorrected": r.verdict,
        }
        corrected[r.id] = _result(specs[r.id], verdict, r.counts, statistic, test=r.test)
    return [corrected.get(r.id, r) for r in results]


def choose_ship(ship: Ship, verdicts: Mapping[str, Verdict]) -> str:
    """The arm of the first ship rule whose conditions all hold, else the default arm.

    Raises:
        GateError: a rule names a gate with no verdict, or a verdict is not a known one.
    """
    for gate_id, verdict in verdicts.items():
        if verdict not in VERDICTS:
            msg = f"Gate {gate_id} has verdict {verdict!r}; expected one of {list(VERDICTS)}"
            raise GateError(msg)
    # Check every rule's gates first, so a missing verdict is caught even behind an early match.
    needed = sorted({g for rule in ship.rules for g in rule.when} - set(verdicts))
    if needed:
        msg = (
            f"Ship rules need verdicts for gate(s) {needed} but only {sorted(verdicts)} were "
            "decided; decide every gate before choosing the arm"
        )
        raise GateError(msg)
    for rule in ship.rules:
        if rule.matches(verdicts):
            return rule.arm
    return ship.default


def _result(
    gate: GateSpec,
    verdict: Verdict,
    counts: Mapping[str, int],
    statistic: Mapping[str, float | int | str | None],
    *,
    test: str,
) -> GateResult:
    return GateResult(
        id=gate.id,
        kind=gate.kind,
        verdict=verdict,
        roster=gate.roster,
        subset=gate.subset,
        metric=gate.metric,
        treatment=gate.treatment,
        baseline=gate.baseline,
        test=test,
        counts=counts,
        statistic=statistic,
        reading=gate.readings.for_verdict(verdict),
    )


def _alpha(gate: GateSpec) -> float:
    if gate.alpha is None:
        msg = f"Gate {gate.id}: a {gate.test} gate needs alpha in the protocol"
        raise GateError(msg)
    return gate.alpha


def _paired(
    gate_id: str, treatment: ArrayLike, baseline: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    t = np.asarray(treatment, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if t.ndim != 1 or b.ndim != 1 or t.size != b.size or t.size == 0:
        msg = (
            f"Gate {gate_id}: needs two non-empty 1-d score arrays of equal length (one score per "
            f"sealed question, same order), got shapes {t.shape} and {b.shape}"
        )
        raise GateError(msg)
    if not (np.isfinite(t).all() and np.isfinite(b).all()):
        msg = f"Gate {gate_id}: scores must be finite; score failed queries as 0, not NaN"
        raise GateError(msg)
    return t, b


def _flags(gate_id: str, name: str, values: ArrayLike) -> NDArray[np.int64]:
    array = np.asarray(values)
    if array.ndim != 1:
        msg = f"Gate {gate_id}: {name} must be a 1-d array of 0/1 flags, got shape {array.shape}"
        raise GateError(msg)
    if array.size and not np.isin(array, (0, 1)).all():
        msg = f"Gate {gate_id}: {name} must hold only 0/1 (or booleans), got {array.tolist()!r:.80}"
        raise GateError(msg)
    return array.astype(np.int64)


def _num(value: float | int | str | None) -> float:
    if not is_number(value):
        msg = f"Expected a number in the gate statistic, got {value!r}"
        raise GateError(msg)
    return float(value)

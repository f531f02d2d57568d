"""Paired significance tests over per-query scores of a treatment and a baseline arm.

Every random knob (seed, resamples, confidence) is an explicit argument with a fixed default and is
echoed in the result, so the results file records exactly what produced each number. Resampling is
vectorised in blocks of at most 1,000 resamples (fewer for very long rosters) to bound memory;
the block size depends only on n, so a result is a function of (data, seed, resamples) alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import binomtest

from engine.checks import is_int

_BLOCK = 1_000
# Upper bound on the cells of one resampling block (about 80 MB of float64), for very long rosters.
_MAX_CELLS = 10_000_000


class StatsError(ValueError):
    """Inputs or settings that a statistical test cannot use."""


@dataclass(frozen=True, kw_only=True)
class BootstrapResult:
    """Mean paired difference (treatment − baseline) with its percentile bootstrap CI."""

    mean_diff: float
    ci_low: float
    ci_high: float
    n: int
    resamples: int
    seed: int
    confidence: float

    def __post_init__(self) -> None:
        _check_resamples(self.resamples)
        _check_confidence(self.confidence)
        if self.n < 1:
            msg = f"BootstrapResult.n must be >= 1, got {self.n}"
            raise StatsError(msg)
        if not self.ci_low <= self.ci_high:
            msg = f"BootstrapResult CI is inverted: ci_low={self.ci_low} > ci_high={self.ci_high}"
            raise StatsError(msg)

    def to_dict(self) -> dict[str, float | int]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class SignTestResult:
    """Discordant-pair counts and the exact two-sided sign-test p-value."""

    wins: int
    losses: int
    ties: int
    n_discordant: int
    p_value: float

    def __post_init__(self) -> None:
        if (
            min(self.wins, self.losses, self.ties) < 0
            or self.n_discordant != self.wins + self.losses
        ):
            msg = (
                f"SignTestResult counts are inconsistent: wins={self.wins}, losses={self.losses}, "
                f"ties={self.ties}, n_discordant={self.n_discordant}"
            )
            raise StatsError(msg)
        _check_p(self.p_value)

    def to_dict(self) -> dict[str, float | int]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class RandomizationResult:
    """Observed mean paired difference and its two-sided sign-flip randomization p-value."""

    mean_diff: float
    p_value: float
    resamples: int
    seed: int

    def __post_init__(self) -> None:
        _check_resamples(self.resamples)
        _check_p(self.p_value)

    def to_dict(self) -> dict[str, float | int]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100, numpy's linear interpolation) of `values`; 0.0 when empty."""
    if not values:
        return 0.0
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def paired_bootstrap(
    treatment: ArrayLike,
    baseline: ArrayLike,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap CI for the mean of per-query differences (treatment − baseline).

    Queries are resampled with replacement as pairs (the paired design of Sakai 2006), and the CI is
    the (1 − confidence)/2 and (1 + confidence)/2 percentiles of the resampled means (the percentile
    interval of Efron & Tibshirani 1993, ch. 13).

    References:
        Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. SIGIR '06, 525-532.
        Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Args:
        treatment: per-query scores of the treatment arm.
        baseline: per-query scores of the baseline arm, in the same query order.
        resamples: number of bootstrap resamples (>= 1).
        seed: seed of the `numpy.random.Generator(PCG64(seed))` that draws the resamples.
        confidence: two-sided confidence level, strictly between 0 and 1.

    Raises:
        StatsError: for unequal lengths, an empty input, non-finite values, resamples < 1 or a
            confidence outside (0, 1).
    """
    _check_resamples(resamples)
    _check_seed(seed)
    _check_confidence(confidence)
    diffs = _paired_differences(treatment, baseline)
    n = diffs.size
    shift, centred, means = _resampled_means(diffs, resamples, seed)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return BootstrapResult(
        mean_diff=shift + float(centred.mean()),
        ci_low=shift + float(low),
        ci_high=shift + float(high),
        n=n,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


@dataclass(frozen=True, kw_only=True)
class BootstrapPValues:
    """One-sided bootstrap p-values for the two claims a bootstrap gate can make.

    ``above_margin`` tests "the mean difference exceeds the margin" (PASS), ``below_zero`` tests "it
    is below zero" (FAIL); ``two_sided`` = min(1, 2 × the smaller), the p-value a family correction
    compares with its alpha.
    """

    above_margin: float
    below_zero: float
    margin: float
    resamples: int
    seed: int

    def __post_init__(self) -> None:
        _check_p(self.above_margin)
        _check_p(self.below_zero)

    @property
    def two_sided(self) -> float:
        return min(1.0, 2.0 * min(self.above_margin, self.below_zero))


def bootstrap_p_values(
    treatment: ArrayLike,
    baseline: ArrayLike,
    *,
    margin: float = 0.0,
    resamples: int = 10_000,
    seed: int = 0,
) -> BootstrapPValues:
    """Bootstrap p-values of a paired difference, from the same resamples as `paired_bootstrap`.

    With B resampled means m*, ``above_margin`` = (#{m* <= margin} + 1) / (B + 1) and
    ``below_zero`` = (#{m* >= 0} + 1) / (B + 1): the share of resamples that contradict the claim,
    counting the observed sample once so that p is never 0 (Davison & Hinkley 1997, eq. 4.11).
    The same seed and resamples draw the same resamples as `paired_bootstrap`, so the p-values and
    the CI describe one bootstrap distribution.

    References:
        Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their Application. CUP.

    Raises:
        StatsError: as `paired_bootstrap`.
    """
    _check_resamples(resamples)
    _check_seed(seed)
    shift, _, means = _resampled_means(_paired_differences(treatment, baseline), resamples, seed)
    # Compare in the centred frame (m* - shift) so that a constant difference stays exact.
    at_or_below = int(np.count_nonzero(means <= margin - shift))
    at_or_above = int(np.count_nonzero(means >= -shift))
    return BootstrapPValues(
        above_margin=(at_or_below + 1) / (resamples + 1),
        below_zero=(at_or_above + 1) / (resamples + 1),
        margin=margin,
        resamples=resamples,
        seed=seed,
    )


@dataclass(frozen=True, kw_only=True)
class Adjusted:
    """One hypothesis of a family after a multiple-comparison correction."""

    p_raw: float
    p_adjusted: float
    reject: bool


def holm(p_values: Sequence[float], alpha: float) -> list[Adjusted]:
    """Holm's step-down correction of a family of p-values, in the order given.

    Sort p ascending (ties keep the given order); the i-th smallest (1-based) of m gets
    p_adj = max over j <= i of min(1, (m − j + 1) · p_(j)), and a hypothesis is rejected when
    p_adj < alpha — the same as stopping at the first p_(i) >= alpha / (m − i + 1) (Holm 1979).
    It controls the family-wise error rate at alpha under any dependence between the tests.

    References:
        Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
        Journal of Statistics, 6(2), 65-70.

    Raises:
        StatsError: an empty family, a p-value outside [0, 1] or alpha outside (0, 1).
    """
    ps = _family(p_values, alpha)
    m = len(ps)
    order = sorted(range(m), key=lambda i: (ps[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return [
        Adjusted(p_raw=p, p_adjusted=a, reject=a < alpha) for p, a in zip(ps, adjusted, strict=True)
    ]


def bonferroni(p_values: Sequence[float], alpha: float) -> list[Adjusted]:
    """Bonferroni's correction: p_adj = min(1, m · p), rejected when p_adj < alpha (conservative)."""
    ps = _family(p_values, alpha)
    m = len(ps)
    return [
        Adjusted(p_raw=p, p_adjusted=min(1.0, m * p), reject=min(1.0, m * p) < alpha) for p in ps
    ]


def _family(p_values: Sequence[float], alpha: float) -> list[float]:
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be strictly between 0 and 1 (e.g. 0.05), got {alpha!r}"
        raise StatsError(msg)
    ps = [float(p) for p in p_values]
    if not ps:
        msg = "a multiple-comparison correction needs at least one p-value"
        raise StatsError(msg)
    for p in ps:
        _check_p(p)
    return ps


def sign_test(treatment: ArrayLike, baseline: ArrayLike) -> SignTestResult:
    """Exact two-sided sign test over discordant pairs; a win is treatment > baseline.

    Ties are counted and left out; under the null a discordant pair is a win with probability
    1/2, so the p-value is the two-sided exact binomial probability (`scipy.stats.binomtest`,
    p = 0.5) of the observed wins among the discordant pairs. With no discordant pairs the
    p-value is 1.0.

    References:
        Dixon, W. J., & Mood, A. M. (1946). The statistical sign test. JASA 41(236), 557-566.
        Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed., section 3.4. Wiley.

    Raises:
        StatsError: for unequal lengths, an empty input or non-finite values.
    """
    diffs = _paired_differences(treatment, baseline)
    wins = int(np.count_nonzero(diffs > 0))
    losses = int(np.count_nonzero(diffs < 0))
    discordant = wins + losses
    p_value = 1.0
    if discordant:
        p_value = min(1.0, float(binomtest(wins, discordant, p=0.5).pvalue))
    return SignTestResult(
        wins=wins,
        losses=losses,
        ties=int(diffs.size - discordant),
        n_discordant=discordant,
        p_value=p_value,
    )


def randomization_test(
    treatment: ArrayLike,
    baseline: ArrayLike,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> RandomizationResult:
    """Two-sided paired randomization test of the mean difference by random sign flips.

    Under the null each per-query difference is as likely to have either sign; each resample
    flips every difference's sign with probability 1/2, and
    p = (#{|T*| >= |T_obs|} + 1) / (resamples + 1), which counts the observed assignment so p is
    never 0 (Smucker, Allan & Carterette 2007).

    References:
        Smucker, M. D., Allan, J., & Carterette, B. (2007). A comparison of statistical significance
        tests for information retrieval evaluation. CIKM '07, 623-632.

    Args:
        treatment: per-query scores of the treatment arm.
        baseline: per-query scores of the baseline arm, in the same query order.
        resamples: number of random sign-flip assignments (>= 1).
        seed: seed of the `numpy.random.Generator(PCG64(seed))` that draws the flips.

    Raises:
        StatsError: for unequal lengths, an empty input, non-finite values or resamples < 1.
    """
    _check_resamples(resamples)
    _check_seed(seed)
    diffs = _paired_differences(treatment, baseline)
    n = diffs.size
    # The sum is the mean times n, a monotone transform, so it orders assignments the same way.
    observed = abs(float(diffs.sum()))
    # Flipped sums that equal the observed one mathematically can differ in the last bits because
    # the terms are added in another sign pattern; count them as "as extreme", not miss them.
    tolerance = 1e-9 * max(1.0, float(np.abs(diffs).sum()))
    rng = np.random.Generator(np.random.PCG64(seed))
    extreme = 0
    for start, stop in _blocks(resamples, n):
        signs = rng.integers(0, 2, size=(stop - start, n), dtype=np.int8) * 2 - 1
        flipped = np.abs((signs * diffs).sum(axis=1))
        extreme += int(np.count_nonzero(flipped >= observed - tolerance))
    return RandomizationResult(
        mean_diff=float(diffs.mean()),
        p_value=(extreme + 1) / (resamples + 1),
        resamples=resamples,
        seed=seed,
    )


def _resampled_means(
    diffs: NDArray[np.float64], resamples: int, seed: int
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """(shift, centred differences, resampled means of the centred differences), seeded.

    Works on differences from one observed value: a constant difference then stays exact (all zeros
    resample to zero) instead of drifting by rounding, and summation cancels less. Both the CI and
    the p-values read these draws, so one seed gives one bootstrap distribution.
    """
    n = diffs.size
    shift = float(diffs[0])
    centred = diffs - shift
    rng = np.random.Generator(np.random.PCG64(seed))
    means = np.empty(resamples, dtype=np.float64)
    for start, stop in _blocks(resamples, n):
        index = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = centred[index].mean(axis=1)
    return shift, centred, means


def _paired_differences(treatment: ArrayLike, baseline: ArrayLike) -> NDArray[np.float64]:
    """treatment − baseline as a 1-d float64 array, after checking both inputs."""
    t = _as_scores(treatment, "treatment")
    b = _as_scores(baseline, "baseline")
    if t.size != b.size:
        msg = (
            f"paired inputs must have equal lengths, got treatment={t.size} and baseline={b.size}; "
            "score both arms on the same queries in the same order"
        )
        raise StatsError(msg)
    return t - b


def _as_scores(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A non-empty, finite, 1-d float64 array, or a StatsError naming the argument."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        msg = f"{name} must be a sequence of numbers, got {values!r:.80}: {error}"
        raise StatsError(msg) from error
    if array.ndim != 1:
        msg = f"{name} must be one-dimensional (one score per query), got shape {array.shape}"
        raise StatsError(msg)
    if array.size == 0:
        msg = f"{name} is empty; a paired test needs at least one query"
        raise StatsError(msg)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        msg = (
            f"{name} has {bad.size} non-finite value(s), first at index {int(bad[0])}: "
            f"{array[bad[0]]}; score failed queries as 0 instead of NaN/inf"
        )
        raise StatsError(msg)
    return array


def _blocks(resamples: int, n: int) -> list[tuple[int, int]]:
    """[start, stop) ranges of resamples, each block small enough to bound memory."""
    size = max(1, min(_BLOCK, _MAX_CELLS // n))
    return [(start, min(start + size, resamples)) for start in range(0, resamples, size)]


def _check_resamples(resamples: int) -> None:
    if not is_int(resamples) or resamples < 1:
        msg = f"resamples must be an integer >= 1, got {resamples!r}"
        raise StatsError(msg)


def _check_seed(seed: int) -> None:
    if not is_int(seed) or seed < 0:
        msg = f"seed must be an integer >= 0, got {seed!r}"
        raise StatsError(msg)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        msg = f"confidence must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}"
        raise StatsError(msg)


def _check_p(p_value: float) -> None:
    if not 0.0 <= p_value <= 1.0:
        msg = f"p-value must lie in [0, 1], got {p_value!r}"
        raise StatsError(msg)

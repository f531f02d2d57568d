"""Paired bootstrap, sign test and randomization test: hand-worked values and seeded behaviour."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from harness.stats import (
    BootstrapResult,
    StatsError,
    paired_bootstrap,
    randomization_test,
    sign_test,
)

TREATMENT = [0.9, 0.4, 0.7, 1.0, 0.2, 0.6, 0.8, 0.5, 0.3, 0.9, 0.7, 0.1]
BASELINE = [0.5, 0.5, 0.6, 0.4, 0.3, 0.2, 0.8, 0.1, 0.4, 0.6, 0.2, 0.1]


def test_bootstrap_is_identical_for_the_same_seed_and_differs_for_another() -> None:
    first = paired_bootstrap(TREATMENT, BASELINE, resamples=2_000, seed=7)
    again = paired_bootstrap(TREATMENT, BASELINE, resamples=2_000, seed=7)
    other = paired_bootstrap(TREATMENT, BASELINE, resamples=2_000, seed=8)
    assert first == again
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)
    assert other.mean_diff == pytest.approx(first.mean_diff, abs=1e-15)  # only the CI is random


def test_bootstrap_records_its_settings_and_the_observed_mean_difference() -> None:
    result = paired_bootstrap([1, 0, 1, 1], [0, 0, 1, 0], resamples=500, seed=3, confidence=0.9)
    assert result.mean_diff == (1 + 0 + 0 + 1) / 4
    assert (result.n, result.resamples, result.seed, result.confidence) == (4, 500, 3, 0.9)
    assert result.to_dict()["resamples"] == 500
    assert 0.0 <= result.ci_low <= result.mean_diff <= result.ci_high <= 1.0


@pytest.mark.parametrize(
    ("treatment", "baseline", "d"),
    [([1.0, 0.5, 0.75, 0.25], [0.75, 0.25, 0.5, 0.0], 0.25), ([0.1] * 7, [0.0] * 7, 0.1)],
)
def test_a_constant_difference_gives_a_degenerate_ci_at_that_difference(
    treatment: list[float], baseline: list[float], d: float
) -> None:
    result = paired_bootstrap(treatment, baseline, resamples=1_500, seed=0)
    assert (result.mean_diff, result.ci_low, result.ci_high) == (d, d, d)


def test_bootstrap_ci_is_the_percentile_interval_of_resampled_means() -> None:
    # Under 1,000 resamples everything is drawn in one block, so a plain loop-free reference
    # with the same generator reproduces the resampled means.
    diffs = np.array(TREATMENT) - np.array(BASELINE)
    rng = np.random.Generator(np.random.PCG64(11))
    index = rng.integers(0, diffs.size, size=(800, diffs.size))
    low, high = np.quantile(diffs[index].mean(axis=1), [0.025, 0.975])
    result = paired_bootstrap(TREATMENT, BASELINE, resamples=800, seed=11)
    assert result.ci_low == pytest.approx(low, abs=1e-12)
    assert result.ci_high == pytest.approx(high, abs=1e-12)
    assert result.ci_low < result.ci_high


def test_bootstrap_spans_several_blocks_and_stays_reproducible() -> None:
    first = paired_bootstrap(TREATMENT, BASELINE, resamples=2_500, seed=1)
    assert first == paired_bootstrap(TREATMENT, BASELINE, resamples=2_500, seed=1)
    diffs = np.array(TREATMENT) - np.array(BASELINE)
    assert diffs.min() <= first.ci_low < first.ci_high <= diffs.max()


@pytest.mark.slow
def test_bootstrap_95_ci_covers_a_known_difference_in_about_95_percent_of_trials() -> None:
    # The percentile interval undercovers slightly at n = 50 (about 94%, as with a z-interval on
    # the plug-in standard deviation), so 400 trials would land below 92% about one seed in
    # fifteen; 2,000 trials put 92% almost four standard errors away and still run in seconds.
    data = np.random.Generator(np.random.PCG64(20240601))
    true_diff = 0.1
    trials = 2_000
    covered = 0
    for trial in range(trials):
        baseline = data.normal(0.5, 0.2, size=50)
        treatment = baseline + true_diff + data.normal(0.0, 0.3, size=50)
        result = paired_bootstrap(treatment, baseline, resamples=2_000, seed=trial)
        covered += int(result.ci_low <= true_diff <= result.ci_high)
    assert 0.92 * trials <= covered <= 0.98 * trials


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"treatment": [1, 2], "baseline": [1]}, "equal lengths"),
        ({"treatment": [], "baseline": []}, "empty"),
        ({"treatment": [1.0, float("nan")], "baseline": [0, 0]}, "non-finite"),
        ({"treatment": [1.0, float("inf")], "baseline": [0, 0]}, "non-finite"),
        ({"treatment": [[1, 2]], "baseline": [[1, 2]]}, "one-dimensional"),
        ({"treatment": ["a"], "baseline": [1]}, "sequence of numbers"),
        ({"treatment": [1], "baseline": [0], "resamples": 0}, "resamples"),
        ({"treatment": [1], "baseline": [0], "seed": -1}, "seed"),
        ({"treatment": [1], "baseline": [0], "confidence": 0.0}, "confidence"),
        ({"treatment": [1], "baseline": [0], "confidence": 1.0}, "confidence"),
        ({"treatment": [1], "baseline": [0], "confidence": 95}, "confidence"),
    ],
)
def test_bootstrap_rejects_unusable_inputs_with_a_clear_error(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(StatsError, match=message):
        paired_bootstrap(**kwargs)  # type: ignore[arg-type]


def test_bootstrap_accepts_a_single_query() -> None:
    assert paired_bootstrap([1], [0], resamples=10) == BootstrapResult(
        mean_diff=1.0, ci_low=1.0, ci_high=1.0, n=1, resamples=10, seed=0, confidence=0.95
    )


def test_sign_test_p_value_is_the_exact_two_sided_binomial_over_discordant_pairs() -> None:
    # 8 wins, 2 losses, 3 ties.
    treatment = [1] * 8 + [0] * 2 + [1, 0, 1]
    baseline = [0] * 8 + [1] * 2 + [1, 0, 1]
    result = sign_test(treatment, baseline)
    assert (result.wins, result.losses, result.ties, result.n_discordant) == (8, 2, 3, 10)
    assert result.p_value == pytest.approx(
        2 * sum(comb(10, i) for i in range(3)) / 2**10, rel=1e-12
    )
    assert sign_test(baseline, treatment).p_value == pytest.approx(result.p_value, rel=1e-12)


def test_sign_test_ignores_ties() -> None:
    without_ties = sign_test([1] * 8 + [0] * 2, [0] * 8 + [1] * 2)
    with_ties = sign_test([1] * 8 + [0] * 2 + [0.5] * 20, [0] * 8 + [1] * 2 + [0.5] * 20)
    assert with_ties.p_value == without_ties.p_value
    assert (with_ties.ties, without_ties.ties) == (20, 0)


def test_sign_test_without_discordant_pairs_has_p_one() -> None:
    result = sign_test([1, 0, 1], [1, 0, 1])
    assert (result.n_discordant, result.ties, result.p_value) == (0, 3, 1.0)
    # Control: ten wins and no losses is significant.
    assert sign_test([1] * 10, [0] * 10).p_value == pytest.approx(2 / 2**10, rel=1e-12)


def test_randomization_test_is_reproducible_for_a_seed() -> None:
    first = randomization_test(TREATMENT, BASELINE, resamples=3_000, seed=5)
    assert first == randomization_test(TREATMENT, BASELINE, resamples=3_000, seed=5)
    assert (first.resamples, first.seed) == (3_000, 5)
    assert first.mean_diff == pytest.approx(sum(TREATMENT) / 12 - sum(BASELINE) / 12, abs=1e-12)


def test_randomization_test_with_all_zero_differences_has_p_one() -> None:
    assert randomization_test([0.3, 0.5, 1.0], [0.3, 0.5, 1.0], resamples=500).p_value == 1.0


def test_randomization_test_of_a_strong_effect_reaches_its_floor() -> None:
    treatment = [1.0 + 0.01 * i for i in range(40)]
    result = randomization_test(treatment, [0.0] * 40, resamples=2_000, seed=0)
    assert result.p_value == 1 / (2_000 + 1)


def test_randomization_test_counts_flips_that_tie_the_observed_statistic() -> None:
    # Differences -0.1, -0.1, -0.1, 0.1 (|sum| = 0.2): the 16 sign patterns give |sum| = 0.4 twice
    # and 0.2 eight times, so the exact p-value is 10/16. In floating point six of those ten sums
    # land a rounding step below the observed one; missing them would give about 4/16.
    result = randomization_test([-0.1, -0.1, -0.1, 0.1], [0, 0, 0, 0], resamples=20_000, seed=2)
    assert result.p_value == pytest.approx(10 / 16, abs=0.02)


def test_randomization_test_rejects_bad_settings() -> None:
    with pytest.raises(StatsError, match="resamples"):
        randomization_test([1], [0], resamples=0)
    with pytest.raises(StatsError, match="equal lengths"):
        randomization_test([1, 2], [0])


def test_percentile_interpolates_linearly_and_is_zero_for_no_values() -> None:
    from harness.stats import percentile

    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([10.0, 20.0], 95) == 10.0 + 0.95 * 10.0
    assert percentile([], 50) == 0.0

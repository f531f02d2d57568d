"""The small statistics of a perf report: latency summaries, top-k agreement, growth exponents.

Percentiles come from `harness.stats.percentile`, the project's one percentile helper.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

import numpy as np

from harness.stats import percentile
from perf.config import TOP_K, PerfError

RBO_P = 0.9
T = TypeVar("T")
P = ParamSpec("P")


def summary(values: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean, max and count of a latency sample (milliseconds in, milliseconds out)."""
    if not values:
        msg = "cannot summarise an empty latency sample; run at least one query"
        raise PerfError(msg)
    return {
        "p50_ms": percentile(values, 50),
        "p95_ms": percentile(values, 95),
        "mean_ms": float(np.mean(values)),
        "max_ms": float(np.max(values)),
        "n": len(values),
    }


def timed(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[T, float]:
    """`call(*args, **kwargs)`'s result and its wall time in milliseconds."""
    t0 = time.perf_counter_ns()
    result = call(*args, **kwargs)
    return result, (time.perf_counter_ns() - t0) / 1e6


def median(values: Sequence[float]) -> float:
    """The 50th percentile (`harness.stats.percentile`); 0.0 for an empty sample."""
    return percentile(values, 50)


def loglog_exponent(sizes: Sequence[float], values: Sequence[float]) -> float | None:
    """Slope b of the least-squares fit log(value) = a + b·log(size); None with < 2 usable points."""
    pairs = [(s, v) for s, v in zip(sizes, values, strict=True) if s > 0 and v > 0]
    if len({s for s, _ in pairs}) < 2:
        return None
    x = np.log([s for s, _ in pairs])
    y = np.log([v for _, v in pairs])
    return float(np.polyfit(x, y, 1)[0])


def rbo_at_k(a: Sequence[str], b: Sequence[str], k: int = TOP_K, p: float = RBO_P) -> float:
    """Rank-biased overlap of two top-k lists, truncated at k and normalised so equal lists score 1.

    Webber, Moffat & Zobel (2010), "A similarity measure for indefinite rankings", ACM TOIS 28(4):
    RBO = (1 − p) Σ_{d=1..k} p^(d−1) · |A_d ∩ B_d| / d, divided here by its maximum 1 − p^k.
    Two empty lists agree (1.0).
    """
    if not a and not b:
        return 1.0
    total = 0.0
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    for depth in range(1, k + 1):
        if depth <= len(a):
            seen_a.add(a[depth - 1])
        if depth <= len(b):
            seen_b.add(b[depth - 1])
        total += p ** (depth - 1) * len(seen_a & seen_b) / depth
    return (1 - p) * total / (1 - p**k)


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int = TOP_K) -> float:
    """|top-k(a) ∩ top-k(b)| / max(len); two empty lists agree (1.0)."""
    left, right = set(a[:k]), set(b[:k])
    denominator = max(len(left), len(right))
    return 1.0 if denominator == 0 else len(left & right) / denominator

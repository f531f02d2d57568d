"""What the harness's paired bootstrap costs per arm pair at the registered query and resample counts."""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from arms import registry
from harness.stats import paired_bootstrap
from perf.config import PerfConfig
from perf.measures import median


def measure_bootstrap(cfg: PerfConfig) -> dict[str, Any]:
    """Seconds of one `paired_bootstrap` per arm pair at the configured queries and resamples."""
    names = registry.names()
    rng = np.random.default_rng(cfg.seed)
    # Per-query scores in [0, 1); the bootstrap's cost depends on their count, not their values.
    scores = {name: rng.random(cfg.bootstrap_queries) for name in names}
    seconds: list[float] = []
    for a, b in itertools.combinations(names, 2):
        t0 = time.perf_counter()
        paired_bootstrap(scores[a], scores[b], resamples=cfg.bootstrap_resamples, seed=cfg.seed)
        seconds.append(time.perf_counter() - t0)
    return {
        "queries": cfg.bootstrap_queries,
        "resamples": cfg.bootstrap_resamples,
        "pairs": len(seconds),
        "seconds_per_pair_p50": median(seconds),
        "seconds_per_pair_max": float(np.max(seconds)),
        "seconds_total": float(np.sum(seconds)),
    }

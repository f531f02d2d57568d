"""What one perf run measures and with which knobs (`PerfConfig`), its error type and progress lines."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from engine.checks import is_int
from harness.synthetic import SyntheticConfig

VectorMode = Literal["static", "embed"]
VECTOR_MODES: tuple[VectorMode, ...] = ("static", "embed")
# Decay needs an explicit `now`; a fixed one keeps runs comparable (the synthetic timeline is 2026).
NOW = datetime(2027, 1, 1, tzinfo=UTC)
TOP_K = 10
GIB = 1024**3
MIB = 2**20
_POSITIVE = (
    "queries",
    "bm25_queries",
    "ingest_chunks",
    "bootstrap_queries",
    "bootstrap_resamples",
    "rss_queries",
    "embed_queries",
)

_NON_NEGATIVE = ("hook_runs", "real_size", "cli_runs", "embed_rate_texts", "query_load_queries")


class PerfError(RuntimeError):
    """The benchmark could not be set up or run as configured."""


@dataclass(frozen=True, kw_only=True)
class PerfConfig:
    """Every knob of one perf run; recorded in `perf.json`.

    `sizes` are target chunk counts (the corpus generator is asked for enough sessions and the actual
    count is reported). `embedder` is the real embedder (ingest ratio, query-embedding cost, and the
    vectors when `vectors == "embed"`).
    """

    sizes: tuple[int, ...] = (10_000, 30_000, 100_000)
    seed: int = 1234
    embedder: str = "minilm"
    vectors: VectorMode = "static"
    queries: int = 200
    bm25_queries: int = 60
    ingest_chunks: int = 300
    bootstrap_queries: int = 1000
    bootstrap_resamples: int = 10_000
    rss_queries: int = 50
    embed_queries: int = 100
    warmup: int = 5
    hook_runs: int = 30  # UserPromptSubmit hook processes timed per mode; 0 skips the measurement
    # The real-vector tier's chunk count (the run embedder's vectors, cached): 0 skips it. A size that
    # is also in `sizes` reuses that corpus.
    real_size: int = 30_000
    cli_runs: int = 20  # `recallbench search` processes timed per mode; 0 skips the measurement
    embed_rate_texts: int = 400  # chunk texts for torch vs ONNX encode rates; 0 skips them
    query_load_queries: int = 50  # queries embedded by a fresh ONNX process; 0 skips it
    cache_dir: Path | None = (
        None  # real vectors kept between runs; None: perf.vector_cache's default
    )
    # A results folder whose shipped arm the prompt hook is also timed with (`recallbench ship` into
    # the hook's home, then a server); None: only the default arm.
    hook_ship: Path | None = None
    chunks_per_session: float = 31.5
    base: SyntheticConfig = field(default_factory=SyntheticConfig)
    work_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.sizes or any(not is_int(s) or s < 1 for s in self.sizes):
            msg = (
                f"PerfConfig.sizes must be positive ints such as (10000, 30000), got {self.sizes!r}"
            )
            raise PerfError(msg)
        if list(self.sizes) != sorted(set(self.sizes)):
            msg = f"PerfConfig.sizes must be strictly increasing, got {self.sizes!r}; sort them"
            raise PerfError(msg)
        if self.vectors not in VECTOR_MODES:
            msg = (
                f"PerfConfig.vectors must be one of {', '.join(VECTOR_MODES)}, got {self.vectors!r}"
            )
            raise PerfError(msg)
        for name in _POSITIVE:
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                msg = f"PerfConfig.{name} must be a positive int, got {value!r}"
                raise PerfError(msg)
        for name in _NON_NEGATIVE:
            value = getattr(self, name)
            if not is_int(value) or value < 0:
                msg = f"PerfConfig.{name} must be an int >= 0, got {value!r} (0 skips it)"
                raise PerfError(msg)
        if self.warmup < 0:
            msg = f"PerfConfig.warmup must be >= 0, got {self.warmup}"
            raise PerfError(msg)
        if not self.chunks_per_session > 0:
            msg = f"PerfConfig.chunks_per_session must be > 0, got {self.chunks_per_session}"
            raise PerfError(msg)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sizes"] = list(self.sizes)
        out["base"] = self.base.to_dict()
        out["work_dir"] = None if self.work_dir is None else str(self.work_dir)
        out["cache_dir"] = None if self.cache_dir is None else str(self.cache_dir)
        out["hook_ship"] = None if self.hook_ship is None else str(self.hook_ship)
        return out


class Progress:
    """Timestamped progress lines on stderr (a perf run takes minutes)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"[perf {elapsed:7.1f}s load {load:4.1f}] {message}", file=sys.stderr, flush=True)

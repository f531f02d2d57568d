"""`python -m perf`: the quick preset, the flags that override it, and the sizes it parses."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.synthetic import SyntheticConfig
from perf.cli import QUICK, config, parse_sizes, parser


def test_quick_is_the_small_preset_and_flags_override_it() -> None:
    quick = config(parser().parse_args(["--quick"]))
    assert quick.sizes == (2_000, 5_000)
    assert quick.queries == 60
    assert quick.bm25_queries == 20
    assert quick.base == SyntheticConfig.small()
    assert quick.hook_runs == QUICK["hook_runs"] == 10
    flags = "--quick --sizes 1_000,3000 --queries 7 --seed 3 --vectors embed --embedder hash"
    cfg = config(parser().parse_args([*flags.split(), "--work-dir", "w"]))
    assert (cfg.sizes, cfg.queries, cfg.seed) == ((1_000, 3_000), 7, 3)
    assert (cfg.vectors, cfg.embedder, cfg.work_dir) == ("embed", "hash", Path("w"))
    assert cfg.bm25_queries == 20  # the rest of the quick preset stays
    assert (quick.real_size, quick.cli_runs, quick.embed_rate_texts) == (2_000, 8, 150)
    off = "--quick --real-size 0 --cli-runs 0 --embed-rate-texts 0 --cache-dir c"
    cfg = config(parser().parse_args(off.split()))
    assert (cfg.real_size, cfg.cli_runs, cfg.embed_rate_texts) == (0, 0, 0)
    assert cfg.cache_dir == Path("c")
    with pytest.raises(SystemExit):
        parser().parse_args(["--real-size", "-5"])


def test_without_flags_the_full_run_and_its_output_file_are_the_defaults() -> None:
    args = parser().parse_args([])
    assert args.out == Path("perf.json")
    assert args.search_process is None
    assert config(args).sizes == (10_000, 30_000, 100_000)
    assert config(args).real_size == 30_000  # the real-vector tier reuses the 30k corpus
    assert config(args).cache_dir is None  # perf.vector_cache's default folder


def test_sizes_must_be_comma_separated_integers() -> None:
    assert parse_sizes("10000, 30_000,") == (10_000, 30_000)
    with pytest.raises(argparse.ArgumentTypeError, match="comma-separated integers"):
        parse_sizes("10k,30k")

"""`python -m perf`: measure the cost profile, print the table and write `perf.json` (`nox -s perf`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.synthetic import SyntheticConfig
from perf.config import VECTOR_MODES, PerfConfig, Progress
from perf.report import format_table, write_report
from perf.run import run
from perf.search_process import search_process
from perf.vector_cache import CACHE_ENV, default_cache_dir

# The default generator plants 170 commits at most 3 per session, too many for a 2k-chunk corpus; the
# quick run starts from the small configuration (every feature, fewer of each).
QUICK: dict[str, Any] = {
    "sizes": (2_000, 5_000),
    "queries": 60,
    "bm25_queries": 20,
    "ingest_chunks": 64,
    "hook_runs": 10,
    "real_size": 2_000,
    "cli_runs": 8,
    "embed_rate_texts": 150,
    "query_load_queries": 30,
    "base": SyntheticConfig.small(),
}


def parse_sizes(text: str) -> tuple[int, ...]:
    """`10000,30_000,100000` as a tuple of ints."""
    try:
        return tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        msg = f"--sizes must be comma-separated integers such as 10000,30000,100000, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _count(text: str) -> int:
    """A count of 0 or more, `30_000` allowed."""
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = -1
    if value < 0:
        msg = f"expected a whole number >= 0 (0 skips the measurement), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def parser() -> argparse.ArgumentParser:
    """The command line of `python -m perf`."""
    out = argparse.ArgumentParser(
        prog="python -m perf",
        description="recallbench's cost profile at 10k, 30k and 100k chunks (`nox -s perf`).",
    )
    out.add_argument("--sizes", type=parse_sizes, default=None, help="e.g. 10000,30000,100000")
    out.add_argument("--out", type=Path, default=Path("perf.json"))
    out.add_argument(
        "--quick",
        action="store_true",
        help="2k and 5k chunks, a 2k real-vector tier, fewer queries and runs",
    )
    out.add_argument("--seed", type=int, default=1234)
    out.add_argument("--queries", type=int, default=None)
    out.add_argument("--embedder", default="minilm")
    out.add_argument("--vectors", choices=VECTOR_MODES, default="static")
    out.add_argument("--work-dir", type=Path, default=None, help="keep corpora and databases here")
    out.add_argument(
        "--real-size",
        type=_count,
        default=None,
        help="chunks of the real-vector tier, embedded with --embedder (default 30000, quick 2000; "
        "0 skips it); a size also in --sizes reuses that corpus",
    )
    out.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where real vectors are kept between runs, keyed by chunk-text sha256 and embedder id "
        f"(default ${CACHE_ENV}, else ~/.cache/recallbench/perf; now {default_cache_dir()})",
    )
    out.add_argument(
        "--cli-runs",
        type=_count,
        default=None,
        help="`recallbench search` processes timed with and without a server (default 20; 0 skips)",
    )
    out.add_argument(
        "--embed-rate-texts",
        type=_count,
        default=None,
        help="chunk texts for the torch vs ONNX encode rates (default 400; 0 skips them)",
    )
    out.add_argument(
        "--hook-ship",
        type=Path,
        default=None,
        metavar="RESULTS_DIR",
        help="also time the prompt hook with a server after `recallbench ship RESULTS_DIR` in its home "
        "(the arm that run's pre-registered rule chose, e.g. a fitted one)",
    )
    out.add_argument("--search-process", type=Path, default=None, help=argparse.SUPPRESS)
    return out


def config(args: argparse.Namespace) -> PerfConfig:
    """The run's configuration: the quick preset if asked for, then the flags given."""
    values: dict[str, Any] = dict(QUICK) if args.quick else {}
    if args.sizes is not None:
        values["sizes"] = args.sizes
    for name in ("queries", "real_size", "cli_runs", "embed_rate_texts", "cache_dir", "hook_ship"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    return PerfConfig(
        seed=args.seed,
        embedder=args.embedder,
        vectors=args.vectors,
        work_dir=args.work_dir,
        **values,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.search_process is not None:
        print(json.dumps(search_process(args.search_process)))
        return 0
    cfg = config(args)
    say = Progress()
    say(
        f"perf run: sizes {list(cfg.sizes)}, embedder {cfg.embedder}, vectors {cfg.vectors}, "
        f"real-vector tier {cfg.real_size or 'off'} (vector cache {cfg.cache_dir or default_cache_dir()})"
    )
    report = run(cfg, say)
    write_report(report, args.out)
    print(format_table(report))
    print(f"\nwrote {args.out}")
    return 0

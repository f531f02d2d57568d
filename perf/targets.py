"""The issue's cost targets, judged at the largest corpus, and how each cost grows with the corpus."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from perf.config import GIB
from perf.measures import loglog_exponent


@dataclass(frozen=True, kw_only=True)
class Target:
    """One target of the issue: `value op limit`, judged at the largest corpus measured."""

    name: str
    limit: float
    op: Literal["<=", ">="]
    unit: str

    def judge(self, value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return "MISSING"
        ok = value <= self.limit if self.op == "<=" else value >= self.limit
        return "PASS" if ok else "MISS"


ARM_P50_TARGETS_MS: dict[str, float] = {
    "vector": 2.0,
    "fts": 10.0,
    "rrf": 15.0,
    "walk": 60.0,
    "fallback": 15.0,
    "cc": 15.0,
    "neighbors": 15.0,
    "ltr": 25.0,  # the learned reranker scores up to 300 candidates; query embedding excluded
}
P95_OVER_P50 = 3.0


def growth(sizes: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Log-log exponent of every cost from the smallest to the largest corpus."""
    n = [float(s["chunks"]) for s in sizes]
    series: dict[str, list[float]] = {
        "import_s": [s["import_s"] for s in sizes],
        "index_build_s": [s["index_build_s"] for s in sizes],
        "db_bytes": [s["db_bytes"] for s in sizes],
        "index_bytes": [s["index_bytes"] for s in sizes],
        "fts5_p50": [s["fts_vs_bm25"]["fts5"]["p50_ms"] for s in sizes],
        "rank_bm25_p50": [s["fts_vs_bm25"]["rank_bm25"]["p50_ms"] for s in sizes],
        "hnsw_p50": [s["hnsw_vs_exact"]["hnsw"]["p50_ms"] for s in sizes],
        "exact_p50": [s["hnsw_vs_exact"]["exact"]["p50_ms"] for s in sizes],
        "scoped_nearest_p50": [s["hnsw_vs_exact"]["scoped_nearest"]["p50_ms"] for s in sizes],
    }
    for arm in sizes[0]["arms"]:
        series[f"{arm}_p50"] = [s["arms"][arm]["p50_ms"] for s in sizes]
        series[f"{arm}_p95"] = [s["arms"][arm]["p95_ms"] for s in sizes]
    return {name: loglog_exponent(n, values) for name, values in series.items()}


def judge_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of the issue with its value, judged PASS or MISS at the largest corpus."""
    largest = report["sizes"][-1]
    chunks = int(largest["chunks"])
    checks: list[tuple[Target, float | None]] = [
        (
            Target(name="ingest / raw encode", limit=0.85, op=">=", unit="x"),
            report["ingest"]["ratio"],
        )
    ]
    for arm, limit in ARM_P50_TARGETS_MS.items():
        row = largest["arms"].get(arm)
        checks.append(
            (
                Target(name=f"{arm} p50", limit=limit, op="<=", unit="ms"),
                None if row is None else float(row["p50_ms"]),
            )
        )
    for arm, row in largest["arms"].items():
        ratio = float(row["p95_ms"]) / max(float(row["p50_ms"]), 1e-9)
        checks.append((Target(name=f"{arm} p95/p50", limit=P95_OVER_P50, op="<=", unit="x"), ratio))
    checks.extend(
        [
            (
                Target(name="hnswlib recall@10", limit=0.98, op=">=", unit=""),
                float(largest["hnsw_vs_exact"]["recall_at_10"]),
            ),
            (
                Target(name="bootstrap s / arm pair", limit=1.0, op="<=", unit="s"),
                float(report["bootstrap"]["seconds_per_pair_p50"]),
            ),
            (
                Target(name="search process peak RSS", limit=2.0, op="<=", unit="GiB"),
                float(report["search_process"]["peak_rss_bytes"]) / GIB,
            ),
        ]
    )
    hook = report.get("hook")
    if hook:
        for mode, limit in hook["targets_ms"].items():
            checks.append(
                (
                    Target(
                        name=f"prompt hook p95 ({mode.replace('_', ' ')})",
                        limit=limit,
                        op="<=",
                        unit="ms",
                    ),
                    float(hook[mode]["p95_ms"]),
                )
            )
    return [
        {
            "name": t.name,
            "value": value,
            "op": t.op,
            "limit": t.limit,
            "unit": t.unit,
            "status": t.judge(value),
            "at_chunks": chunks,
        }
        for t, value in checks
    ]

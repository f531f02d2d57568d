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
    "ltrb": 25.0,  # ltr, plus the file bridge's lexical reads when the question names an identifier
    "sbridge": 25.0,  # bridge, its vector channel 100 deep and rescored by sentence vectors
    "psbridge": 25.0,  # sbridge, plus one chunk read for the term share of its best lexical hit
    "tpsbridge": 25.0,  # psbridge, plus a read of 20 candidates' times for a question about the present
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


Check = tuple[
    Target, float | None, int | None
]  # the target, its value, the corpus it was judged on
REAL_RECALL_TARGET = 0.99
REAL_VECTOR_P50_MS = 2.0


def judge_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of the issues with its value, judged PASS or MISS.

    The static-tier targets are judged at the largest corpus, the real-vector ones at the real tier,
    the search command's at the corpus it searched; `at_chunks` says which (None: no corpus involved).
    Targets of a measurement the run skipped are left out.
    """
    checks = [
        *_static_checks(report),
        *_hook_checks(report),
        *_real_checks(report.get("real_vectors")),
        *_search_checks(report.get("search_command")),
        *_catchup_checks(report.get("lexical_catchup")),
        *_embedding_checks(report.get("embedding_forms") or {}),
        *_sanitizer_checks(report.get("sanitizer")),
    ]
    return [
        {
            "name": t.name,
            "value": value,
            "op": t.op,
            "limit": t.limit,
            "unit": t.unit,
            "status": t.judge(value),
            "at_chunks": at,
        }
        for t, value, at in checks
    ]


def _static_checks(report: dict[str, Any]) -> list[Check]:
    largest = report["sizes"][-1]
    chunks = int(largest["chunks"])
    checks: list[Check] = [
        (
            Target(name="ingest / raw encode", limit=0.85, op=">=", unit="x"),
            report["ingest"]["ratio"],
            chunks,
        )
    ]
    for arm, limit in ARM_P50_TARGETS_MS.items():
        row = largest["arms"].get(arm)
        value = None if row is None else float(row["p50_ms"])
        checks.append((Target(name=f"{arm} p50", limit=limit, op="<=", unit="ms"), value, chunks))
    for arm, row in largest["arms"].items():
        ratio = float(row["p95_ms"]) / max(float(row["p50_ms"]), 1e-9)
        target = Target(name=f"{arm} p95/p50", limit=P95_OVER_P50, op="<=", unit="x")
        checks.append((target, ratio, chunks))
    recall = float(largest["hnsw_vs_exact"]["recall_at_10"])
    rss = float(report["search_process"]["peak_rss_bytes"]) / GIB
    return [
        *checks,
        (Target(name="hnswlib recall@10", limit=0.98, op=">=", unit=""), recall, chunks),
        (
            Target(name="bootstrap s / arm pair", limit=1.0, op="<=", unit="s"),
            float(report["bootstrap"]["seconds_per_pair_p50"]),
            None,
        ),
        (Target(name="search process peak RSS", limit=2.0, op="<=", unit="GiB"), rss, chunks),
    ]


def _hook_checks(report: dict[str, Any]) -> list[Check]:
    hook = report.get("hook")
    if not hook:
        return []
    return [
        (
            Target(
                name=f"prompt hook p95 ({mode.replace('_', ' ')})", limit=limit, op="<=", unit="ms"
            ),
            float(hook[mode]["p95_ms"]),
            int(hook["corpus_chunks"]),
        )
        for mode, limit in hook["targets_ms"].items()
    ]


def _real_checks(real: dict[str, Any] | None) -> list[Check]:
    """Issue 17: hnswlib recall@10 and the vector arm's p50 on real vectors."""
    if not real:
        return []
    chunks = int(real["chunks"])
    vector = real["arms"].get("vector")
    return [
        (
            Target(name="real hnswlib recall@10", limit=REAL_RECALL_TARGET, op=">=", unit=""),
            float(real["hnsw_vs_exact"]["recall_at_10"]),
            chunks,
        ),
        (
            Target(name="real vector p50", limit=REAL_VECTOR_P50_MS, op="<=", unit="ms"),
            None if vector is None else float(vector["p50_ms"]),
            chunks,
        ),
    ]


CATCHUP_S = 0.5


def _catchup_checks(catchup: dict[str, Any] | None) -> list[Check]:
    """Issue 17: the lexical snapshot catching up after one session, identical to a rebuild."""
    if not catchup:
        return []
    chunks = int(catchup["chunks_before"])
    return [
        (
            Target(name="lexical catch-up (one session)", limit=CATCHUP_S, op="<=", unit="s"),
            float(catchup["catchup_s"]),
            chunks,
        ),
        (
            Target(name="catch-up top 10 = rebuild's", limit=1.0, op=">=", unit=""),
            float(catchup["identical"]),
            chunks,
        ),
    ]


def _search_checks(cli: dict[str, Any] | None) -> list[Check]:
    """Issue 17: `recallbench search` process start to exit, without and with a server."""
    if not cli:
        return []
    limits = cli["targets"]
    chunks = int(cli["chunks"])
    return [
        (
            Target(
                name="search p95 (no server)", limit=limits["no_server_p95_s"], op="<=", unit="s"
            ),
            float(cli["no_server"]["p95_ms"]) / 1000,
            chunks,
        ),
        (
            Target(
                name="search p95 (with server)",
                limit=limits["with_server_p95_s"],
                op="<=",
                unit="s",
            ),
            float(cli["with_server"]["p95_ms"]) / 1000,
            chunks,
        ),
        (
            Target(
                name="search peak RSS (no server)",
                limit=limits["no_server_peak_rss_mb"],
                op="<=",
                unit="MB",
            ),
            float(cli["no_server"]["peak_rss_bytes"]) / 1e6,
            chunks,
        ),
    ]


def _sanitizer_checks(san: dict[str, Any] | None) -> list[Check]:
    """The worst message's redaction (`perf.sanitizer`): no text a message may hold costs more."""
    if not san:
        return []
    target = Target(name="worst message redact", limit=float(san["target_s"]), op="<=", unit="s")
    return [(target, float(san["worst_s"]), None)]


def _embedding_checks(forms: dict[str, Any]) -> list[Check]:
    """Issue 17: a fresh process's query embedding (no torch), and ONNX encode rates over torch's."""
    checks: list[Check] = []
    query = forms.get("query_load")
    if query:
        limits = query["targets"]
        checks += [
            (
                Target(name="fresh query: model load", limit=limits["load_s"], op="<=", unit="s"),
                float(query["load_s"]),
                None,
            ),
            (
                Target(name="fresh query: embed p50", limit=limits["p50_ms"], op="<=", unit="ms"),
                float(query["query_ms"]["p50_ms"]),
                None,
            ),
            (
                Target(name="fresh query: torch imported", limit=0.0, op="<=", unit=""),
                1.0 if query["torch_imported"] else 0.0,
                None,
            ),
        ]
    rates = forms.get("rates")
    if rates:
        for name, limit in rates["targets"].items():
            label = name.removeprefix("onnx_").removesuffix("_default_batch")
            target = Target(name=f"encode {label} / torch", limit=limit, op=">=", unit="x")
            checks.append((target, float(rates[name]["speedup_vs_torch"]), None))
    return checks

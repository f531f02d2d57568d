"""Smoke test of the perf machinery at a tiny size: every figure is present and finite (no timings judged)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arms import registry
from engine.checks import is_number
from engine.memory import Memory
from harness.synthetic import SyntheticConfig
from perf.arms import EXTRA_SPECS, WINDOW_ARMS, WINDOWS
from perf.config import PerfConfig, PerfError
from perf.corpus import load_queries, to_query
from perf.hooks import distinct_prompts
from perf.measures import loglog_exponent, overlap_at_k, rbo_at_k
from perf.report import format_table, write_report
from perf.run import run
from perf.sanitizer import UNITS


def _numbers(obj: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """Every int/float leaf of a JSON-like tree with its path (bools excluded)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _numbers(value, f"{path}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _numbers(value, f"{path}[{i}]")
    elif is_number(obj):
        yield path, float(obj)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("perf")


@pytest.fixture(scope="module")
def report(work: Path) -> dict[str, Any]:
    cfg = PerfConfig(
        sizes=(250, 700),
        seed=7,
        embedder="hash",
        vectors="embed",
        queries=12,
        bm25_queries=6,
        ingest_chunks=30,
        bootstrap_queries=200,
        bootstrap_resamples=200,
        rss_queries=3,
        hook_runs=2,
        warmup=1,
        chunks_per_session=10.0,
        base=SyntheticConfig.small(seed=7),
        work_dir=work,
        real_size=250,
        cli_runs=2,
        embed_rate_texts=0,  # torch and ONNX encode rates: judged from hand-made figures elsewhere
        query_load_queries=0,
        cache_dir=work / "vector-cache",
    )
    return run(cfg)


def test_real_vectors_come_through_the_cache_and_the_real_tier_reuses_its_corpus(
    report: dict[str, Any], work: Path
) -> None:
    first = report["sizes"][0]
    assert first["vectors"]["embedded"] == first["vectors"]["distinct_texts"] > 0
    assert first["vectors"]["cache_hits"] == 0
    assert list((work / "vector-cache" / "vectors").glob("*/shard-*.npz"))
    real = report["real_vectors"]
    assert real["chunks"] == first["chunks"]  # the 250 corpus, whose vectors are already stored
    assert real["vectors"]["texts"] == 0
    assert sorted(real["arms"]) == registry.names()
    assert 0.0 <= real["hnsw_vs_exact"]["recall_at_10"] <= 1.0
    names = {t["name"]: t for t in report["targets"]}
    assert names["real vector p50"]["at_chunks"] == first["chunks"]


def test_the_search_command_is_timed_without_and_with_a_server(report: dict[str, Any]) -> None:
    cli = report["search_command"]
    assert cli["chunks"] == report["sizes"][-1]["chunks"]
    assert cli["no_server"]["n"] == cli["with_server"]["n"] == 2
    assert cli["no_server"]["answered_by_server"] == 0
    assert cli["with_server"]["answered_by_server"] == 2  # the server really answered
    assert cli["no_server"]["peak_rss_bytes"] > 10 * 2**20
    assert cli["store"]["stored"] == 0  # an embed run already stored the command's vectors
    names = {t["name"] for t in report["targets"]}
    assert {"search p95 (no server)", "search p95 (with server)"} <= names
    assert "encode fp32 / torch" not in names  # skipped in this run, so not judged
    assert report["embedding_forms"] == {}


def test_prompt_hook_latency_is_measured_with_and_without_a_server(report: dict[str, Any]) -> None:
    hook = report["hook"]
    assert hook["lexical_only"]["n"] == 2
    assert hook["with_server"]["n"] == 2
    assert hook["lexical_only"]["p95_ms"] >= hook["lexical_only"]["p50_ms"] > 0
    # the server path really answered the query embedding (else both modes would be lexical)
    assert hook["with_server"]["answered_by_server"] >= 2
    # hooks run from Python's bytecode cache, as on a user's machine, whatever this environment says
    assert hook["bytecode_cache"].startswith("enabled")
    names = {t["name"] for t in report["targets"]}
    assert {"prompt hook p95 (lexical only)", "prompt hook p95 (with server)"} <= names


def test_every_figure_of_the_issue_is_present_for_every_size(report: dict[str, Any]) -> None:
    assert [s["size"] for s in report["sizes"]] == [250, 700]
    for size in report["sizes"]:
        assert size["chunks"] > 0
        # every registered arm, the extra specs (the bridges with sentence vectors, stored static),
        # and four arms again over two time windows (`search --since`): half the chunks, and 1%
        windowed = [f"{name}@{window}" for window in WINDOWS for name in WINDOW_ARMS]
        assert windowed[:4] == ["fts@window", "vector@window", "rrf@window", "ltr@window"]
        assert windowed[4:] == ["fts@narrow", "vector@narrow", "rrf@narrow", "ltr@narrow"]
        assert sorted(size["arms"]) == sorted([*registry.names(), *EXTRA_SPECS, *windowed])
        assert size["vectors"]["sentence_texts"] > 0
        for row in size["arms"].values():
            assert row["n"] == 12
            assert row["p95_ms"] >= row["p50_ms"] >= 0.0
        bm25 = size["fts_vs_bm25"]
        assert bm25["queries"] == 6
        # the FTS5 "floor" figures needed SQL of perf's own and are gone; every other figure stays
        assert set(bm25) == {
            "queries",
            "fts5",
            "snapshot",
            "snapshot_identical_top10",
            "snapshot_max_score_diff",
            "rank_bm25",
            "rank_bm25_build_s",
            "speedup_p50",
            "overlap_at_10",
            "rbo_at_10",
            "rbo_p",
        }
        assert 0.0 <= bm25["overlap_at_10"] <= 1.0
        assert 0.0 <= bm25["rbo_at_10"] <= 1.0
        # the arms' in-memory snapshot answers exactly what FTS5 answers
        assert bm25["snapshot"]["n"] == 6
        assert bm25["snapshot_identical_top10"] == 1.0
        assert bm25["snapshot_max_score_diff"] <= 1e-9
        assert size["lexical_build_s"] > 0
        hnsw = size["hnsw_vs_exact"]
        assert 0.0 <= hnsw["recall_at_10"] <= hnsw["recall_at_10_ties"] + 1e-9 <= 1.0 + 1e-9
        sweep = [row["ef"] for row in hnsw["ef_sweep"]]
        assert sweep == ([100, 300, 600, 1000] if hnsw["partitions"] else [])
        assert size["db_bytes"] > 0
        assert size["index_bytes"] > 0
    # the largest corpus has a project above the exact-scan threshold, so hnswlib is measured
    assert report["sizes"][-1]["hnsw_vs_exact"]["partitions"] >= 1
    ingest = report["ingest"]
    assert ingest["sample_chunks"] >= 30
    assert len(ingest["raw_encode_s"]) == 3
    assert len(ingest["ratios"]) == 2
    assert ingest["ratio"] == pytest.approx(float(np.median(ingest["ratios"])))
    # the raw side encodes what the import embeds: the chunk texts and the person's sentences
    assert ingest["sentences"] > 0
    raw = [a + b for a, b in zip(ingest["raw_encode_s"], ingest["raw_sentence_s"], strict=True)]
    assert ingest["ratios"][0] == pytest.approx((raw[0] + raw[1]) / 2 / ingest["ingest_s"][0])
    assert report["bootstrap"]["pairs"] == len(registry.names()) * (len(registry.names()) - 1) // 2
    assert report["search_process"]["peak_rss_bytes"] > 0
    assert report["query_embedding"]["n"] == 12  # min(queries, embed_queries)


def test_the_lexical_figures_compare_real_hits_not_two_empty_lists(
    report: dict[str, Any], work: Path
) -> None:
    # Two empty top-10s agree perfectly, so the agreement figures mean something only if FTS5 finds
    # documents for the measured queries: at least half of them, on the largest corpus the run kept.
    corpus = work / "corpus-700"
    assert report["sizes"][-1]["fts_vs_bm25"]["queries"] == 6
    queries = [to_query(q) for q in load_queries(corpus, 12, 7)[:6]]
    memory = Memory(corpus / "memory.db", None, lexical_index="off")
    try:
        found = [len(memory.lexical(q.text, q.scope, 10)) for q in queries]
    finally:
        memory.close()
    assert len(found) == 6
    assert sum(n > 0 for n in found) >= 3


def test_every_number_in_the_report_is_finite_and_it_serialises(
    report: dict[str, Any], tmp_path: Path
) -> None:
    numbers = list(_numbers(report))
    assert len(numbers) > 200  # positive control: the walk reached the figures
    assert [path for path, value in numbers if not math.isfinite(value)] == []
    assert all(value is not None for value in report["growth"].values())
    out = tmp_path / "perf.json"
    write_report(report, out)
    assert json.loads(out.read_text(encoding="utf-8"))["config"]["seed"] == 7


def test_every_target_is_judged_and_the_table_names_them(report: dict[str, Any]) -> None:
    names = [t["name"] for t in report["targets"]]
    for arm in ("vector", "fts", "rrf", "walk", "fallback"):
        assert f"{arm} p50" in names
    for arm in registry.names():
        assert f"{arm} p95/p50" in names
    assert {"ingest / raw encode", "hnswlib recall@10", "bootstrap s / arm pair"} <= set(names)
    assert {t["status"] for t in report["targets"]} <= {"PASS", "MISS"}
    table = format_table(report)
    for name in names:
        assert name in table
    assert "rank-bm25" in table
    assert "in-memory index" in table
    assert "FTS5 floor" not in table
    assert "growth exponents" in table


def test_agreement_measures_match_hand_computed_values() -> None:
    assert overlap_at_k(["a", "b", "c"], ["c", "d", "a"]) == 2 / 3
    assert overlap_at_k([], []) == 1.0
    assert rbo_at_k(["a", "b"], ["a", "b"], k=2, p=0.5) == pytest.approx(1.0)
    # depth 1: {a} vs {b} -> 0; depth 2: {a,b} vs {b,a} -> 2/2; (1-p)(0 + p·1) / (1 - p²)
    assert rbo_at_k(["a", "b"], ["b", "a"], k=2, p=0.5) == pytest.approx(0.5 * 0.5 / 0.75)


def test_loglog_exponent_recovers_a_power_law_and_needs_two_sizes() -> None:
    sizes = [1e4, 3e4, 1e5]
    assert loglog_exponent(sizes, [2.0 * n**0.5 for n in sizes]) == pytest.approx(0.5)
    assert loglog_exponent(sizes, [7.0, 7.0, 7.0]) == pytest.approx(0.0, abs=1e-12)
    assert loglog_exponent([1e4], [3.0]) is None
    assert np.isfinite(loglog_exponent([1e4, 1e5], [1.0, 10.0]) or float("nan"))


def test_config_refuses_unsorted_sizes_and_unknown_vector_modes() -> None:
    assert PerfConfig(sizes=(10, 20)).sizes == (10, 20)  # positive control
    with pytest.raises(PerfError, match="strictly increasing"):
        PerfConfig(sizes=(20, 10))
    with pytest.raises(PerfError, match="vectors must be one of"):
        PerfConfig(vectors="random")  # type: ignore[arg-type]


def test_hook_prompts_are_all_different_so_no_cached_vector_is_timed() -> None:
    prompts = distinct_prompts(["why did the build fail", "where is the retry loop"], 7)
    assert len(prompts) == len(set(prompts)) == 7
    assert prompts[:2] == ["why did the build fail", "where is the retry loop"]
    assert prompts[2] == "Remind me: why did the build fail"
    with pytest.raises(ValueError, match="only 10 distinct prompts from 2 texts"):
        distinct_prompts(["why did the build fail", "where is the retry loop"], 11)


def test_the_lexical_catchup_after_one_session_is_measured_and_judged(
    report: dict[str, Any],
) -> None:
    up = report["lexical_catchup"]
    assert up["chunks_before"] == report["sizes"][-1]["chunks"]
    assert up["chunks_added"] > 0
    assert up["layered"] is True
    assert up["identical"] == 1.0
    judged = {t["name"]: t for t in report["targets"]}
    assert judged["catch-up top 10 = rebuild's"]["status"] == "PASS"
    assert judged["lexical catch-up (one session)"]["value"] == up["catchup_s"]
    assert "lexical snapshot after one session's import" in format_table(report)


def test_the_sanitizers_worst_message_is_measured_and_judged(report: dict[str, Any]) -> None:
    san = report["sanitizer"]
    assert [row["label"] for row in san["rows"]] == list(UNITS)
    assert san["chars"] == 64 * 1024 + 2000  # the import's cut: MAX_MESSAGE_BYTES + the margin
    redacted = {row["label"]: row["redacted"] for row in san["rows"]}
    # one run of keys is one credential; prose, heads without a key and `a=b,` hold none
    assert redacted["stripe keys"] == redacted["github tokens"] == redacted["key headers"] == 1
    assert redacted["prose and code"] == redacted["url heads"] == redacted["assignments"] == 0
    adversarial = [row["median_s"] for row in san["rows"][1:]]
    assert san["worst_s"] == max(adversarial)  # the prose row is the comparison, not a candidate
    judged = {t["name"]: t for t in report["targets"]}
    assert judged["worst message redact"]["value"] == san["worst_s"]
    assert judged["worst message redact"]["limit"] == 1.0
    assert f"sanitizer, one message of {san['chars']} characters" in format_table(report)

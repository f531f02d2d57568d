"""Issue 17's targets in the perf report: judged from hand-made figures, and printed readably."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.roster import Question
from perf.child_usage import main as child_usage_main
from perf.child_usage import run_measured
from perf.cli_search import CLI_TARGETS, distinct_searches, scope_args
from perf.config import MIB, PerfError
from perf.embed_rates import QUERY_LOAD_TARGETS, SPEEDUP_TARGETS
from perf.report import target_lines
from perf.report_sections import embedding_lines, real_tier_lines, search_command_lines
from perf.targets import judge_targets


def _arm(p50: float, p95: float) -> dict[str, float]:
    return {"p50_ms": p50, "p95_ms": p95}


def _hnsw(recall: float) -> dict[str, Any]:
    return {
        "recall_at_10": recall,
        "recall_at_10_ties": recall,
        "scoped_recall_at_10": 1.0,
        "hnsw": {"p50_ms": 0.5},
        "exact": {"p50_ms": 4.0},
        "partitions": 3,
        "queries": 60,
        "ef_sweep": [{"ef": 100, "recall_at_10": recall, "p50_ms": 0.4}],
    }


def _report(**extra: Any) -> dict[str, Any]:
    """A report with the static figures every run has, plus `extra`."""
    return {
        "ingest": {"ratio": 0.9},
        "sizes": [
            {"chunks": 5000, "arms": {"vector": _arm(1.0, 2.0)}, "hnsw_vs_exact": _hnsw(0.99)}
        ],
        "bootstrap": {"seconds_per_pair_p50": 0.5},
        "search_process": {"peak_rss_bytes": 2**30},
        **extra,
    }


REAL = {
    "chunks": 2000,
    "size": 2000,
    "embedder_id": "minilm-l6-v2",
    "cache_dir": "/cache",
    "vectors": {"cache_hits": 1500, "embedded": 500, "embed_s": 20.0, "embedded_per_s": 25.0},
    "arms": {"vector": _arm(2.5, 3.0), "rrf": _arm(4.0, 6.0)},
    "hnsw_vs_exact": _hnsw(0.995),
}
CLI = {
    "chunks": 5000,
    "embedder": "minilm",
    "store": {"vectors": "perf-static-minilm-l6-v2 vectors stored under minilm-l6-v2"},
    "bytecode_cache": "enabled (Python's default)",
    "no_server": {
        "p50_ms": 900.0,
        "p95_ms": 1200.0,
        "max_ms": 1300.0,
        "n": 8,
        "peak_rss_bytes": 310_000_000,  # 295.6 MiB: within 300 MiB, over 300 MB
        "peak_rss_p50_bytes": 300 * MIB,
    },
    "with_server": {
        "p50_ms": 200.0,
        "p95_ms": 250.0,
        "max_ms": 260.0,
        "n": 8,
        "peak_rss_bytes": 60 * MIB,
        "answered_by_server": 8,
    },
    "server_start_s": 4.5,
    "targets": CLI_TARGETS,
}
FORMS = {
    "query_load": {
        "variant": "fp32",
        "load_s": 0.4,
        "query_ms": {"p50_ms": 16.0, "p95_ms": 20.0},
        "queries": 30,
        "torch_imported": False,
        "targets": QUERY_LOAD_TARGETS,
    },
    "rates": {
        "texts": 150,
        "torch": {"chunks_per_s": 20.0, "batch_size": 64},
        "onnx_fp32_default_batch": {
            "chunks_per_s": 42.0,
            "batch_size": 16,
            "workers": 2,
            "speedup_vs_torch": 2.1,
            "cosine_to_torch": {"min": 0.9995},
        },
        "onnx_int8_default_batch": {
            "chunks_per_s": 58.0,
            "batch_size": 16,
            "speedup_vs_torch": 2.9,
            "cosine_to_torch": {"min": 0.97},
        },
        "targets": SPEEDUP_TARGETS,
    },
}


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in judge_targets(report)}


def test_issue_17_targets_are_judged_on_their_own_corpus_with_hand_worked_values() -> None:
    got = _by_name(_report(real_vectors=REAL, search_command=CLI, embedding_forms=FORMS))
    expected = {
        "real hnswlib recall@10": (0.995, "PASS", 2000),  # >= 0.99
        "real vector p50": (2.5, "MISS", 2000),  # > 2 ms
        "search p95 (no server)": (1.2, "MISS", 5000),  # 1200 ms > 1.0 s
        "search p95 (with server)": (0.25, "PASS", 5000),  # 250 ms <= 0.3 s
        "search peak RSS (no server)": (310.0, "MISS", 5000),  # 310e6 bytes > 300 MB
        "fresh query: model load": (0.4, "PASS", None),
        "fresh query: embed p50": (16.0, "MISS", None),  # > 15 ms
        "fresh query: torch imported": (0.0, "PASS", None),
        "encode fp32 / torch": (2.1, "PASS", None),  # 42 / 20 >= 2.0
        "encode int8 / torch": (2.9, "MISS", None),  # 58 / 20 < 3.0
    }
    for name, (value, status, at) in expected.items():
        assert (got[name]["value"], got[name]["status"], got[name]["at_chunks"]) == pytest.approx(
            (value, status, at)
        ), name
    # the static targets stay, judged at the largest static corpus
    assert got["vector p50"]["at_chunks"] == 5000
    assert got["hnswlib recall@10"]["status"] == "PASS"
    assert got["bootstrap s / arm pair"]["at_chunks"] is None


def test_a_fresh_process_that_imported_torch_misses_and_skipped_measures_have_no_target() -> None:
    torch_forms = {"query_load": {**FORMS["query_load"], "torch_imported": True}}
    got = _by_name(_report(embedding_forms=torch_forms))
    assert got["fresh query: torch imported"]["status"] == "MISS"
    assert got["fresh query: model load"]["status"] == "PASS"  # positive control: the others stay
    names = set(got)
    assert not any(n.startswith(("real ", "search p95", "encode ")) for n in names)
    assert {"vector p50", "ingest / raw encode"} <= names


def test_the_real_tier_is_printed_beside_the_largest_static_tier() -> None:
    lines = real_tier_lines(_report(real_vectors=REAL))
    text = "\n".join(lines)
    assert "real-vector tier: 2000 chunks with minilm-l6-v2 vectors" in text
    assert "1500 from the cache, 500 embedded in 20 s (25.0/s); cache /cache" in text
    assert "recall@10 0.9950 strict" in text
    assert lines[-1].split() == ["vector", "2.500", "/", "3.000", "1.000", "/", "2.000"]
    assert "rrf" not in lines[-1]  # the static tier has no rrf row here, so rrf is not printed
    assert real_tier_lines(_report(real_vectors=None))[-1].endswith("not measured (real_size = 0)")


def test_the_search_command_and_the_embedding_forms_read_as_sentences() -> None:
    search = "\n".join(search_command_lines(_report(search_command=CLI)))
    assert "p50 900 ms, p95 1200 ms, max 1300 ms over 8 runs; peak RSS 296 MiB" in search
    assert (
        "8 answered by the server, timed once it was warm: listening with its lexical snapshot "
        "held, 4.5 s after start)" in search
    )
    forms = "\n".join(embedding_lines(_report(embedding_forms=FORMS)))
    assert "import + model load 0.400 s" in forms
    assert "p50 16.00 ms" in forms
    assert "torch imported: no" in forms
    assert "onnx_fp32_default_batch  batch  16 workers  2    42.0  2.10x, cosine >= 0.9995" in forms
    # torch has no workers, and a report written before them shows none
    assert "torch                    batch  64 workers  -    20.0" in forms
    assert "onnx_int8_default_batch  batch  16 workers  -    58.0  2.90x, cosine >= 0.9700" in forms
    assert embedding_lines(_report(embedding_forms={})) == []


def test_the_target_table_says_where_each_target_was_judged() -> None:
    report = _report(real_vectors=REAL, search_command=CLI, embedding_forms=FORMS)
    report["targets"] = judge_targets(report)
    lines = target_lines(report)
    # status, name (30), value (9), limit (10), the corpus's chunks or "-" (7)
    assert "  MISS    real vector p50                    2.500    <= 2 ms       2000" in lines
    assert "  PASS    encode fp32 / torch                2.100    >= 2 x           -" in lines
    assert "  MISS    search peak RSS (no server)      310.000    <= 300 MB     5000" in lines


def test_search_scopes_follow_the_question_and_every_text_is_new() -> None:
    one = Question(qid="q1", text="why did it fail", scope=("/p/a",), category="c")
    two = Question(qid="q2", text="where is the key", scope=("/p/a", "/p/b"), category="c")
    every = Question(qid="q3", text="anything", scope="*", category="c")
    assert scope_args(one) == ["--project", "/p/a"]
    assert scope_args(two) == ["--project", "/p/a", "--project", "/p/b"]
    assert scope_args(every) == ["--all-projects"]
    asked = distinct_searches([one, two, one], 5)
    assert [text for text, _ in asked] == [
        "why did it fail",
        "where is the key",
        "Remind me: why did it fail",
        "Remind me: where is the key",
        "Quick question: why did it fail",
    ]
    assert [q.qid for _, q in asked] == ["q1", "q2", "q1", "q2", "q1"]
    with pytest.raises(PerfError, match="at least one question"):
        distinct_searches([], 1)


def test_the_launcher_reports_the_child_exit_its_output_and_its_peak_memory(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    script = "import sys; b = bytearray(64 * 2**20); print('ok'); sys.exit(3)"
    result = run_measured([sys.executable, "-c", script], out, err)
    assert result["returncode"] == 3
    assert out.read_text(encoding="utf-8") == "ok\n"
    assert result["peak_rss_bytes"] >= 64 * 2**20  # the child's 64 MiB buffer
    assert result["wall_s"] > 0
    assert child_usage_main(["only-one-arg"]) == 2
    done = subprocess.run(
        [sys.executable, "-m", "perf.child_usage", str(out), str(err), "--", sys.executable, "-V"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"returncode": 0' in done.stdout

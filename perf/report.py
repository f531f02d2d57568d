"""The perf report as people read it (`format_table`) and as tools read it (`write_report`, perf.json).

The table is built section by section, in the order of `perf.json`: machine, corpora, ingest, arms,
lexical, vectors, the real-vector tier, bootstrap and search process, growth, the prompt hook, the
`recallbench search` command, the embedding forms, the sanitizer's worst message, then the judged
targets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perf.config import GIB, MIB
from perf.report_sections import (
    catchup_lines,
    embedding_lines,
    real_tier_lines,
    search_command_lines,
)
from perf.sanitizer import sanitizer_lines

Report = dict[str, Any]


def format_table(report: Report) -> str:
    """The human-readable report: every figure of `perf.json` that a reader compares."""
    sections = (
        _header_lines,
        _corpus_lines,
        _ingest_lines,
        _arm_lines,
        _bm25_lines,
        _snapshot_lines,
        _hnsw_lines,
        real_tier_lines,
        _cost_lines,
        _growth_lines,
        _hook_lines,
        search_command_lines,
        catchup_lines,
        embedding_lines,
        sanitizer_lines,
        target_lines,
    )
    return "\n".join(line for section in sections for line in section(report))


def write_report(report: Report, out: Path) -> None:
    """`perf.json`; refuses NaN and infinity so that every figure in it is a finite number."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True, allow_nan=False), encoding="utf-8")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _load(values: Sequence[float] | None) -> str:
    return "-" if not values else "/".join(f"{v:.1f}" for v in values)


def _runs(values: Sequence[float], unit: str = "s", digits: int = 1) -> str:
    return ", ".join(f"{x:.{digits}f}{unit}" for x in values)


def _header_lines(report: Report) -> list[str]:
    m = report["machine"]
    return [
        f"recallbench perf  {report.get('started', '')}  wall {report.get('wall_s', 0):.0f}s",
        f"machine: {m['cpu_model']}, {m['cpus_usable']} usable cores, "
        f"{(m['memory_bytes'] or 0) / GIB:.1f} GiB, python {m['python']}, sqlite {m['sqlite']}, "
        f"torch threads {m['torch_threads']}, load avg at start {_load(report.get('loadavg_start'))}, "
        f"at end {_load(m['loadavg'])} (other processes share these cores)",
        f"seed {report['config']['seed']}; vectors: {report['vectors_note']}",
        "",
    ]


def _corpus_lines(report: Report) -> list[str]:
    lines = [
        "corpus   chunks  sessions  gen s  import s  import ch/s  vectors s  index s   db MiB  index MiB"
    ]
    for s in report["sizes"]:
        v = s["vectors"]
        lines.append(
            f"{s['size']:>6} {s['chunks']:>8} {s['sessions']:>9} {s['generate_s']:>6.1f} "
            f"{s['import_s']:>9.1f} {s['import_chunks_per_s']:>12.0f} "
            f"{v['embed_s'] + v['store_s']:>10.1f} {s['index_build_s']:>7.1f} "
            f"{s['db_bytes'] / MIB:>8.1f} {s['index_bytes'] / MIB:>10.1f}"
        )
    return lines


def _ingest_lines(report: Report) -> list[str]:
    ing = report["ingest"]
    return [
        "",
        f"ingest ({ing['embedder']}, {ing['sample_chunks']} chunks / {ing['distinct_texts']} distinct "
        f"texts): raw encode {ing['raw_texts_per_s']:.1f} texts/s "
        f"(runs {_runs(ing['raw_encode_s'])}) and {ing['sentences']} sentences "
        f"(runs {_runs(ing['raw_sentence_s'])}); import_paths "
        f"{ing['ingest_texts_per_s']:.1f} texts/s = {ing['ingest_chunks_per_s']:.1f} chunks/s "
        f"(runs {_runs(ing['ingest_s'])}); ratio {ing['ratio']:.3f} "
        f"(per import {_runs(ing['ratios'], '', 3)})",
        _query_embedding_line(report["query_embedding"]),
        "",
    ]


def _query_embedding_line(qe: dict[str, Any]) -> str:
    line = (
        f"query embedding ({qe['embedder']}, one query per call): p50 {qe['p50_ms']:.2f} ms, "
        f"p95 {qe['p95_ms']:.2f} ms"
    )
    if "torch_threads" in qe:
        line += f" at {qe['torch_threads']} torch threads"
    if "one_thread" in qe:
        one = qe["one_thread"]
        line += f"; at 1 thread p50 {one['p50_ms']:.2f} ms, p95 {one['p95_ms']:.2f} ms"
    return line


def _arm_lines(report: Report) -> list[str]:
    sizes = report["sizes"]
    growth = report["growth"]
    width = max(10, *(len(arm) + 1 for arm in sizes[0]["arms"]))
    lines = [
        "arm latency, ms, query embedding excluded (p50 / p95)",
        f"{'arm':<{width}}" + "".join(f"{s['chunks']:>20}" for s in sizes) + "   exp p50  exp p95",
    ]
    for arm in sizes[0]["arms"]:
        cells = "".join(
            f"{s['arms'][arm]['p50_ms']:>11.3f} /{s['arms'][arm]['p95_ms']:>7.3f}" for s in sizes
        )
        lines.append(
            f"{arm:<{width}}{cells}   {_fmt(growth.get(f'{arm}_p50')):>7}  "
            f"{_fmt(growth.get(f'{arm}_p95')):>7}"
        )
    return lines


def _bm25_lines(report: Report) -> list[str]:
    lines = [
        "",
        "FTS5 vs rank-bm25 (same scoped queries, top 10)",
        "chunks   queries  fts5 p50 ms  fts5 p95 ms  bm25 p50 ms  bm25 build s  overlap@10  rbo@10",
    ]
    for s in report["sizes"]:
        b = s["fts_vs_bm25"]
        lines.append(
            f"{s['chunks']:>6} {b['queries']:>9} {b['fts5']['p50_ms']:>12.3f} "
            f"{b['fts5']['p95_ms']:>12.3f} {b['rank_bm25']['p50_ms']:>12.1f} "
            f"{b['rank_bm25_build_s']:>13.1f} {b['overlap_at_10']:>11.3f} {b['rbo_at_10']:>7.3f}"
        )
    return lines


def _snapshot_lines(report: Report) -> list[str]:
    lines = [
        "Memory.lexical's in-memory index (lexical_index=sync) vs FTS5 itself (lexical_index=off), "
        "same queries",
        "chunks  build s  RSS MiB  snapshot p50 ms  snapshot p95 ms  fts5 p50 ms  identical top10  max |score diff|",
    ]
    for s in report["sizes"]:
        b = s["fts_vs_bm25"]
        lines.append(
            f"{s['chunks']:>6} {s['lexical_build_s']:>8.1f} {s['lexical_rss_bytes'] / MIB:>8.0f} "
            f"{b['snapshot']['p50_ms']:>16.3f} {b['snapshot']['p95_ms']:>16.3f} "
            f"{b['fts5']['p50_ms']:>12.3f} {b['snapshot_identical_top10']:>16.3f} "
            f"{b['snapshot_max_score_diff']:>16.2e}"
        )
    return lines


def _hnsw_lines(report: Report) -> list[str]:
    lines = [
        "",
        "hnswlib (engine nearest over the per-project partitions) vs exact numpy scan, top 10;",
        "unscoped = Scope.everywhere() (partitions merged), scoped = each question's scope",
        "chunks   queries  parts  unscoped p50 ms  exact p50 ms  scoped p50 ms  recall@10 strict / ties   scoped",
    ]
    for s in report["sizes"]:
        h = s["hnsw_vs_exact"]
        lines.append(
            f"{s['chunks']:>6} {h['queries']:>9} {h['partitions']:>6} {h['hnsw']['p50_ms']:>16.3f} "
            f"{h['exact']['p50_ms']:>13.3f} {h['scoped_nearest']['p50_ms']:>14.3f} "
            f"{h['recall_at_10']:>16.4f} / {h['recall_at_10_ties']:.4f} {h['scoped_recall_at_10']:>8.4f}"
        )
    for s in report["sizes"]:
        sweep = s["hnsw_vs_exact"]["ef_sweep"]
        lines.append(
            f"  unscoped ef sweep at {s['chunks']}: "
            + "; ".join(
                f"ef {row['ef']:.0f}: {row['recall_at_10']:.4f} / {row['recall_at_10_ties']:.4f} "
                f"in {row['p50_ms']:.3f} ms"
                for row in sweep
            )
        )
    return lines


def _cost_lines(report: Report) -> list[str]:
    bs = report["bootstrap"]
    sp = report["search_process"]
    return [
        "",
        f"paired bootstrap: {bs['resamples']} resamples x {bs['queries']} queries: "
        f"{bs['seconds_per_pair_p50']:.3f} s per arm pair (max {bs['seconds_per_pair_max']:.3f}, "
        f"{bs['pairs']} pairs)",
        f"search process over {sp['chunks']} chunks ({sp['queries']} queries x {len(sp['arms'])} arms, "
        f"{sp['embedder']} loaded): peak RSS {sp['peak_rss_bytes'] / MIB:.0f} MiB "
        f"(start {sp['rss_start_bytes'] / MIB:.0f}, model {sp['rss_after_model_bytes'] / MIB:.0f}, "
        f"index {sp['rss_after_index_bytes'] / MIB:.0f} MiB)",
        "",
    ]


def _growth_lines(report: Report) -> list[str]:
    growth: dict[str, float | None] = report["growth"]
    arms = report["sizes"][0]["arms"]
    sizes_and_bytes = [
        (name, value)
        for name, value in growth.items()
        if not name.endswith("_p50") and not name.endswith("_p95")
    ]
    searches = [
        (name, value)
        for name, value in growth.items()
        if name.endswith("_p50") and name.split("_")[0] not in arms
    ]
    return [
        "growth exponents (log-log slope, smallest to largest corpus):",
        "  " + ", ".join(f"{name} {_fmt(value)}" for name, value in sizes_and_bytes),
        "  " + ", ".join(f"{name} {_fmt(value)}" for name, value in searches),
        "",
    ]


def _hook_lines(report: Report) -> list[str]:
    hook = report.get("hook")
    if not hook:
        return ["UserPromptSubmit hook latency: not measured (hook_runs = 0)", ""]
    lex, srv = hook["lexical_only"], hook["with_server"]
    return [
        f"UserPromptSubmit hook, process start to exit (`{hook['command']}`, {hook['corpus_chunks']} chunks, "
        f"{hook['embedder']}; bytecode cache {hook.get('bytecode_cache', 'unknown')}):",
        f"  lexical only (no server): p50 {lex['p50_ms']:.1f} ms, p95 {lex['p95_ms']:.1f} ms, "
        f"max {lex['max_ms']:.1f} ms over {lex['n']} prompts ({lex['injected']} injected context)",
        f"  with `recallbench serve`:  p50 {srv['p50_ms']:.1f} ms, p95 {srv['p95_ms']:.1f} ms, "
        f"max {srv['max_ms']:.1f} ms over {srv['n']} prompts ({srv['injected']} injected context, "
        f"{srv['answered_by_server']} answered by the server)",
        *_shipped_hook_line(hook),
        "",
    ]


def _shipped_hook_line(hook: dict[str, Any]) -> list[str]:
    shipped = hook.get("with_server_shipped")
    if not shipped:
        return []
    return [
        f"  with `recallbench serve` and the arm shipped from {shipped['results']}: "
        f"p50 {shipped['p50_ms']:.1f} ms, p95 {shipped['p95_ms']:.1f} ms, max {shipped['max_ms']:.1f} ms "
        f"over {shipped['n']} prompts ({shipped['injected']} injected context, "
        f"{shipped['answered_by_server']} answered by {shipped['arm']})",
    ]


def target_lines(report: Report) -> list[str]:
    lines = [
        "targets (at = the corpus judged: the largest static one, the real-vector tier, the hook's own)",
        f"  {'':<7} {'target':<30} {'value':>9}    {'limit':<10} {'at':>7}",
    ]
    for t in report["targets"]:
        at = "-" if t.get("at_chunks") is None else str(t["at_chunks"])
        limit = f"{t['op']} {t['limit']:g} {t['unit']}".rstrip()
        lines.append(
            f"  {t['status']:<7} {t['name']:<30} {_fmt(t['value'], 3):>9}    {limit:<10} {at:>7}"
        )
    return lines

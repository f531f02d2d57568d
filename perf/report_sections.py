"""The report's sections for issue 17's measures: the real-vector tier, the `recallbench search`
command end to end, and the embedding forms (fresh-process query embedding, encode rates)."""

from __future__ import annotations

from typing import Any

from perf.config import MIB

Report = dict[str, Any]
# The arms shown beside the static largest tier (every arm is in perf.json).
REAL_TIER_ARMS = ("vector", "fts", "rrf", "walk", "fallback")


def real_tier_lines(report: Report) -> list[str]:
    real = report.get("real_vectors")
    if not real:
        return ["", "real-vector tier: not measured (real_size = 0)"]
    v = real["vectors"]
    h = real["hnsw_vs_exact"]
    largest = report["sizes"][-1]
    embedded = (
        f"{v['embedded']} embedded in {v['embed_s']:.0f} s ({v['embedded_per_s']:.1f}/s)"
        if v["embedded"]
        else "none embedded"
    )
    lines = [
        "",
        f"real-vector tier: {real['chunks']} chunks with {real['embedder_id']} vectors "
        f"({v['cache_hits']} from the cache, {embedded}; cache {real['cache_dir']})",
        f"  hnswlib vs exact, top 10: recall@10 {h['recall_at_10']:.4f} strict / "
        f"{h['recall_at_10_ties']:.4f} ties, scoped {h['scoped_recall_at_10']:.4f}; unscoped p50 "
        f"{h['hnsw']['p50_ms']:.3f} ms vs exact {h['exact']['p50_ms']:.3f} ms "
        f"({h['partitions']} partitions, {h['queries']} queries)",
        "  ef sweep: "
        + "; ".join(
            f"ef {row['ef']:.0f}: {row['recall_at_10']:.4f} in {row['p50_ms']:.3f} ms"
            for row in h["ef_sweep"]
        ),
        f"  arm p50 / p95 ms   real {real['chunks']:>7}   static {largest['chunks']:>7}",
    ]
    for arm in REAL_TIER_ARMS:
        a, b = real["arms"].get(arm), largest["arms"].get(arm)
        if a is None or b is None:
            continue
        lines.append(
            f"  {arm:<16} {a['p50_ms']:>8.3f} / {a['p95_ms']:<7.3f} "
            f"{b['p50_ms']:>8.3f} / {b['p95_ms']:.3f}"
        )
    return lines


def search_command_lines(report: Report) -> list[str]:
    cli = report.get("search_command")
    if not cli:
        return ["`recallbench search` end to end: not measured (cli_runs = 0)", ""]
    alone, served = cli["no_server"], cli["with_server"]
    return [
        f"`recallbench search` process start to exit ({cli['chunks']} chunks, {cli['embedder']}, "
        f"{cli['store']['vectors']}; bytecode cache {cli['bytecode_cache']}):",
        f"  no server:           p50 {alone['p50_ms']:.0f} ms, p95 {alone['p95_ms']:.0f} ms, "
        f"max {alone['max_ms']:.0f} ms over {alone['n']} runs; peak RSS "
        f"{alone['peak_rss_bytes'] / MIB:.0f} MiB (p50 {alone['peak_rss_p50_bytes'] / MIB:.0f})",
        f"  with `recallbench serve`: p50 {served['p50_ms']:.0f} ms, p95 {served['p95_ms']:.0f} ms, "
        f"max {served['max_ms']:.0f} ms over {served['n']} runs ({served['answered_by_server']} "
        f"answered by the server, timed once it was warm: listening with its lexical snapshot "
        f"held, {cli['server_start_s']:.1f} s after start); peak RSS "
        f"{served['peak_rss_bytes'] / MIB:.0f} MiB",
        "",
    ]


def catchup_lines(report: Report) -> list[str]:
    up = report.get("lexical_catchup")
    if not up:
        return []
    kind = "caught up" if up["layered"] else "REBUILT (no catch-up)"
    return [
        f"lexical snapshot after one session's import ({up['chunks_before']} chunks "
        f"+ {up['chunks_added']}): {kind} in {up['catchup_s']:.3f} s vs a full rebuild "
        f"{up['rebuild_s']:.2f} s ({up['speedup']:.0f}x); top 10 identical to the rebuild's on "
        f"{up['identical'] * up['queries']:.0f} of {up['queries']} queries; query p50 "
        f"{up['query_caught_up']['p50_ms']:.2f} ms caught up vs {up['query_rebuilt']['p50_ms']:.2f} ms",
        "",
    ]


def embedding_lines(report: Report) -> list[str]:
    forms = report.get("embedding_forms") or {}
    lines: list[str] = []
    query = forms.get("query_load")
    if query:
        q = query["query_ms"]
        lines.append(
            f"fresh process, ONNX {query['variant']}: import + model load {query['load_s']:.3f} s, "
            f"then one query per call p50 {q['p50_ms']:.2f} ms, p95 {q['p95_ms']:.2f} ms over "
            f"{query['queries']} queries; torch imported: {'yes' if query['torch_imported'] else 'no'}"
        )
    rates = forms.get("rates")
    if rates:
        lines.append(
            f"encode rate over {rates['texts']} chunk texts (chunks/s, the median of "
            f"{rates.get('rounds', 1)} passes taken in turns; speed-up, the median of the per-pass "
            "ratios to torch, and min cosine to torch):"
        )
        for name in (
            "torch",
            "onnx_fp32",
            "onnx_int8",
            "onnx_fp32_default_batch",
            "onnx_int8_default_batch",
        ):
            row = rates.get(name)
            if row is None:
                continue
            extra = (
                f"  {row['speedup_vs_torch']:.2f}x, cosine >= {row['cosine_to_torch']['min']:.4f}"
                if "speedup_vs_torch" in row
                else ""
            )
            lines.append(
                f"  {name:<24} batch {row['batch_size']!s:>3} workers {row.get('workers') or '-'!s:>2} "
                f"{row['chunks_per_s']:>7.1f}{extra}"
            )
    if not lines:
        return []
    return [*lines, ""]

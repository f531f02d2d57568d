"""Write a run's results folder: summary.json, per_query.csv, TREC files, report.md, forest.png."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from harness.gates import GateResult, format_gate_line
from harness.metrics import to_units
from harness.protocol.model import Protocol
from harness.results import (
    Aggregate,
    ArmRun,
    EmbedderRecord,
    MetricMean,
    ResultFiles,
    ResultsError,
    Scores,
    Summary,
    validate_summary,
)
from harness.roster import Gold, Question
from harness.scoring import is_negative_metric
from harness.trec import write_qrels, write_run


def run_id(started_at: datetime, summary: Summary) -> str:
    """``<start time>-<8 hex>``: the hash is of the summary before its run id and files are set."""
    data = summary.to_dict()
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    return f"{started_at.strftime('%Y%m%dT%H%M%SZ')}-{digest[:8]}"


def arm_file_name(index: int, spec: str) -> str:
    return f"{index:02d}-{spec.split('(', maxsplit=1)[0]}"


def write_results(
    protocol_dir: Path,
    *,
    summary: Summary,
    protocol: Protocol,
    runs: Sequence[ArmRun],
    scores: Scores,
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
    started_at: datetime,
) -> tuple[Path, Summary]:
    """Create `protocol_dir/<run-id>/` (never an existing one) and write every file into it.

    Returns the folder and the summary as written (with its run id and file names).
    """
    files = ResultFiles(
        per_query="per_query.csv",
        qrels="qrels.trec",
        report="report.md",
        forest="forest.png",
        runs={r.spec: f"runs/{arm_file_name(i, r.spec)}.trec" for i, r in enumerate(runs)},
    )
    summary = summary.with_files(run_id(started_at, summary), files)
    validate_summary(summary.to_dict())
    protocol_dir.mkdir(parents=True, exist_ok=True)
    directory = protocol_dir / str(summary.run_id)
    try:
        directory.mkdir()  # exist_ok=False: a run never overwrites another
    except FileExistsError as exc:
        msg = f"results folder {directory} already exists; results are append-only"
        raise ResultsError(msg) from exc
    (directory / "runs").mkdir()
    (directory / "summary.json").write_text(summary.to_json(), encoding="utf-8")
    _per_query_csv(directory / "per_query.csv", scores)
    _trec(directory, protocol, runs, questions, keys)
    (directory / "report.md").write_text(render_report(summary), encoding="utf-8")
    forest_plot(directory / "forest.png", summary)
    return directory, summary


def _per_query_csv(path: Path, scores: Scores) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["roster", "qid", "arm", "metric", "value"])
        for arm, rosters in scores.values.items():
            for roster, metrics in sorted(rosters.items()):
                for metric, values in sorted(metrics.items()):
                    for qid, value in sorted(values.items()):
                        writer.writerow([roster, qid, arm, metric, repr(float(value))])


def _trec(
    directory: Path,
    protocol: Protocol,
    runs: Sequence[ArmRun],
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
) -> None:
    """TREC files keyed `<roster>/<qid>`; documents are sessions (session unit) or chunks (message).

    Scores are derived from rank (n, n-1, ...) because trec_eval re-sorts by score and some arms
    return raw scores that are not monotone in rank.
    """
    units = {ref.name: ref.unit for ref in protocol.rosters}
    qrels: dict[str, dict[str, int]] = {}
    chunk_grades: dict[str, dict[str, int]] = {}
    for ref in protocol.rosters:
        for q in questions[ref.name]:
            gold = keys[ref.name][q.qid]
            if gold.relevant:
                qrels[f"{ref.name}/{q.qid}"] = dict(gold.relevant)
    for i, arm_run in enumerate(runs):
        out: dict[str, list[tuple[str, float]]] = {}
        for roster, answers in arm_run.ranked.items():
            unit = units[roster]
            for qid, ranked in answers.items():
                if unit == "session":
                    docs = to_units(ranked, "session")
                else:
                    docs = [r.chunk_id for r in ranked]
                    relevant = keys[roster][qid].relevant
                    grades = chunk_grades.setdefault(f"{roster}/{qid}", {})
                    for r in ranked:
                        best = max((relevant.get(u, 0) for u in r.message_uuids), default=0)
                        if best:
                            grades[r.chunk_id] = best
                out[f"{roster}/{qid}"] = [(d, float(len(docs) - n)) for n, d in enumerate(docs)]
        write_run(
            directory / "runs" / f"{arm_file_name(i, arm_run.spec)}.trec",
            out,
            tag=arm_file_name(i, arm_run.spec),
        )
    message_rosters = {name for name, unit in units.items() if unit == "message"}
    for qid in list(qrels):
        if qid.split("/")[0] in message_rosters:
            # message-unit gold is by message uuid; trec tools need it per retrieved chunk
            qrels[qid] = dict(qrels[qid]) | chunk_grades.get(qid, {})
    write_qrels(directory / "qrels.trec", qrels)


def arm_labels(specs: Sequence[str]) -> dict[str, str]:
    """Short labels for tables: the arm's name, or ``name#2``, ``name#3`` for later specs sharing it."""
    counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    for spec in specs:
        name = spec.split("(", maxsplit=1)[0]
        counts[name] = counts.get(name, 0) + 1
        labels[spec] = name if counts[name] == 1 else f"{name}#{counts[name]}"
    return labels


def render_report(summary: Summary) -> str:
    """Human-readable report: deviations, gates (verdict + pre-committed reading) first, then tables.

    Tables name arms by short label; the legend under "Arms" maps each label to its canonical spec.
    """
    p = summary.protocol
    labels = arm_labels([a.spec for a in summary.arms])
    lines = [
        f"# {p.title}",
        "",
        f"Protocol `{p.id}` (sha256 `{p.sha256[:16]}…`), run `{summary.run_id}`.",
        "",
    ]
    if summary.deviations:
        lines.append("## Deviations (declared before any number)")
        for d in summary.deviations:
            lines.append(f"- **{d.reason}**")
            lines.extend(f"  - {problem}" for problem in d.problems)
        lines.append("")
    if summary.embedder is not None:  # absent only from runs made before embedder pinning
        lines += [_embedder_line(summary.embedder), ""]
    lines += _legend(summary, labels)
    lines += _gates(summary, labels)
    lines += _metric_tables(summary, labels)
    lines += _latency_table(summary, labels)
    lines += _corpus(summary)
    return "\n".join(lines)


def _embedder_line(record: EmbedderRecord) -> str:
    used = f"Embedder `{record.used}`"
    if record.status == "unpinned":
        return f"{used}, **unpinned**: the protocol predates embedder pinning."
    if record.status == "pinned":
        return f"{used}, as the protocol pins."
    return f"{used}, but the protocol pins `{record.pinned}` (**deviation**, declared above)."


def _legend(summary: Summary, labels: Mapping[str, str]) -> list[str]:
    lines = ["## Arms", "", "| label | canonical spec |", "|---|---|"]
    lines += [f"| `{labels[a.spec]}` | `{a.canonical}` |" for a in summary.arms]
    return [*lines, ""]


def _gates(summary: Summary, labels: Mapping[str, str]) -> list[str]:
    lines = [
        "## Gates",
        "",
        "| gate | verdict | comparison | metric | statistic | n |",
        "|---|---|---|---|---|---|",
    ]
    for g in summary.gates:
        treatment = labels.get(g.treatment, g.treatment)
        arms = (
            treatment
            if g.baseline is None
            else f"{treatment} vs {labels.get(g.baseline, g.baseline)}"
        )
        metric = g.metric if g.subset is None else f"{g.metric} [{g.subset}]"
        lines.append(
            f"| {g.id} | **{g.verdict}** | {arms} | {metric} | {_stat(g)} | {g.counts.get('n', '')} |"
        )
    lines.append("")
    lines += [f"- {format_gate_line(g)}" for g in summary.gates]
    return [*lines, "", f"**Shipped arm** (pre-registered ship rule): `{summary.shipped_arm}`", ""]


def _stat(g: GateResult) -> str:
    s = g.statistic
    text = _test_stat(g)
    if "p_adjusted" in s:
        text += (
            f"; raw p={float(s['p_value'] or 0):.4g}, {s['correction']}-adjusted "
            f"p={float(s['p_adjusted'] or 0):.4g} (uncorrected {s['verdict_uncorrected']})"
        )
    return text


def _test_stat(g: GateResult) -> str:
    s = g.statistic
    if g.test == "bootstrap":
        text = f"Δ={float(s['mean_diff'] or 0):+.3f} CI [{float(s['ci_low'] or 0):.3f}, {float(s['ci_high'] or 0):.3f}]"
        if g.kind == "non-inferiority":
            text += f", non-inferiority bound {float(s['ni_bound'] or 0):+.3f}"
        return text
    if g.test in ("sign", "randomization"):
        return f"Δ={float(s['mean_diff'] or 0):+.3f} p={float(s['p_value'] or 0):.4g}"
    if g.test == "every":
        return f"hits {g.counts.get('hits')}/{g.counts.get('n')}, misses {g.counts.get('misses')}"
    return f"leaks {g.counts.get('leaks')}, controls hit {g.counts.get('controls_hit')}/{g.counts.get('controls')}"


def _metric_tables(summary: Summary, labels: Mapping[str, str]) -> list[str]:
    metrics = [m for m in summary.metrics.all if not is_negative_metric(m)]
    lines: list[str] = []
    groups: dict[tuple[str, str], list[Aggregate]] = {}
    for row in summary.aggregates:
        groups.setdefault((row.roster, row.subset), []).append(row)
    for (roster, subset), rows in groups.items():
        title = roster if subset == "all" else f"{roster} — {subset}"
        lines += [
            f"## {title} (n={rows[0].n})",
            "",
            "| arm | " + " | ".join(metrics) + " |",
            "|---|" + "---|" * len(metrics),
        ]
        for row in rows:
            cells = [_mean_with_ci(row.metrics.get(m)) for m in metrics]
            lines.append(f"| `{labels.get(row.arm, row.arm)}` | " + " | ".join(cells) + " |")
        negs = [
            (labels.get(row.arm, row.arm), name, m)
            for row in rows
            for name, m in row.metrics.items()
            if is_negative_metric(name)
        ]
        if negs:
            lines.append("")
            lines.extend(
                f"- `{arm}` {name} = {m.mean:.3f} over {m.n} negative items"
                for arm, name, m in negs
            )
        lines.append("")
    return lines


def _mean_with_ci(m: MetricMean | None) -> str:
    if m is None:
        return "—"
    return f"{m.mean:.3f} [{m.ci_low or 0:.3f}, {m.ci_high or 0:.3f}]"


def _latency_table(summary: Summary, labels: Mapping[str, str]) -> list[str]:
    lines = [
        "## Latency per query (includes query embedding)",
        "",
        "| arm | p50 ms | p95 ms | errors | wall s |",
        "|---|---|---|---|---|",
    ]
    for arm in summary.arms:
        lat = arm.latency_ms
        lines.append(
            f"| `{labels[arm.spec]}` | {lat.p50:.2f} | {lat.p95:.2f} | {arm.errors} | {arm.wall_s:.2f} |"
        )
    lines.append("")
    return lines


def _corpus(summary: Summary) -> list[str]:
    c, env, stats = summary.corpus, summary.environment, summary.stats
    cont = c.contamination
    settled = (
        []
        if c.settles is None
        else [
            f"- settles ({c.settles['file']}, applied through the engine before any arm ran): "
            f"{c.settles['count']} in the file; {c.settles['applied']} applied by this run, "
            f"{c.settles['already']} already held; {len(c.settles['skipped'])} skipped (excluded sessions)"
        ]
    )
    return [
        "## Corpus",
        "",
        f"- manifest sha256 `{c.manifest_sha256}` ({c.files} files, {c.bytes} bytes), cutoff {c.cutoff}",
        f"- sessions scanned: {cont.sessions}; self-transcripts: {len(cont.self_transcripts)}; "
        f"roster leaks: {len(cont.roster_leaks)}; after cutoff: {len(cont.after_cutoff)}",
        "- scaffolding removed: " + ", ".join(f"{k}={v}" for k, v in cont.scaffolding.items()),
        f"- pre-declared exclusions {list(c.exclude)}: {len(c.excluded_sessions)} sessions excluded",
        *settled,
        "",
        f"Engine {env.engine_version}, embedder {env.embedder}, git {env.git_commit}, {env.machine}; "
        f"stats seed {stats.seed}, {stats.resamples} resamples.",
        "",
    ]


def forest_plot(path: Path, summary: Summary) -> None:
    """Primary metric per arm with its bootstrap CI, one panel per roster (subset "all")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    primary = summary.metrics.primary
    labels = arm_labels([a.spec for a in summary.arms])
    rows = [r for r in summary.aggregates if r.subset == "all" and primary in r.metrics]
    rosters = list(dict.fromkeys(r.roster for r in rows)) or ["(none)"]
    fig, axes = plt.subplots(
        len(rosters),
        1,
        figsize=(7, 1.2 + 0.45 * max(1, len(rows) // max(1, len(rosters))) * len(rosters)),
        squeeze=False,
    )
    for ax, roster in zip(axes[:, 0], rosters, strict=True):
        sub = [r for r in rows if r.roster == roster]
        means = [r.metrics[primary] for r in sub]
        ypos = list(range(len(sub)))
        ax.errorbar(
            [m.mean for m in means],
            ypos,
            xerr=[
                [m.mean - (m.ci_low or 0) for m in means],
                [(m.ci_high or 0) - m.mean for m in means],
            ],
            fmt="o",
            capsize=3,
        )
        ax.set_yticks(ypos, [labels.get(r.arm, r.arm) for r in sub])
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(f"{roster}: {primary} (n={sub[0].n if sub else 0})", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

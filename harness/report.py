"""Write a run's results folder: summary.json, per_query.csv, TREC files, report.md, forest.png."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.gates import GateResult, format_gate_line
from harness.metrics import to_units
from harness.protocol.model import Protocol
from harness.roster import Gold, Question
from harness.trec import write_qrels, write_run

if TYPE_CHECKING:
    from harness.runner import ArmRun, Scores


class ResultsError(RuntimeError):
    """A results folder cannot be written or does not validate."""


def summary_schema() -> dict[str, Any]:
    text = resources.files("harness").joinpath("schemas/summary.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def validate_summary(summary: Mapping[str, Any]) -> None:
    """Raise ResultsError naming the JSON path of the first schema violation."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(summary_schema())
    errors = sorted(validator.iter_errors(summary), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        msg = f"summary.json does not match its schema at {where}: {first.message}"
        raise ResultsError(msg)


def run_id(started_at: datetime, summary: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(summary, sort_keys=True, default=str).encode()).hexdigest()
    return f"{started_at.strftime('%Y%m%dT%H%M%SZ')}-{digest[:8]}"


def arm_file_name(index: int, spec: str) -> str:
    return f"{index:02d}-{spec.split('(', maxsplit=1)[0]}"


def write_results(
    protocol_dir: Path,
    *,
    summary: dict[str, Any],
    protocol: Protocol,
    runs: Sequence[ArmRun],
    scores: Scores,
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
    gates: Sequence[GateResult],
    started_at: datetime,
) -> Path:
    """Create `protocol_dir/<run-id>/` (never an existing one) and write every file into it."""
    rid = run_id(started_at, summary)
    summary["run_id"] = rid
    summary["files"] = {
        "per_query": "per_query.csv",
        "qrels": "qrels.trec",
        "report": "report.md",
        "forest": "forest.png",
        "runs": {r.spec: f"runs/{arm_file_name(i, r.spec)}.trec" for i, r in enumerate(runs)},
    }
    validate_summary(summary)
    protocol_dir.mkdir(parents=True, exist_ok=True)
    directory = protocol_dir / rid
    try:
        directory.mkdir()  # exist_ok=False: a run never overwrites another
    except FileExistsError as exc:
        msg = f"results folder {directory} already exists; results are append-only"
        raise ResultsError(msg) from exc
    (directory / "runs").mkdir()
    (directory / "summary.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    _per_query_csv(directory / "per_query.csv", scores)
    _trec(directory, protocol, runs, questions, keys)
    (directory / "report.md").write_text(render_report(summary, gates), encoding="utf-8")
    forest_plot(directory / "forest.png", summary)
    return directory


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


def render_report(summary: Mapping[str, Any], gates: Sequence[GateResult]) -> str:
    """Human-readable report: deviations, gates (verdict + pre-committed reading) first, then tables."""
    p = summary["protocol"]
    lines = [
        f"# {p['title']}",
        "",
        f"Protocol `{p['id']}` (sha256 `{p['sha256'][:16]}…`), run `{summary['run_id']}`.",
    ]
    lines.append("")
    if summary["deviations"]:
        lines.append("## Deviations (declared before any number)")
        for d in summary["deviations"]:
            lines.append(f"- **{d['reason']}**")
            lines.extend(f"  - {problem}" for problem in d["problems"])
        lines.append("")
    lines += [
        "## Gates",
        "",
        "| gate | verdict | comparison | metric | statistic | n |",
        "|---|---|---|---|---|---|",
    ]
    for g in gates:
        arms = g.treatment if g.baseline is None else f"{g.treatment} vs {g.baseline}"
        metric = g.metric if g.subset is None else f"{g.metric} [{g.subset}]"
        lines.append(
            f"| {g.id} | **{g.verdict}** | {arms} | {metric} | {_stat(g)} | {g.counts.get('n', '')} |"
        )
    lines.append("")
    for g in gates:
        lines.append(f"- {format_gate_line(g)}")
    lines += ["", f"**Shipped arm** (pre-registered ship rule): `{summary['shipped_arm']}`", ""]
    lines += _metric_tables(summary)
    lines += _latency_table(summary)
    c = summary["corpus"]
    cont = c["contamination"]
    lines += [
        "## Corpus",
        "",
        f"- manifest sha256 `{c['manifest_sha256']}` ({c['files']} files, {c['bytes']} bytes), cutoff {c['cutoff']}",
        f"- sessions scanned: {cont['sessions']}; self-transcripts: {cont['self_transcripts']['count']}; "
        f"roster leaks: {cont['roster_leaks']['count']}; after cutoff: {cont['after_cutoff']['count']}",
        "- scaffolding removed: " + ", ".join(f"{k}={v}" for k, v in cont["scaffolding"].items()),
        f"- pre-declared exclusions {c['exclude']}: {len(c['excluded_sessions'])} sessions excluded",
        "",
        f"Engine {summary['environment']['engine_version']}, embedder {summary['environment']['embedder']}, "
        f"git {summary['environment']['git_commit']}, {summary['environment']['machine']}; "
        f"stats seed {summary['stats']['seed']}, {summary['stats']['resamples']} resamples.",
        "",
    ]
    return "\n".join(lines)


def _stat(g: GateResult) -> str:
    s = g.statistic
    if g.test == "bootstrap":
        return f"Δ={float(s['mean_diff'] or 0):+.3f} CI [{float(s['ci_low'] or 0):.3f}, {float(s['ci_high'] or 0):.3f}]"
    if g.test in ("sign", "randomization"):
        return f"Δ={float(s['mean_diff'] or 0):+.3f} p={float(s['p_value'] or 0):.4g}"
    return f"leaks {g.counts.get('leaks')}, controls hit {g.counts.get('controls_hit')}/{g.counts.get('controls')}"


def _metric_tables(summary: Mapping[str, Any]) -> list[str]:
    metrics = [m for m in summary["metrics"]["all"] if not m.startswith(("leak@", "control_hit@"))]
    lines: list[str] = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in summary["aggregates"]:
        groups.setdefault((row["roster"], row["subset"]), []).append(row)
    for (roster, subset), rows in groups.items():
        title = roster if subset == "all" else f"{roster} — {subset}"
        n = rows[0]["n"]
        lines += [
            f"## {title} (n={n})",
            "",
            "| arm | " + " | ".join(metrics) + " |",
            "|---|" + "---|" * len(metrics),
        ]
        for row in rows:
            cells = []
            for m in metrics:
                v = row["metrics"].get(m)
                cells.append(
                    "—" if v is None else f"{v['mean']:.3f} [{v['ci_low']:.3f}, {v['ci_high']:.3f}]"
                )
            lines.append(f"| `{row['arm']}` | " + " | ".join(cells) + " |")
        negs = [
            (row["arm"], k, v)
            for row in rows
            for k, v in row["metrics"].items()
            if k.startswith(("leak@", "control_hit@"))
        ]
        if negs:
            lines.append("")
            lines.extend(
                f"- `{arm}` {k} = {v['mean']:.3f} over {v['n']} negative items"
                for arm, k, v in negs
            )
        lines.append("")
    return lines


def _latency_table(summary: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Latency per query (includes query embedding)",
        "",
        "| arm | p50 ms | p95 ms | errors | wall s |",
        "|---|---|---|---|---|",
    ]
    for arm in summary["arms"]:
        lat = arm["latency_ms"]
        lines.append(
            f"| `{arm['spec']}` | {lat['p50']:.2f} | {lat['p95']:.2f} | {arm['errors']} | {arm['wall_s']:.2f} |"
        )
    lines.append("")
    return lines


def forest_plot(path: Path, summary: Mapping[str, Any]) -> None:
    """Primary metric per arm with its bootstrap CI, one panel per roster (subset "all")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    primary = summary["metrics"]["primary"]
    rows = [r for r in summary["aggregates"] if r["subset"] == "all" and primary in r["metrics"]]
    rosters = list(dict.fromkeys(r["roster"] for r in rows)) or ["(none)"]
    fig, axes = plt.subplots(
        len(rosters),
        1,
        figsize=(7, 1.2 + 0.45 * max(1, len(rows) // max(1, len(rosters))) * len(rosters)),
        squeeze=False,
    )
    for ax, roster in zip(axes[:, 0], rosters, strict=True):
        sub = [r for r in rows if r["roster"] == roster]
        names = [r["arm"].split("(")[0] for r in sub]
        means = [r["metrics"][primary]["mean"] for r in sub]
        lows = [r["metrics"][primary]["mean"] - r["metrics"][primary]["ci_low"] for r in sub]
        highs = [r["metrics"][primary]["ci_high"] - r["metrics"][primary]["mean"] for r in sub]
        ypos = list(range(len(sub)))
        ax.errorbar(means, ypos, xerr=[lows, highs], fmt="o", capsize=3)
        ax.set_yticks(ypos, names)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(f"{roster}: {primary} (n={sub[0]['n'] if sub else 0})", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

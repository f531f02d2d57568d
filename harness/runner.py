"""`bench run`: verify lock, seals and corpus, run every arm on every sealed question, score, decide.

Arms only ever receive `Query` values built from `questions.json`; the key is loaded separately, after
its seal verifies, and is used only for scoring after every arm has answered.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from arms.base import Query
from arms.registry import build, full_canonical
from engine import __version__ as engine_version
from engine.embed import Embedder, get_embedder
from engine.memory import Memory
from engine.scope import Scope
from harness import freeze
from harness.gates import GateResult, choose_ship, decide_gate, decide_negative_gate
from harness.metrics import RankedItem, control_hit_at_k, leak_at_k, parse_measure, score_query
from harness.protocol.load import load_protocol
from harness.protocol.lock import verify
from harness.protocol.model import Protocol
from harness.roster import Gold, Question, load_questions
from harness.seal import SealError, load_sealed_key, verify_sealed
from harness.stats import paired_bootstrap
from harness.subset import select


class RunRefusedError(RuntimeError):
    """The run cannot start: the protocol, a seal or the corpus does not match its registration."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    deviation: str | None = None
    results_root: Path | None = None  # default: <repo root>/results
    cache_dir: Path | None = None  # default: <repo root>/cache
    embedder: str | None = None  # default: $RECALLBENCH_EMBEDDER or minilm
    key_paths: Mapping[str, Path] = field(default_factory=dict)  # roster -> private key file
    progress: bool = False
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)


@dataclass(kw_only=True)
class ArmRun:
    """One arm's answers to every question of every roster, with per-query latency."""

    spec: str
    canonical: str
    ranked: dict[str, dict[str, list[RankedItem]]]  # roster -> qid -> ranked items
    latency_ms: list[float]
    errors: dict[str, str]
    wall_s: float


@dataclass(kw_only=True)
class RunResult:
    directory: Path
    summary: dict[str, Any]
    gates: list[GateResult]


# ---------------------------------------------------------------------------------------------
# Corpus


def materialise_corpus(protocol: Protocol, *, progress: bool = False) -> Path:
    """The corpus folder; a synthetic corpus is generated there from its seed when missing."""
    path = protocol.corpus_path
    if protocol.corpus.source == "synthetic" and not path.exists():
        from harness.synthetic import SyntheticConfig, generate

        seed, size = protocol.corpus.seed, protocol.corpus.size
        if seed is None or size is None:  # the protocol loader already refuses this
            msg = "a synthetic corpus needs seed and size"
            raise RunRefusedError(msg)
        if progress:
            print(f"generating synthetic corpus (seed {seed}, {size} sessions) into {path}")
        generate(path, SyntheticConfig(seed=seed, sessions=size))
    if not path.exists():
        msg = f"corpus folder {path} (from {protocol.path}) does not exist"
        raise RunRefusedError(msg)
    return path


def current_seals(
    protocol: Protocol, key_paths: Mapping[str, Path]
) -> tuple[dict[str, str], list[str]]:
    """Each roster's seal as it is on disk now, and the seal errors found."""
    seals: dict[str, str] = {}
    errors: list[str] = []
    for ref in protocol.rosters:
        try:
            info = verify_sealed(protocol.roster_dir(ref.name), key_paths.get(ref.name))
        except SealError as exc:
            errors.append(f"roster {ref.name}: {exc}")
            continue
        seals[ref.name] = info.seal
    return seals, errors


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# ---------------------------------------------------------------------------------------------
# Running


def _embedder(name: str | None) -> Embedder:
    return get_embedder(name or os.environ.get("RECALLBENCH_EMBEDDER", "minilm"))


def _scope(question: Question) -> Scope:
    return Scope.everywhere() if question.scope == "*" else Scope.of(question.scope)


def run_arm(
    spec: str,
    memory: Memory,
    rosters: Mapping[str, Sequence[Question]],
    *,
    now: datetime,
    k: int,
    progress: bool = False,
) -> ArmRun:
    """Ask one arm every question (only `Query` values cross into the arm)."""
    arm = build(spec, memory)
    ranked: dict[str, dict[str, list[RankedItem]]] = {}
    latency: list[float] = []
    errors: dict[str, str] = {}
    records: dict[str, RankedItem] = {}
    total = sum(len(qs) for qs in rosters.values())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, desc=spec.split("(", maxsplit=1)[0], unit="q", leave=False)
    started = time.perf_counter()
    for roster, questions in rosters.items():
        out = ranked.setdefault(roster, {})
        for q in questions:
            query = Query(text=q.text, scope=_scope(q), now=now, k=k)
            t0 = time.perf_counter()
            try:
                hits = arm.search(query)
            except Exception as exc:  # an arm failing a question scores 0, never vanishes
                errors[f"{roster}/{q.qid}"] = f"{type(exc).__name__}: {exc}"
                hits = []
            latency.append((time.perf_counter() - t0) * 1000)
            missing = [h.chunk_id for h in hits if h.chunk_id not in records]
            for rec in memory.chunks(missing, Scope.everywhere()):
                records[rec.id] = RankedItem(
                    chunk_id=rec.id, session_id=rec.session_id, message_uuids=rec.message_uuids
                )
            out[q.qid] = [records[h.chunk_id] for h in hits if h.chunk_id in records]
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return ArmRun(
        spec=spec,
        canonical=full_canonical(spec),
        ranked=ranked,
        latency_ms=latency,
        errors=errors,
        wall_s=time.perf_counter() - started,
    )


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass(kw_only=True)
class Scores:
    """Per-query values: scores[arm][roster][metric][qid]."""

    values: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)

    def put(self, arm: str, roster: str, metric: str, qid: str, value: float) -> None:
        self.values.setdefault(arm, {}).setdefault(roster, {}).setdefault(metric, {})[qid] = value

    def vector(self, arm: str, roster: str, metric: str, qids: Sequence[str]) -> np.ndarray:
        table = self.values.get(arm, {}).get(roster, {}).get(metric, {})
        return np.array([table.get(q, 0.0) for q in qids], dtype=np.float64)


def score_all(
    protocol: Protocol,
    runs: Sequence[ArmRun],
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
) -> Scores:
    """Score every arm on every question; negatives get leak@k, their controls control_hit@k."""
    measures = [parse_measure(m) for m in protocol.metrics.all if not _is_negative_metric(m)]
    negative_ks = sorted(
        {int(g.metric.split("@")[1]) for g in protocol.gates if g.kind == "negative"}
    )
    scores = Scores()
    for run in runs:
        for ref in protocol.rosters:
            gold = keys[ref.name]
            ranked = run.ranked.get(ref.name, {})
            for q in questions[ref.name]:
                g = gold[q.qid]
                items = ranked.get(q.qid, [])
                if g.relevant:
                    for metric, value in score_query(items, g.relevant, ref.unit, measures).items():
                        scores.put(run.spec, ref.name, metric, q.qid, value)
                if g.forbidden:
                    for k in negative_ks:
                        leak = leak_at_k(items, g.forbidden, ref.unit, k)
                        scores.put(run.spec, ref.name, f"leak@{k}", q.qid, leak)
                        control = g.control or ""
                        control_gold = gold[control].relevant if control in gold else {}
                        hit = (
                            control_hit_at_k(ranked.get(control, []), control_gold, ref.unit, k)
                            if control_gold
                            else 0.0
                        )
                        scores.put(run.spec, ref.name, f"control_hit@{k}", q.qid, hit)
    return scores


def _is_negative_metric(metric: str) -> bool:
    return metric.startswith(("leak@", "control_hit@"))


def subsets(
    protocol: Protocol, questions: Mapping[str, Sequence[Question]]
) -> dict[tuple[str, str], list[str]]:
    """(roster, subset name) -> qids of positive (scorable) questions; subset "all" is the roster."""
    out: dict[tuple[str, str], list[str]] = {}
    for ref in protocol.rosters:
        qs = list(questions[ref.name])
        out[(ref.name, "all")] = [q.qid for q in qs]
        for name, expr in sorted(ref.subsets.items()):
            out[(ref.name, name)] = [q.qid for q in select(qs, expr)]
    return out


def decide_gates(
    protocol: Protocol,
    scores: Scores,
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
) -> list[GateResult]:
    groups = subsets(protocol, questions)
    results: list[GateResult] = []
    for gate in protocol.gates:
        gold = keys[gate.roster]
        qids = groups[(gate.roster, gate.subset or "all")]
        if gate.kind == "negative":
            negatives = [q for q in qids if gold[q].forbidden]
            k = gate.metric.split("@")[1]
            leaks = scores.vector(gate.treatment, gate.roster, f"leak@{k}", negatives)
            hits = scores.vector(gate.treatment, gate.roster, f"control_hit@{k}", negatives)
            results.append(decide_negative_gate(gate, leaks, hits))
            continue
        positives = [q for q in qids if gold[q].relevant]
        baseline = gate.baseline or ""
        t = scores.vector(gate.treatment, gate.roster, gate.metric, positives)
        b = scores.vector(baseline, gate.roster, gate.metric, positives)
        results.append(decide_gate(gate, t, b, protocol.stats))
    return results


def aggregates(
    protocol: Protocol,
    scores: Scores,
    questions: Mapping[str, Sequence[Question]],
    keys: Mapping[str, Mapping[str, Gold]],
) -> list[dict[str, Any]]:
    """Mean of every metric per (arm, roster, subset) over all positive questions, with a CI."""
    rows: list[dict[str, Any]] = []
    measures = [m for m in protocol.metrics.all if not _is_negative_metric(m)]
    for (roster, subset), qids in subsets(protocol, questions).items():
        gold = keys[roster]
        positives = [q for q in qids if gold[q].relevant]
        negatives = [q for q in qids if gold[q].forbidden]
        for arm in protocol.arms:
            row: dict[str, Any] = {
                "arm": arm,
                "roster": roster,
                "subset": subset,
                "n": len(positives),
                "metrics": {},
            }
            for metric in measures:
                values = scores.vector(arm, roster, metric, positives)
                if len(values) == 0:
                    continue
                ci = paired_bootstrap(
                    values,
                    np.zeros_like(values),
                    resamples=protocol.stats.resamples,
                    seed=protocol.stats.seed,
                    confidence=protocol.stats.confidence,
                )
                row["metrics"][metric] = {
                    "mean": float(values.mean()),
                    "ci_low": ci.ci_low,
                    "ci_high": ci.ci_high,
                }
            if negatives:
                for key in sorted(scores.values.get(arm, {}).get(roster, {})):
                    if _is_negative_metric(key):
                        values = scores.vector(arm, roster, key, negatives)
                        row["metrics"][key] = {"mean": float(values.mean()), "n": len(negatives)}
            rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# The whole run


def run(protocol_path: Path, options: RunOptions) -> RunResult:
    """Verify, run, score, decide and write a new results folder. Never overwrites a run."""
    from harness.report import write_results

    protocol = load_protocol(protocol_path)
    root = protocol.root
    corpus_dir = materialise_corpus(protocol, progress=options.progress)
    manifest = freeze.manifest(corpus_dir)
    seals, seal_errors = current_seals(protocol, options.key_paths)
    problems = seal_errors + [
        m.message for m in verify(protocol.path, manifest_sha256=manifest.sha256, seals=seals)
    ]
    if problems and not options.deviation:
        msg = (
            "refusing to run "
            + str(protocol.path)
            + ":\n  "
            + "\n  ".join(problems)
            + '\nRe-register or amend the protocol before the first run, or pass --deviation "why" '
            "to run anyway with the deviation recorded in the results."
        )
        raise RunRefusedError(msg)
    deviations = [{"reason": options.deviation, "problems": problems}] if options.deviation else []
    wall_start = time.perf_counter()

    questions = {
        ref.name: load_questions(protocol.roster_dir(ref.name)) for ref in protocol.rosters
    }
    contamination = freeze.scan(
        corpus_dir,
        questions={name: [(q.qid, q.text) for q in qs] for name, qs in questions.items()},
        cutoff=protocol.corpus.cutoff,
    )
    excluded = contamination.flagged(protocol.corpus.exclude)
    memory, db_path = _open_corpus_db(
        protocol, options, corpus_dir, manifest.sha256, contamination, excluded
    )
    now = protocol.corpus.cutoff
    k = protocol.metrics.k
    runs = [
        run_arm(spec, memory, questions, now=now, k=k, progress=options.progress)
        for spec in protocol.arms
    ]
    # Gold is loaded only now, after every arm has answered, and only through the seal check.
    keys = {
        ref.name: load_sealed_key(
            options.key_paths.get(ref.name, protocol.roster_dir(ref.name) / "key.json"),
            sealed_dir=protocol.roster_dir(ref.name),
        ).gold
        for ref in protocol.rosters
    }
    scores = score_all(protocol, runs, questions, keys)
    gates = decide_gates(protocol, scores, questions, keys)
    verdicts = {g.id: g.verdict for g in gates}
    shipped = choose_ship(protocol.ship, verdicts)
    started_at = options.clock()
    summary = _summary(
        protocol=protocol,
        manifest=manifest,
        seals=seals,
        contamination=contamination,
        excluded=excluded,
        deviations=deviations,
        runs=runs,
        aggregates=aggregates(protocol, scores, questions, keys),
        gates=gates,
        shipped=shipped,
        embedder=memory.embedder.id if memory.embedder else None,
        db_path=db_path,
        started_at=started_at,
        wall_s=time.perf_counter() - wall_start,
    )
    results_root = options.results_root or root / "results"
    directory = write_results(
        results_root / protocol.id,
        summary=summary,
        protocol=protocol,
        runs=runs,
        scores=scores,
        questions=questions,
        keys=keys,
        gates=gates,
        started_at=started_at,
    )
    return RunResult(directory=directory, summary=summary, gates=gates)


def _open_corpus_db(
    protocol: Protocol,
    options: RunOptions,
    corpus_dir: Path,
    manifest_sha: str,
    contamination: freeze.ContaminationReport,
    excluded: set[str],
) -> tuple[Memory, Path]:
    """Import the corpus (less the pre-declared exclusions) into a cached database.

    The database is keyed by the manifest and the exclusions, so a second run re-imports nothing and
    re-embeds nothing (vectors are keyed by content hash).
    """
    cache = options.cache_dir or protocol.root / "cache"
    excl_hash = hashlib.sha256("\n".join(sorted(excluded)).encode()).hexdigest()[:8]
    db_path = cache / "bench" / f"{manifest_sha[:16]}-{excl_hash}.db"
    # A benchmark asks many queries of a frozen corpus: FTS5 answers from an in-memory snapshot.
    memory = Memory(db_path, _embedder(options.embedder), lexical_index="sync")
    files = [corpus_dir / f for f in contamination.files_excluding(excluded)]
    if files:
        memory.import_paths(files, embed=True, progress=options.progress)
    memory.ensure_index()
    return memory, db_path


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


def _summary(
    *,
    protocol: Protocol,
    manifest: freeze.Manifest,
    seals: Mapping[str, str],
    contamination: freeze.ContaminationReport,
    excluded: set[str],
    deviations: list[dict[str, Any]],
    runs: Sequence[ArmRun],
    aggregates: list[dict[str, Any]],
    gates: Sequence[GateResult],
    shipped: str,
    embedder: str | None,
    db_path: Path,
    started_at: datetime,
    wall_s: float,
) -> dict[str, Any]:
    from harness.protocol.lock import load_lock

    lock = load_lock(protocol.path)
    return {
        "schema": "recallbench.summary/1",
        "deviations": deviations,
        "protocol": {
            "id": protocol.id,
            "title": protocol.title,
            "path": protocol.path.resolve().relative_to(protocol.root.resolve()).as_posix(),
            "sha256": protocol.sha256,
            "raw_sha256": protocol.raw_sha256,
        },
        "lock": lock.to_dict() if lock is not None else None,
        "seals": dict(sorted(seals.items())),
        "corpus": {
            "source": protocol.corpus.source,
            "manifest_sha256": manifest.sha256,
            "files": len(manifest.entries),
            "bytes": sum(e.size for e in manifest.entries),
            "cutoff": protocol.corpus.cutoff.isoformat(),
            "exclude": list(protocol.corpus.exclude),
            "excluded_sessions": sorted(excluded),
            "contamination": contamination.to_dict(),
        },
        "arms": [
            {
                "spec": r.spec,
                "canonical": r.canonical,
                "errors": len(r.errors),
                "error_items": dict(sorted(r.errors.items())),
                "wall_s": round(r.wall_s, 4),
                "latency_ms": {
                    "p50": round(_percentile(r.latency_ms, 50), 4),
                    "p95": round(_percentile(r.latency_ms, 95), 4),
                    "n": len(r.latency_ms),
                },
            }
            for r in runs
        ],
        "metrics": {
            "primary": protocol.metrics.primary,
            "all": list(protocol.metrics.all),
            "k": protocol.metrics.k,
        },
        "aggregates": aggregates,
        "gates": [g.to_dict() for g in gates],
        "shipped_arm": shipped,
        "stats": {
            "seed": protocol.stats.seed,
            "resamples": protocol.stats.resamples,
            "confidence": protocol.stats.confidence,
        },
        "environment": {
            "engine_version": engine_version,
            "embedder": embedder,
            "git_commit": git_commit(protocol.root),
            "machine": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "database": db_path.name,
        },
        "started_at": started_at.isoformat(timespec="seconds"),
        "wall_s": round(wall_s, 3),
    }


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"

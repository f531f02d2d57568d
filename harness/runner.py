"""`bench run`: verify lock, seals and corpus, run every arm on every sealed question, score, decide.

A run is three steps: `verify_inputs` (lock, seals, corpus manifest, pinned embedder), `evaluate`
(ask every arm, then load the gold, score and decide: `harness.scoring`) and `write_outputs`
(`harness.report`). The embedder is part of the experiment: a run whose live embedder
(``$RECALLBENCH_EMBEDDER`` or minilm) is not the one the protocol pins is refused unless a deviation
is declared; a protocol registered before pinning runs with the live one, recorded as unpinned.
Arms only ever receive `Query` values built from `questions.json`; the key is loaded separately, after
its seal verifies, and is used only for scoring after every arm has answered.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arms.base import Query
from arms.registry import build
from engine import __version__ as engine_version
from engine.embed import Embedder
from engine.memory import Memory
from engine.scope import Scope
from harness import freeze
from harness.arm_memories import (
    extra_embedders,
    memory_for,
    open_extra_memories,
    reads_sentences,
)
from harness.corpus_db import CorpusMissingError, materialise, open_memory
from harness.fit import check_fits
from harness.fit_encoder import check_encoders
from harness.gates import GateResult, choose_ship
from harness.metrics import RankedItem
from harness.protocol.arm_embedder import arm_canonical, split_arm
from harness.protocol.embedder import EmbedderChoiceError, live_embedder, live_name, use_hint
from harness.protocol.load import load_protocol
from harness.protocol.lock import load_lock, verify
from harness.protocol.model import Protocol, RosterRef
from harness.report import write_results
from harness.results import (
    ArmRecord,
    ArmRun,
    Contamination,
    CorpusRecord,
    Deviation,
    EmbedderRecord,
    Environment,
    Latency,
    MetricNames,
    ProtocolRecord,
    Scores,
    StatsRecord,
    Summary,
)
from harness.roster import Gold, Question, load_questions
from harness.scoring import aggregates, decide_gates, score_all
from harness.seal import KEY_FILE, SealError, load_sealed_key, verify_sealed
from harness.settles import AppliedSettles, SettlesError, apply_settles, load_settles
from harness.stats import percentile


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


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """The results folder a run wrote, its summary and its gate verdicts."""

    directory: Path
    summary: Summary
    gates: list[GateResult]


# ---------------------------------------------------------------------------------------------
# Corpus


def materialise_corpus(protocol: Protocol, *, progress: bool = False) -> Path:
    """The corpus folder; a synthetic corpus is generated there from its seed when missing."""
    try:
        return materialise(protocol.corpus, protocol.root, protocol.path, progress=progress)
    except CorpusMissingError as exc:
        raise RunRefusedError(str(exc)) from exc


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


def _scope(question: Question) -> Scope:
    return Scope.everywhere() if question.scope == "*" else Scope.of(question.scope)


def _key_path(protocol: Protocol, ref: RosterRef, options: RunOptions) -> Path:
    return options.key_paths.get(ref.name, protocol.roster_dir(ref.name) / KEY_FILE)


def _check_units(protocol: Protocol, options: RunOptions) -> None:
    """Refuse, before any arm runs, a roster whose key is scored per another unit than the protocol's.

    Only the key's ``unit`` field is read here (its seal was checked already); the gold itself is
    loaded after every arm has answered.
    """
    for ref in protocol.rosters:
        path = _key_path(protocol, ref, options)
        try:
            unit = json.loads(path.read_text(encoding="utf-8")).get("unit")
        except (OSError, ValueError, AttributeError) as exc:
            msg = f"Roster {ref.name}: cannot read the unit of its key {path}: {exc}"
            raise RunRefusedError(msg) from exc
        if unit != ref.unit:
            msg = (
                f"Roster {ref.name}: its key is scored per {unit}, but {protocol.path} says unit = "
                f"{ref.unit!r}, so every query would score 0. Instantiate the protocol again from "
                "its template (`protocol instantiate` reads the unit from the key)"
            )
            raise RunRefusedError(msg)


def run_arm(
    spec: str,
    memory: Memory,
    rosters: Mapping[str, Sequence[Question]],
    *,
    now: datetime,
    k: int,
    progress: bool = False,
    model: Mapping[str, Any] | None = None,
) -> ArmRun:
    """Ask one arm every question (only `Query` values cross into the arm); a fitted arm runs
    from `model`, the one its locked artifact holds.

    `spec` is the protocol's arm entry; one that names an embedder (``vector()@<id>``) is built from
    its spec part over `memory`, which must be that embedder's, and keeps the whole entry as its name.
    """
    entry = split_arm(spec)
    arm = build(entry.spec, memory) if model is None else build(entry.spec, memory, model)
    ranked: dict[str, dict[str, list[RankedItem]]] = {}
    latency: list[float] = []
    errors: dict[str, str] = {}
    records: dict[str, RankedItem] = {}
    total = sum(len(qs) for qs in rosters.values())
    bar = None
    if progress:
        from tqdm import tqdm

        name = entry.spec.split("(", maxsplit=1)[0]
        desc = name if entry.embedder is None else f"{name}@{entry.embedder}"
        bar = tqdm(total=total, desc=desc, unit="q", leave=False)
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
        canonical=arm_canonical(spec),
        ranked=ranked,
        latency_ms=latency,
        errors=errors,
        wall_s=time.perf_counter() - started,
    )


# ---------------------------------------------------------------------------------------------
# The whole run: verify -> evaluate -> write


@dataclass(frozen=True, kw_only=True)
class Verified:
    """A protocol whose lock, seals and corpus were checked, and any declared deviation."""

    protocol: Protocol
    corpus_dir: Path
    manifest: freeze.Manifest
    seals: Mapping[str, str]
    deviations: tuple[Deviation, ...]
    embedder: Embedder  # the live one; built, but no model loaded until the first embed
    embedders: Mapping[str, Embedder] = field(default_factory=dict)  # extra id -> its embedder
    models: Mapping[str, Any] = field(default_factory=dict)  # fitted arm (canonical) -> its model


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """Every arm's answers, their scores, the gate verdicts and the summary of the run."""

    questions: Mapping[str, Sequence[Question]]
    keys: Mapping[str, Mapping[str, Gold]]
    runs: tuple[ArmRun, ...]
    scores: Scores
    gates: list[GateResult]
    summary: Summary
    started_at: datetime


def run(protocol_path: Path, options: RunOptions) -> RunResult:
    """Verify, run, score, decide and write a new results folder. Never overwrites a run."""
    verified = verify_inputs(protocol_path, options)
    evaluation = evaluate(verified, options)
    return write_outputs(verified, evaluation, options)


def verify_inputs(protocol_path: Path, options: RunOptions) -> Verified:
    """Check the protocol against its lock, the rosters against their seals, the corpus manifest.

    Raises:
        RunRefusedError: something does not match and no deviation was declared.
    """
    protocol = load_protocol(protocol_path)
    try:
        embedder = live_embedder(options.embedder)
    except EmbedderChoiceError as exc:
        raise RunRefusedError(f"refusing to run {protocol.path}: {exc}") from exc
    corpus_dir = materialise_corpus(protocol, progress=options.progress)
    manifest = freeze.manifest(corpus_dir)
    seals, seal_errors = current_seals(protocol, options.key_paths)
    checked = verify(
        protocol.path,
        manifest_sha256=manifest.sha256,
        seals=seals,
        read_before=manifest.read_before,
    )
    problems = seal_errors + [m.message for m in checked]
    lock = load_lock(protocol.path)
    locked_fits = lock.fits if lock is not None else {}
    fits = check_fits(protocol, locked_fits, test_corpus=corpus_dir)
    encoders = check_encoders(
        protocol,
        lock.encoders if lock is not None else {},
        embedder,
        test_corpus=corpus_dir,
        cache=options.cache_dir or protocol.root / "cache",
        progress=options.progress,
    )
    leaked = [*fits.leaks, *encoders.leaks]
    if leaked:  # no deviation runs a test its training saw
        raise RunRefusedError(f"refusing to run {protocol.path}:\n  " + "\n  ".join(leaked))
    problems += [*fits.problems, *encoders.problems]
    pin_problem = _embedder_problem(protocol, embedder.id, live_name(options.embedder))
    extras, extra_problems = extra_embedders(protocol)
    extra_problems += [
        f"encoder {e.name}: its artifact or weights did not check out (above), so the arms that "
        f"rank by it cannot run"
        for e in protocol.encoders
        if e.name not in encoders.embedders
    ]
    if extra_problems:  # no deviation runs an arm over an embedder it cannot build
        msg = f"refusing to run {protocol.path}:\n  " + "\n  ".join([*problems, *extra_problems])
        raise RunRefusedError(msg)
    extras = {**extras, **encoders.embedders}
    if (problems or pin_problem) and not options.deviation:
        fixes = [_embedder_fix(protocol)] if pin_problem else []
        if problems:
            fixes.append("Fix: re-register or amend the protocol before the first run.")
        msg = (
            f"refusing to run {protocol.path}:\n  "
            + "\n  ".join([*([pin_problem] if pin_problem else []), *problems])
            + "\n"
            + "\n".join(fixes)
            + '\nOr pass --deviation "why" to run anyway with the deviation recorded in the results.'
        )
        raise RunRefusedError(msg)
    deviations = (
        (
            Deviation(
                reason=options.deviation,
                problems=(*([pin_problem] if pin_problem else []), *problems),
            ),
        )
        if options.deviation
        else ()
    )
    return Verified(
        protocol=protocol,
        corpus_dir=corpus_dir,
        manifest=manifest,
        seals=seals,
        deviations=deviations,
        embedder=embedder,
        embedders=extras,
        models=fits.models,
    )


def _embedder_problem(protocol: Protocol, live_id: str, name: str) -> str | None:
    """The pinned-embedder mismatch, naming both ids, or None when they match or nothing is pinned."""
    if protocol.embedder is None or protocol.embedder == live_id:
        return None
    return (
        f"embedder: {protocol.path} pins {protocol.embedder} but this run would use {live_id} "
        f"(embedder {name!r})"
    )


def _embedder_fix(protocol: Protocol) -> str:
    pinned = protocol.embedder or ""
    command = shlex.join(["recallbench", "bench", "run", str(protocol.path)])
    return f"Fix: run with the pinned embedder {pinned}: {use_hint(pinned)}, then `{command}`."


def evaluate(verified: Verified, options: RunOptions) -> Evaluation:
    """Import the corpus, ask every arm every question, then load the gold, score and decide."""
    wall_start = time.perf_counter()
    started_at = (
        options.clock()
    )  # before the import and the arms: the run id and summary say when it began
    protocol = verified.protocol
    _check_units(protocol, options)
    questions = {
        ref.name: load_questions(protocol.roster_dir(ref.name)) for ref in protocol.rosters
    }
    contamination = freeze.scan(
        verified.corpus_dir,
        questions={name: [(q.qid, q.text) for q in qs] for name, qs in questions.items()},
        cutoff=protocol.corpus.cutoff,
    )
    excluded = contamination.flagged(protocol.corpus.exclude)
    memory, db_path = _open_corpus_db(protocol, verified, options, contamination, excluded)
    extras = open_extra_memories(
        db_path,
        verified.embedders,
        progress=options.progress,
        sentences=reads_sentences(protocol.arms),
    )
    if extras:  # their vectors moved the store's generation: bring this embedder's index up to it
        memory.ensure_index()
    settled = _apply_settles(verified.corpus_dir, memory, excluded)
    runs = tuple(
        run_arm(
            spec,
            memory_for(spec, memory, extras),
            questions,
            now=protocol.corpus.cutoff,
            k=protocol.metrics.k,
            progress=options.progress,
            model=verified.models.get(arm_canonical(spec)),
        )
        for spec in protocol.arms
    )
    # Gold is loaded only now, after every arm has answered, and only through the seal check.
    keys = {
        ref.name: load_sealed_key(
            _key_path(protocol, ref, options), sealed_dir=protocol.roster_dir(ref.name)
        ).gold
        for ref in protocol.rosters
    }
    scores = score_all(protocol, runs, questions, keys)
    gates = decide_gates(protocol, scores, questions, keys)
    summary = Summary(
        deviations=verified.deviations,
        protocol=_protocol_record(protocol),
        lock=_lock_record(protocol),
        seals=dict(sorted(verified.seals.items())),
        corpus=_corpus_record(protocol, verified.manifest, contamination, excluded, settled),
        arms=tuple(_arm_record(r) for r in runs),
        metrics=MetricNames(
            primary=protocol.metrics.primary, all=protocol.metrics.all, k=protocol.metrics.k
        ),
        aggregates=tuple(aggregates(protocol, scores, questions, keys)),
        embedder=EmbedderRecord(used=verified.embedder.id, pinned=protocol.embedder),
        gates=tuple(gates),
        shipped_arm=choose_ship(protocol.ship, {g.id: g.verdict for g in gates}),
        stats=StatsRecord(
            seed=protocol.stats.seed,
            resamples=protocol.stats.resamples,
            confidence=protocol.stats.confidence,
        ),
        environment=_environment(protocol, memory, db_path),
        started_at=started_at.isoformat(timespec="seconds"),
        wall_s=round(time.perf_counter() - wall_start, 3),
    )
    return Evaluation(
        questions=questions,
        keys=keys,
        runs=runs,
        scores=scores,
        gates=gates,
        summary=summary,
        started_at=started_at,
    )


def write_outputs(verified: Verified, evaluation: Evaluation, options: RunOptions) -> RunResult:
    """Write the new results folder (`harness.report.write_results`)."""
    protocol = verified.protocol
    results_root = options.results_root or protocol.root / "results"
    directory, summary = write_results(
        results_root / protocol.id,
        summary=evaluation.summary,
        protocol=protocol,
        runs=evaluation.runs,
        scores=evaluation.scores,
        questions=evaluation.questions,
        keys=evaluation.keys,
        started_at=evaluation.started_at,
    )
    return RunResult(directory=directory, summary=summary, gates=evaluation.gates)


def _open_corpus_db(
    protocol: Protocol,
    verified: Verified,
    options: RunOptions,
    contamination: freeze.ContaminationReport,
    excluded: set[str],
) -> tuple[Memory, Path]:
    """Import the corpus (less the pre-declared exclusions) into a cached database."""
    return open_memory(
        options.cache_dir or protocol.root / "cache",
        verified.manifest.sha256,
        verified.corpus_dir,
        [verified.corpus_dir / f for f in contamination.files_excluding(excluded)],
        excluded,
        verified.embedder,
        progress=options.progress,
        sentences=reads_sentences(protocol.arms),
        chunking=protocol.corpus.chunking,
    )


def _apply_settles(corpus_dir: Path, memory: Memory, excluded: set[str]) -> AppliedSettles | None:
    """Apply the corpus's settles (`harness.settles`) through the engine, before any arm runs."""
    try:
        settles = load_settles(corpus_dir)
        return None if settles is None else apply_settles(memory, settles, excluded=excluded)
    except SettlesError as exc:
        msg = f"refusing to run: {exc}"
        raise RunRefusedError(msg) from exc


# ---------------------------------------------------------------------------------------------
# The summary's records


def _protocol_record(protocol: Protocol) -> ProtocolRecord:
    return ProtocolRecord(
        id=protocol.id,
        title=protocol.title,
        path=protocol.path.resolve().relative_to(protocol.root.resolve()).as_posix(),
        sha256=protocol.sha256,
        raw_sha256=protocol.raw_sha256,
    )


def _lock_record(protocol: Protocol) -> dict[str, Any] | None:
    lock = load_lock(protocol.path)
    return lock.to_dict() if lock is not None else None


def _corpus_record(
    protocol: Protocol,
    manifest: freeze.Manifest,
    contamination: freeze.ContaminationReport,
    excluded: set[str],
    settled: AppliedSettles | None = None,
) -> CorpusRecord:
    return CorpusRecord(
        source=protocol.corpus.source,
        manifest_sha256=manifest.sha256,
        files=len(manifest.entries),
        bytes=sum(e.size for e in manifest.entries),
        cutoff=protocol.corpus.cutoff.isoformat(),
        exclude=protocol.corpus.exclude,
        excluded_sessions=tuple(sorted(excluded)),
        contamination=Contamination.from_dict(contamination.to_dict()),
        settles=settled.to_dict() if settled is not None else None,
        chunking=protocol.corpus.chunking,
    )


def _arm_record(arm_run: ArmRun) -> ArmRecord:
    latency = arm_run.latency_ms
    return ArmRecord(
        spec=arm_run.spec,
        canonical=arm_run.canonical,
        error_items=dict(sorted(arm_run.errors.items())),
        wall_s=round(arm_run.wall_s, 4),
        latency_ms=Latency(
            p50=round(percentile(latency, 50), 4),
            p95=round(percentile(latency, 95), 4),
            n=len(latency),
        ),
    )


def _environment(protocol: Protocol, memory: Memory, db_path: Path) -> Environment:
    return Environment(
        engine_version=engine_version,
        embedder=memory.embedder.id if memory.embedder else None,
        git_commit=git_commit(protocol.root),
        machine=platform.platform(),
        python=platform.python_version(),
        cpus=os.cpu_count(),
        database=db_path.name,
    )

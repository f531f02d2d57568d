"""Typed results of a benchmark run: what the runner computes and what ``summary.json`` holds.

The runner builds an `ArmRun` per arm and one `Scores` table, then a frozen `Summary`; the report,
``recallbench ship`` and the schema check all read that same `Summary`. ``summary.json`` keeps the
format it always had: `Summary.to_dict` writes exactly the keys, order and values of earlier runs,
and `Summary.from_dict` reads a committed file back (after checking it against
``harness/schemas/summary.schema.json``) so that ``to_dict`` gives the same JSON again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator

from harness.gates import GateResult
from harness.metrics import RankedItem

__all__ = [
    "SCHEMA",
    "Aggregate",
    "ArmRecord",
    "ArmRun",
    "Contamination",
    "CorpusRecord",
    "Deviation",
    "EmbedderRecord",
    "Environment",
    "Latency",
    "MetricMean",
    "MetricNames",
    "ProtocolRecord",
    "ResultFiles",
    "ResultsError",
    "Scores",
    "StatsRecord",
    "Summary",
    "summary_schema",
    "validate_summary",
]

SCHEMA = "recallbench.summary/1"


class ResultsError(RuntimeError):
    """A results folder cannot be written, or its summary does not validate."""


# ---------------------------------------------------------------------------------------------
# What the runner computes


@dataclass(frozen=True, kw_only=True)
class ArmRun:
    """One arm's answers to every question of every roster, with per-query latency."""

    spec: str
    canonical: str
    ranked: Mapping[str, Mapping[str, list[RankedItem]]]  # roster -> qid -> ranked items
    latency_ms: Sequence[float]
    errors: Mapping[str, str]  # "<roster>/<qid>" -> the exception the arm raised
    wall_s: float


@dataclass(kw_only=True)
class Scores:
    """Per-query values, ``values[arm][roster][metric][qid]``; filled while scoring, then read."""

    values: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)

    def put(self, arm: str, roster: str, metric: str, qid: str, value: float) -> None:
        self.values.setdefault(arm, {}).setdefault(roster, {}).setdefault(metric, {})[qid] = value

    def table(self, arm: str, roster: str, metric: str) -> Mapping[str, float]:
        """qid -> value of one metric; a question never scored is absent."""
        return self.values.get(arm, {}).get(roster, {}).get(metric, {})

    def metrics(self, arm: str, roster: str) -> list[str]:
        """The metric names scored for one arm on one roster, sorted."""
        return sorted(self.values.get(arm, {}).get(roster, {}))

    def vector(self, arm: str, roster: str, metric: str, qids: Sequence[str]) -> np.ndarray:
        """Values in `qids` order, a question never scored counting 0.0 (paired tests need both)."""
        table = self.table(arm, roster, metric)
        return np.array([table.get(q, 0.0) for q in qids], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# summary.json, one frozen value per object in it


@dataclass(frozen=True, kw_only=True)
class Deviation:
    """A run made despite mismatches: the declared reason and what did not match."""

    reason: str
    problems: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "problems": list(self.problems)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Deviation:
        return cls(reason=data["reason"], problems=tuple(data["problems"]))


@dataclass(frozen=True, kw_only=True)
class EmbedderRecord:
    """The embedder a run used and the one its protocol pins (None: registered before pinning)."""

    used: str
    pinned: str | None

    @property
    def status(self) -> str:
        """``pinned`` (they match), ``deviation`` (they differ; declared) or ``unpinned``."""
        if self.pinned is None:
            return "unpinned"
        return "pinned" if self.used == self.pinned else "deviation"

    def describe(self) -> str:
        """One line for the terminal and the report."""
        if self.status == "unpinned":
            return (
                f"embedder {self.used}, unpinned: the protocol predates embedder pinning, "
                "so the live embedder was used and recorded"
            )
        if self.status == "pinned":
            return f"embedder {self.used}, as the protocol pins"
        return f"embedder {self.used}, but the protocol pins {self.pinned} (a declared deviation)"

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "pinned": self.pinned, "status": self.status}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EmbedderRecord:
        return cls(used=data["used"], pinned=data["pinned"])


@dataclass(frozen=True, kw_only=True)
class ProtocolRecord:
    """Which protocol ran: its id, title, path (relative to the repository) and both hashes."""

    id: str
    title: str
    path: str
    sha256: str
    raw_sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "sha256": self.sha256,
            "raw_sha256": self.raw_sha256,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProtocolRecord:
        return cls(**{k: data[k] for k in ("id", "title", "path", "sha256", "raw_sha256")})


@dataclass(frozen=True, kw_only=True)
class Contamination:
    """What the corpus scan found (``harness.freeze.ContaminationReport.to_dict``'s format)."""

    sessions: int
    self_transcripts: tuple[str, ...]
    scaffolding: Mapping[str, int]
    scrubbed: Mapping[str, int]
    roster_leaks: tuple[Mapping[str, Any], ...]
    after_cutoff: tuple[str, ...]
    skipped: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "self_transcripts": {
                "count": len(self.self_transcripts),
                "sessions": list(self.self_transcripts),
            },
            "scaffolding": dict(self.scaffolding),
            "scrubbed": dict(self.scrubbed),
            "roster_leaks": {
                "count": len(self.roster_leaks),
                "items": [dict(leak) for leak in self.roster_leaks],
            },
            "after_cutoff": {"count": len(self.after_cutoff), "sessions": list(self.after_cutoff)},
            "skipped": dict(self.skipped),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Contamination:
        return cls(
            sessions=data["sessions"],
            self_transcripts=tuple(data["self_transcripts"]["sessions"]),
            scaffolding=data["scaffolding"],
            scrubbed=data["scrubbed"],
            roster_leaks=tuple(data["roster_leaks"]["items"]),
            after_cutoff=tuple(data["after_cutoff"]["sessions"]),
            skipped=data["skipped"],
        )


@dataclass(frozen=True, kw_only=True)
class CorpusRecord:
    """The corpus a run read: manifest, size, cutoff, exclusions and the contamination scan."""

    source: str
    manifest_sha256: str
    files: int
    bytes: int
    cutoff: str
    exclude: tuple[str, ...]
    excluded_sessions: tuple[str, ...]
    contamination: Contamination
    settles: Mapping[str, Any] | None = None  # harness.settles.AppliedSettles.to_dict(), if any
    # the chunking version the corpus was chunked under (`engine.chunking`); written when not 1, so a
    # run of a protocol that names none writes what it wrote before
    chunking: int = 1

    def to_dict(self) -> dict[str, Any]:
        out = {
            "source": self.source,
            "manifest_sha256": self.manifest_sha256,
            "files": self.files,
            "bytes": self.bytes,
            "cutoff": self.cutoff,
            "exclude": list(self.exclude),
            "excluded_sessions": list(self.excluded_sessions),
            "contamination": self.contamination.to_dict(),
        }
        if self.settles is not None:
            out["settles"] = dict(self.settles)
        if self.chunking != 1:
            out["chunking"] = self.chunking
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorpusRecord:
        return cls(
            source=data["source"],
            manifest_sha256=data["manifest_sha256"],
            files=data["files"],
            bytes=data["bytes"],
            cutoff=data["cutoff"],
            exclude=tuple(data["exclude"]),
            excluded_sessions=tuple(data["excluded_sessions"]),
            contamination=Contamination.from_dict(data["contamination"]),
            settles=data.get("settles"),
            chunking=data.get("chunking", 1),
        )


@dataclass(frozen=True, kw_only=True)
class Latency:
    """Per-query latency percentiles in milliseconds, over `n` queries."""

    p50: float
    p95: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"p50": self.p50, "p95": self.p95, "n": self.n}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Latency:
        return cls(p50=data["p50"], p95=data["p95"], n=data["n"])


@dataclass(frozen=True, kw_only=True)
class ArmRecord:
    """One arm as the summary records it: spec, canonical spec, errors, wall time and latency."""

    spec: str
    canonical: str
    error_items: Mapping[str, str]
    wall_s: float
    latency_ms: Latency

    @property
    def errors(self) -> int:
        return len(self.error_items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "canonical": self.canonical,
            "errors": self.errors,
            "error_items": dict(self.error_items),
            "wall_s": self.wall_s,
            "latency_ms": self.latency_ms.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArmRecord:
        return cls(
            spec=data["spec"],
            canonical=data["canonical"],
            error_items=data["error_items"],
            wall_s=data["wall_s"],
            latency_ms=Latency.from_dict(data["latency_ms"]),
        )


@dataclass(frozen=True, kw_only=True)
class MetricNames:
    """The protocol's primary metric, every metric (primary first) and the ranking depth."""

    primary: str
    all: tuple[str, ...]
    k: int

    def to_dict(self) -> dict[str, Any]:
        return {"primary": self.primary, "all": list(self.all), "k": self.k}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricNames:
        return cls(primary=data["primary"], all=tuple(data["all"]), k=data["k"])


@dataclass(frozen=True, kw_only=True)
class MetricMean:
    """A mean over a roster: with its bootstrap CI (a measure) or its item count (leak@k etc.)."""

    mean: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mean": self.mean}
        if self.ci_low is not None and self.ci_high is not None:
            out |= {"ci_low": self.ci_low, "ci_high": self.ci_high}
        if self.n is not None:
            out["n"] = self.n
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricMean:
        return cls(
            mean=data["mean"],
            ci_low=data.get("ci_low"),
            ci_high=data.get("ci_high"),
            n=data.get("n"),
        )


@dataclass(frozen=True, kw_only=True)
class Aggregate:
    """Every metric's mean for one arm on one roster subset of `n` positive questions."""

    arm: str
    roster: str
    subset: str
    n: int
    metrics: Mapping[str, MetricMean]

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "roster": self.roster,
            "subset": self.subset,
            "n": self.n,
            "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Aggregate:
        return cls(
            arm=data["arm"],
            roster=data["roster"],
            subset=data["subset"],
            n=data["n"],
            metrics={name: MetricMean.from_dict(m) for name, m in data["metrics"].items()},
        )


@dataclass(frozen=True, kw_only=True)
class StatsRecord:
    """The statistics' random knobs, so every interval can be recomputed."""

    seed: int
    resamples: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "resamples": self.resamples, "confidence": self.confidence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StatsRecord:
        return cls(seed=data["seed"], resamples=data["resamples"], confidence=data["confidence"])


@dataclass(frozen=True, kw_only=True)
class Environment:
    """Where the run happened: engine, embedder, commit, machine and the cached database."""

    engine_version: str
    embedder: str | None
    git_commit: str | None
    machine: str
    python: str
    cpus: int | None
    database: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine_version": self.engine_version,
            "embedder": self.embedder,
            "git_commit": self.git_commit,
            "machine": self.machine,
            "python": self.python,
            "cpus": self.cpus,
            "database": self.database,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Environment:
        names = (
            "engine_version",
            "embedder",
            "git_commit",
            "machine",
            "python",
            "cpus",
            "database",
        )
        return cls(**{k: data[k] for k in names})


@dataclass(frozen=True, kw_only=True)
class ResultFiles:
    """The files of a results folder, relative to it; `runs` maps each arm spec to its TREC run."""

    per_query: str
    qrels: str
    report: str
    forest: str
    runs: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_query": self.per_query,
            "qrels": self.qrels,
            "report": self.report,
            "forest": self.forest,
            "runs": dict(self.runs),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResultFiles:
        return cls(
            per_query=data["per_query"],
            qrels=data["qrels"],
            report=data["report"],
            forest=data["forest"],
            runs=data["runs"],
        )


@dataclass(frozen=True, kw_only=True)
class Summary:
    """Everything a run decided and the provenance behind it (``summary.json``).

    `run_id` and `files` are set when the results folder is written (`with_files`): the run id is a
    hash of the rest, so a summary without them is what the hash is taken over.
    """

    deviations: tuple[Deviation, ...]
    protocol: ProtocolRecord
    lock: Mapping[str, Any] | None  # the lock file's JSON (harness.protocol.lock.Lock.to_dict)
    seals: Mapping[str, str]
    corpus: CorpusRecord
    arms: tuple[ArmRecord, ...]
    metrics: MetricNames
    aggregates: tuple[Aggregate, ...]
    gates: tuple[GateResult, ...]
    shipped_arm: str
    stats: StatsRecord
    environment: Environment
    started_at: str
    wall_s: float
    run_id: str | None = None
    files: ResultFiles | None = None
    # Absent from summaries written before embedder pinning; every new run records it.
    embedder: EmbedderRecord | None = None

    def with_files(self, run_id: str, files: ResultFiles) -> Summary:
        return replace(self, run_id=run_id, files=files)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``summary.json`` (key order included); no run id or files until set."""
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "deviations": [d.to_dict() for d in self.deviations],
            "protocol": self.protocol.to_dict(),
            "lock": dict(self.lock) if self.lock is not None else None,
            **({"embedder": self.embedder.to_dict()} if self.embedder is not None else {}),
            "seals": dict(self.seals),
            "corpus": self.corpus.to_dict(),
            "arms": [a.to_dict() for a in self.arms],
            "metrics": self.metrics.to_dict(),
            "aggregates": [a.to_dict() for a in self.aggregates],
            "gates": [g.to_dict() for g in self.gates],
            "shipped_arm": self.shipped_arm,
            "stats": self.stats.to_dict(),
            "environment": self.environment.to_dict(),
            "started_at": self.started_at,
            "wall_s": self.wall_s,
        }
        if self.run_id is not None:
            out["run_id"] = self.run_id
        if self.files is not None:
            out["files"] = self.files.to_dict()
        return out

    def to_json(self) -> str:
        """The text of ``summary.json``."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Summary:
        """Read a written summary back, after checking it against the summary schema.

        Raises:
            ResultsError: the JSON does not match the schema (the message names where).
        """
        validate_summary(data)
        return cls(
            deviations=tuple(Deviation.from_dict(d) for d in data["deviations"]),
            protocol=ProtocolRecord.from_dict(data["protocol"]),
            lock=data["lock"],
            seals=data["seals"],
            corpus=CorpusRecord.from_dict(data["corpus"]),
            arms=tuple(ArmRecord.from_dict(a) for a in data["arms"]),
            metrics=MetricNames.from_dict(data["metrics"]),
            aggregates=tuple(Aggregate.from_dict(a) for a in data["aggregates"]),
            gates=tuple(GateResult.from_dict(g) for g in data["gates"]),
            shipped_arm=data["shipped_arm"],
            stats=StatsRecord.from_dict(data["stats"]),
            environment=Environment.from_dict(data["environment"]),
            started_at=data["started_at"],
            wall_s=data["wall_s"],
            run_id=data["run_id"],
            files=ResultFiles.from_dict(data["files"]),
            embedder=EmbedderRecord.from_dict(data["embedder"]) if "embedder" in data else None,
        )


# ---------------------------------------------------------------------------------------------
# The schema


def summary_schema() -> dict[str, Any]:
    text = resources.files("harness").joinpath("schemas/summary.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def validate_summary(summary: Mapping[str, Any]) -> None:
    """Raise ResultsError naming the JSON path of the first schema violation."""
    validator = Draft202012Validator(summary_schema())
    errors = sorted(validator.iter_errors(summary), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        msg = f"summary.json does not match its schema at {where}: {first.message}"
        raise ResultsError(msg)

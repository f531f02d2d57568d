"""Pre-registration protocols: load, validate, hash, register (lock), amend and verify.

A protocol is a TOML file (``protocols/<x>.toml``) validated by ``harness/schemas/
protocol.schema.json`` and then cross-checked here (gates name existing rosters, arms and subsets;
ship rules name existing gates). Registration writes ``protocols/<x>.lock.json`` beside it, holding
the protocol's hash, the roster seals, the corpus manifest hash, the time and the git commit. A run
refuses a protocol whose lock is missing or no longer matches unless a deviation is declared.

Two hashes are kept:

* the **canonical** sha256 -- of the parsed TOML written as canonical JSON (sorted keys, no
  whitespace) -- is what the lock compares. Re-indenting the file, reordering keys or editing a
  comment does not change what was pre-registered, so it must not read as a deviation; changing
  any value (a margin, a reading, an arm) does, and changes this hash.
* the **raw** sha256 of the file's bytes is recorded too, so the exact file can be identified.

Callers (the runner, the CLI) compute the corpus manifest and the roster seals and pass them in;
this module never reads a corpus.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from jsonschema import Draft202012Validator

from harness.roster import RosterError, Unit, parse_subset
from harness.seal import canonical_json_bytes

__all__ = [
    "Amendment",
    "Corpus",
    "GateKind",
    "GateSpec",
    "GateTest",
    "Lock",
    "Metrics",
    "Mismatch",
    "Protocol",
    "ProtocolError",
    "Readings",
    "Reporting",
    "RosterRef",
    "Ship",
    "ShipRule",
    "StatsConfig",
    "Verdict",
    "amend",
    "canonical_json",
    "canonical_sha256",
    "find_root",
    "load_lock",
    "load_protocol",
    "lock_path",
    "raw_sha256",
    "register",
    "verify",
]

Verdict: TypeAlias = Literal["PASS", "FAIL", "NULL", "VACUOUS"]
GateTest: TypeAlias = Literal["bootstrap", "sign", "randomization"]
GateKind: TypeAlias = Literal["superiority", "negative"]
Direction: TypeAlias = Literal["greater", "less"]
Source: TypeAlias = Literal["synthetic", "claude-projects", "locomo"]
ExcludeFlag: TypeAlias = Literal["self_transcript", "after_cutoff", "roster_leak"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_METRIC_K = re.compile(r"@([0-9]+)$")
_LOCK_VERSION = 1


class ProtocolError(ValueError):
    """A protocol or its lock is invalid, or an operation on it is refused."""


# ---------------------------------------------------------------------------------------------
# Typed protocol


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """Where the corpus comes from, its expected manifest, the cutoff and the exclusion rules."""

    source: Source
    path: str
    manifest_sha256: str
    cutoff: dt.datetime  # the benchmark's `now`
    exclude: tuple[ExcludeFlag, ...]
    seed: int | None = None
    size: int | None = None
    conversations: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _check_hex("corpus.manifest_sha256", self.manifest_sha256)
        if self.cutoff.tzinfo is None:
            msg = (
                f"corpus.cutoff must carry a UTC offset, got {self.cutoff.isoformat()}; "
                "write e.g. 2025-01-01T00:00:00Z"
            )
            raise ProtocolError(msg)
        if self.source == "synthetic" and (self.seed is None or self.size is None):
            msg = f"corpus: a synthetic corpus needs seed and size, got seed={self.seed}, size={self.size}"
            raise ProtocolError(msg)
        if self.source == "locomo" and not self.conversations:
            msg = "corpus: a locomo corpus needs the list of conversation ids it uses"
            raise ProtocolError(msg)

    def resolve(self, root: Path) -> Path:
        """The corpus path: absolute or ``~`` as written, otherwise relative to `root`."""
        path = Path(self.path).expanduser()
        return path if path.is_absolute() else root / path


@dataclass(frozen=True, kw_only=True)
class RosterRef:
    """A sealed roster the protocol uses, its expected seal, unit and named subsets."""

    name: str
    path: str
    seal: str
    unit: Unit
    subsets: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_hex(f"rosters[{self.name}].seal", self.seal)
        object.__setattr__(self, "subsets", MappingProxyType(dict(self.subsets)))

    def __hash__(self) -> int:
        return hash(
            (self.name, self.path, self.seal, self.unit, tuple(sorted(self.subsets.items())))
        )


@dataclass(frozen=True, kw_only=True)
class Metrics:
    """Metric names in canonical spelling and the ranking depth k."""

    primary: str
    secondary: tuple[str, ...] = ()
    k: int = 10

    @property
    def all(self) -> tuple[str, ...]:
        """Primary first, then secondary."""
        return (self.primary, *self.secondary)


@dataclass(frozen=True, kw_only=True)
class StatsConfig:
    """Every random knob of the statistics, recorded in results."""

    seed: int = 0
    resamples: int = 10_000
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.resamples < 1:
            msg = f"stats.resamples must be >= 1, got {self.resamples}"
            raise ProtocolError(msg)
        if not 0 < self.confidence < 1:
            msg = f"stats.confidence must be strictly between 0 and 1, got {self.confidence}"
            raise ProtocolError(msg)


@dataclass(frozen=True, kw_only=True)
class Readings:
    """The interpretation committed in advance for each verdict, printed verbatim."""

    pass_: str
    fail: str
    null: str
    vacuous: str | None = None

    def __post_init__(self) -> None:
        for name in ("pass_", "fail", "null"):
            if not getattr(self, name).strip():
                msg = f"Readings.{name.rstrip('_')} must be non-empty text committed before the run"
                raise ProtocolError(msg)

    def for_verdict(self, verdict: Verdict) -> str:
        """The committed text for `verdict`."""
        text = {"PASS": self.pass_, "FAIL": self.fail, "NULL": self.null, "VACUOUS": self.vacuous}[
            verdict
        ]
        if text is None:
            msg = f"No reading was committed for verdict {verdict}; add readings.vacuous"
            raise ProtocolError(msg)
        return text


@dataclass(frozen=True, kw_only=True)
class GateSpec:
    """One pre-registered gate.

    A ``superiority`` gate compares `treatment` with `baseline` on `metric` with `test`; a
    ``negative`` gate checks that `treatment` leaks no forbidden unit while every positive control
    is hit (it has no baseline or test).
    """

    id: str
    roster: str
    metric: str
    treatment: str
    readings: Readings
    baseline: str | None = None
    subset: str | None = None
    test: GateTest | None = None
    alpha: float | None = None
    confidence: float | None = None
    margin: float = 0.0
    direction: Direction = "greater"
    kind: GateKind = "superiority"

    def __post_init__(self) -> None:
        kind: object = self.kind  # typed, but built from parsed TOML or by hand
        if kind == "negative":
            self._check_negative()
        elif kind == "superiority":
            self._check_superiority()
        else:
            msg = f"Gate {self.id}: kind must be 'superiority' or 'negative', got {self.kind!r}"
            raise ProtocolError(msg)

    def _check_negative(self) -> None:
        if self.baseline is not None or self.test is not None:
            msg = (
                f"Gate {self.id}: a negative gate has no baseline or test (got baseline="
                f"{self.baseline!r}, test={self.test!r}); it is decided by leak and control counts"
            )
            raise ProtocolError(msg)
        if self.readings.vacuous is None:
            msg = f"Gate {self.id}: a negative gate needs readings.vacuous (a control was missed)"
            raise ProtocolError(msg)

    def _check_superiority(self) -> None:
        if self.baseline is None or self.test not in ("bootstrap", "sign", "randomization"):
            msg = (
                f"Gate {self.id}: a superiority gate needs a baseline and a test in "
                f"bootstrap/sign/randomization, got baseline={self.baseline!r}, test={self.test!r}"
            )
            raise ProtocolError(msg)
        if self.treatment == self.baseline:
            msg = f"Gate {self.id}: treatment and baseline are both {self.treatment!r}; compare two arms"
            raise ProtocolError(msg)
        if self.test != "bootstrap" and self.alpha is None:
            msg = f"Gate {self.id}: a {self.test} gate needs alpha (e.g. alpha = 0.05)"
            raise ProtocolError(msg)
        for name in ("alpha", "confidence"):
            value = getattr(self, name)
            if value is not None and not 0 < value < 1:
                msg = f"Gate {self.id}: {name} must be strictly between 0 and 1, got {value}"
                raise ProtocolError(msg)
        if self.margin < 0:
            msg = f"Gate {self.id}: margin must be >= 0, got {self.margin}; direction sets the sign"
            raise ProtocolError(msg)
        if self.readings.vacuous is not None:
            msg = f"Gate {self.id}: readings.vacuous only applies to negative gates; remove it"
            raise ProtocolError(msg)


@dataclass(frozen=True, kw_only=True)
class ShipRule:
    """Ship `arm` when every named gate has the named verdict."""

    when: Mapping[str, Verdict]
    arm: str

    def __post_init__(self) -> None:
        if not self.when:
            msg = (
                f"A ship rule for {self.arm!r} has an empty `when`; name at least one gate verdict"
            )
            raise ProtocolError(msg)
        for gate_id, verdict in self.when.items():
            if verdict not in VERDICTS:
                msg = f"Ship rule for {self.arm!r}: {gate_id} = {verdict!r} is not one of {list(VERDICTS)}"
                raise ProtocolError(msg)
        object.__setattr__(self, "when", MappingProxyType(dict(self.when)))

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.when.items())), self.arm))

    def matches(self, verdicts: Mapping[str, Verdict]) -> bool:
        """Whether every condition of the rule holds (a missing verdict raises)."""
        for gate_id, wanted in self.when.items():
            if gate_id not in verdicts:
                msg = (
                    f"Ship rule for {self.arm!r} needs the verdict of gate {gate_id}, but only "
                    f"{sorted(verdicts)} were decided; decide every gate before choosing the arm"
                )
                raise ProtocolError(msg)
            if verdicts[gate_id] != wanted:
                return False
        return True


@dataclass(frozen=True, kw_only=True)
class Ship:
    """Ordered ship rules (first match wins) and the default arm."""

    rules: tuple[ShipRule, ...]
    default: str


@dataclass(frozen=True, kw_only=True)
class Reporting:
    """Reporting commitments, printed with the results."""

    commitments: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Protocol:
    """A validated protocol and the hashes of the file it came from."""

    id: str
    title: str
    hypothesis: str
    registered: dt.date
    corpus: Corpus
    rosters: tuple[RosterRef, ...]
    arms: tuple[str, ...]
    metrics: Metrics
    gates: tuple[GateSpec, ...]
    stats: StatsConfig
    ship: Ship
    reporting: Reporting
    path: Path
    root: Path  # repository root that relative paths are resolved against
    sha256: str  # canonical hash (what the lock compares)
    raw_sha256: str  # sha256 of the file's bytes

    def roster(self, name: str) -> RosterRef:
        """The roster named `name`."""
        for ref in self.rosters:
            if ref.name == name:
                return ref
        msg = f"Protocol {self.id} has no roster {name!r}; choose one of {[r.name for r in self.rosters]}"
        raise ProtocolError(msg)

    def gate(self, gate_id: str) -> GateSpec:
        """The gate with id `gate_id`."""
        for gate in self.gates:
            if gate.id == gate_id:
                return gate
        msg = f"Protocol {self.id} has no gate {gate_id!r}; choose one of {[g.id for g in self.gates]}"
        raise ProtocolError(msg)

    def roster_dir(self, name: str) -> Path:
        """The sealed folder of roster `name`, resolved against the repository root."""
        path = Path(self.roster(name).path).expanduser()
        return path if path.is_absolute() else self.root / path

    @property
    def corpus_path(self) -> Path:
        """The corpus location, resolved against the repository root."""
        return self.corpus.resolve(self.root)

    @property
    def seals(self) -> dict[str, str]:
        """Roster name -> expected seal, as declared in the protocol."""
        return {r.name: r.seal for r in self.rosters}


# ---------------------------------------------------------------------------------------------
# Hashing and loading


def _read_toml(path: Path) -> tuple[bytes, dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError as err:
        msg = f"Protocol file {path} does not exist; check the path"
        raise ProtocolError(msg) from err
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        msg = f"Protocol {path} is not valid UTF-8 TOML: {err}; fix the syntax"
        raise ProtocolError(msg) from err
    return raw, data


def _jsonable(value: Any) -> Any:
    """TOML values -> JSON values; dates and times become ISO strings."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return value


def canonical_json(path: Path | str) -> bytes:
    """The parsed protocol as canonical JSON: sorted keys, no whitespace, UTF-8.

    TOML dates and times are written as ISO strings, so ``registered = 2025-01-15`` and
    ``registered = "2025-01-15"`` mean, and hash, the same.
    """
    _, data = _read_toml(Path(path))
    text = json.dumps(_jsonable(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def canonical_sha256(path: Path | str) -> str:
    """sha256 of `canonical_json`: unchanged by whitespace, comments and key order, changed by any value.

    The lock compares this hash rather than the raw bytes because pre-registration commits to
    meaning: re-indenting or commenting a protocol must not force a deviation, but any edited value
    must be caught.
    """
    return hashlib.sha256(canonical_json(path)).hexdigest()


def raw_sha256(path: Path | str) -> str:
    """sha256 of the protocol file's exact bytes (recorded beside the canonical hash)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding ``.git`` or ``pyproject.toml`` (else `start`)."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / "pyproject.toml").is_file():
            return folder
    return start


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("harness").joinpath("schemas/protocol.schema.json").read_text("utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _schema_errors(data: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(data), key=lambda e: (e.json_path, e.message))
    out: list[str] = []
    for err in errors:
        if err.validator == "not" and err.validator_value == {}:
            out.append(f"{err.json_path}: is not allowed here")
        else:
            out.append(f"{err.json_path}: {err.message}")
    return out


def load_protocol(path: Path | str, *, root: Path | str | None = None) -> Protocol:
    """Load, schema-validate and cross-check a protocol TOML file.

    Args:
        path: the protocol file.
        root: folder relative paths are resolved against; defaults to `find_root` of the
            protocol's folder.

    Raises:
        ProtocolError: invalid TOML, schema errors (each with its JSON path and message), or
            inconsistent cross-references.
    """
    path = Path(path)
    raw, data = _read_toml(path)
    doc = _jsonable(data)
    problems = _schema_errors(doc)
    if problems:
        listing = "\n  ".join(problems)
        msg = f"Protocol {path} does not match the protocol schema:\n  {listing}\nFix these fields."
        raise ProtocolError(msg)
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        protocol = _build(
            doc,
            path=path,
            root=Path(root) if root is not None else find_root(path.parent),
            sha256=hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
            raw_sha256=hashlib.sha256(raw).hexdigest(),
        )
        _cross_check(protocol)
    except ProtocolError as err:
        msg = f"Protocol {path}: {err}"
        raise ProtocolError(msg) from err
    return protocol


def _build(
    doc: dict[str, Any], *, path: Path, root: Path, sha256: str, raw_sha256: str
) -> Protocol:
    corpus = doc["corpus"]
    conversations = corpus.get("conversations")
    try:
        cutoff = dt.datetime.fromisoformat(corpus["cutoff"])
        registered = dt.date.fromisoformat(doc["registered"])
    except ValueError as err:
        msg = f"registered must be a date and corpus.cutoff an ISO date-time: {err}"
        raise ProtocolError(msg) from err
    stats = StatsConfig(**doc["stats"])
    ship = doc["ship"]
    return Protocol(
        id=doc["id"],
        title=doc["title"],
        hypothesis=doc["hypothesis"],
        registered=registered,
        corpus=Corpus(
            source=corpus["source"],
            path=corpus["path"],
            manifest_sha256=corpus["manifest_sha256"],
            cutoff=cutoff,
            exclude=tuple(corpus["exclude"]),
            seed=corpus.get("seed"),
            size=corpus.get("size"),
            conversations=tuple(conversations) if conversations is not None else None,
        ),
        rosters=tuple(
            RosterRef(
                name=r["name"],
                path=r["path"],
                seal=r["seal"],
                unit=r["unit"],
                subsets=r.get("subsets", {}),
            )
            for r in doc["rosters"]
        ),
        arms=tuple(doc["arms"]),
        metrics=Metrics(
            primary=doc["metrics"]["primary"],
            secondary=tuple(doc["metrics"].get("secondary", ())),
            k=doc["metrics"]["k"],
        ),
        gates=tuple(_build_gate(g) for g in doc["gates"]),
        stats=stats,
        ship=Ship(
            rules=tuple(ShipRule(when=r["when"], arm=r["arm"]) for r in ship.get("rules", ())),
            default=ship["default"],
        ),
        reporting=Reporting(commitments=tuple(doc["reporting"]["commitments"])),
        path=path,
        root=root,
        sha256=sha256,
        raw_sha256=raw_sha256,
    )


def _build_gate(g: dict[str, Any]) -> GateSpec:
    readings = g["readings"]
    return GateSpec(
        id=g["id"],
        roster=g["roster"],
        subset=g.get("subset"),
        metric=g["metric"],
        treatment=g["treatment"],
        baseline=g.get("baseline"),
        test=g.get("test"),
        alpha=g.get("alpha"),
        confidence=g.get("confidence"),
        margin=float(g.get("margin", 0.0)),
        direction=g.get("direction", "greater"),
        kind=g.get("kind", "superiority"),
        readings=Readings(
            pass_=readings["pass"],
            fail=readings["fail"],
            null=readings["null"],
            vacuous=readings.get("vacuous"),
        ),
    )


def _cross_check(protocol: Protocol) -> None:
    """References between sections that a JSON Schema cannot express."""
    _check_rosters(protocol)
    _check_metrics(protocol)
    _check_gates(protocol)
    _check_ship(protocol)


def _check_rosters(protocol: Protocol) -> None:
    names = [r.name for r in protocol.rosters]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        msg = f"roster name(s) {dupes} appear more than once; give each roster a unique name"
        raise ProtocolError(msg)
    for i, ref in enumerate(protocol.rosters):
        for subset, expr in ref.subsets.items():
            try:
                parse_subset(expr)
            except RosterError as err:
                msg = f"$.rosters[{i}].subsets.{subset}: {err}"
                raise ProtocolError(msg) from err


def _check_metrics(protocol: Protocol) -> None:
    k = protocol.metrics.k
    used = [*protocol.metrics.all, *(g.metric for g in protocol.gates)]
    for metric in used:
        match = _METRIC_K.search(metric)
        if match and int(match.group(1)) > k:
            msg = (
                f"metric {metric} needs depth {match.group(1)} but metrics.k = {k}; "
                f"raise metrics.k to at least {match.group(1)}"
            )
            raise ProtocolError(msg)


def _check_gates(protocol: Protocol) -> None:
    ids = [g.id for g in protocol.gates]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        msg = f"gate id(s) {dupes} appear more than once; give each gate a unique id"
        raise ProtocolError(msg)
    rosters = {r.name: r for r in protocol.rosters}
    for i, gate in enumerate(protocol.gates):
        where = f"$.gates[{i}] (gate {gate.id})"
        if gate.roster not in rosters:
            msg = (
                f"{where}: roster {gate.roster!r} is not declared; choose one of {sorted(rosters)}"
            )
            raise ProtocolError(msg)
        subsets = rosters[gate.roster].subsets
        if gate.subset is not None and gate.subset not in subsets:
            msg = (
                f"{where}: subset {gate.subset!r} is not declared for roster {gate.roster}; "
                f"choose one of {sorted(subsets)} or add it under [rosters.subsets]"
            )
            raise ProtocolError(msg)
        for role in ("treatment", "baseline"):
            arm = getattr(gate, role)
            if arm is not None and arm not in protocol.arms:
                msg = f"{where}: {role} {arm!r} is not in arms; choose one of {list(protocol.arms)}"
                raise ProtocolError(msg)
        if gate.kind == "negative" and not gate.metric.startswith("leak@"):
            msg = f"{where}: a negative gate's metric must be leak@k, got {gate.metric!r}"
            raise ProtocolError(msg)


def _check_ship(protocol: Protocol) -> None:
    gates = {g.id: g for g in protocol.gates}
    arms = [*(r.arm for r in protocol.ship.rules), protocol.ship.default]
    for arm in arms:
        if arm not in protocol.arms:
            msg = (
                f"ship names arm {arm!r}, which is not in arms; choose one of {list(protocol.arms)}"
            )
            raise ProtocolError(msg)
    for i, rule in enumerate(protocol.ship.rules):
        for gate_id, verdict in rule.when.items():
            if gate_id not in gates:
                msg = f"$.ship.rules[{i}].when: gate {gate_id!r} does not exist; choose one of {sorted(gates)}"
                raise ProtocolError(msg)
            if verdict == "VACUOUS" and gates[gate_id].kind != "negative":
                msg = (
                    f"$.ship.rules[{i}].when: gate {gate_id} is a superiority gate and can never be "
                    "VACUOUS; use PASS, FAIL or NULL"
                )
                raise ProtocolError(msg)


# ---------------------------------------------------------------------------------------------
# Lock: register, amend, verify


@dataclass(frozen=True, kw_only=True)
class Amendment:
    """A change made before the first run, with the state it commits to."""

    sha256: str
    raw_sha256: str
    time: str
    reason: str
    seals: Mapping[str, str]
    corpus_manifest_sha256: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "seals", MappingProxyType(dict(self.seals)))

    def __hash__(self) -> int:
        return hash((self.sha256, self.time, self.reason, tuple(sorted(self.seals.items()))))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "sha256": self.sha256,
            "raw_sha256": self.raw_sha256,
            "time": self.time,
            "reason": self.reason,
            "seals": dict(self.seals),
            "corpus_manifest_sha256": self.corpus_manifest_sha256,
        }


@dataclass(frozen=True, kw_only=True)
class Lock:
    """The registration record written beside a protocol (``<protocol>.lock.json``)."""

    protocol: str  # file name of the protocol, relative to the lock's folder
    protocol_id: str
    protocol_sha256: str
    protocol_raw_sha256: str
    seals: Mapping[str, str]
    corpus_manifest_sha256: str
    registered_at: str
    git_commit: str | None
    amendments: tuple[Amendment, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "seals", MappingProxyType(dict(self.seals)))
        object.__setattr__(self, "amendments", tuple(self.amendments))

    def __hash__(self) -> int:
        return hash((self.protocol_sha256, self.registered_at, self.amendments))

    @property
    def current_sha256(self) -> str:
        """The protocol hash now in force: the latest amendment's, else the registered one."""
        return self.amendments[-1].sha256 if self.amendments else self.protocol_sha256

    @property
    def current_seals(self) -> Mapping[str, str]:
        """Roster seals now in force."""
        return self.amendments[-1].seals if self.amendments else self.seals

    @property
    def current_manifest_sha256(self) -> str:
        """Corpus manifest hash now in force."""
        if self.amendments:
            return self.amendments[-1].corpus_manifest_sha256
        return self.corpus_manifest_sha256

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the lock file holds)."""
        return {
            "lock_version": _LOCK_VERSION,
            "protocol": self.protocol,
            "protocol_id": self.protocol_id,
            "protocol_sha256": self.protocol_sha256,
            "protocol_raw_sha256": self.protocol_raw_sha256,
            "seals": dict(self.seals),
            "corpus_manifest_sha256": self.corpus_manifest_sha256,
            "registered_at": self.registered_at,
            "git_commit": self.git_commit,
            "amendments": [a.to_dict() for a in self.amendments],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Lock:
        """Parse a lock file's JSON; `where` names it in errors."""
        try:
            return cls(
                protocol=data["protocol"],
                protocol_id=data["protocol_id"],
                protocol_sha256=data["protocol_sha256"],
                protocol_raw_sha256=data["protocol_raw_sha256"],
                seals=data["seals"],
                corpus_manifest_sha256=data["corpus_manifest_sha256"],
                registered_at=data["registered_at"],
                git_commit=data["git_commit"],
                amendments=tuple(Amendment(**a) for a in data["amendments"]),
            )
        except (KeyError, TypeError) as err:
            msg = f"Lock file {where} is malformed ({err!r}); restore it from version control"
            raise ProtocolError(msg) from err


@dataclass(frozen=True, kw_only=True)
class Mismatch:
    """One thing that no longer matches the lock: which, where, expected and actual hash."""

    thing: Literal["lock", "protocol", "seal", "manifest"]
    path: str
    expected: str | None
    actual: str | None
    hint: str = ""

    @property
    def message(self) -> str:
        """One sentence naming the file and both hashes."""
        if self.thing == "lock":
            return f"No lock at {self.path}; {self.hint}"
        expected = self.expected if self.expected is not None else "(nothing recorded)"
        actual = self.actual if self.actual is not None else "(nothing given)"
        text = f"Expected sha256 of {self.path} to be {expected} but got {actual}"
        return f"{text}; {self.hint}" if self.hint else text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (deviations are written into results)."""
        return {
            "thing": self.thing,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
        }


def lock_path(protocol_path: Path | str) -> Path:
    """``protocols/x.toml`` -> ``protocols/x.lock.json``."""
    path = Path(protocol_path)
    return path.with_name(f"{path.stem}.lock.json")


def load_lock(protocol_path: Path | str) -> Lock | None:
    """The protocol's lock, or None when it was never registered."""
    path = lock_path(protocol_path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        msg = f"Lock file {path} is not valid JSON ({err}); restore it from version control"
        raise ProtocolError(msg) from err
    if not isinstance(data, dict):
        msg = f"Lock file {path} must hold a JSON object; restore it from version control"
        raise ProtocolError(msg)
    return Lock.from_dict(data, str(path))


def register(
    protocol_path: Path | str,
    *,
    manifest_sha256: str,
    seals: Mapping[str, str],
    now: dt.datetime,
    git_commit: str | None,
) -> Lock:
    """Register a protocol: validate it and write ``<protocol>.lock.json`` beside it.

    Args:
        protocol_path: the protocol TOML.
        manifest_sha256: the corpus manifest hash the caller computed.
        seals: roster name -> seal the caller computed (``verify_sealed(...).seal``).
        now: registration time (timezone-aware).
        git_commit: the repository commit, when known.

    Raises:
        ProtocolError: a lock already exists, the protocol is invalid, or the given manifest or
            seals differ from those the protocol declares.
    """
    path = Path(protocol_path)
    target = lock_path(path)
    if target.exists():
        msg = (
            f"Refusing to re-register {path}: {target} already exists. Changes before the first "
            "run are amendments (`protocol amend`); after a run they are deviations"
        )
        raise ProtocolError(msg)
    _check_time(now)
    protocol = load_protocol(path)
    _check_given(protocol, manifest_sha256, seals)
    lock = Lock(
        protocol=path.name,
        protocol_id=protocol.id,
        protocol_sha256=protocol.sha256,
        protocol_raw_sha256=protocol.raw_sha256,
        seals=dict(seals),
        corpus_manifest_sha256=manifest_sha256,
        registered_at=now.isoformat(),
        git_commit=git_commit,
    )
    with target.open("xb") as fh:
        fh.write(canonical_json_bytes(lock.to_dict()))
    return lock


def amend(protocol_path: Path | str, now: dt.datetime, reason: str, has_runs: bool) -> Lock:
    """Record an amendment to a registered protocol made before its first run.

    Args:
        protocol_path: the (edited) protocol TOML.
        now: amendment time (timezone-aware).
        reason: why it was changed; written into the lock.
        has_runs: whether any run of this protocol exists (the caller looks in results/).

    Raises:
        ProtocolError: no lock, a run already exists (any change is now a deviation), an empty
            reason, an invalid protocol, a changed id, or nothing changed.
    """
    path = Path(protocol_path)
    lock = load_lock(path)
    if lock is None:
        msg = f"No lock at {lock_path(path)}; register the protocol before amending it"
        raise ProtocolError(msg)
    if has_runs:
        msg = (
            f"Refusing to amend {path}: a run of protocol {lock.protocol_id} already exists, so any "
            'change is a deviation; run with --deviation "why" instead'
        )
        raise ProtocolError(msg)
    if not reason.strip():
        msg = f"Amending {path} needs a reason, got {reason!r}; say why the protocol changed"
        raise ProtocolError(msg)
    _check_time(now)
    protocol = load_protocol(path)
    if protocol.id != lock.protocol_id:
        msg = (
            f"Amendment changes the protocol id from {lock.protocol_id!r} to {protocol.id!r}; "
            "results are filed by id, so register a new protocol instead"
        )
        raise ProtocolError(msg)
    if protocol.sha256 == lock.current_sha256:
        msg = f"Nothing to amend: {path} still has sha256 {protocol.sha256} recorded in the lock"
        raise ProtocolError(msg)
    amendment = Amendment(
        sha256=protocol.sha256,
        raw_sha256=protocol.raw_sha256,
        time=now.isoformat(),
        reason=reason,
        seals=protocol.seals,
        corpus_manifest_sha256=protocol.corpus.manifest_sha256,
    )
    amended = Lock(**{**_lock_fields(lock), "amendments": (*lock.amendments, amendment)})
    _replace_file(lock_path(path), canonical_json_bytes(amended.to_dict()))
    return amended


def verify(
    protocol_path: Path | str, *, manifest_sha256: str, seals: Mapping[str, str]
) -> list[Mismatch]:
    """Compare a protocol, its roster seals and corpus manifest against its lock.

    The protocol hash is checked against the latest amendment (or the registration), the seals and
    manifest against the values in force then. An empty list means the run may proceed.

    Raises:
        ProtocolError: the protocol file is not readable TOML or the lock file is malformed.
    """
    path = Path(protocol_path)
    lock = load_lock(path)
    if lock is None:
        return [
            Mismatch(
                thing="lock",
                path=str(lock_path(path)),
                expected=None,
                actual=None,
                hint=f"register it with `recallbench protocol register {path}` before running",
            )
        ]
    out: list[Mismatch] = []
    actual = canonical_sha256(path)
    if actual != lock.current_sha256:
        out.append(
            Mismatch(
                thing="protocol",
                path=str(path),
                expected=lock.current_sha256,
                actual=actual,
                hint="the protocol changed after registration: amend it before the first run, "
                'or run with --deviation "why"',
            )
        )
    expected_seals = lock.current_seals
    for name in sorted(set(expected_seals) | set(seals)):
        want, got = expected_seals.get(name), seals.get(name)
        if want != got:
            out.append(
                Mismatch(
                    thing="seal",
                    path=f"roster {name} (SEAL.sha256)",
                    expected=want,
                    actual=got,
                    hint="the sealed roster is not the one registered",
                )
            )
    if manifest_sha256 != lock.current_manifest_sha256:
        out.append(
            Mismatch(
                thing="manifest",
                path="corpus manifest",
                expected=lock.current_manifest_sha256,
                actual=manifest_sha256,
                hint="the corpus snapshot is not the one registered",
            )
        )
    return out


def _check_given(protocol: Protocol, manifest_sha256: str, seals: Mapping[str, str]) -> None:
    """At registration the computed hashes must equal the ones the protocol declares."""
    _check_hex("manifest_sha256", manifest_sha256)
    if manifest_sha256 != protocol.corpus.manifest_sha256:
        msg = (
            f"Expected sha256 of corpus manifest ({protocol.corpus_path}) to be "
            f"{protocol.corpus.manifest_sha256} (declared in {protocol.path}) but got "
            f"{manifest_sha256}; freeze the corpus again or fix corpus.manifest_sha256"
        )
        raise ProtocolError(msg)
    declared = protocol.seals
    if set(seals) != set(declared):
        msg = (
            f"Seals given for rosters {sorted(seals)} but {protocol.path} declares "
            f"{sorted(declared)}; pass one seal per declared roster"
        )
        raise ProtocolError(msg)
    for name, seal in declared.items():
        if seals[name] != seal:
            msg = (
                f"Expected sha256 of {protocol.roster_dir(name) / 'SEAL.sha256'} to be {seal} "
                f"(declared in {protocol.path}) but got {seals[name]}; fix rosters.seal or the roster"
            )
            raise ProtocolError(msg)


def _lock_fields(lock: Lock) -> dict[str, Any]:
    return {
        "protocol": lock.protocol,
        "protocol_id": lock.protocol_id,
        "protocol_sha256": lock.protocol_sha256,
        "protocol_raw_sha256": lock.protocol_raw_sha256,
        "seals": lock.seals,
        "corpus_manifest_sha256": lock.corpus_manifest_sha256,
        "registered_at": lock.registered_at,
        "git_commit": lock.git_commit,
    }


def _replace_file(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a lock."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def _check_time(now: dt.datetime) -> None:
    if now.tzinfo is None:
        msg = f"Registration time must be timezone-aware, got {now.isoformat()}; pass a UTC time"
        raise ProtocolError(msg)


def _check_hex(name: str, value: object) -> None:
    if not isinstance(value, str) or not _HEX64.match(value):
        msg = f"{name} must be 64 lowercase hex digits (a sha256), got {value!r}"
        raise ProtocolError(msg)

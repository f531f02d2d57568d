"""The typed protocol: frozen values a protocol TOML parses into, checked as they are built.

Every value checks itself in ``__post_init__`` so a protocol built by hand (in tests, or by
``harness.protocol.load``) cannot hold a gate without a reading, a ship rule without a verdict, or a
hash that is not a sha256.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from engine.chunking import BASE_CHUNKING, CHUNKING_VERSIONS, check_chunking
from harness.protocol.arm_embedder import split_arm
from harness.roster import Unit

Verdict: TypeAlias = Literal["PASS", "FAIL", "NULL", "VACUOUS"]
GateTest: TypeAlias = Literal["bootstrap", "sign", "randomization"]
GateKind: TypeAlias = Literal["superiority", "non-inferiority", "negative", "every"]
Direction: TypeAlias = Literal["greater", "less"]
Source: TypeAlias = Literal["synthetic", "claude-projects", "locomo"]
ExcludeFlag: TypeAlias = Literal["self_transcript", "after_cutoff", "roster_leak"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class ProtocolError(ValueError):
    """A protocol or its lock is invalid, or an operation on it is refused."""


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
    # A synthetic corpus's planted corrected and changed facts (`harness.synthetic.corrections`);
    # 0 and 0 is the generator's default corpus.
    corrected_facts: int = 0
    changed_facts: int = 0
    # A synthetic corpus's planted decisions (the size of its decisions roster); None: the generator's
    # default (64).
    decisions: int | None = None
    # How a long message is split into chunks (`engine.chunking`); 1, what a protocol that names none
    # ran with, cuts inside words.
    chunking: int = BASE_CHUNKING

    def __post_init__(self) -> None:
        check_sha256("corpus.manifest_sha256", self.manifest_sha256)
        try:
            check_chunking(self.chunking)
        except ValueError as err:
            known = "; ".join(f"{v}: {what}" for v, what in CHUNKING_VERSIONS.items())
            msg = f"corpus.chunking must be a chunking version ({known}), got {self.chunking!r}"
            raise ProtocolError(msg) from err
        if (self.corrected_facts or self.changed_facts) and self.source != "synthetic":
            msg = (
                f"corpus: corrected_facts and changed_facts plant facts in a synthetic corpus, but "
                f"source is {self.source!r}; drop them or use source = 'synthetic'"
            )
            raise ProtocolError(msg)
        if self.decisions is not None and self.source != "synthetic":
            msg = (
                f"corpus: decisions sets how many decisions a synthetic corpus plants, but source "
                f"is {self.source!r}; drop it or use source = 'synthetic'"
            )
            raise ProtocolError(msg)
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
        check_sha256(f"rosters[{self.name}].seal", self.seal)
        object.__setattr__(self, "subsets", MappingProxyType(dict(self.subsets)))

    def __hash__(self) -> int:
        return hash(
            (self.name, self.path, self.seal, self.unit, tuple(sorted(self.subsets.items())))
        )


@dataclass(frozen=True, kw_only=True)
class FitSpec:
    """How one fitted arm is fitted: its training corpus and sealed training rosters, and the seed.

    `shared_sessions` allows the training corpus to hold sessions of the test corpus; without it a
    shared session is refused (HARNESS.md, Fitting).
    """

    arm: str
    seed: int
    corpus: Corpus
    rosters: tuple[RosterRef, ...]
    shared_sessions: bool = False

    @property
    def label(self) -> str:
        """What messages call this entry: ``fit of <arm>``."""
        return f"fit of {self.arm}"

    def roster_dir(self, ref: RosterRef, root: Path) -> Path:
        """The sealed folder of training roster `ref`, resolved against `root`."""
        path = Path(ref.path).expanduser()
        return path if path.is_absolute() else root / path

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON values (what the artifact's ``fit_sha256`` hashes)."""
        c = self.corpus
        return {
            "arm": self.arm,
            "seed": self.seed,
            "shared_sessions": self.shared_sessions,
            "corpus": {
                "source": c.source,
                "path": c.path,
                "manifest_sha256": c.manifest_sha256,
                "cutoff": c.cutoff.isoformat(),
                "exclude": list(c.exclude),
                "seed": c.seed,
                "size": c.size,
                "conversations": list(c.conversations) if c.conversations else None,
                # only when set, so that the hash of an entry written before they existed holds
                **(
                    {"corrected_facts": c.corrected_facts, "changed_facts": c.changed_facts}
                    if c.corrected_facts or c.changed_facts
                    else {}
                ),
                **({"decisions": c.decisions} if c.decisions is not None else {}),
                **({"chunking": c.chunking} if c.chunking != BASE_CHUNKING else {}),
            },
            "rosters": [
                {"name": r.name, "path": r.path, "seal": r.seal, "unit": r.unit}
                for r in self.rosters
            ],
        }


@dataclass(frozen=True, kw_only=True)
class EncoderFit(FitSpec):
    """How one fitted encoder is fine-tuned: a ``[[encoders]]`` entry.

    `name` is the embedder name arms give after ``@`` (``ltr(...)@minilm-l6-v2-tuned``); `arm` holds
    the training spec (``tune(epochs=2,...)``, `harness.tune.TuneParams`), written ``tune`` in the
    TOML. Training corpus, rosters, seed and `shared_sessions` mean what they mean for a fitted arm.
    """

    name: str

    @property
    def tune(self) -> str:
        """The training spec (``tune(...)``)."""
        return self.arm

    @property
    def label(self) -> str:
        return f"encoder {self.name} ({self.arm})"

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON values (what the encoder artifact's ``fit_sha256`` hashes)."""
        out = super().to_dict()
        out["tune"] = out.pop("arm")
        return {"name": self.name, **out}


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
    is hit (it has no baseline or test); an ``every`` gate checks that `treatment` scores a hit
    (`metric` is ``hit@k``) on every positive item of its roster subset, e.g. ``hit@1``: the
    replacement of a changed memory ranks first (no baseline or test either). A ``non-inferiority``
    gate compares `treatment` with `baseline` like a bootstrap superiority gate, but asks whether
    the treatment is shown to lose at most `margin` (> 0, the largest loss accepted, written as a
    positive number): PASS when the CI of (treatment − baseline) lies above −margin.
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
        if kind in ("negative", "every"):
            self._check_negative()
        elif kind == "superiority":
            self._check_superiority()
        elif kind == "non-inferiority":
            self._check_non_inferiority()
            self._check_superiority()
        else:
            msg = (
                f"Gate {self.id}: kind must be 'superiority', 'non-inferiority', 'negative' or "
                f"'every', got {self.kind!r}"
            )
            raise ProtocolError(msg)

    def _check_negative(self) -> None:
        """A negative or every gate: no baseline or test, and a reading for VACUOUS."""
        if self.baseline is not None or self.test is not None:
            how = "leak and control counts" if self.kind == "negative" else "per-item hits"
            msg = (
                f"Gate {self.id}: a {self.kind} gate has no baseline or test (got baseline="
                f"{self.baseline!r}, test={self.test!r}); it is decided by {how}"
            )
            raise ProtocolError(msg)
        if self.readings.vacuous is None:
            why = "a control was missed" if self.kind == "negative" else "the subset has no item"
            msg = f"Gate {self.id}: a {self.kind} gate needs readings.vacuous ({why})"
            raise ProtocolError(msg)
        if self.kind == "every" and not re.fullmatch(r"hit@[1-9][0-9]*", self.metric):
            msg = (
                f"Gate {self.id}: an every gate's metric must be hit@k (a per-item hit), got "
                f"{self.metric!r}; e.g. metric = 'hit@1' for 'ranks first'"
            )
            raise ProtocolError(msg)

    def _check_non_inferiority(self) -> None:
        """Bootstrap only, no alpha, and a margin > 0 (checked before the comparison's own checks)."""
        if self.test != "bootstrap":
            msg = (
                f"Gate {self.id}: a non-inferiority gate is decided by the paired bootstrap CI "
                f"against -margin, so its test must be 'bootstrap', got {self.test!r}"
            )
            raise ProtocolError(msg)
        if self.alpha is not None:
            msg = (
                f"Gate {self.id}: a non-inferiority gate has no alpha (it is decided by its CI, "
                f"got alpha = {self.alpha}); set confidence for a level other than the protocol's"
            )
            raise ProtocolError(msg)
        if not self.margin > 0:
            msg = (
                f"Gate {self.id}: a non-inferiority gate needs margin > 0, the largest loss it "
                f"accepts written as a positive number (e.g. margin = 0.02), got {self.margin}"
            )
            raise ProtocolError(msg)

    def _check_superiority(self) -> None:
        if self.baseline is None or self.test not in ("bootstrap", "sign", "randomization"):
            msg = (
                f"Gate {self.id}: a {self.kind} gate needs a baseline and a test in "
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
            msg = f"Gate {self.id}: readings.vacuous only applies to negative and every gates; remove it"
            raise ProtocolError(msg)


@dataclass(frozen=True, kw_only=True)
class ShipRule:
    """Ship `arm` when every named gate has the named verdict (or one of the named verdicts).

    `when` maps a gate id to a verdict or a list of verdicts, e.g. ``{ L = ["PASS", "NULL"] }`` for "not
    worse than": a gate that is not FAIL. Values are kept as tuples.
    """

    when: Mapping[str, Verdict | tuple[Verdict, ...]]  # always tuples once built
    arm: str

    def __post_init__(self) -> None:
        if not self.when:
            msg = (
                f"A ship rule for {self.arm!r} has an empty `when`; name at least one gate verdict"
            )
            raise ProtocolError(msg)
        normal: dict[str, tuple[Verdict, ...]] = {}
        for gate_id, wanted in self.when.items():
            verdicts = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            if not verdicts:
                msg = f"Ship rule for {self.arm!r}: {gate_id} names no verdict; name at least one"
                raise ProtocolError(msg)
            for verdict in verdicts:
                if verdict not in VERDICTS:
                    msg = f"Ship rule for {self.arm!r}: {gate_id} = {verdict!r} is not one of {list(VERDICTS)}"
                    raise ProtocolError(msg)
            normal[gate_id] = verdicts
        object.__setattr__(self, "when", MappingProxyType(normal))

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
            if verdicts[gate_id] not in wanted:
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
class Correction:
    """Gates corrected together for multiple comparisons (Holm step-down, or Bonferroni)."""

    method: Literal["holm", "bonferroni"]
    alpha: float
    gates: tuple[str, ...]


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
    # The embedder id the experiment was pre-registered with; None only for protocols registered
    # before embedder pinning (protocols/default.toml, default-2.toml), which must keep running.
    embedder: str | None = None
    # Extra embedder ids an arm may name after its spec (``vector(...)@<id>``, see
    # `harness.protocol.arm_embedder`); empty for a protocol whose every arm runs over `embedder`.
    embedders: tuple[str, ...] = ()
    # The family of gates corrected together; None for protocols without one (each gate alone).
    correction: Correction | None = None
    fits: tuple[FitSpec, ...] = ()  # one per fitted arm
    # Fine-tuned encoders arms may name after their spec (``ltr(...)@<name>``); fitted before `fits`.
    encoders: tuple[EncoderFit, ...] = ()

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

    def arm_embedder(self, arm: str) -> str | None:
        """The embedder id arm entry `arm` runs over: the one it names, else the pinned one."""
        return split_arm(arm).embedder or self.embedder

    @property
    def seals(self) -> dict[str, str]:
        """Roster name -> expected seal, as declared in the protocol."""
        return {r.name: r.seal for r in self.rosters}


def check_sha256(name: str, value: object) -> None:
    if not isinstance(value, str) or not _HEX64.match(value):
        msg = f"{name} must be 64 lowercase hex digits (a sha256), got {value!r}"
        raise ProtocolError(msg)

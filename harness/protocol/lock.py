"""The protocol lock: register a protocol, amend it before its first run, verify it before a run.

Registration writes ``protocols/<x>.lock.json`` beside the protocol, holding the protocol's
canonical hash, the roster seals, the corpus manifest hash, the pinned embedder id, the time and the
git commit. A run refuses a protocol whose lock is missing or no longer matches unless a deviation is
declared. A new protocol must name its embedder (``embedder = "minilm-l6-v2"``): the vectors every
vector arm ranks by come from it, so it is part of the experiment. Locks written before embedder
pinning hold no ``embedder`` key and keep verifying unchanged.
Callers compute the corpus manifest and the roster seals and pass them in; this module never reads
a corpus.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from harness.protocol.embedder import (
    EmbedderChoiceError,
    known_ids_text,
    live_embedder,
    live_name,
    pin_line,
    registry_ids,
)
from harness.protocol.load import (
    canonical_sha256,
    declared_embedder,
    declared_embedders,
    load_protocol,
)
from harness.protocol.model import Protocol, ProtocolError, check_sha256
from harness.seal import canonical_json_bytes

_LOCK_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class Amendment:
    """A change made before the first run, with the state it commits to."""

    sha256: str
    raw_sha256: str
    time: str
    reason: str
    seals: Mapping[str, str]
    corpus_manifest_sha256: str
    embedder: str | None = None  # absent from amendments written before embedder pinning
    embedders: tuple[str, ...] = ()  # extra embedder ids; absent when the protocol lists none

    def __post_init__(self) -> None:
        object.__setattr__(self, "seals", MappingProxyType(dict(self.seals)))
        object.__setattr__(self, "embedders", tuple(self.embedders))

    def __hash__(self) -> int:
        return hash((self.sha256, self.time, self.reason, tuple(sorted(self.seals.items()))))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``embedder`` only when pinned, so older locks read back unchanged)."""
        out: dict[str, Any] = {
            "sha256": self.sha256,
            "raw_sha256": self.raw_sha256,
            "time": self.time,
            "reason": self.reason,
            "seals": dict(self.seals),
            "corpus_manifest_sha256": self.corpus_manifest_sha256,
        }
        if self.embedder is not None:
            out["embedder"] = self.embedder
        if self.embedders:
            out["embedders"] = list(self.embedders)
        return out


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
    embedder: str | None = None  # the pinned embedder id; None in locks from before pinning
    # extra embedder ids arms name (`harness.protocol.arm_embedder`); written only when there are any
    embedders: tuple[str, ...] = ()
    # fitted arm spec -> {"path", "sha256"} of the artifact registration fitted (`harness.fit`)
    fits: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # encoder name -> {"path", "sha256"} of the fine-tuned encoder's artifact (`harness.fit`)
    encoders: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seals", MappingProxyType(dict(self.seals)))
        object.__setattr__(self, "amendments", tuple(self.amendments))
        object.__setattr__(self, "embedders", tuple(self.embedders))
        object.__setattr__(
            self, "fits", MappingProxyType({k: dict(v) for k, v in self.fits.items()})
        )
        object.__setattr__(
            self, "encoders", MappingProxyType({k: dict(v) for k, v in self.encoders.items()})
        )

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

    @property
    def current_embedder(self) -> str | None:
        """Embedder id now in force (None: registered before embedder pinning)."""
        return self.amendments[-1].embedder if self.amendments else self.embedder

    @property
    def current_embedders(self) -> tuple[str, ...]:
        """Extra embedder ids now in force (empty: every arm runs over `current_embedder`)."""
        return self.amendments[-1].embedders if self.amendments else self.embedders

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the lock file holds; ``embedder`` only when pinned)."""
        out: dict[str, Any] = {
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
        if self.embedder is not None:
            out["embedder"] = self.embedder
        if self.embedders:
            out["embedders"] = list(self.embedders)
        if self.fits:
            out["fits"] = {k: dict(v) for k, v in sorted(self.fits.items())}
        if self.encoders:
            out["encoders"] = {k: dict(v) for k, v in sorted(self.encoders.items())}
        return out

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
                embedder=data.get("embedder"),
                embedders=tuple(data.get("embedders", ())),
                fits=data.get("fits", {}),
                encoders=data.get("encoders", {}),
            )
        except (KeyError, TypeError, AttributeError) as err:
            msg = f"Lock file {where} is malformed ({err!r}); restore it from version control"
            raise ProtocolError(msg) from err


@dataclass(frozen=True, kw_only=True)
class Mismatch:
    """One thing that no longer matches the lock: which, where, expected and actual hash."""

    thing: Literal["lock", "protocol", "seal", "manifest", "embedder"]
    path: str
    expected: str | None
    actual: str | None
    hint: str = ""

    @property
    def message(self) -> str:
        """One sentence naming the file and both hashes (both embedder ids for ``embedder``)."""
        if self.thing == "lock":
            return f"No lock at {self.path}; {self.hint}"
        expected = self.expected if self.expected is not None else "(nothing recorded)"
        actual = self.actual if self.actual is not None else "(nothing given)"
        what = "embedder id" if self.thing == "embedder" else "sha256"
        text = f"Expected {what} of {self.path} to be {expected} but got {actual}"
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
    fits: Mapping[str, Mapping[str, str]] | None = None,
    encoders: Mapping[str, Mapping[str, str]] | None = None,
) -> Lock:
    """Register a protocol: validate it and write ``<protocol>.lock.json`` beside it.

    Args:
        protocol_path: the protocol TOML.
        manifest_sha256: the corpus manifest hash the caller computed.
        seals: roster name -> seal the caller computed (``verify_sealed(...).seal``).
        now: registration time (timezone-aware).
        git_commit: the repository commit, when known.
        fits: fitted arm spec -> artifact path and sha256, one per [[fits]] entry (`harness.fit`).
        encoders: encoder name -> artifact path and sha256, one per [[encoders]] entry.

    Raises:
        ProtocolError: a lock already exists, the protocol is invalid, names no embedder or one
            no registered embedder reports, or the given manifest or seals differ from those the
            protocol declares.
    """
    path = Path(protocol_path)
    target = lock_path(path)
    _check_time(now)
    protocol = check_registrable(path, manifest_sha256=manifest_sha256, seals=seals)
    lock = Lock(
        protocol=path.name,
        protocol_id=protocol.id,
        protocol_sha256=protocol.sha256,
        protocol_raw_sha256=protocol.raw_sha256,
        seals=dict(seals),
        corpus_manifest_sha256=manifest_sha256,
        registered_at=now.isoformat(),
        git_commit=git_commit,
        embedder=protocol.embedder,
        embedders=protocol.embedders,
        fits=_check_fits_given(protocol, fits or {}),
        encoders=_check_encoders_given(protocol, encoders or {}),
    )
    with target.open("xb") as fh:
        fh.write(canonical_json_bytes(lock.to_dict()))
    return lock


def check_registrable(
    protocol_path: Path | str, *, manifest_sha256: str, seals: Mapping[str, str]
) -> Protocol:
    """Everything `register` checks before writing, so that slow work (fitting) starts only on a
    protocol that will register.

    Raises:
        ProtocolError: as `register`.
    """
    path = Path(protocol_path)
    target = lock_path(path)
    if target.exists():
        msg = (
            f"Refusing to re-register {path}: {target} already exists. Changes before the first "
            "run are amendments (`protocol amend`); after a run they are deviations"
        )
        raise ProtocolError(msg)
    protocol = load_protocol(path)
    _check_pinned(protocol)
    _check_given(protocol, manifest_sha256, seals)
    return protocol


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
    _check_pinned(protocol)
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
        embedder=protocol.embedder,
        embedders=protocol.embedders,
    )
    amended = Lock(**{**_lock_fields(lock), "amendments": (*lock.amendments, amendment)})
    _replace_file(lock_path(path), canonical_json_bytes(amended.to_dict()))
    return amended


def verify(
    protocol_path: Path | str,
    *,
    manifest_sha256: str,
    seals: Mapping[str, str],
    read_before: Callable[[str], str | None] | None = None,
) -> list[Mismatch]:
    """Compare a protocol, its roster seals and corpus manifest against its lock.

    The protocol hash is checked against the latest amendment (or the registration), the seals and
    manifest against the values in force then. An empty list means the run may proceed. For a
    manifest that differs, `read_before(locked sha256)` (`harness.freeze.Manifest.read_before`) may
    say it is the same bytes read under newer versions; its words then replace the hint.

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
        why = None if read_before is None else read_before(lock.current_manifest_sha256)
        out.append(
            Mismatch(
                thing="manifest",
                path="corpus manifest",
                expected=lock.current_manifest_sha256,
                actual=manifest_sha256,
                hint=why or "the corpus snapshot is not the one registered",
            )
        )
    out += _embedder_mismatches(path, lock)
    return out


def _embedder_mismatches(path: Path, lock: Lock) -> list[Mismatch]:
    """The pinned embedder and the extra ones as the protocol writes them against the lock's."""
    out: list[Mismatch] = []
    # Named on its own (not only through the protocol hash) so that an edited `embedder` line, or
    # an edited lock, says which embedder was registered and which one is written now.
    declared = declared_embedder(path)
    if declared != lock.current_embedder:
        out.append(
            Mismatch(
                thing="embedder",
                path=f"{path} (embedder)",
                expected=lock.current_embedder,
                actual=declared,
                hint=f"the embedder pinned in {lock_path(path).name} is not the one the protocol "
                "names; restore the registered line, or amend the protocol before the first run",
            )
        )
    extras = declared_embedders(path)
    if extras != lock.current_embedders:
        out.append(
            Mismatch(
                thing="embedder",
                path=f"{path} (embedders)",
                expected=", ".join(lock.current_embedders) or None,
                actual=", ".join(extras) or None,
                hint=f"the extra embedders pinned in {lock_path(path).name} are not the ones the "
                "protocol lists; restore the registered list, or amend the protocol before the first run",
            )
        )
    return out


def _check_pinned(protocol: Protocol) -> None:
    """A protocol registered or amended now must pin an embedder that some registry name reports."""
    known = registry_ids()
    if protocol.embedder is None:
        try:
            suggestion = live_embedder().id
            why = f"the id of embedder {live_name()!r}, which `bench run` would use now"
        except EmbedderChoiceError:
            suggestion, why = known.get("minilm", "minilm-l6-v2"), "the default embedder"
        msg = (
            f"{protocol.path} names no embedder, and the embedder is part of the experiment: "
            f"add this line at the top, before the first [table]:\n  {pin_line(suggestion)}\n"
            f"({why}; known ids: {known_ids_text()})"
        )
        raise ProtocolError(msg)
    for pinned in (protocol.embedder, *protocol.embedders):
        if pinned not in known.values():
            msg = (
                f"{protocol.path} pins embedder {pinned!r}, which no registered embedder "
                f"reports; write the id, not the name: one of {known_ids_text()}"
            )
            raise ProtocolError(msg)


def _check_given(protocol: Protocol, manifest_sha256: str, seals: Mapping[str, str]) -> None:
    """At registration the computed hashes must equal the ones the protocol declares."""
    check_sha256("manifest_sha256", manifest_sha256)
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


def _check_fits_given(
    protocol: Protocol, fits: Mapping[str, Mapping[str, str]]
) -> Mapping[str, Mapping[str, str]]:
    """One artifact per [[fits]] entry, no more, each with a path and a sha256."""
    wanted = [f.arm for f in protocol.fits]
    return _check_artifacts_given(protocol, fits, wanted, what="Fitted", does="fits", table="fits")


def _check_encoders_given(
    protocol: Protocol, encoders: Mapping[str, Mapping[str, str]]
) -> Mapping[str, Mapping[str, str]]:
    """One artifact per [[encoders]] entry, no more, each with a path and a sha256."""
    wanted = [e.name for e in protocol.encoders]
    return _check_artifacts_given(
        protocol, encoders, wanted, what="Encoder", does="fine-tunes", table="encoders"
    )


def _check_artifacts_given(
    protocol: Protocol,
    given: Mapping[str, Mapping[str, str]],
    wanted: list[str],
    *,
    what: str,
    does: str,
    table: str,
) -> Mapping[str, Mapping[str, str]]:
    if sorted(given) != sorted(wanted):
        msg = (
            f"{what} artifacts given for {sorted(given)} but {protocol.path} {does} "
            f"{sorted(wanted)}; fit every [[{table}]] entry (harness.cross_fit.fit_protocol) "
            "before registering"
        )
        raise ProtocolError(msg)
    for name, record in given.items():
        if set(record) != {"path", "sha256"}:
            msg = f"{what} artifact of {name} must give path and sha256, got {dict(record)!r}"
            raise ProtocolError(msg)
        check_sha256(f"{table}[{name}].sha256", record["sha256"])
    return given


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
        "embedder": lock.embedder,
        "embedders": lock.embedders,
        "fits": lock.fits,
        "encoders": lock.encoders,
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

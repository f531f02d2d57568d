"""Load a protocol file: read the TOML, validate it against its schema, cross-check it, hash it.

Two hashes are kept: the canonical sha256 (of the parsed TOML as canonical JSON), which the lock
compares, and the raw sha256 of the file's bytes, which identifies the exact file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from arms.registry import RegistryError, is_fitted
from arms.spec import SpecError
from engine.chunking import BASE_CHUNKING
from harness.protocol.arm_embedder import arm_canonical, split_arm
from harness.protocol.model import (
    Corpus,
    Correction,
    EncoderFit,
    FitSpec,
    GateSpec,
    Metrics,
    Protocol,
    ProtocolError,
    Readings,
    Reporting,
    RosterRef,
    Ship,
    ShipRule,
    StatsConfig,
)
from harness.roster import RosterError
from harness.subset import parse_subset

_METRIC_K = re.compile(r"@([0-9]+)$")


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


def declared_embedder(path: Path | str) -> str | None:
    """The protocol's top-level ``embedder`` as written (None when absent or not a string)."""
    _, data = _read_toml(Path(path))
    value = data.get("embedder")
    return value if isinstance(value, str) else None


def declared_embedders(path: Path | str) -> tuple[str, ...]:
    """The protocol's extra ``embedders`` as written (empty when absent; non-strings left out)."""
    _, data = _read_toml(Path(path))
    value = data.get("embedders")
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


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
    try:
        registered = dt.date.fromisoformat(doc["registered"])
    except ValueError as err:
        msg = f"registered must be a date: {err}"
        raise ProtocolError(msg) from err
    stats = StatsConfig(**doc["stats"])
    ship = doc["ship"]
    return Protocol(
        id=doc["id"],
        title=doc["title"],
        hypothesis=doc["hypothesis"],
        registered=registered,
        corpus=_build_corpus(doc["corpus"], "corpus"),
        rosters=tuple(_build_roster(r) for r in doc["rosters"]),
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
        embedder=doc.get("embedder"),
        embedders=tuple(doc.get("embedders", ())),
        correction=_build_correction(doc.get("correction")),
        fits=tuple(_build_fit(f, i) for i, f in enumerate(doc.get("fits", ()))),
        encoders=tuple(_build_encoder(e, i) for i, e in enumerate(doc.get("encoders", ()))),
    )


def _build_corpus(corpus: dict[str, Any], where: str) -> Corpus:
    conversations = corpus.get("conversations")
    try:
        cutoff = dt.datetime.fromisoformat(corpus["cutoff"])
    except ValueError as err:
        msg = f"{where}.cutoff must be an ISO date-time: {err}"
        raise ProtocolError(msg) from err
    return Corpus(
        source=corpus["source"],
        path=corpus["path"],
        manifest_sha256=corpus["manifest_sha256"],
        cutoff=cutoff,
        exclude=tuple(corpus["exclude"]),
        seed=corpus.get("seed"),
        size=corpus.get("size"),
        conversations=tuple(conversations) if conversations is not None else None,
        corrected_facts=corpus.get("corrected_facts", 0),
        changed_facts=corpus.get("changed_facts", 0),
        decisions=corpus.get("decisions"),
        chunking=corpus.get("chunking", BASE_CHUNKING),
    )


def _build_roster(r: dict[str, Any]) -> RosterRef:
    return RosterRef(
        name=r["name"], path=r["path"], seal=r["seal"], unit=r["unit"], subsets=r.get("subsets", {})
    )


def _build_fit(f: dict[str, Any], i: int) -> FitSpec:
    return FitSpec(
        arm=f["arm"],
        seed=f["seed"],
        corpus=_build_corpus(f["corpus"], f"fits[{i}].corpus"),
        rosters=tuple(_build_roster(r) for r in f["rosters"]),
        shared_sessions=f.get("shared_sessions", False),
    )


def _build_encoder(e: dict[str, Any], i: int) -> EncoderFit:
    return EncoderFit(
        name=e["name"],
        arm=e["tune"],
        seed=e["seed"],
        corpus=_build_corpus(e["corpus"], f"encoders[{i}].corpus"),
        rosters=tuple(_build_roster(r) for r in e["rosters"]),
        shared_sessions=e.get("shared_sessions", False),
    )


def _build_correction(doc: dict[str, Any] | None) -> Correction | None:
    if doc is None:
        return None
    return Correction(method=doc["method"], alpha=float(doc["alpha"]), gates=tuple(doc["gates"]))


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
    _check_encoders(protocol)
    _check_embedders(protocol)
    _check_metrics(protocol)
    _check_gates(protocol)
    _check_ship(protocol)
    _check_correction(protocol)
    _check_fits(protocol)


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


def _check_embedders(protocol: Protocol) -> None:
    """Extra embedders need a pinned one; every arm names a listed one, and every listed one is used."""
    extras = protocol.embedders
    if extras and protocol.embedder is None:
        msg = (
            f"embedders {list(extras)} are extra embedders, but the protocol pins none; add "
            'embedder = "<id>" for the arms that name no embedder'
        )
        raise ProtocolError(msg)
    if protocol.embedder in extras:
        msg = (
            f"embedders lists {protocol.embedder}, the pinned embedder; list only the extra ones "
            "(an arm without @<id> already runs over the pinned embedder)"
        )
        raise ProtocolError(msg)
    used: set[str] = set()
    encoders = {e.name for e in protocol.encoders}
    for i, arm in enumerate(protocol.arms):
        named = split_arm(arm).embedder
        if named is None or named in encoders:
            continue
        if named not in extras:
            listed = f"one of {list(extras)}" if extras else "none: the protocol lists no embedders"
            why = (
                f"{named} is the pinned embedder: drop the suffix"
                if named == protocol.embedder
                else f"add it to embedders, or name {listed}"
            )
            msg = (
                f"$.arms[{i}] {arm!r} names embedder {named}, which is not an extra embedder; {why}"
            )
            raise ProtocolError(msg)
        used.add(named)
    unused = [e for e in extras if e not in used]
    if unused:
        msg = (
            f"embedders {unused} are listed but no arm names them; add an arm such as "
            f"'vector()@{unused[0]}' or drop them"
        )
        raise ProtocolError(msg)


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
        for gate_id, verdicts in rule.when.items():
            if gate_id not in gates:
                msg = f"$.ship.rules[{i}].when: gate {gate_id!r} does not exist; choose one of {sorted(gates)}"
                raise ProtocolError(msg)
            kind = gates[gate_id].kind
            if "VACUOUS" in verdicts and kind in ("superiority", "non-inferiority"):
                msg = (
                    f"$.ship.rules[{i}].when: gate {gate_id} is a {kind} gate and can never be "
                    "VACUOUS; use PASS, FAIL or NULL"
                )
                raise ProtocolError(msg)


def _check_correction(protocol: Protocol) -> None:
    if protocol.correction is None:
        return
    gates = {g.id: g for g in protocol.gates}
    for gate_id in protocol.correction.gates:
        where = f"$.correction.gates: gate {gate_id!r}"
        if gate_id not in gates:
            msg = f"{where} does not exist; choose from {sorted(gates)}"
            raise ProtocolError(msg)
        if gates[gate_id].kind == "non-inferiority":
            msg = (
                f"{where} is a non-inferiority gate: it is decided by its bootstrap CI against "
                "-margin and has no p-value for a Holm or Bonferroni family to adjust; leave it out "
                "of correction.gates (set its confidence to widen the CI instead)"
            )
            raise ProtocolError(msg)
        if gates[gate_id].kind != "superiority":
            msg = f"{where} is a {gates[gate_id].kind} gate: it has no p-value to correct; leave it out"
            raise ProtocolError(msg)


def _check_encoders(protocol: Protocol) -> None:
    """Each [[encoders]] entry: a spec `harness.tune` reads, message-unit rosters, a name no other
    embedder has, and at least one arm that ranks by it."""
    from harness.tune import TuneError, TuneParams

    seen: dict[str, int] = {}
    for i, enc in enumerate(protocol.encoders):
        where = f"$.encoders[{i}]"
        if enc.name in seen:
            msg = f"{where}.name {enc.name!r} is used twice (also $.encoders[{seen[enc.name]}])"
            raise ProtocolError(msg)
        seen[enc.name] = i
        if enc.name == protocol.embedder or enc.name in protocol.embedders:
            msg = (
                f"{where}.name {enc.name!r} is already an embedder of this protocol; a fine-tuned "
                "encoder needs a name of its own (e.g. minilm-l6-v2-tuned)"
            )
            raise ProtocolError(msg)
        if protocol.embedder is None:
            msg = f'{where}: a protocol with encoders must pin its embedder (embedder = "<id>")'
            raise ProtocolError(msg)
        try:
            TuneParams.from_spec(enc.tune)
        except TuneError as err:
            msg = f"{where}.tune {enc.tune!r}: {err}"
            raise ProtocolError(msg) from err
        units = sorted({r.unit for r in enc.rosters})
        if units != ["message"]:
            msg = (
                f"{where}.rosters have unit(s) {units}; an encoder learns from (question, evidence "
                "message) pairs, so its training rosters must have unit = 'message'"
            )
            raise ProtocolError(msg)
        names = [r.name for r in enc.rosters]
        if len(set(names)) != len(names):
            msg = f"{where}.rosters name a roster twice: {names}"
            raise ProtocolError(msg)
        if not any(split_arm(a).embedder == enc.name for a in protocol.arms):
            msg = (
                f"{where}: no arm ranks by encoder {enc.name}; add an arm such as "
                f"'vector()@{enc.name}' or drop the entry"
            )
            raise ProtocolError(msg)


def _check_fits(protocol: Protocol) -> None:
    """Every fitted arm has exactly one [[fits]] entry, and every entry fits a listed, fitted arm.

    An arm the registry does not know is left to `bench run` to report, as before fitting existed.
    """
    listed: dict[str, str] = {}
    for arm in protocol.arms:
        try:
            canonical = arm_canonical(arm)
        except (RegistryError, SpecError):
            continue
        listed[canonical] = arm
    fitted = {c: a for c, a in listed.items() if is_fitted(split_arm(a).spec)}
    seen: dict[str, int] = {}
    for i, fit in enumerate(protocol.fits):
        where = f"$.fits[{i}]"
        try:
            canonical = arm_canonical(fit.arm)
        except (RegistryError, SpecError) as err:
            msg = f"{where}.arm {fit.arm!r}: {err}"
            raise ProtocolError(msg) from err
        if canonical not in listed:
            msg = f"{where}.arm {fit.arm!r} is not one of the protocol's arms; fit an arm it runs"
            raise ProtocolError(msg)
        if canonical not in fitted:
            msg = f"{where}.arm {fit.arm!r} is not a fitted arm; it has nothing to fit, drop the entry"
            raise ProtocolError(msg)
        if canonical in seen:
            msg = f"{where}.arm {fit.arm!r} is fitted twice (also $.fits[{seen[canonical]}])"
            raise ProtocolError(msg)
        seen[canonical] = i
        names = [r.name for r in fit.rosters]
        if len(set(names)) != len(names):
            msg = f"{where}.rosters name a roster twice: {names}"
            raise ProtocolError(msg)
    missing = sorted(a for c, a in fitted.items() if c not in seen)
    if missing:
        msg = (
            f"fitted arm(s) {missing} have no [[fits]] entry: name each one's training corpus and "
            "rosters (a fitted arm runs only from what registration fitted)"
        )
        raise ProtocolError(msg)

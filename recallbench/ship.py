"""`recallbench ship`: make the arm a registered benchmark chose the one Claude Code reads.

Only a results folder whose protocol lock and roster seals still verify can be shipped, and the arm is
recomputed from the protocol's pre-registered ship rule and the run's gate verdicts — never typed in.
The run must have used the embedder that will serve (`serve` and the hooks: ``$RECALLBENCH_EMBEDDER``,
else minilm): an arm measured on other vectors is not the arm Claude Code would get.

A fitted arm ships with the model its run used: the artifact the protocol lock (and the run's summary)
records, checked against the locked sha256 and copied into ``$RECALLBENCH_HOME/fitted/``
(`recallbench.shipped_model`), its file and hash written beside the arm.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from arms.registry import full_canonical, is_fitted
from arms.spec import parse_spec
from engine.embed import UnknownEmbedderError
from engine.tuned_cache import tuned_dir
from harness.fit import FitRefusedError
from harness.fit_encoder import encoder_body
from harness.gates import choose_ship
from harness.protocol.arm_embedder import arm_canonical, split_arm
from harness.protocol.embedder import ENV_VAR, use_hint
from harness.protocol.load import load_protocol
from harness.protocol.lock import Lock, load_lock, lock_path
from harness.protocol.model import Protocol, ProtocolError, Verdict
from harness.results import ResultsError, Summary
from harness.seal import SealError, verify_sealed
from recallbench import config, shipped_model
from recallbench.audit_cli import record_audit
from recallbench.harness_cli import key_option, key_paths


class ShipError(RuntimeError):
    """The results folder cannot be shipped."""


@dataclass(frozen=True, kw_only=True)
class FittedModel:
    """The locked artifact of a shipped fitted arm: where it is in the repository, its hash, its bytes."""

    source: str  # relative to the protocol's root, as the lock records it
    sha256: str
    data: bytes


@dataclass(frozen=True, kw_only=True)
class ShippedEncoder:
    """The fine-tuned encoder a shipped arm ranks by (``arm@<encoder>``): its locked artifact and the
    weights it names, which must be in this machine's model cache."""

    name: str  # as the protocol's [[encoders]] entry and the arm's suffix name it
    embedder: str  # the id its vectors are stored under: minilm-l6-v2-tuned-<sha12>
    weights_sha256: str
    source: str  # the artifact, relative to the protocol's root, as the lock records it
    sha256: str  # the artifact's


@dataclass(frozen=True, kw_only=True)
class ShipDecision:
    """The arm a verified results folder's ship rule chose, with the provenance written beside it."""

    arm: str
    canonical: str
    protocol_id: str
    protocol_sha256: str
    run_id: str
    results: str
    verdicts: Mapping[str, Verdict]
    embedder: str
    model: FittedModel | None = None  # set when the arm is fitted
    encoder: ShippedEncoder | None = None  # set when the arm ranks by a fine-tuned encoder

    def config_table(self, now: datetime, model_file: str | None = None) -> dict[str, Any]:
        """The ``[ship]`` table of ``config.toml``: provenance and the gate verdicts; for a fitted arm
        also its model's copy (`model_file`, relative to the home), sha256 and locked source."""
        fitted = (
            {
                "model_file": model_file,
                "model_sha256": self.model.sha256,
                "model_source": self.model.source,
            }
            if self.model is not None and model_file is not None
            else {}
        )
        encoder = (
            {
                "encoder": self.encoder.name,
                "encoder_weights_sha256": self.encoder.weights_sha256,
                "encoder_source": self.encoder.source,
                "encoder_sha256": self.encoder.sha256,
            }
            if self.encoder is not None
            else {}
        )
        return {
            "arm": self.arm,
            "canonical": self.canonical,
            "protocol_id": self.protocol_id,
            "protocol_sha256": self.protocol_sha256,
            "run_id": self.run_id,
            "results": self.results,
            "embedder": self.embedder,
            "shipped_at": now.isoformat(timespec="seconds"),
            "verdicts": dict(sorted(self.verdicts.items())),
            **fitted,
            **encoder,
        }


def verify_results(results_dir: Path, key_paths: Mapping[str, Path] | None = None) -> ShipDecision:
    """Check a results folder against its protocol's lock and seals; return the decision to ship."""
    summary = _read_summary(results_dir)
    root = results_dir.resolve().parents[2]  # results/<protocol>/<run-id>
    protocol_path = root / summary.protocol.path
    try:
        protocol = load_protocol(protocol_path)
        lock = load_lock(protocol_path)
    except (ProtocolError, OSError) as exc:
        msg = f"cannot load the protocol of {results_dir}: {exc}"
        raise ShipError(msg) from exc
    if lock is None:
        msg = f"{protocol_path} has no lock; an unregistered protocol cannot be shipped"
        raise ShipError(msg)
    if summary.deviations:
        msg = f"{results_dir} ran with a declared deviation; ship only a run of the registered protocol"
        raise ShipError(msg)
    if protocol.sha256 != lock.current_sha256 or protocol.sha256 != summary.protocol.sha256:
        msg = (
            f"Expected sha256 of {protocol_path.name} to be {summary.protocol.sha256} (run) and "
            f"{lock.current_sha256} (lock) but got {protocol.sha256}"
        )
        raise ShipError(msg)
    _check_seals(protocol, lock, summary, key_paths or {})
    verdicts = {g.id: g.verdict for g in summary.gates}
    arm = choose_ship(protocol.ship, verdicts)
    if arm != summary.shipped_arm:
        msg = f"the ship rule now chooses {arm!r} but the run recorded {summary.shipped_arm!r}"
        raise ShipError(msg)
    # An arm of a protocol comparing embedders names the one it ranks by (`rrf(...)@<id>`): that
    # embedder, not the protocol's pin, is the one `serve` and the hooks must use. An arm over a
    # fine-tuned encoder (`ltr(...)@<encoder>`) ranks by the encoder's vectors: its embedder id.
    entry = split_arm(arm) if arm is not None else None
    encoder = _shipped_encoder(entry.embedder, protocol, lock, summary) if entry else None
    named = encoder.embedder if encoder is not None else (entry.embedder if entry else None)
    embedder = _check_embedder(results_dir, summary, named, encoder=encoder is not None)
    chosen = arm
    if entry is not None:
        arm = entry.spec
    return ShipDecision(
        arm=arm,
        canonical=full_canonical(arm),
        protocol_id=protocol.id,
        protocol_sha256=protocol.sha256,
        run_id=str(summary.run_id),
        results=str(results_dir.resolve()),
        verdicts=verdicts,
        embedder=embedder,
        model=_fitted_model(chosen, protocol, lock, summary) if is_fitted(arm) else None,
        encoder=encoder,
    )


def _shipped_encoder(
    name: str | None, protocol: Protocol, lock: Lock, summary: Summary
) -> ShippedEncoder | None:
    """The fine-tuned encoder an arm's suffix names (None when it names none): its artifact as the
    lock records it and the run used it, checked by its hash, and its weights in the model cache.

    Raises:
        ShipError: the lock or the run records no artifact for the encoder or they disagree, the
            artifact is missing or changed (naming the file and both hashes), or its weights are not
            in this machine's model cache (saying how to get them).
    """
    if name is None or name not in {e.name for e in protocol.encoders}:
        return None
    locked_in = lock_path(protocol.path)
    record = lock.encoders.get(name)
    ran = ((summary.lock or {}).get("encoders") or {}).get(name)
    if record is None or dict(ran or {}) != dict(record):
        msg = (
            f"the run used encoder artifact {ran} for {name} but {locked_in} records {record}; "
            "ship a run of the protocol as it is registered"
        )
        raise ShipError(msg)
    where, expected = record["path"], record["sha256"]
    data = _locked_artifact(protocol.root / where, expected, locked_in, kind="encoder", owner=name)
    try:
        body = encoder_body(data, where)
    except FitRefusedError as exc:
        raise ShipError(str(exc)) from exc
    weights, embedder = str(body.get("weights_sha256")), str(body.get("embedder"))
    folder = tuned_dir(weights)
    if not folder.is_dir():
        msg = (
            f"the weights of encoder {name} ({embedder}, sha256 {weights}) are not in this "
            f"machine's model cache ({folder}); run `recallbench bench run {protocol.path}` here "
            "(it fits them again from the registered entry and refuses weights that do not "
            "reproduce), then ship its results folder"
        )
        raise ShipError(msg)
    return ShippedEncoder(
        name=name, embedder=embedder, weights_sha256=weights, source=where, sha256=expected
    )


def _locked_artifact(path: Path, expected: str, locked_in: Path, *, kind: str, owner: str) -> bytes:
    """The bytes of the `kind` artifact ("fitted", "encoder") of `owner` at `path`, which must hash
    to `expected` (the lock's record).

    Raises:
        ShipError: the file is missing or changed, naming it and both hashes.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = (
            f"Missing {kind} artifact {path} (sha256 {expected}, locked in {locked_in}) for "
            f"{owner}: {exc.strerror}; restore it from version control"
        )
        raise ShipError(msg) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        msg = (
            f"Expected sha256 of {path} to be {expected} (locked in {locked_in}) but got "
            f"{actual}; the {kind} artifact changed after registration: restore it"
        )
        raise ShipError(msg)
    return data


def _fitted_model(arm: str, protocol: Protocol, lock: Lock, summary: Summary) -> FittedModel:
    """The artifact the lock records for fitted `arm` (the entry, ``@<encoder>`` included), which the
    run recorded too, checked by its hash.

    Raises:
        ShipError: the lock or the run records no artifact for the arm, they disagree, or the file is
            missing or not the locked bytes (naming the file and both hashes).
    """
    canonical = arm_canonical(arm)
    locked = {arm_canonical(spec): dict(rec) for spec, rec in lock.fits.items()}
    ran_fits = (summary.lock or {}).get("fits") or {}
    ran = {arm_canonical(spec): dict(rec) for spec, rec in ran_fits.items()}
    locked_in = lock_path(protocol.path)
    record = locked.get(canonical)
    if record is None:
        msg = f"{locked_in} records no fitted artifact for {canonical}; register the protocol again"
        raise ShipError(msg)
    where, expected = record["path"], record["sha256"]
    used = ran.get(canonical)
    if used != record:
        what = (
            "records no artifact"
            if used is None
            else f"used {used.get('path')} (sha256 {used.get('sha256')})"
        )
        msg = (
            f"the run {what} for {canonical} but {locked_in} records {where} (sha256 {expected}); "
            "ship a run of the protocol as it is registered"
        )
        raise ShipError(msg)
    path = protocol.root / where
    data = _locked_artifact(path, expected, locked_in, kind="fitted", owner=canonical)
    try:
        fitted_for = json.loads(data).get("arm")
    except (ValueError, AttributeError):
        fitted_for = None
    if fitted_for != canonical:  # the lock binds the bytes; this says they are this arm's model
        msg = f"fitted artifact {path} is not a model of {canonical} (its arm: {fitted_for})"
        raise ShipError(msg)
    return FittedModel(source=where, sha256=expected, data=data)


def _check_embedder(
    results_dir: Path, summary: Summary, arm_embedder: str | None = None, *, encoder: bool = False
) -> str:
    """The embedder id the shipped arm ranked by (the one its entry names, else the run's), which
    must be the one `serve` and the hooks would use now. A fine-tuned encoder (`encoder`) is what
    they use once shipped, unless ``$RECALLBENCH_EMBEDDER`` names another (`config.embedder_name`)."""
    used = summary.embedder.used if summary.embedder is not None else summary.environment.embedder
    if arm_embedder is not None:
        used = arm_embedder
    if encoder and used is not None and not os.environ.get(ENV_VAR):
        return used
    try:
        # The embedder named now (not the one an earlier ship left): builds it only, loads no model.
        serving = config.make_embedder(config.embedder_name(from_ship=False)).id
    except UnknownEmbedderError as exc:
        msg = f"$RECALLBENCH_EMBEDDER names no known embedder ({exc}); fix it before shipping"
        raise ShipError(msg) from exc
    if used == serving:
        return serving
    if used is None:
        msg = f"{results_dir} records no embedder; run the protocol again with {serving}"
        raise ShipError(msg)
    pinned = summary.embedder.pinned if summary.embedder is not None else None
    how = use_hint(serving)
    again = (
        f'register a protocol that pins it (embedder = "{serving}"), run it ({how}), ship that run'
        if pinned is not None  # a pinned protocol refuses the other embedder without a deviation
        else f"run the protocol again with it ({how}) and ship that run"
    )
    msg = (
        f"it was run with embedder {used}, but `serve` and the hooks would use {serving} "
        f"(embedder {config.embedder_name(from_ship=False)!r}): the shipped arm would rank by vectors it was not "
        f"measured on.\nFix: serve with {used} ({use_hint(used)} for `serve`, the hooks and this "
        f"`ship`),\n  or keep {serving}: {again}."
    )
    raise ShipError(msg)


def _read_summary(results_dir: Path) -> Summary:
    summary_path = results_dir / "summary.json"
    if not summary_path.is_file():
        msg = f"{results_dir} is not a results folder: no summary.json"
        raise ShipError(msg)
    try:
        return Summary.from_dict(json.loads(summary_path.read_text(encoding="utf-8")))
    except (ResultsError, json.JSONDecodeError) as exc:
        msg = f"{summary_path} cannot be read: {exc}"
        raise ShipError(msg) from exc


def _check_seals(
    protocol: Protocol, lock: Lock, summary: Summary, key_paths: Mapping[str, Path]
) -> None:
    """Every roster's seal now must be the one the run recorded and the lock holds."""
    for ref in protocol.rosters:
        try:
            seal = verify_sealed(protocol.roster_dir(ref.name), key_paths.get(ref.name)).seal
        except SealError as exc:
            raise ShipError(str(exc)) from exc
        if seal != summary.seals.get(ref.name) or seal != lock.current_seals.get(ref.name):
            msg = (
                f"Expected seal of roster {ref.name} to be {summary.seals.get(ref.name)} "
                f"but got {seal}"
            )
            raise ShipError(msg)


def write_config(decision: ShipDecision, now: datetime) -> Path:
    """Write the ``[ship]`` table into config.toml, keeping every other setting the person made.

    A fitted arm's model is copied into the home first, so the table never names a missing copy.

    Raises:
        config.ConfigError: config.toml or the model's copy cannot be written.
    """
    model_file = None
    if decision.model is not None:
        name = parse_spec(decision.arm).name
        try:
            copied = shipped_model.install(decision.model.data, name, decision.model.sha256)
        except OSError as exc:
            msg = f"cannot copy the fitted model into {config.home()}: {exc}"
            raise config.ConfigError(msg) from exc
        model_file = copied.as_posix()
    table = decision.config_table(now, model_file)
    return config.update_config(lambda data: data.__setitem__("ship", table))


def _shipped_before() -> dict[str, Any] | None:
    """What was shipped before this `ship`, or None (nothing, or a file it cannot read, which
    `write_config` then reports)."""
    try:
        return read_config()
    except (OSError, ValueError):
        return None


def read_config() -> dict[str, Any] | None:
    """What is shipped (`[ship]` of `$RECALLBENCH_HOME/config.toml`), or None."""
    return config.shipped()


@click.command("ship")
@click.argument("results_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--show", is_flag=True, help="Print what is shipped and why.")
@key_option
def ship_command(results_dir: Path | None, show: bool, keys: tuple[str, ...]) -> None:
    """Ship the arm that RESULTS_DIR's pre-registered ship rule chose (written to
    $RECALLBENCH_HOME/config.toml, read by `search`, `serve` and the hooks)."""
    if show or results_dir is None:
        current = read_config()
        if current is None:
            click.echo("nothing shipped; `search`, `serve` and the hooks use rrf")
            return
        click.echo(f"shipped arm: {current['arm']}  ({current.get('canonical', '')})")
        click.echo(
            f"protocol: {current.get('protocol_id')} sha256 {current.get('protocol_sha256')}"
        )
        click.echo(f"run: {current.get('run_id')}  ({current.get('results')})")
        if "embedder" in current:  # shipped before embedder pinning: not recorded
            click.echo(f"embedder: {current['embedder']}")
        if "model_file" in current:  # a fitted arm
            click.echo(
                f"model: {config.home() / current['model_file']} "
                f"sha256 {current.get('model_sha256')} (from {current.get('model_source')})"
            )
        if "encoder" in current:  # an arm over a fine-tuned encoder
            click.echo(
                f"encoder: {current['encoder']} weights sha256 "
                f"{current.get('encoder_weights_sha256')} (from {current.get('encoder_source')})"
            )
        verdicts = current.get("verdicts", {})
        click.echo("verdicts: " + ", ".join(f"{k}={v}" for k, v in sorted(verdicts.items())))
        click.echo(f"shipped at: {current.get('shipped_at')}")
        return
    if not results_dir.is_dir():
        raise click.ClickException(f"no such results folder: {results_dir}")
    try:
        decision = verify_results(results_dir, key_paths(keys))
    except ShipError as exc:
        raise click.ClickException(f"cannot ship {results_dir}: {exc}") from exc
    now = datetime.now(UTC)
    before = _shipped_before()
    try:
        path = write_config(decision, now)
    except config.ConfigError as exc:
        raise click.ClickException(f"cannot ship {results_dir}: {exc}") from exc
    targets = (decision.protocol_id, decision.run_id, decision.arm)
    record_audit("ship", targets, "pre-registered rule", now)
    click.echo(f"shipped {decision.arm} from {decision.protocol_id} run {decision.run_id}")
    if before is not None and before.get("arm") != decision.arm:
        click.echo(
            f"replaces {before.get('arm')} (from {before.get('protocol_id')} run "
            f"{before.get('run_id')})"
        )
    click.echo(f"embedder: {decision.embedder} (what `serve` and the hooks use)")
    if decision.model is not None:
        copy = shipped_model.copy_path(parse_spec(decision.arm).name, decision.model.sha256)
        click.echo(
            f"model: {config.home() / copy} "
            f"sha256 {decision.model.sha256} (from {decision.model.source})"
        )
    if decision.encoder is not None:
        click.echo(
            f"encoder: {decision.encoder.name} weights sha256 {decision.encoder.weights_sha256} "
            f"(from {decision.encoder.source}); `serve`, the hooks, `search` and `import` embed "
            f"with it from now on (config.toml names it; ${ENV_VAR} overrides)"
        )
    click.echo("verdicts: " + ", ".join(f"{k}={v}" for k, v in sorted(decision.verdicts.items())))
    click.echo(f"wrote {path}")
    if note := config.no_memory_note(decision.arm, read_config()):
        click.echo(note, err=True)

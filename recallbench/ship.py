"""`recallbench ship`: make the arm a registered benchmark chose the one Claude Code reads.

Only a results folder whose protocol lock and roster seals still verify can be shipped, and the arm is
recomputed from the protocol's pre-registered ship rule and the run's gate verdicts — never typed in.
The run must have used the embedder that will serve (`serve` and the hooks: ``$RECALLBENCH_EMBEDDER``,
else minilm): an arm measured on other vectors is not the arm Claude Code would get.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from arms.registry import full_canonical
from engine.embed import UnknownEmbedderError
from harness.gates import choose_ship
from harness.protocol.embedder import use_hint
from harness.protocol.load import load_protocol
from harness.protocol.lock import Lock, load_lock
from harness.protocol.model import Protocol, ProtocolError, Verdict
from harness.results import ResultsError, Summary
from harness.seal import SealError, verify_sealed
from recallbench import config
from recallbench.harness_cli import key_option, key_paths


class ShipError(RuntimeError):
    """The results folder cannot be shipped."""


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

    def config_table(self, now: datetime) -> dict[str, Any]:
        """The ``[ship]`` table of ``config.toml``: provenance and the gate verdicts."""
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
    embedder = _check_embedder(results_dir, summary)
    verdicts = {g.id: g.verdict for g in summary.gates}
    arm = choose_ship(protocol.ship, verdicts)
    if arm != summary.shipped_arm:
        msg = f"the ship rule now chooses {arm!r} but the run recorded {summary.shipped_arm!r}"
        raise ShipError(msg)
    return ShipDecision(
        arm=arm,
        canonical=full_canonical(arm),
        protocol_id=protocol.id,
        protocol_sha256=protocol.sha256,
        run_id=str(summary.run_id),
        results=str(results_dir.resolve()),
        verdicts=verdicts,
        embedder=embedder,
    )


def _check_embedder(results_dir: Path, summary: Summary) -> str:
    """The run's embedder id, which must be the one `serve` and the hooks would use now."""
    used = summary.embedder.used if summary.embedder is not None else summary.environment.embedder
    try:
        serving = config.make_embedder().id  # builds it only: no model is loaded for its id
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
        f"(embedder {config.embedder_name()!r}): the shipped arm would rank by vectors it was not "
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
    """Write the ``[ship]`` table into config.toml, keeping every other setting the person made."""
    table = decision.config_table(now)
    return config.update_config(lambda data: data.__setitem__("ship", table))


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
    try:
        path = write_config(decision, datetime.now(UTC))
    except config.ConfigError as exc:
        raise click.ClickException(f"cannot ship {results_dir}: {exc}") from exc
    click.echo(f"shipped {decision.arm} from {decision.protocol_id} run {decision.run_id}")
    click.echo(f"embedder: {decision.embedder} (what `serve` and the hooks use)")
    click.echo("verdicts: " + ", ".join(f"{k}={v}" for k, v in sorted(decision.verdicts.items())))
    click.echo(f"wrote {path}")

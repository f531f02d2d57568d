"""`recallbench ship`: make the arm a registered benchmark chose the one Claude Code reads.

Only a results folder whose protocol lock and roster seals still verify can be shipped, and the arm is
recomputed from the protocol's pre-registered ship rule and the run's gate verdicts — never typed in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from recallbench import config
from recallbench.harness_cli import key_option, key_paths


class ShipError(RuntimeError):
    """The results folder cannot be shipped."""


def _toml_value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def verify_results(results_dir: Path, key_paths: dict[str, Path] | None = None) -> dict[str, Any]:
    """Check a results folder against its protocol's lock and seals; return the decision to ship."""
    from arms.registry import full_canonical
    from harness.gates import choose_ship
    from harness.protocol.load import load_protocol
    from harness.protocol.lock import load_lock
    from harness.protocol.model import ProtocolError
    from harness.seal import SealError, verify_sealed

    summary_path = results_dir / "summary.json"
    if not summary_path.is_file():
        msg = f"{results_dir} is not a results folder: no summary.json"
        raise ShipError(msg)
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    root = results_dir.resolve().parents[2]  # results/<protocol>/<run-id>
    protocol_path = root / summary["protocol"]["path"]
    try:
        protocol = load_protocol(protocol_path)
        lock = load_lock(protocol_path)
    except (ProtocolError, OSError) as exc:
        msg = f"cannot load the protocol of {results_dir}: {exc}"
        raise ShipError(msg) from exc
    if lock is None:
        msg = f"{protocol_path} has no lock; an unregistered protocol cannot be shipped"
        raise ShipError(msg)
    if summary["deviations"]:
        msg = f"{results_dir} ran with a declared deviation; ship only a run of the registered protocol"
        raise ShipError(msg)
    if protocol.sha256 != lock.current_sha256 or protocol.sha256 != summary["protocol"]["sha256"]:
        msg = (
            f"Expected sha256 of {protocol_path.name} to be {summary['protocol']['sha256']} (run) and "
            f"{lock.current_sha256} (lock) but got {protocol.sha256}"
        )
        raise ShipError(msg)
    for ref in protocol.rosters:
        try:
            seal = verify_sealed(
                protocol.roster_dir(ref.name), (key_paths or {}).get(ref.name)
            ).seal
        except SealError as exc:
            raise ShipError(str(exc)) from exc
        if seal != summary["seals"].get(ref.name) or seal != lock.current_seals.get(ref.name):
            msg = (
                f"Expected seal of roster {ref.name} to be {summary['seals'].get(ref.name)} "
                f"but got {seal}"
            )
            raise ShipError(msg)
    verdicts = {g["id"]: g["verdict"] for g in summary["gates"]}
    arm = choose_ship(protocol.ship, verdicts)
    if arm != summary["shipped_arm"]:
        msg = f"the ship rule now chooses {arm!r} but the run recorded {summary['shipped_arm']!r}"
        raise ShipError(msg)
    return {
        "arm": arm,
        "canonical": full_canonical(arm),
        "protocol_id": protocol.id,
        "protocol_sha256": protocol.sha256,
        "run_id": summary["run_id"],
        "results": str(results_dir.resolve()),
        "verdicts": verdicts,
    }


def write_config(decision: dict[str, Any], now: datetime) -> Path:
    path = config.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Written by `recallbench ship`; the arm comes from a registered protocol's ship rule.",
        "[ship]",
    ]
    for key in ("arm", "canonical", "protocol_id", "protocol_sha256", "run_id", "results"):
        lines.append(f"{key} = {_toml_value(decision[key])}")
    lines.append(f"shipped_at = {_toml_value(now.isoformat(timespec='seconds'))}")
    lines.append("[ship.verdicts]")
    lines += [f"{k} = {_toml_value(v)}" for k, v in sorted(decision["verdicts"].items())]
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


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
    path = write_config(decision, datetime.now(UTC))
    click.echo(f"shipped {decision['arm']} from {decision['protocol_id']} run {decision['run_id']}")
    click.echo(
        "verdicts: " + ", ".join(f"{k}={v}" for k, v in sorted(decision["verdicts"].items()))
    )
    click.echo(f"wrote {path}")

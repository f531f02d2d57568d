"""`arm fit`: fit a fitted arm on a corpus and sealed rosters, to explore (registered in cli._attach).

Only `protocol register` produces artifacts a run accepts: a run reads the artifact its lock records,
and nothing else. This command writes the same kind of artifact wherever `--out` says, so a person can
look at a model, its features and its training counts before writing a protocol that fits it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import click

from recallbench import config
from recallbench.cli_options import HelpGroup


@click.group("arm", cls=HelpGroup, short_help="Work with one arm: fit a fitted arm to explore.")
def arm_group() -> None:
    """Commands about one retrieval arm (`recallbench arms` lists them all)."""


@arm_group.command("fit")
@click.argument("spec")
@click.option(
    "--corpus",
    "corpus",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The training corpus: a folder of Claude Code transcripts (a frozen copy).",
)
@click.option(
    "--roster",
    "rosters",
    required=True,
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A sealed training roster folder; repeatable. Its key must be in the folder.",
)
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Fit seed.")
@click.option(
    "--now",
    "now",
    required=True,
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d"]),
    help="The training corpus's cutoff (the `now` its queries are asked at), e.g. 2026-06-01.",
)
@click.option("--k", default=10, show_default=True, type=click.IntRange(min=1), help="Depth k.")
@click.option(
    "--chunking",
    default=2,
    show_default=True,
    type=click.Choice(["1", "2"]),
    help="How a long message is split into chunks: 2 where a word ends, as `recallbench import` "
    "does; 1 every 900 characters, as a protocol that names no `chunking` runs.",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the artifact (never overwritten).",
)
def arm_fit(
    spec: str,
    corpus: Path,
    rosters: tuple[Path, ...],
    seed: int,
    now: datetime,
    k: int,
    chunking: str,
    out: Path,
) -> None:
    """Fit arm SPEC on a training CORPUS and sealed training rosters; write the artifact to OUT.

    For exploration only: a benchmark run accepts only the artifacts `protocol register` fitted from
    the protocol's [[fits]] entries, whose hashes its lock records.
    """
    from datetime import UTC

    from arms.fitting import FitError
    from arms.registry import RegistryError, is_fitted
    from arms.spec import SpecError
    from harness.fit import TrainingRoster, fit_bytes
    from harness.protocol.embedder import live_embedder
    from harness.roster import RosterError
    from harness.seal import SealError

    if out.exists():
        raise click.ClickException(f"{out} exists; artifacts are not overwritten")
    try:
        if not is_fitted(spec):
            raise click.ClickException(f"{spec} is not a fitted arm; it has nothing to fit")
        training = [TrainingRoster.of(folder) for folder in rosters]
        data = fit_bytes(
            spec,
            corpus,
            training,
            seed=seed,
            now=now if now.tzinfo else now.replace(tzinfo=UTC),
            k=k,
            exclude=("self_transcript", "after_cutoff"),
            embedder=live_embedder(),
            bound_to=None,
            progress=config.show_progress(),
            chunking=int(chunking),
        )
    except (FitError, RegistryError, SpecError, SealError, RosterError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("xb") as fh:
        fh.write(data)
    body = json.loads(data)
    counts = ", ".join(f"{key}={value}" for key, value in body["counts"].items())
    click.echo(f"wrote {out} (sha256 {hashlib.sha256(data).hexdigest()})")
    click.echo(f"arm {body['arm']}, embedder {body['embedder']}, seed {seed}")
    click.echo(f"features: {', '.join(body['features'])}")
    click.echo(f"training: {len(body['training']['qids'])} questions; {counts}")
    click.echo(
        "exploration only: a run uses only what `protocol register` fits from the protocol's [[fits]]"
    )

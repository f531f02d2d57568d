"""`recallbench models`: the fine-tuned encoders in the model cache, and removing those not in use.

Every registration of a protocol with an `[[encoders]]` entry (the LoCoMo template) fine-tunes
all-MiniLM-L6-v2 several times: the encoder it locks, and one per cross-fitting fold, which only the
registration itself reads. Each is about 90 MB in the model cache (`engine.tuned_cache`), plus its ONNX
export once it has served, and nothing removed them. `models list` shows them with their sizes, the
shipped one marked; `models drop ID` deletes one that is not in use. A protocol whose lock names a
dropped encoder fits it again at its next `bench run` (the weights reproduce, or the run refuses them).
"""

from __future__ import annotations

import json

import click

from engine.onnx_embed import model_cache_dir
from engine.tuned_cache import TunedEncoder, remove_tuned, tuned_encoders
from recallbench import config
from recallbench.cli_options import HelpGroup, drop_options, go_ahead
from recallbench.present import counted
from recallbench.present import megabytes as mb


def _line(encoder: TunedEncoder) -> str:
    exported = "ONNX export made" if encoder.exported else "no ONNX export yet"
    return f"    weights {encoder.weights_sha256} · {mb(encoder.bytes)} · {exported}"


@click.group(
    "models",
    cls=HelpGroup,
    invoke_without_command=True,
    short_help="List the fine-tuned encoders in the model cache; drop those not in use.",
)
@click.pass_context
def models_group(click_ctx: click.Context) -> None:
    """List the fine-tuned encoders in the model cache ($RECALLBENCH_MODEL_CACHE, else
    ~/.cache/recallbench/models), and drop those not in use.

    Without a subcommand, the same as `models list`.
    """
    if click_ctx.invoked_subcommand is None:
        click_ctx.invoke(list_command)


@models_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def list_command(as_json: bool = False) -> None:
    """Every fine-tuned encoder in the model cache: its embedder id, weights, size and whether it is
    in use (shipped, or selected by $RECALLBENCH_EMBEDDER)."""
    encoders = tuned_encoders()
    in_use = config.embedders_in_use()
    if as_json:
        rows = [
            {
                "embedder": e.embedder_id,
                "weights_sha256": e.weights_sha256,
                "folder": str(e.folder),
                "bytes": e.bytes,
                "exported": e.exported,
                "in_use": in_use.get(e.embedder_id),
            }
            for e in encoders
        ]
        click.echo(json.dumps({"cache": str(model_cache_dir()), "encoders": rows}, indent=2))
        return
    click.echo(
        f"model cache: {model_cache_dir()}  fine-tuned encoders: {len(encoders)} "
        f"({mb(sum(e.bytes for e in encoders))})"
    )
    for e in encoders:
        why = in_use.get(e.embedder_id)
        state = (
            f"in use: {why}" if why else f"not in use: `recallbench models drop {e.embedder_id}`"
        )
        click.echo(f"{e.embedder_id} · {state}")
        click.echo(_line(e))
    unused = [e for e in encoders if e.embedder_id not in in_use]
    if unused:
        total = mb(sum(e.bytes for e in unused))
        click.echo(f"not in use: {counted(len(unused), 'encoder')}, {total}")


@models_group.command("drop")
@click.argument("embedder", metavar="EMBEDDER_ID")
@drop_options
def drop_command(embedder: str, dry_run: bool, yes: bool) -> None:
    """Delete the fine-tuned encoder EMBEDDER_ID (an id `models list` shows: its weights and ONNX
    exports) from the model cache. The encoder in use is refused. The vectors it made stay in the
    memory until `recallbench vectors drop EMBEDDER_ID`; a protocol locked with it fits it again at
    its next `bench run`."""
    encoders = [e for e in tuned_encoders() if e.embedder_id == embedder]
    in_use = config.embedders_in_use()
    if embedder in in_use:
        raise click.ClickException(
            f"{embedder} is in use ({in_use[embedder]}); nothing was removed"
        )
    if not encoders:
        held = ", ".join(e.embedder_id for e in tuned_encoders()) or "none"
        raise click.ClickException(
            f"no fine-tuned encoder {embedder} in {model_cache_dir()} (it holds: {held}); "
            "nothing was removed"
        )
    if len(encoders) > 1:  # two weights whose hashes share 12 hex digits: never guess
        raise click.ClickException(
            f"{len(encoders)} folders hold weights with the id {embedder} "
            f"({', '.join(str(e.folder) for e in encoders)}); remove the one you mean by hand"
        )
    (encoder,) = encoders
    click.echo(f"{embedder}: {encoder.folder} ({mb(encoder.bytes)})")
    if not go_ahead(f"Delete {encoder.folder}?", dry_run=dry_run, yes=yes):
        return
    remove_tuned(encoder)
    click.echo(f"dropped {embedder}: {mb(encoder.bytes)} freed")

"""`recallbench vectors`: the vectors each embedder left in the memory, and dropping those no longer used.

Switching embedders (shipping an arm over a fine-tuned encoder, or `$RECALLBENCH_EMBEDDER`) embeds the
memory again under the new embedder's id; the old vectors and their index files stay, unread. `vectors
list` shows every embedder's share (the one in use marked), `vectors drop ID` removes one that is not
in use (`engine.held_vectors`): its rows, its index files, then a VACUUM, recorded in `recallbench
audit`. The transcripts are untouched: selecting that embedder again and running `import` embeds the
chunks again.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from engine.held_vectors import DropRefusedError, HeldVectors, drop_vectors, held_vectors
from recallbench import config
from recallbench.cli import Context, pass_ctx
from recallbench.cli_options import HelpGroup, db_option, drop_options, go_ahead
from recallbench.present import counted
from recallbench.present import megabytes as mb


def _held(ctx: Context) -> list[HeldVectors]:
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    ctx.check_home()
    return held_vectors(ctx.db)


def describe(h: HeldVectors) -> str:
    """One embedder's share on one line: rows, sentence vectors, index files and bytes. Chunks with the
    same text share a vector, so the count can be below `status`'s `vectors:` (chunks with one)."""
    return (
        f"{counted(h.chunk_vectors, 'chunk vector')} (one per distinct chunk text), "
        f"{counted(h.sentence_vectors, 'sentence vector')} of your prompts "
        f"({mb(h.chunk_bytes + h.sentence_bytes)} in the database); "
        f"{counted(len(h.index_files), 'index file')} ({mb(h.index_bytes)})"
    )


@click.group(
    "vectors",
    cls=HelpGroup,
    invoke_without_command=True,
    short_help="List each embedder's vectors in the memory; drop those no longer used.",
)
@db_option
@click.pass_context
def vectors_group(click_ctx: click.Context) -> None:
    """List the vectors each embedder left in the memory, and drop those no longer used.

    Without a subcommand, the same as `vectors list`.
    """
    if click_ctx.invoked_subcommand is None:
        click_ctx.invoke(list_command)


@vectors_group.command("list")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_ctx
def list_command(ctx: Context, as_json: bool = False) -> None:
    """Every embedder with vectors in the memory: chunk vectors, sentence vectors of your prompts, index
    files and their sizes, and whether it is in use."""
    held = _held(ctx)
    in_use = config.embedders_in_use()
    if as_json:
        rows = [
            {
                "embedder": h.embedder,
                "chunk_vectors": h.chunk_vectors,
                "chunk_bytes": h.chunk_bytes,
                "sentence_texts": h.sentence_texts,
                "sentence_vectors": h.sentence_vectors,
                "sentence_bytes": h.sentence_bytes,
                "index_files": [p.name for p in h.index_files],
                "index_bytes": h.index_bytes,
                "in_use": in_use.get(h.embedder),
            }
            for h in held
        ]
        click.echo(json.dumps({"database": str(ctx.db), "embedders": rows}, indent=2))
        return
    click.echo(f"database: {ctx.db}  embedders with vectors: {len(held)}")
    for h in held:
        why = in_use.get(h.embedder)
        state = f"in use: {why}" if why else f"not in use: `recallbench vectors drop {h.embedder}`"
        click.echo(f"{h.embedder} · {state}")
        click.echo(f"    {describe(h)}")
    unused = [h for h in held if h.embedder not in in_use]
    if unused:
        total = sum(h.total_bytes for h in unused)
        click.echo(f"not in use: {counted(len(unused), 'embedder')}, about {mb(total)}")


@vectors_group.command("drop")
@db_option
@click.argument("embedder", metavar="EMBEDDER_ID")
@drop_options
@pass_ctx
def drop_command(ctx: Context, embedder: str, dry_run: bool, yes: bool) -> None:
    """Remove every vector of EMBEDDER_ID (an id `vectors list` shows): its chunk and sentence vectors,
    its index files, then compact the database. The embedder in use is refused. Nothing of your
    transcripts is removed: selecting that embedder again and running `recallbench import` embeds the
    memory again."""
    held = {h.embedder: h for h in _held(ctx)}
    in_use = config.embedders_in_use()
    target = held.get(embedder)
    if embedder in in_use:
        raise click.ClickException(
            f"{embedder} is in use ({in_use[embedder]}); nothing was removed"
        )
    if target is None:
        listed = ", ".join(held) or "none"
        raise click.ClickException(
            f"the memory holds no vectors of {embedder} (it holds: {listed}); nothing was removed"
        )
    click.echo(f"{embedder}: {describe(target)}")
    if not go_ahead(f"Drop every vector of {embedder}?", dry_run=dry_run, yes=yes):
        return
    try:
        report = drop_vectors(ctx.db, embedder, keep=in_use, now=datetime.now(UTC))
    except DropRefusedError as exc:
        raise click.ClickException(f"{exc}; nothing was removed") from exc
    click.echo(
        f"dropped the vectors of {embedder} (audit entry {report.audit_id}); database "
        f"{mb(report.size_before)} -> {mb(report.size_after)}"
    )
    if not report.compacted:
        click.echo(f"note: {report.note}", err=True)

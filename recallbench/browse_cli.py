"""`recallbench sessions` and `recallbench show`: browse what the memory holds without a query.

`sessions` lists the sessions of a project (most recently started first) with the opening of each, so
that a person can find the id that `forget --session`, `show` or a search result names. `show ID` prints
one chunk whole, with `--context N` chunks of its session before and after it: the view the MCP tool
`get_memory` gives the model, on the command line. Both read through `engine.text_reads.TextReads`
(no numpy, no model) and take their scope as `search` does: the project holding the current directory,
`--project PATH` or `--all-projects`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from engine.api import ChunkRecord
from engine.render import strip_terminal_control
from engine.scope import Scope
from engine.text_reads import TextReads
from recallbench import config
from recallbench.chunk_view import chunk_fields, neighbours, previous_and_next, read_chunk
from recallbench.cli import Context, pass_ctx
from recallbench.cli_options import db_option, window_options
from recallbench.cli_scope import resolve_scope, window_fields, window_note, within_window
from recallbench.present import clip, counted, ids_that_start, minute, one_line, status_line

F = TypeVar("F", bound=Callable[..., Any])

# Characters of a session's opening line in the text listing (`--json` gives the chunk whole).
OPENING_CHARS = 110
# The most chunks `show --context` reads on each side.
MAX_CONTEXT = 20


def _project_options(command: F) -> F:
    """--project (repeatable) and --all-projects, as `search` takes them."""
    command = click.option(
        "--all-projects", is_flag=True, help="Every project (must be asked for)."
    )(command)
    return click.option(
        "--project", multiple=True, help="This project (its recorded cwd); repeatable."
    )(command)


def _reads(ctx: Context) -> TextReads:
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    ctx.check_home()
    return TextReads(ctx.db)


# --- sessions ------------------------------------------------------------------------------------


@click.command("sessions", short_help="List the sessions the memory holds, most recent first.")
@db_option
@_project_options
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="How many sessions to list.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the sessions as JSON rows (session_id, project, started, ended, chunks, "
    "opening_chunk_id, opening).",
)
@window_options("sessions with a chunk written")
@pass_ctx
def sessions_command(
    ctx: Context,
    project: tuple[str, ...],
    all_projects: bool,
    limit: int,
    as_json: bool,
    since: str | None,
    until: str | None,
) -> None:
    """List the sessions of the current project (or --project, or --all-projects), most recently
    started first: when each started, its id, how many chunks it holds, its project, and the start of
    its opening chunk (usually the first prompt). `--since`/`--until` list only the sessions with a
    chunk written in that window (each still shown whole).

    A session's id is what `recallbench forget --session` takes; a chunk id is what `recallbench show`
    takes. Sessions that only hold recallbench's own output are not listed (`status` counts them as
    self_transcripts).
    """
    with _reads(ctx) as reads:
        scope = resolve_scope(reads, project, all_projects, Path.cwd())
        window = within_window(scope, since, until, datetime.now(UTC))
        rows = reads.recent_sessions(window, limit)
        ids = [str(r["opening_chunk_id"]) for r in rows if r["opening_chunk_id"]]
        openings = {r.id: r.text for r in reads.chunks(ids, scope)}  # an opening before the window
    for row in rows:
        row["opening"] = openings.get(str(row["opening_chunk_id"]))
    if as_json:
        data = {"scope": str(scope), **window_fields(window), "sessions": rows}
        click.echo(json.dumps(data, indent=2))
        return
    local = config.read_settings().time_local
    note = window_note(window, local=local)
    click.echo(f"scope: {scope}{note}  sessions: {len(rows)} (most recent first)")
    for row in rows:
        chunks = counted(int(str(row["chunks"])), "chunk")
        click.echo(
            f"{minute(row['started'], local=local)} · session {row['session_id']} · {chunks} · "
            f"{row['project']}"
        )
        opening = row["opening"]
        if isinstance(opening, str) and opening.strip():
            click.echo(f'    "{clip(one_line(opening), OPENING_CHARS)}"')


# --- show ----------------------------------------------------------------------------------------


@click.command("show", short_help="Print one chunk whole (an id from search), with its neighbours.")
@db_option
@click.argument("chunk_id", metavar="CHUNK_ID")
@_project_options
@click.option(
    "--context",
    "context",
    default=0,
    show_default=True,
    type=click.IntRange(0, MAX_CONTEXT),
    help="Also print this many chunks of the same session before and after it.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print as JSON: the chunk (the fields of the MCP tool get_memory) and the chunks before "
    "and after it.",
)
@pass_ctx
def show_command(
    ctx: Context,
    chunk_id: str,
    project: tuple[str, ...],
    all_projects: bool,
    context: int,
    as_json: bool,
) -> None:
    """Print the chunk CHUNK_ID whole: who wrote it, when, its session and project, its part in any
    correction, the ids of the chunks before and after it, and its text.

    The chunk must lie in the current project (or --project, or --all-projects), as a search's hits
    do. A chunk that a correction hides from every search is still printed, with its status. The
    first characters of an id do (4 or more), when they start one chunk id in scope: stderr names
    the whole id; when they start several, they are listed.
    """
    chunk_id = chunk_id.strip()
    with _reads(ctx) as reads:
        scope = resolve_scope(reads, project, all_projects, Path.cwd())
        record, starting, count = read_chunk(reads, chunk_id, scope)
        if record is None:
            raise click.ClickException(_not_found(chunk_id, scope, starting, count))
        if record.id != chunk_id:
            click.echo(
                f"chunk {record.id}: the one chunk id in {scope} that starts with {chunk_id}",
                err=True,
            )
        before = neighbours(reads, record, scope, range(record.index - context, record.index))
        after = neighbours(
            reads, record, scope, range(record.index + 1, record.index + context + 1)
        )
        previous, following = previous_and_next(reads, record, scope)
    if as_json:
        data = {
            "chunk": chunk_fields(record, previous, following),
            "before": [chunk_fields(r) for r in before],
            "after": [chunk_fields(r) for r in after],
        }
        click.echo(json.dumps(data, indent=2))
        return
    local = config.read_settings().time_local
    for other in before:
        _echo_block(f"before · chunk {other.id}", other, local=local)
    _echo_block(f"chunk {record.id}", record, local=local)
    click.echo(f"previous: {previous or 'none'}  next: {following or 'none'}")
    for other in after:
        _echo_block(f"after · chunk {other.id}", other, local=local)


def _not_found(chunk_id: str, scope: Scope, starting: list[str], count: int) -> str:
    """Why `chunk_id` is not shown: the ids in scope that start with it (`starting`, `count` in all),
    else how to widen the scope."""
    if count:
        shown = ids_that_start("chunk", starting, count)
        return f"no chunk {chunk_id} in {scope}, but {shown}; give more of the id"
    hint = "" if scope.all_projects else " (pass --all-projects to look everywhere)"
    return f"no chunk {chunk_id} in {scope}{hint}"


def _echo_block(label: str, record: ChunkRecord, *, local: bool) -> None:
    """A heading line (what, who, when, session, project, status), then the text as stored."""
    status = status_line(record)
    click.echo(
        " · ".join(
            (
                f"--- {label}",
                record.author.label,
                minute(record.ts_start, local=local),
                f"session {record.session_id}",
                record.project,
                *([status] if status else []),
            )
        )
    )
    # Stored text has no terminal control sequences since they were stripped at import; a store
    # written before that may still hold some, and a terminal would act on them.
    click.echo(strip_terminal_control(record.text).rstrip("\n"))

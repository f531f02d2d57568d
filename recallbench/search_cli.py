"""`recallbench search`: one question to the memory, answered by a running server or in this process.

The command resolves the scope (the current project, `--project` or `--all-projects`, narrowed to a
time window by `--since`/`--until`), then asks a running `recallbench serve` (`recallbench.search_run`)
or builds the arm here and prints the hits.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from recallbench import config
from recallbench.cli import Context, pass_ctx
from recallbench.cli_options import QueryCommand, db_option, window_options
from recallbench.cli_scope import resolve_scope, within_window


@click.command(
    "search",
    cls=QueryCommand,
    short_help="Search memory (the current project unless told otherwise).",
)
@db_option
@click.argument("query")
@click.option(
    "--arm",
    "arm_spec",
    default=None,
    help="Arm spec, e.g. 'walk' or 'rrf(pool=20)'. Default: the shipped arm, else rrf. A fitted "
    "arm (e.g. ltr) runs only as shipped, with the model of its benchmark run.",
)
@click.option(
    "--project", multiple=True, help="Search this project (its recorded cwd); repeatable."
)
@click.option("--all-projects", is_flag=True, help="Search every project (must be asked for).")
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, 100),
    help="How many hits to show.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print hits as JSON rows (rank, chunk_id, score, via, session_id, project, author, "
    "timestamp, text, status, same_text, nearly_same).",
)
@window_options("what was written")
@click.option(
    "--in-process",
    is_flag=True,
    help="Search in this process even when a running `recallbench serve` could answer.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Say on stderr which path answered: the running server, or this process (and why).",
)
@pass_ctx
def search_command(
    ctx: Context,
    query: str,
    arm_spec: str | None,
    project: tuple[str, ...],
    all_projects: bool,
    limit: int,
    as_json: bool,
    since: str | None,
    until: str | None,
    in_process: bool,
    verbose: bool,
) -> None:
    """Search memory with a retrieval arm, scoped to the current project unless told otherwise.

    Each hit shows its rank and the channel that found it (e.g. `#1 via rrf (fts+vector)`), who wrote
    it, when, its session and project, the chunk's id (`recallbench show ID` prints it whole), then
    the part of the chunk around the query's words. Hits that say the same words (the same file read
    in another session, say: the same text, or one found whole in a longer hit) are shown once, the
    fuller one in the higher place: its line says how many more there are, `--json` lists their ids
    (`same_text`), and the list is filled from further hits. Hits that say nearly the same (the
    same file read again after a small edit) are shown once too, the later one in the higher place,
    with `nearly the same text in N more hits` (`nearly_same`).

    When `recallbench serve` is running over the same database with the same arm, it answers (its
    model is already loaded, so the answer comes in a fraction of a second); otherwise this process
    loads the model and searches. The hits are the same either way; `--verbose` says which path
    answered.

    `--since` and `--until` keep only the chunks written in that window (a chunk's time is its first
    message's). The window narrows the read itself, so `--limit` still fills from the chunks inside
    it.
    """
    from engine.text_reads import TextReads
    from recallbench.search_run import ask_for, print_hits, search_in_process, shown_rows
    from recallbench.served_search import ServedHit

    if not query.strip():
        raise click.UsageError('the query is empty; say what to look for, e.g. "retry flake"')
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    ctx.check_home()
    spec = arm_spec or config.shipped_spec() or "rrf"
    if arm_spec is None and config.no_memory(spec):  # read from config.toml, so it parses
        click.echo(config.no_memory_note(spec, config.shipped()), err=True)
    now = datetime.now(UTC)
    with TextReads(ctx.db) as reads:
        try:
            scope = resolve_scope(reads, project, all_projects, Path.cwd())
        except click.UsageError:
            _refuse_bad_spec(spec)  # a misspelt --arm is named first
            raise
        scope = within_window(scope, since, until, now)
        served = None if in_process else ask_for(reads, scope, query, spec, limit, now, ctx.db)
        if served is not None:
            if verbose:
                click.echo(served.how, err=True)
            first = served.hits
            if first is not None:

                def ask(n: int) -> list[ServedHit]:  # more hits, when some repeat a text
                    if n == limit:
                        return first
                    more = ask_for(reads, scope, query, spec, n, now, ctx.db).hits
                    return first if more is None else more

                print_hits(shown_rows(ask, reads, scope, limit), query, spec, scope, as_json)
                return
    if verbose:
        why = "--in-process was given" if served is None else "the server did not answer"
        click.echo(f"searching in this process ({why})", err=True)
    rows = search_in_process(ctx.memory(few_texts=True), query, spec, scope, limit, now)
    print_hits(rows, query, spec, scope, as_json)


def _refuse_bad_spec(spec: str) -> None:
    """Raise a UsageError naming what is wrong with arm `spec`, if anything. Called only when the
    search is refused anyway: parsing a spec imports the arms (about 60 ms), which a search answered
    by the server does not otherwise pay."""
    from arms.registry import full_canonical

    try:
        full_canonical(spec)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc

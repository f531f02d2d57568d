"""The two ways `recallbench search` answers, and how it prints: the running server, or this process.

`ask_for` asks a running `recallbench serve` (`recallbench.served_search`); `search_in_process` builds
the arm here (loading the model); `shown_rows` makes either's hits rows, each text once
(`recallbench.same_text`: the arm is asked again for hits to replace those left out); `print_hits`
prints them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import click

from engine.scope import Scope
from recallbench import config
from recallbench.chunk_view import ChunkReads
from recallbench.cli_scope import window_fields, window_note
from recallbench.empty_answer import CLI, nothing_found
from recallbench.present import HitRow, RankedHit, header, snippet
from recallbench.same_text import fill, once_each
from recallbench.served_search import ServedAnswer, ServedQuery, ask_server

if TYPE_CHECKING:
    from engine.memory import Memory  # numpy and the import pipeline: only to search in-process

H = TypeVar("H", bound=RankedHit)

# Characters of a hit's text the plain-text listing shows on one line (`--json` gives it whole).
SNIPPET_CHARS = 200


class Projects(Protocol):
    """What names every recorded project (`engine.text_reads.TextReads`, `Memory`)."""

    def projects(self) -> list[str]: ...


def shown_rows(
    ask: Callable[[int], list[H]], reads: ChunkReads, scope: Scope, limit: int
) -> list[HitRow]:
    """The rows of `ask(n)`'s hits (`n` hits asked for, `limit` first), each text once."""
    hits, shown = fill(
        ask, lambda found: reads.chunks([h.chunk_id for h in found], scope), once_each, limit
    )
    return shown.rows(hits)


def ask_for(
    reads: Projects, scope: Scope, text: str, spec: str, limit: int, now: datetime, db: Path
) -> ServedAnswer:
    """The running server's answer for exactly this search (`recallbench.served_search`)."""
    projects = reads.projects() if scope.all_projects else sorted(scope.projects)
    since, until = scope.window_bounds()
    asked = ServedQuery(
        text=text, spec=spec, projects=projects, k=limit, now=now, since=since, until=until
    )
    embedder_id = config.make_embedder().id  # only its id: the model is not loaded
    return ask_server(asked, db=db, home=config.home(), embedder_id=embedder_id)


def search_in_process(
    memory: Memory, text: str, spec: str, scope: Scope, limit: int, now: datetime
) -> list[HitRow]:
    """The arm `spec` built and run in this process (a fitted arm only with its shipped model)."""
    from arms.base import Query
    from recallbench.shipped_model import NotShippedError, ShippedModelError, build_arm

    try:
        arm = build_arm(spec, memory)  # a fitted arm only with the shipped model, hash checked
    except NotShippedError as exc:
        raise click.UsageError(str(exc)) from exc
    except ShippedModelError as exc:
        raise click.ClickException(str(exc)) from exc
    except (ValueError, KeyError) as exc:
        raise click.UsageError(str(exc)) from exc
    return shown_rows(
        lambda n: arm.search(Query(text=text, scope=scope, now=now, k=n)), memory, scope, limit
    )


def print_hits(rows: list[HitRow], text: str, spec: str, scope: Scope, as_json: bool) -> None:
    """The rows as JSON, or as a header line and a snippet per hit; a scope's time window is named
    in both (`window`: its UTC bounds, null on an open side), and so is what to try after an empty
    answer (`message` in JSON, stderr otherwise; `recallbench.empty_answer`)."""
    empty = None if rows else nothing_found(scope, text, CLI, spec=spec)
    if as_json:
        data = {"arm": spec, "scope": str(scope), **window_fields(scope)}
        hits = [row.to_dict() for row in rows]
        click.echo(json.dumps(data | {"hits": hits, "message": empty}, indent=2))
        return
    local = config.read_settings().time_local
    click.echo(f"arm: {spec}  scope: {scope}{window_note(scope, local=local)}  hits: {len(rows)}")
    if empty is not None:
        click.echo(empty, err=True)
    for row in rows:
        click.echo(header(row, local=local))
        click.echo(f"    {snippet(row.text, text, SNIPPET_CHARS)}")

"""`recallbench correct` and `recallbench corrections`: the person's side of typed corrections.

`correct OLD --by NEW --kind K --reason R` settles chunk OLD against chunk NEW (`engine.trust`):
`corrected` hides OLD from every search, `changed` ranks it below NEW, `open` shows both together.
`--note TEXT` instead of `--by` writes the replacement as a short note of the person's own, stored as
a memory of OLD's project. `correct --undo ID` takes any settle back, the agent's included. Both are
recorded in the audit trail as the person. `corrections` lists the settles; `--pending` the ones an
agent made through the MCP tool `flag_memory` that are still in force, for the person to review.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from engine.api import SETTLEMENT_KINDS, ChunkRecord, Settlement
from engine.audit import AGENT_PREFIX, PERSON
from engine.memory import Memory
from engine.scope import Scope, resolve_project
from engine.trust import TrustError
from recallbench import config
from recallbench.cli_options import chosen_db, db_option
from recallbench.home_trust import UntrustedHomeError, check_home
from recallbench.present import clip, one_line

# Characters of each chunk's text a listing line shows.
PREVIEW_CHARS = 90
_EFFECT = {
    "corrected": "is hidden from every search from now on (its id still reads it)",
    "changed": "ranks below its replacement from now on, marked with today's date",
    "open": "is shown together with the other one from now on, both marked open",
}
# What a settle does to the chunks that say what OLD (or an open settle's NEW) says
# (`Memory.settled_with`), as `correct` says it and as `corrections` lists it.
_WITH_IT = {
    "corrected": "hidden with it",
    "changed": "ranked below its replacement too",
    "open": "shown with the other one too",
}
_TOO = {"corrected": "hides too", "changed": "ranks below too", "open": "pairs too"}
# What a search scoped to a project the replacement does not lie in does with the chunks there a
# settle applies to (an open settle has no replacement: each side's repeats pair with the other side).
_APART = {
    "corrected": "hides the chunks there and cannot show it",
    "changed": "shows the chunks there marked, without it",
}


def _memory(*, embed: bool = False) -> Memory:
    """The memory database of this invocation (`--db`, else the default), which must exist; with
    `embed`, opened with the configured embedder so that a note is embedded at once, as an import
    would (without it, when the embedder cannot be set up, the next import or server embeds it)."""
    ctx = click.get_current_context()
    db = chosen_db(ctx) or config.default_db()
    if not db.exists():
        raise click.ClickException(f"no database at {db}; run `recallbench import` first")
    home = config.home()
    if home.exists() and db.resolve().is_relative_to(home.resolve()):
        try:
            check_home(home)
        except UntrustedHomeError as exc:
            raise click.ClickException(str(exc)) from exc
    embedder = None
    if embed:
        try:
            embedder = config.make_embedder()
        except Exception as exc:  # a model that cannot load must not lose the person's note
            click.echo(f"warning: the note is stored unembedded for now ({exc})", err=True)
    return Memory(db, embedder)


@click.command(
    "correct", short_help="Settle a memory that another contradicts, or undo a settle (--undo)."
)
@db_option
@click.argument("old", required=False, metavar="OLD")
@click.option(
    "--by", "by", metavar="NEW", help="The chunk id that corrects, replaces or disputes OLD."
)
@click.option(
    "--note",
    metavar="TEXT",
    help="Write the replacement yourself: a short note (at most 900 characters) stored as a memory "
    "of OLD's project; use instead of --by.",
)
@click.option(
    "--kind",
    type=click.Choice(SETTLEMENT_KINDS),
    help="corrected: OLD was wrong (hidden from searches); changed: OLD was true then (ranked "
    "below NEW); open: unresolved (both shown together). Each applies as well to every chunk that "
    "says what OLD says (open: what either says): its text of 100 characters or more stored "
    "again, or a resumed session's copy.",
)
@click.option("--reason", metavar="TEXT", help="Why, in one sentence; recorded in the audit trail.")
@click.option("--undo", "undo", type=int, metavar="ID", help="Take back settle ID instead.")
def correct_command(
    old: str | None,
    by: str | None,
    note: str | None,
    kind: str | None,
    reason: str | None,
    undo: int | None,
) -> None:
    """Settle chunk OLD against NEW as corrected, changed or open; or take a settle back with --undo.

    OLD and NEW are chunk ids, as `recallbench search --json` and the get_memory tool show them. A
    settle is recorded in the audit trail; nothing is deleted, and `--undo ID` restores the memory as
    it was. The person may undo any settle, the agent's included (`recallbench corrections --pending`).
    """
    now = datetime.now(UTC)
    if undo is not None:
        if old or by or note or kind:
            raise click.UsageError("--undo ID takes no OLD, --by, --note or --kind")
        _undo(undo, reason or "", now)
        return
    if not old:
        raise click.UsageError(
            "name the chunk to settle (OLD), or take a settle back with --undo ID"
        )
    if by is not None and note is not None:
        raise click.UsageError(
            "give the replacement as --by NEW (a chunk id) or --note TEXT, not both"
        )
    if kind is None:
        raise click.UsageError(f"--kind is required: one of {', '.join(SETTLEMENT_KINDS)}")
    if not reason or not reason.strip():
        raise click.UsageError(
            '--reason is required: why OLD is settled, e.g. --reason "port moved"'
        )
    if by is None and note is None:
        raise click.UsageError("give the replacement: --by NEW (a chunk id) or --note TEXT")
    memory = _memory(embed=note is not None)
    try:
        if note is not None:
            by = memory.add_note(_project_of(memory, old), note, now=now)
            click.echo(f"note stored as chunk {by}")
        done = memory.settle(old, by=by or "", kind=kind, reason=reason, actor=PERSON, now=now)
        same = memory.settled_with(done)
        apart = [] if done.kind == "open" else _projects_apart(memory, same, done.new)
    except TrustError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        memory.close()
    click.echo(f"settle {done.id}: {done.old} {done.kind} by {done.new}")
    click.echo(
        f"{done.old} {_EFFECT[done.kind]}; `recallbench correct --undo {done.id}` takes it back"
    )
    if same:
        click.echo(
            f"{_WITH_IT[done.kind]}: {len(same)} chunk(s) that say the same ({', '.join(same)}): "
            "the same text stored again (another session's read of the same file, say), or a "
            "resumed session's copy"
        )
    if apart:
        click.echo(
            f"{done.new} lies in {apart[0]}: a search of {' or '.join(apart[1:])} alone "
            f"{_APART[done.kind]}"
        )


def _projects_apart(memory: Memory, same: list[str], new: str) -> list[str]:
    """[`new`'s project, then the other projects of the chunks `same`, sorted], or [] when they all
    lie in its project: a search scoped to one of the others shows those chunks marked but cannot
    show `new`."""
    if not same:
        return []
    projects = {r.id: r.project for r in memory.chunks([*same, new], Scope.everywhere())}
    home = projects.get(new, "")
    others = sorted({projects[i] for i in same if i in projects} - {home})
    return [home, *others] if others else []


def _project_of(memory: Memory, chunk: str) -> str:
    """The project of chunk `chunk`, where a note replacing it is stored."""
    found = memory.chunks([chunk], Scope.everywhere())
    if not found:
        msg = (
            f"no chunk {chunk} in the memory; use a chunk id that `recallbench search --json` shows"
        )
        raise TrustError(msg)
    return found[0].project


def _undo(settlement_id: int, reason: str, now: datetime) -> None:
    memory = _memory()
    try:
        done = memory.undo_settle(settlement_id, actor=PERSON, now=now, reason=reason)
    except TrustError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        memory.close()
    click.echo(
        f"settle {done.id} undone: {done.old} ({done.kind} by {done.new}) is as it was before"
    )


@click.command("corrections", short_help="List the settles; --pending: the agent's, to review.")
@db_option
@click.option(
    "--project",
    "project",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Only settles touching this project (repeatable; default: every project).",
)
@click.option(
    "--all-projects",
    is_flag=True,
    help="Every project: the default here, accepted as `search` and `sessions` take it.",
)
@click.option(
    "--pending",
    is_flag=True,
    help="Only settles an agent made (the MCP tool flag_memory) that are still in force.",
)
@click.option("--all", "include_undone", is_flag=True, help="Include settles that were undone.")
@click.option("--json", "as_json", is_flag=True, help="Print the settles as a JSON list.")
def corrections_command(
    project: tuple[Path, ...],
    all_projects: bool,
    pending: bool,
    include_undone: bool,
    as_json: bool,
) -> None:
    """List the settles, oldest first: id, time, kind, OLD -> NEW, who made it and why.

    Each line is followed by the start of both chunks' text. `--pending` shows every settle an agent
    made that is still in force: review them, and undo any you disagree with (`recallbench correct
    --undo ID`).
    """
    if pending and include_undone:
        raise click.UsageError("--pending lists settles in force; it cannot be combined with --all")
    if all_projects and project:
        raise click.UsageError("give --project or --all-projects, not both")
    memory = _memory()
    try:
        scope = _scope(memory, project)
        found = memory.settlements(scope, include_undone=include_undone)
        if pending:
            found = [s for s in found if s.actor.startswith(AGENT_PREFIX)]
        ids = [i for s in found for i in (s.old, s.new)]
        records = {r.id: r for r in memory.chunks(ids, Scope.everywhere())}
        # what an active settle applies to besides its chunk: the person reviews that too
        same = {s.id: memory.settled_with(s) for s in found if s.active}
    finally:
        memory.close()
    if as_json:
        rows = [s.to_dict() | ({"same_text": same[s.id]} if same.get(s.id) else {}) for s in found]
        click.echo(json.dumps(rows, indent=2))
        return
    if not found:
        what = "pending agent settles" if pending else "settles"
        where = "any project" if scope.all_projects else str(scope)
        click.echo(f"no {what} in {where}")
        return
    for settled in found:
        for line in _lines(settled, records, same.get(settled.id, [])):
            click.echo(line)


def _scope(memory: Memory, project: tuple[Path, ...]) -> Scope:
    if not project:
        return Scope.everywhere()
    recorded = memory.projects()
    return Scope.of([resolve_project(recorded, p) or str(p) for p in project])


def _lines(settled: Settlement, records: dict[str, ChunkRecord], same: list[str]) -> list[str]:
    state = "" if settled.active else f"  [undone {settled.undone} by {settled.undone_by}]"
    lines = [
        f"#{settled.id}  {settled.time}  {settled.kind:<9}  {settled.old} -> {settled.new}  "
        f"by {settled.actor}: {settled.reason}{state}",
        f"    old: {_preview(records.get(settled.old))}",
        f"    new: {_preview(records.get(settled.new))}",
    ]
    if same:
        lines.append(
            f"    {_TOO[settled.kind]}: {len(same)} chunk(s) that say the same: {', '.join(same)}"
        )
    return lines


def _preview(record: ChunkRecord | None) -> str:
    if record is None:
        return "(no longer in the memory)"
    return f"{record.project} · " + clip(one_line(record.text), PREVIEW_CHARS)

"""`recallbench projects`: the projects the memory holds, and the person's word for a removed worktree.

`projects list` shows each project's sessions, chunks, latest session, whether its folder exists here
and where it sat in git. With `scope.worktrees` on, a folder reads the same folder in the repository's
other worktrees, which only works for worktrees whose place in git an import read while they existed.
`projects join PROJECT... --worktree-of FOLDER` states that removed worktrees belonged to FOLDER's
repository (`engine.projects`), recorded in `recallbench audit`; `--undo` takes the statement back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from engine.projects import (
    JoinRefusedError,
    ProjectInfo,
    join,
    plan_join,
    project_infos,
    stated,
    unjoin,
)
from recallbench import config
from recallbench.cli import Context, pass_ctx
from recallbench.cli_options import HelpGroup, db_option, go_ahead
from recallbench.present import counted, minute


def _infos(ctx: Context) -> list[ProjectInfo]:
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    ctx.check_home()
    return project_infos(ctx.db)


def where(info: ProjectInfo) -> str:
    """A project's place in git as `list` shows it."""
    if info.checkout is None:
        return "git: not recorded"
    said = f", stated by you {info.joined_at}" if info.joined_at else ""
    return f"git: {info.checkout.repository} (folder {info.checkout.folder}{said})"


@click.group(
    "projects",
    cls=HelpGroup,
    invoke_without_command=True,
    short_help="List the projects in the memory; tie a removed worktree to its repository.",
)
@db_option
@click.pass_context
def projects_group(click_ctx: click.Context) -> None:
    """List the projects the memory holds and where each sat in git; state which repository a
    removed worktree belonged to (`projects join`).

    Without a subcommand, the same as `projects list`.
    """
    if click_ctx.invoked_subcommand is None:
        click_ctx.invoke(list_command)


@projects_group.command("list")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_ctx
def list_command(ctx: Context, as_json: bool = False) -> None:
    """Every project with a session: sessions, chunks, the start of its latest session, whether its
    folder exists here, and where it sat in git (read by an import, or stated with `join`)."""
    infos = _infos(ctx)
    if as_json:
        rows = [
            {
                "project": i.project,
                "sessions": i.sessions,
                "chunks": i.chunks,
                "last_started": i.last_started,
                "folder_exists": i.exists,
                "repository": i.checkout.repository if i.checkout else None,
                "folder": i.checkout.folder if i.checkout else None,
                "joined_at": i.joined_at,
            }
            for i in infos
        ]
        click.echo(json.dumps({"database": str(ctx.db), "projects": rows}, indent=2))
        return
    gone = sum(not i.exists for i in infos)
    click.echo(f"database: {ctx.db}  projects: {len(infos)} ({gone} whose folder is gone)")
    local = config.read_settings().time_local
    for i in infos:
        last = minute(i.last_started, local=local) if i.last_started else "undated"
        state = "folder here" if i.exists else "folder gone"
        click.echo(
            f"{i.project} · {counted(i.sessions, 'session')} · {counted(i.chunks, 'chunk')} · "
            f"latest {last} · {state} · {where(i)}"
        )
    unrecorded = [i for i in infos if i.unrecorded]
    if unrecorded:
        click.echo(
            f"not recorded: {counted(len(unrecorded), 'project')} whose folder was gone when it was "
            "imported, so no other worktree joins it; `recallbench projects join PROJECT "
            "--worktree-of FOLDER` states that one was a worktree of FOLDER's repository"
        )


@projects_group.command("join")
@db_option
@click.argument("projects", metavar="PROJECT...", nargs=-1, required=True)
@click.option(
    "--worktree-of",
    "worktree_of",
    metavar="FOLDER",
    default=None,
    help="The repository's folder (its main checkout, in git here), a project with a record, or a "
    "project whose folder is gone too (taken as the root of the main checkout).",
)
@click.option("--undo", is_flag=True, help="Take back what `join` stated about each PROJECT.")
@click.option("--dry-run", is_flag=True, help="Only say what would be recorded.")
@click.option("--yes", is_flag=True, help="Do not ask (needed without a terminal).")
@pass_ctx
def join_command(
    ctx: Context,
    projects: tuple[str, ...],
    worktree_of: str | None,
    undo: bool,
    dry_run: bool,
    yes: bool,
) -> None:
    """State that each PROJECT (a project whose folder is gone) was a git worktree of FOLDER's
    repository, at the same folder below its root as FOLDER.

    With `scope.worktrees` on, the same folder in the repository's other worktrees then reads the
    projects' sessions, and they theirs. An import that finds a PROJECT's folder again replaces the
    statement with what it reads there. All the projects are recorded together, or none is (every
    refusal is named). Recorded in `recallbench audit`; `--undo` takes it back.
    """
    _infos(ctx)
    if undo:
        if worktree_of is not None:
            raise click.UsageError("--undo takes no --worktree-of")
        _undo(ctx, projects, dry_run=dry_run, yes=yes)
        return
    if worktree_of is None:
        raise click.UsageError("name the repository with --worktree-of FOLDER (or give --undo)")
    try:
        plan = plan_join(ctx.db, projects, worktree_of)
    except JoinRefusedError as exc:
        raise click.ClickException(f"{exc}; nothing was recorded") from exc
    sizes = [
        f"{i.project} ({counted(i.sessions, 'session')}, {counted(i.chunks, 'chunk')})"
        for i in plan.infos
    ]
    would = (
        f"would be folder {plan.checkout.folder} of {plan.checkout.repository} (from {plan.source})"
    )
    if len(sizes) == 1:
        click.echo(f"{sizes[0]} {would}")
    else:
        click.echo(f"{len(sizes)} projects {would}:")
        for size in sizes:
            click.echo(f"  {size}")
    if plan.also is not None:
        click.echo(f"{plan.also} would be recorded as that repository's main checkout too")
    shared = ", ".join(plan.others) if plan.others else "none yet"
    click.echo(f"projects at the same folder of that repository: {shared}")
    if not config.read_settings().scope_worktrees:
        click.echo(
            "scope.worktrees is off: nothing reads across worktrees until "
            "`recallbench config set scope.worktrees true`"
        )
    which = _which(plan.projects)
    kind = "a worktree" if len(plan.projects) == 1 else "worktrees"
    if not go_ahead(
        f"Record {which} as {kind} of that repository?",
        dry_run=dry_run,
        yes=yes,
        nothing="nothing was recorded",
    ):
        return
    try:
        entry = join(ctx.db, plan, now=datetime.now(UTC))
    except JoinRefusedError as exc:
        raise click.ClickException(f"{exc}; nothing was recorded") from exc
    click.echo(f"recorded {which} as {kind} of {plan.checkout.repository} (audit entry {entry})")


def _which(projects: tuple[str, ...]) -> str:
    """One project by name, several by count (each was named on its own line above)."""
    return projects[0] if len(projects) == 1 else counted(len(projects), "project")


def _undo(ctx: Context, projects: tuple[str, ...], *, dry_run: bool, yes: bool) -> None:
    """Show the statements about `projects`, then take them back."""
    try:
        infos = stated(ctx.db, projects)
    except JoinRefusedError as exc:
        raise click.ClickException(str(exc)) from exc
    for info in infos:
        click.echo(f"{info.project}: {where(info)}")
    names = tuple(i.project for i in infos)
    if not go_ahead(
        f"Take back what was stated about {_which(names)}?",
        dry_run=dry_run,
        yes=yes,
        nothing="nothing was changed",
    ):
        return
    try:
        entry = unjoin(ctx.db, infos, now=datetime.now(UTC))
    except JoinRefusedError as exc:
        raise click.ClickException(str(exc)) from exc
    for name in names:
        click.echo(f"{name} has no record of its git repository again (audit entry {entry})")

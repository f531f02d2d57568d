"""Which projects a command reads when it names none: the one rule (`engine.scope.explain_project`)
under the person's settings, and the words that say why a folder resolves as it does.

`search`, `sessions`, `show` and `status` resolve through here; `--project P` names a project (by any
path to its folder) and `--all-projects` reads every one.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from engine.scope import RecordedProjects, Resolution, Scope, explain_recorded, resolve_project
from recallbench import config
from recallbench.time_window import TimeError, narrowed


def resolve_scope(
    memory: RecordedProjects, project: tuple[str, ...], all_projects: bool, cwd: Path
) -> Scope:
    """--project P (repeatable), --all-projects, or the project holding the current directory.

    A `--project` with no recorded sessions is searched all the same (it finds nothing), with a
    one-line warning on stderr: a typo must not look like "nothing relevant".
    """
    if all_projects and project:
        raise click.UsageError("use either --project or --all-projects, not both")
    if all_projects:
        return Scope.everywhere()
    if project:
        # A folder given by any path (`..`, a symlink) names the recorded project it physically is.
        recorded = memory.projects()
        resolved = [resolve_project(recorded, p) or p for p in project]
        known = set(recorded)
        for name in resolved:
            if name not in known:
                click.echo(
                    f"warning: no sessions are recorded for project {name}; "
                    "`recallbench status` counts the projects that are",
                    err=True,
                )
        return Scope.of(resolved)
    found = resolve_here(memory, cwd)
    if not found.projects:
        raise click.UsageError(
            f"{found.directory} belongs to no project: {explain(found)}; "
            "pass --project PATH or --all-projects"
        )
    return Scope.of(found.projects)


def within_window(scope: Scope, since: str | None, until: str | None, now: datetime) -> Scope:
    """`scope` narrowed to `--since`/`--until` (`recallbench.time_window`, in this machine's time
    zone with `time.local` on); an unreadable time or an empty window is a usage error naming the
    forms."""
    try:
        return narrowed(scope, since, until, now, local=config.read_settings().time_local)
    except TimeError as exc:
        raise click.UsageError(str(exc)) from exc


def window_fields(scope: Scope) -> dict[str, object]:
    """`{"window": {"since": …, "until": …}}` (UTC texts, null on an open side) for a JSON listing
    of a windowed scope; nothing for one without a window."""
    if not scope.windowed:
        return {}
    since, until = scope.window_bounds()
    return {"window": {"since": since, "until": until}}


def window_note(scope: Scope, *, local: bool = False) -> str:
    """`  window: 2026-02-11 00:00 .. UTC` for a listing's header line, "" without a window; with
    `local`, the bounds in this machine's time zone, named by its abbreviation (`CET`)."""
    bound = scope.since or scope.until  # a windowed scope has at least one
    if bound is None:
        return ""
    zone = bound.astimezone().tzname() if local else "UTC"
    return f"  window: {scope.window_label(local=local)} {zone}"


def resolve_here(memory: RecordedProjects, directory: Path) -> Resolution:
    """The recorded project `directory` belongs to, under the person's `scope.inherit_parent`, and
    the other git worktrees of the same folder (joined under `scope.worktrees`, else named)."""
    settings = config.read_settings()
    return explain_recorded(
        memory,
        directory,
        inherit_parent=settings.scope_inherit_parent,
        join_worktrees=settings.scope_worktrees,
        offer_worktrees=True,
    )


def explain(found: Resolution) -> str:
    """Why a directory resolves as it does, with the setting that would change it."""
    hints = []
    if found.parent is not None:
        hints.append("`recallbench config set scope.inherit_parent true` would use it")
    if found.worktrees and not found.joined:
        n = len(found.worktrees)
        hints.append(
            f"the same folder in {n} other git worktree{'' if n == 1 else 's'} of its repository "
            f"{'has' if n == 1 else 'have'} sessions ({', '.join(found.worktrees)}); "
            "`recallbench config set scope.worktrees true` would join them"
        )
    return "; ".join((found.reason, *hints))

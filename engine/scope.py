"""`Scope`: which projects a read may see, and the one rule for which project a directory belongs to.

There is no default that means "all projects". `resolve_project` (with its explanation,
`explain_project`) is the only place "the current project" is decided: the CLI, the MCP tools and the
hooks all call it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from engine.git_repo import Checkout, checkout_of


class ScopeError(ValueError):
    """A read was attempted without a valid scope."""


@dataclass(frozen=True, kw_only=True)
class Scope:
    """An explicit set of projects (real `cwd` paths), or everywhere when spelled out; optionally a
    time window.

    Build one with `Scope.of(...)` or `Scope.everywhere()`; an empty project set is refused because
    it would silently return nothing. `within(since, until)` narrows it to the chunks written in a
    window: a chunk lies in it when its first message's time is at or after `since` and before
    `until` (either may be open); a chunk without a time lies in no window. The window is enforced
    where the projects are, in the engine's reads, and a read that cannot honour it refuses a
    windowed scope instead of ignoring it.
    """

    projects: frozenset[str] = frozenset()
    all_projects: bool = False
    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        if self.all_projects and self.projects:
            msg = f"Scope is either everywhere or a set of projects, got both: {sorted(self.projects)}"
            raise ScopeError(msg)
        if not self.all_projects and not self.projects:
            msg = "Scope needs at least one project; use Scope.everywhere() to read all projects"
            raise ScopeError(msg)
        for name, bound in (("since", self.since), ("until", self.until)):
            if bound is not None and bound.utcoffset() is None:
                msg = f"a Scope's {name} needs a time zone, got {bound.isoformat()}"
                raise ScopeError(msg)
        if self.since is not None and self.until is not None and self.since >= self.until:
            msg = (
                f"a Scope's window is empty: since {self.since.isoformat()} is not before "
                f"until {self.until.isoformat()}"
            )
            raise ScopeError(msg)

    @classmethod
    def of(cls, *projects: str | Iterable[str]) -> Scope:
        names: set[str] = set()
        for p in projects:
            if isinstance(p, str):
                names.add(p)
            else:
                names.update(p)
        return cls(projects=frozenset(names))

    @classmethod
    def everywhere(cls) -> Scope:
        return cls(all_projects=True)

    def allows(self, project: str) -> bool:
        """Whether `project` is in scope (the window, if any, is checked by the reads)."""
        return self.all_projects or project in self.projects

    def within(self, since: datetime | None, until: datetime | None) -> Scope:
        """The same projects, narrowed to chunks written at or after `since` and before `until`."""
        return replace(self, since=since, until=until)

    @property
    def windowed(self) -> bool:
        """Whether a time window narrows this scope."""
        return self.since is not None or self.until is not None

    def window_bounds(self) -> tuple[str | None, str | None]:
        """The window's bounds as UTC ISO-8601 texts with milliseconds, as Claude Code writes
        times (`2026-02-11T20:36:45.618Z`); None for an open side."""
        return _utc_text(self.since), _utc_text(self.until)

    def window_label(self, *, local: bool = False) -> str:
        """`2026-02-11 00:00 .. 2026-02-12 00:00` (UTC, or with `local` this machine's time zone; `..`
        alone on an open side), or ""."""
        if not self.windowed:
            return ""
        since, until = (
            ""
            if b is None
            else (b.astimezone() if local else b.astimezone(UTC)).strftime("%Y-%m-%d %H:%M")
            for b in (self.since, self.until)
        )
        return f"{since} .. {until}".strip()

    def __str__(self) -> str:
        return "*" if self.all_projects else ",".join(sorted(self.projects))


def _utc_text(bound: datetime | None) -> str | None:
    if bound is None:
        return None
    return (
        bound.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{bound.microsecond // 1000:03d}Z"
    )


def require_scope(scope: object) -> Scope:
    """Fail closed: every read API entry point calls this on its `scope` argument."""
    if not isinstance(scope, Scope):
        msg = f"a Scope is required for every read, got {scope!r}; use Scope.of(project) or Scope.everywhere()"
        raise ScopeError(msg)
    return scope


# --- which project a directory belongs to ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Resolution:
    """The recorded project a directory resolves to (None: none), and why, in words.

    `directory` is the physical directory that was matched. `parent` is the nearest recorded folder
    above it that parent-folder inheritance would use; it is set only while inheritance is off, so a
    caller can say how to opt in.
    """

    directory: str
    project: str | None
    reason: str
    parent: str | None = None
    # The recorded projects that are this folder in other worktrees of its git repository (found only
    # when the caller passed the checkouts), and whether they join the scope (`scope.worktrees`).
    worktrees: tuple[str, ...] = ()
    joined: bool = False

    @property
    def projects(self) -> tuple[str, ...]:
        """The projects a read from this directory may see: its own, and the worktrees it joined."""
        own = () if self.project is None else (self.project,)
        return own + (self.worktrees if self.joined else ())


def resolve_project(
    projects: Iterable[str],
    directory: Path | str,
    *,
    inherit_parent: bool = False,
    home: Path | str | None = None,
) -> str | None:
    """The recorded project `directory` belongs to, or None; see `explain_project` for the rule."""
    return explain_project(projects, directory, inherit_parent=inherit_parent, home=home).project


def explain_project(
    projects: Iterable[str],
    directory: Path | str,
    *,
    inherit_parent: bool = False,
    home: Path | str | None = None,
    checkouts: Mapping[str, Checkout] | None = None,
    join_worktrees: bool = False,
) -> Resolution:
    """The recorded project `directory` belongs to, with the reason; with `checkouts` (each recorded
    project's place in git, `engine.checkout_sql`), also the recorded projects that are the same
    folder of the same git repository in other worktrees, joined to the scope when `join_worktrees`
    (an opt-in). See `_explain_folder` for the rule of the folder itself.
    """
    found = _explain_folder(projects, directory, inherit_parent=inherit_parent, home=home)
    return found if checkouts is None else _with_worktrees(found, checkouts, join_worktrees)


class RecordedProjects(Protocol):
    """A store's recorded projects and where each sat in git (`engine.memory.Memory`,
    `engine.text_reads.TextReads`)."""

    def projects(self) -> list[str]: ...
    def project_checkouts(self) -> dict[str, Checkout]: ...


def explain_recorded(
    store: RecordedProjects,
    directory: Path | str,
    *,
    inherit_parent: bool,
    join_worktrees: bool,
    offer_worktrees: bool = False,
) -> Resolution:
    """`explain_project` over `store`'s recorded projects, as the person's settings ask: the git
    checkouts are read only when other worktrees may join (`join_worktrees`) or are to be named to
    the person (`offer_worktrees`), so a hook with the setting off never reads them."""
    return explain_project(
        store.projects(),
        directory,
        inherit_parent=inherit_parent,
        checkouts=store.project_checkouts() if join_worktrees or offer_worktrees else None,
        join_worktrees=join_worktrees,
    )


def _with_worktrees(found: Resolution, checkouts: Mapping[str, Checkout], join: bool) -> Resolution:
    """`found` with the other worktrees' projects of the same folder of the same repository.

    The folder is the resolved project (its recorded checkout, else where it sits on disk), or the
    directory itself when it resolved to none: a fresh worktree has no sessions yet. Two worktrees
    match only at the same path below their roots, so the subprojects of one repository stay apart.
    """
    base = found.project
    mine = checkouts.get(base) if base is not None else None
    if mine is None:
        mine = checkout_of(base if base is not None else found.directory)
    if mine is None:
        return found
    others = tuple(sorted(p for p, c in checkouts.items() if c == mine and p != base))
    if not others:
        return found
    if not join:
        return replace(found, worktrees=others)
    where = "worktree" if len(others) == 1 else "worktrees"
    joined = f"{len(others)} other {where} of its git repository ({mine.repository})"
    first = found.reason if base is not None else "no sessions were recorded in this folder"
    reason = f"{first}; joined with the same folder in {joined}"
    return replace(found, worktrees=others, joined=True, reason=reason, parent=None)


def _explain_folder(
    projects: Iterable[str],
    directory: Path | str,
    *,
    inherit_parent: bool = False,
    home: Path | str | None = None,
) -> Resolution:
    """The recorded project `directory` belongs to, with the reason.

    Sessions record the `cwd` they ran in. The directory is resolved once, physically
    (`os.path.realpath`), so `B/../A` and `B/link-to-A` are A and never B; a recorded project is
    compared by its own realpath where it still exists. Paths match by whole components (`/a/bc` is not
    inside `/a/b`).

    The directory resolves to a project only if it IS that project; with `inherit_parent` (an opt-in)
    it may also resolve to its nearest recorded ancestor, but never to `/` or to the home folder (`home`,
    default `~`), whose sessions would otherwise apply to every folder below them.
    """
    here = os.path.realpath(directory)
    physical: dict[str, list[str]] = {}
    for project in projects:
        if os.path.isabs(project):
            physical.setdefault(_physical(project), []).append(project)
    if here in physical:
        return Resolution(
            directory=here,
            project=_pick(physical[here], here),
            reason="sessions were recorded in this folder",
        )
    above = sorted((p for p in physical if is_inside(here, p)), key=len, reverse=True)
    never = {os.sep, os.path.realpath(home if home is not None else os.path.expanduser("~"))}
    eligible = [p for p in above if p not in never]
    if not eligible:
        refused = (
            f"; {above[0]} is the root or the home folder, whose sessions are never inherited"
            if above
            else ""
        )
        return Resolution(
            directory=here,
            project=None,
            reason=f"no sessions were recorded in this folder or a folder above it{refused}",
        )
    nearest = _pick(physical[eligible[0]], eligible[0])
    if inherit_parent:
        return Resolution(
            directory=here,
            project=nearest,
            reason=f"inherited from the nearest recorded folder above it, {nearest}",
        )
    return Resolution(
        directory=here,
        project=None,
        reason=f"no sessions were recorded in this folder, and parent-folder inheritance is off; "
        f"the nearest recorded folder above it is {nearest}",
        parent=nearest,
    )


def _physical(project: str) -> str:
    """A recorded project's physical path; one that no longer exists keeps its recorded name."""
    return os.path.realpath(project) if os.path.exists(project) else os.path.normpath(project)


def _pick(recorded: list[str], physical: str) -> str:
    """One recorded name for a physical folder: the one spelled as the folder itself, else the first."""
    return min(recorded, key=lambda name: (name != physical, name))


def is_inside(here: str, folder: str) -> bool:
    """`here` lies strictly below `folder`, matching whole path components."""
    prefix = folder if folder.endswith(os.sep) else folder + os.sep
    return here != folder and here.startswith(prefix)

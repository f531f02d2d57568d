"""`Scope`: which projects a read may see. There is no default that means "all projects"."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class ScopeError(ValueError):
    """A read was attempted without a valid scope."""


@dataclass(frozen=True, kw_only=True)
class Scope:
    """An explicit set of projects (real `cwd` paths), or everywhere when spelled out.

    Build one with `Scope.of(...)` or `Scope.everywhere()`; an empty project set is refused because
    it would silently return nothing.
    """

    projects: frozenset[str] = frozenset()
    all_projects: bool = False

    def __post_init__(self) -> None:
        if self.all_projects and self.projects:
            msg = f"Scope is either everywhere or a set of projects, got both: {sorted(self.projects)}"
            raise ScopeError(msg)
        if not self.all_projects and not self.projects:
            msg = "Scope needs at least one project; use Scope.everywhere() to read all projects"
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
        return self.all_projects or project in self.projects

    def __str__(self) -> str:
        return "*" if self.all_projects else ",".join(sorted(self.projects))


def require_scope(scope: object) -> Scope:
    """Fail closed: every read API entry point calls this on its `scope` argument."""
    if not isinstance(scope, Scope):
        msg = f"a Scope is required for every read, got {scope!r}; use Scope.of(project) or Scope.everywhere()"
        raise ScopeError(msg)
    return scope


def resolve_project(projects: Iterable[str], directory: Path) -> str | None:
    """The longest recorded project that is `directory` or a folder above it (None when there is none).

    Sessions record the real `cwd` they ran in; a search started in a sub-folder belongs to the project
    that holds it. The CLI, the MCP server and the hooks all resolve "the current project" here.
    """
    candidates = {directory}
    with contextlib.suppress(OSError, RuntimeError):
        candidates.add(directory.resolve())
    matches = [
        p
        for p in projects
        if any(here == Path(p) or Path(p) in here.parents for here in candidates)
    ]
    return max(matches, key=lambda p: (len(p), p)) if matches else None

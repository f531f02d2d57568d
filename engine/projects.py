"""The projects the memory holds, where each sat in git, and the person's word for a removed worktree.

With `scope.worktrees` on, a folder reads the same folder in the other worktrees of its git repository
(`engine.scope`), known from the record an import made while each folder existed
(`engine.checkout_sql`). A history imported for the first time after its task worktrees were removed
has no record for any of them, and nothing left on disk can say which repository they belonged to:
their sessions stay apart from the repository's for good. `join` records the person's statement that a
project was a worktree of the repository a folder (or a recorded project) is checked out from, with an
audit entry (`projects.join`); `unjoin` takes a statement back (`projects.unjoin`). An import's own
record is never replaced by a statement, and a project whose folder exists is read from disk instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engine import audit, checkout_sql, reads, store
from engine.git_repo import Checkout, checkout_of

JOIN_ACTION = "projects.join"
UNJOIN_ACTION = "projects.unjoin"


class JoinRefusedError(ValueError):
    """The statement is refused (unknown project, a folder that exists, a record already made, or a
    repository that cannot be found); nothing was recorded."""


@dataclass(frozen=True, kw_only=True)
class ProjectInfo:
    """One project: its sessions and chunks, the start of its latest session, whether its folder
    exists here, and its place in git (`checkout`, None when not recorded), with the time the person
    stated it (`joined_at`, None for a record an import read from the folder)."""

    project: str
    sessions: int
    chunks: int
    last_started: str | None
    exists: bool
    checkout: Checkout | None
    joined_at: str | None

    @property
    def unrecorded(self) -> bool:
        """Gone, and no import read its place in git: no worktree joins it until `join`."""
        return self.checkout is None and not self.exists


@dataclass(frozen=True, kw_only=True)
class JoinPlan:
    """What `join` would record: each of `infos` (in the order named) as `checkout`, which `others`
    (recorded projects) share."""

    infos: tuple[ProjectInfo, ...]
    checkout: Checkout
    source: str  # where the checkout came from, in words
    others: tuple[str, ...]
    # A recorded project without a record whose folder is gone, stated to be the repository's main
    # checkout by the same statement (recorded with the projects), or None.
    also: str | None = None

    @property
    def projects(self) -> tuple[str, ...]:
        return tuple(i.project for i in self.infos)


def project_infos(db_path: Path) -> list[ProjectInfo]:
    """Every project with a session, sorted by path."""
    conn = store.connect(db_path)
    try:
        with store.read(conn):
            rows = checkout_sql.summaries(conn)
            checkouts = checkout_sql.checkouts(conn)
            stated = checkout_sql.joined(conn)
    finally:
        conn.close()
    return [
        ProjectInfo(
            project=project,
            sessions=sessions,
            chunks=chunks,
            last_started=last,
            exists=os.path.isabs(project) and os.path.isdir(project),
            checkout=checkouts.get(project),
            joined_at=stated.get(project),
        )
        for project, sessions, chunks, last in rows
    ]


def plan_join(db_path: Path, projects: Sequence[str], worktree_of: str) -> JoinPlan:
    """Check that each of `projects` can be stated to be a worktree of `worktree_of`'s repository.

    `worktree_of` is a recorded project (its record is used), a folder that is in a git working tree
    now (read from disk), or a recorded project whose folder is gone too: it is then taken as the root
    of the repository's main checkout (git directory `<it>/.git`) and recorded by the same statement
    (`JoinPlan.also`). Each project takes the same repository and the same folder below the root.

    Raises:
        JoinRefusedError: naming every project that is not a recorded project, whose folder exists,
            that already has a record, or that is `worktree_of`; or `worktree_of` has no record and is
            in no working tree. Nothing is planned when any is refused.
    """
    infos = {i.project: i for i in project_infos(db_path)}
    other = _normal(worktree_of)
    named: list[ProjectInfo] = []
    refused: list[str] = []
    for project in projects:
        try:
            info = _joinable(project, infos, other)
        except JoinRefusedError as exc:
            refused.append(str(exc))
            continue
        if info not in named:
            named.append(info)
    if refused:
        raise JoinRefusedError("; ".join(refused))
    recorded = infos.get(other)
    also = None
    if recorded is not None and recorded.checkout is not None:
        checkout, source = recorded.checkout, f"the record of {other}"
    elif (found := checkout_of(other)) is not None:
        checkout, source = found, f"{other} on disk"
    elif recorded is not None and not recorded.exists:
        # Both are gone: the person names the main checkout, whose git directory is its `.git`.
        # Physical, as `checkout_of` names repositories: the symlinks of the part that exists resolved.
        checkout = Checkout(repository=os.path.realpath(os.path.join(other, ".git")), folder=".")
        source = (
            f"{other}, taken as the root of the repository's main checkout (its folder is gone)"
        )
        also = other
    else:
        msg = (
            f"{other} has no record of its git repository and is not in a git working tree "
            "here; name the repository's folder (its main checkout) or a project that has one"
        )
        raise JoinRefusedError(msg)
    names = {i.project for i in named}
    others = tuple(sorted(p for p, i in infos.items() if i.checkout == checkout and p not in names))
    return JoinPlan(infos=tuple(named), checkout=checkout, source=source, others=others, also=also)


def _joinable(project: str, infos: dict[str, ProjectInfo], other: str) -> ProjectInfo:
    """`project`'s info if a statement may record it as a worktree of `other`'s repository."""
    info = infos[_known(project, infos)]
    name = info.project
    if info.exists:
        msg = (
            f"{name} exists here, so where it sits in git is read from it, not stated: "
            "`recallbench import` records it"
        )
        raise JoinRefusedError(msg)
    if info.checkout is not None:
        how = f"stated {info.joined_at}" if info.joined_at else "read by an import"
        msg = (
            f"{name} already has a record: folder {info.checkout.folder} of "
            f"{info.checkout.repository} ({how})"
        )
        if info.joined_at:
            msg += f"; `recallbench projects join {name} --undo` takes it back"
        raise JoinRefusedError(msg)
    if other == name:
        msg = f"{name} cannot be a worktree of itself"
        raise JoinRefusedError(msg)
    return info


def join(db_path: Path, plan: JoinPlan, *, now: datetime, actor: str = audit.PERSON) -> int:
    """Record `plan` (its projects, and `also`) with one audit entry in one transaction; returns the
    entry's id.

    Raises:
        JoinRefusedError: a project to record gained a record (an import), or one of the projects
            lost its sessions, since the plan.
    """
    at = audit.utc_text(now)
    conn = store.connect(db_path)
    try:
        with store.write(conn):
            present = reads.projects(conn)
            for project in plan.projects:
                if project not in present:
                    msg = f"{project} has no sessions any more"
                    raise JoinRefusedError(msg)
            named = [*plan.projects, *([] if plan.also is None else [plan.also])]
            held = checkout_sql.checkouts(conn)
            for project in named:
                if project in held:
                    msg = f"{project} gained a record since it was checked"
                    raise JoinRefusedError(msg)
            reason = f"worktree of {plan.checkout.repository} (folder {plan.checkout.folder})"
            if plan.also is not None:
                reason += f"; {plan.also} taken as its main checkout"
            entry = audit.record(
                conn, time=now, actor=actor, action=JOIN_ACTION, targets=named, reason=reason
            )
            for project in named:
                checkout_sql.put_joined(conn, project, plan.checkout, at)
    finally:
        conn.close()
    return entry


def stated(db_path: Path, projects: Sequence[str]) -> tuple[ProjectInfo, ...]:
    """Each of `projects`, which must hold a record the person stated (what `unjoin` would take back),
    in the order named.

    Raises:
        JoinRefusedError: naming every project that is not a recorded project or has no stated record
            (an import's record is what git said, and is never taken back).
    """
    infos = {i.project: i for i in project_infos(db_path)}
    found: list[ProjectInfo] = []
    refused: list[str] = []
    for project in projects:
        try:
            info = infos[_known(project, infos)]
        except JoinRefusedError as exc:
            refused.append(str(exc))
            continue
        if info.joined_at is None or info.checkout is None:
            why = "its record was read by an import" if info.checkout else "it has no record"
            refused.append(f"{info.project} has no record stated with `projects join` ({why})")
        elif info not in found:
            found.append(info)
    if refused:
        raise JoinRefusedError("; ".join(refused) + "; nothing was changed")
    return tuple(found)


def unjoin(
    db_path: Path, infos: Sequence[ProjectInfo], *, now: datetime, actor: str = audit.PERSON
) -> int:
    """Take back the person's statements about `infos` (from `stated`) with one audit entry in one
    transaction; returns the entry's id.

    Raises:
        JoinRefusedError: a statement changed since it was read.
    """
    said = [
        f"was stated a worktree of {i.checkout.repository if i.checkout else ''} on {i.joined_at}"
        for i in infos
    ]
    reason = (
        said[0]
        if len(infos) == 1
        else "; ".join(f"{i.project} {w}" for i, w in zip(infos, said, strict=True))
    )
    conn = store.connect(db_path)
    try:
        with store.write(conn):
            entry = audit.record(
                conn,
                time=now,
                actor=actor,
                action=UNJOIN_ACTION,
                targets=[i.project for i in infos],
                reason=reason,
            )
            for info in infos:
                if checkout_sql.delete_joined(conn, info.project) != 1:
                    msg = (
                        f"{info.project}'s stated record changed since it was read; "
                        "nothing was changed"
                    )
                    raise JoinRefusedError(msg)
    finally:
        conn.close()
    return entry


def _normal(path: str) -> str:
    """A path as sessions record a `cwd`: absolute, `~` expanded, without `.`, `..` or a trailing /."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def _known(project: str, infos: dict[str, ProjectInfo]) -> str:
    name = project if project in infos else _normal(project)
    if name in infos:
        return name
    missing = [p for p, i in infos.items() if i.unrecorded]
    listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    msg = f"{project} is not a project the memory holds"
    if missing:
        msg += f"; the projects without a record whose folder is gone: {listed}"
    raise JoinRefusedError(msg)

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
    """What `join` would record: `project` as `checkout`, which `others` (recorded projects) share."""

    project: str
    checkout: Checkout
    source: str  # where the checkout came from, in words
    others: tuple[str, ...]
    info: ProjectInfo
    # A recorded project without a record whose folder is gone, stated to be the repository's main
    # checkout by the same statement (recorded with `project`), or None.
    also: str | None = None


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


def plan_join(db_path: Path, project: str, worktree_of: str) -> JoinPlan:
    """Check that `project` can be stated to be a worktree of `worktree_of`'s repository.

    `worktree_of` is a recorded project (its record is used), a folder that is in a git working tree
    now (read from disk), or a recorded project whose folder is gone too: it is then taken as the root
    of the repository's main checkout (git directory `<it>/.git`) and recorded by the same statement
    (`JoinPlan.also`). `project` takes the same repository and the same folder below the root.

    Raises:
        JoinRefusedError: `project` is not a recorded project, its folder exists, it already has a
            record, it is `worktree_of`, or `worktree_of` has no record and is in no working tree.
    """
    infos = {i.project: i for i in project_infos(db_path)}
    name = _known(project, infos)
    info = infos[name]
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
    other = _normal(worktree_of)
    if other == name:
        msg = f"{name} cannot be a worktree of itself"
        raise JoinRefusedError(msg)
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
    others = tuple(sorted(p for p, i in infos.items() if i.checkout == checkout and p != name))
    return JoinPlan(
        project=name, checkout=checkout, source=source, others=others, info=info, also=also
    )


def join(db_path: Path, plan: JoinPlan, *, now: datetime, actor: str = audit.PERSON) -> int:
    """Record `plan` (its project, and `also`) with one audit entry in one transaction; returns the
    entry's id.

    Raises:
        JoinRefusedError: a project to record gained a record (an import), or the project lost its
            sessions, since the plan.
    """
    at = audit.utc_text(now)
    conn = store.connect(db_path)
    try:
        with store.write(conn):
            if plan.project not in reads.projects(conn):
                msg = f"{plan.project} has no sessions any more"
                raise JoinRefusedError(msg)
            named = [plan.project] if plan.also is None else [plan.project, plan.also]
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


def stated(db_path: Path, project: str) -> ProjectInfo:
    """`project`, which must hold a record the person stated (what `unjoin` would take back).

    Raises:
        JoinRefusedError: `project` is not a recorded project, or has no stated record (an import's
            record is what its folder said, and is never taken back).
    """
    infos = {i.project: i for i in project_infos(db_path)}
    info = infos[_known(project, infos)]
    if info.joined_at is None or info.checkout is None:
        why = "its record was read by an import" if info.checkout else "it has no record"
        msg = (
            f"{info.project} has no record stated with `projects join` ({why}); nothing was changed"
        )
        raise JoinRefusedError(msg)
    return info


def unjoin(db_path: Path, project: str, *, now: datetime, actor: str = audit.PERSON) -> int:
    """Take back the person's statement about `project`; returns the audit entry's id.

    Raises:
        JoinRefusedError: as `stated`, or the statement changed since it was read.
    """
    info = stated(db_path, project)
    repository = info.checkout.repository if info.checkout is not None else ""
    conn = store.connect(db_path)
    try:
        with store.write(conn):
            entry = audit.record(
                conn,
                time=now,
                actor=actor,
                action=UNJOIN_ACTION,
                targets=[info.project],
                reason=f"was stated a worktree of {repository} on {info.joined_at}",
            )
            if checkout_sql.delete_joined(conn, info.project) != 1:
                msg = (
                    f"{info.project}'s stated record changed since it was read; nothing was changed"
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

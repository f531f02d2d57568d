"""The same file in other git worktrees: a recorded file edit's path as each worktree writes it.

A file edit is recorded under the absolute path the tool was given, so `src/store.py` edited in
`~/app-wt/task-1` and in `~/app-wt/task-2` are two paths, and the file-edit graph (`sessions_for_file`,
read by the walk and the bridge) did not link the sessions of a repository's worktrees. With the
import's records of where each project sat in git (`engine.checkout_sql`: repository and in-tree
folder, read from the folder or stated by `recallbench projects join`), a path under a recorded
project also names the same relative path under every project recorded as the same folder of the same
repository. Scope still decides whose sessions a read sees: the other worktrees' sessions answer only
when they are in scope (`scope.worktrees`, or `--project` naming them).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.git_repo import Checkout


def same_file_paths(path: str, checkouts: Mapping[str, Checkout]) -> list[str]:
    """`path` and the same file's path in every other recorded worktree of its folder, sorted.

    The folder that decides is the deepest recorded project that holds `path`; a path under no
    recorded project names itself alone.
    """
    holders = [p for p in checkouts if path.startswith(_folder(p))]
    if not holders:
        return [path]
    owner = max(holders, key=len)
    relative = path[len(_folder(owner)) :]
    same = [p for p, c in checkouts.items() if c == checkouts[owner]]
    return sorted({path, *(_folder(p) + relative for p in same)})


def _folder(project: str) -> str:
    """The project's folder with one trailing "/", as a prefix of the paths below it."""
    return project.rstrip("/") + "/"

"""Which git repository a folder is checked out from, read from the files git writes, never by running git.

A repository can be checked out in several working trees (`git worktree add`): one per task is a common
way to run Claude Code, and every worktree's sessions record a `cwd` of their own. `checkout_of` names
what those folders share: the repository's common git directory (the `.git` folder of the main working
tree, which every linked worktree points back to) and the folder's path inside its working tree. Two
folders with the same `Checkout` are the same folder of the same repository in two worktrees.

The layout read here is git's own (git-worktree(1), gitrepository-layout(5)): a working tree's root holds
`.git`, a folder (the main working tree) or a file `gitdir: PATH` (a linked worktree or a submodule).
A linked worktree's git directory holds `commondir`, the path of the common directory (relative to
the git directory unless absolute). A submodule's has none: its git directory is its repository.
A linked worktree's git directory also holds `gitdir`, the path of the worktree's `.git` file, and it
stays there when the worktree's folder is deleted (rather than `git worktree remove`d) until `git
worktree prune`: `git worktree list` shows such a worktree as "prunable". `listed_checkout` reads those
entries (`listed_checkouts`), the only record left of which repository a deleted worktree belonged to.
Standard library only, a few `stat` calls and two reads of at most `MAX_POINTER_BYTES`: the prompt
hook calls it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

# `.git` and `commondir` files hold one path; anything longer is not one git wrote.
MAX_POINTER_BYTES = 4096
GITDIR_PREFIX = "gitdir:"


@dataclass(frozen=True, kw_only=True)
class Checkout:
    """Where a folder sits in git: `repository`, the physical path of the repository's common git
    directory, and `folder`, the folder's path below its working tree's root ("." for the root, "/"
    between parts)."""

    repository: str
    folder: str


def checkout_of(directory: str) -> Checkout | None:
    """The repository and in-tree folder of `directory` (resolved physically), or None when it lies
    in no git working tree, or its git files cannot be read or are not what git writes."""
    here = os.path.realpath(directory)
    if not os.path.isdir(here):
        return None
    root = here
    while True:
        marker = os.path.join(root, ".git")
        if os.path.lexists(marker):
            repository = _repository(marker)
            if repository is None:
                return None
            relative = os.path.relpath(here, root)
            return Checkout(repository=repository, folder=relative.replace(os.sep, "/"))
        parent = os.path.dirname(root)
        if parent == root:
            return None
        root = parent


def _repository(marker: str) -> str | None:
    """The common git directory a working tree's `.git` entry leads to."""
    if os.path.isdir(marker) and not os.path.islink(marker):
        return os.path.realpath(marker)
    pointer = _read_pointer(marker)
    if pointer is None or not pointer.startswith(GITDIR_PREFIX):
        return None
    gitdir = _joined(os.path.dirname(marker), pointer[len(GITDIR_PREFIX) :].strip())
    if not os.path.isdir(gitdir):
        return None
    common = _read_pointer(os.path.join(gitdir, "commondir"))
    if common is None:  # a submodule, or a linked worktree git no longer knows
        return os.path.realpath(gitdir)
    found = _joined(gitdir, common.strip())
    return os.path.realpath(found) if os.path.isdir(found) else None


def _read_pointer(path: str) -> str | None:
    """The first line of a small regular file, or None."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            data = handle.read(MAX_POINTER_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_POINTER_BYTES:
        return None
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
    return lines[0] if lines else None


def _joined(base: str, path: str) -> str:
    """`path`, relative to `base` unless it is absolute."""
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path))


def listed_checkout(folder: str, repositories: Iterable[str]) -> Checkout | None:
    """Where `folder` sat, by the linked worktrees that `repositories` list (`listed_checkouts`)."""
    return listed_checkouts([folder], repositories).get(folder)


def listed_checkouts(folders: Iterable[str], repositories: Iterable[str]) -> dict[str, Checkout]:
    """Where each of `folders` sat, by the linked worktrees that `repositories` (common git
    directories) list, for the folders one lists; each repository's list is read once.

    A folder deleted with its worktree has no `.git` left to read, but its repository still lists the
    worktree until it is pruned. A folder is matched, physically, against the deepest worktree root
    that holds it. It is left out when no repository lists a worktree holding it, or when two
    repositories list the same deepest root (a path reused for another repository's worktree: which
    one is unknowable).
    """
    listed: dict[str, set[str]] = {}  # worktree root -> the repositories listing it
    for repository in sorted(set(repositories)):
        for root in worktree_roots(repository):
            listed.setdefault(root, set()).add(repository)
    found: dict[str, Checkout] = {}
    for folder in folders:
        here = os.path.realpath(folder)
        holding = [root for root in listed if os.path.commonpath([here, root]) == root]
        if not holding:
            continue
        deepest = max(holding, key=lambda root: (root.count(os.sep), root))
        if len(listed[deepest]) == 1:
            relative = os.path.relpath(here, deepest).replace(os.sep, "/")
            found[folder] = Checkout(repository=next(iter(listed[deepest])), folder=relative)
    return found


def worktree_roots(repository: str) -> list[str]:
    """The physical root of every linked worktree that the common git directory `repository` lists
    (`worktrees/<name>/gitdir`), whether or not its folder still exists; sorted."""
    admin = os.path.join(repository, "worktrees")
    try:
        names = os.listdir(admin)
    except OSError:
        return []
    roots = set()
    for name in names:
        entry = os.path.join(admin, name)
        pointer = _read_pointer(os.path.join(entry, "gitdir"))
        if pointer is None:
            continue
        dotgit = _joined(entry, pointer.strip())
        if os.path.basename(dotgit) == ".git":
            roots.add(os.path.realpath(os.path.dirname(dotgit)))
    return sorted(roots)

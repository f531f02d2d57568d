"""`engine.git_repo.listed_checkout`: a deleted worktree's place in git, read from the repository that
still lists it (`<common git dir>/worktrees/<name>/gitdir`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.git_repo import (
    Checkout,
    checkout_of,
    listed_checkout,
    listed_checkouts,
    worktree_roots,
)
from tests.engine.git_layout import repository, worktree


def test_a_deleted_worktree_is_found_in_the_list_of_its_repository(tmp_path: Path) -> None:
    base = tmp_path.resolve()
    common = str(repository(base / "repo").resolve())
    worktree(base / "repo", base / "wt-a", "wt-a")
    worktree(base / "repo", base / "wt-b", "wt-b")
    shutil.rmtree(base / "wt-a")  # deleted, not `git worktree remove`d: the entry stays
    assert checkout_of(str(base / "wt-a")) is None  # nothing on disk says it any more
    assert worktree_roots(common) == [str(base / "wt-a"), str(base / "wt-b")]
    assert listed_checkout(str(base / "wt-a"), [common]) == Checkout(repository=common, folder=".")
    # a session that ran in a subfolder of it
    assert listed_checkout(str(base / "wt-a" / "src" / "lib"), [common]) == Checkout(
        repository=common, folder="src/lib"
    )
    # a folder no worktree holds, a name that only starts like one, an unknown repository
    assert listed_checkout(str(base / "elsewhere"), [common]) is None
    assert listed_checkout(str(base / "wt-a2"), [common]) is None
    assert listed_checkout(str(base / "wt-a"), [str(base / "nowhere" / ".git")]) is None
    assert listed_checkout(str(base / "wt-a"), []) is None
    # many folders at once: the ones a listed worktree holds
    many = [str(base / "wt-a"), str(base / "wt-a" / "src"), str(base / "elsewhere")]
    assert listed_checkouts(many, [common, common]) == {
        many[0]: Checkout(repository=common, folder="."),
        many[1]: Checkout(repository=common, folder="src"),
    }


def test_a_pruned_entry_lists_nothing(tmp_path: Path) -> None:
    base = tmp_path.resolve()
    common = str(repository(base / "repo").resolve())
    worktree(base / "repo", base / "wt-a", "wt-a")
    worktree(base / "repo", base / "wt-b", "wt-b")
    shutil.rmtree(base / "wt-a")
    shutil.rmtree(base / "wt-b")
    shutil.rmtree(base / "repo" / ".git" / "worktrees" / "wt-a")  # `git worktree prune`
    assert listed_checkout(str(base / "wt-a"), [common]) is None
    assert listed_checkout(str(base / "wt-b"), [common]) == Checkout(repository=common, folder=".")


def test_a_relative_gitdir_is_read_from_its_entry_and_odd_entries_are_skipped(
    tmp_path: Path,
) -> None:
    base = tmp_path.resolve()
    common = str(repository(base / "repo").resolve())
    entry = worktree(base / "repo", base / "wt-rel", "wt-rel")
    # git's worktree.useRelativePaths writes the path relative to the entry
    (entry / "gitdir").write_text(
        f"{os.path.relpath(base / 'wt-rel' / '.git', entry)}\n", encoding="utf-8"
    )
    odd = base / "repo" / ".git" / "worktrees"
    (odd / "no-gitdir").mkdir()
    (odd / "not-dotgit").mkdir()
    (odd / "not-dotgit" / "gitdir").write_text(f"{base / 'wt-x' / 'HEAD'}\n", encoding="utf-8")
    (odd / "stray-file").write_text("x", encoding="utf-8")
    shutil.rmtree(base / "wt-rel")
    assert worktree_roots(common) == [str(base / "wt-rel")]
    assert listed_checkout(str(base / "wt-rel"), [common]) == Checkout(
        repository=common, folder="."
    )
    assert listed_checkout(str(base / "wt-x"), [common]) is None


def test_the_deepest_root_decides_and_two_repositories_listing_it_give_nothing(
    tmp_path: Path,
) -> None:
    base = tmp_path.resolve()
    one = str(repository(base / "one").resolve())
    two = str(repository(base / "two").resolve())
    worktree(base / "one", base / "wt", "wt")
    worktree(base / "two", base / "wt" / "inner", "inner")  # a worktree inside another
    worktree(base / "two", base / "shared", "shared")
    shutil.rmtree(base / "wt")
    assert listed_checkout(str(base / "wt" / "inner" / "src"), [one, two]) == Checkout(
        repository=two, folder="src"
    )
    assert listed_checkout(str(base / "wt" / "docs"), [one, two]) == Checkout(
        repository=one, folder="docs"
    )
    # the same path listed by both repositories: which one it was is unknowable
    entry = base / "one" / ".git" / "worktrees" / "shared"
    entry.mkdir()
    (entry / "gitdir").write_text(f"{base / 'shared' / '.git'}\n", encoding="utf-8")
    shutil.rmtree(base / "shared")
    assert listed_checkout(str(base / "shared"), [two]) == Checkout(repository=two, folder=".")
    assert listed_checkout(str(base / "shared"), [one, two]) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_lists_a_deleted_worktree_until_it_is_removed_or_pruned(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=main, env=env, check=True, capture_output=True)

    base = tmp_path.resolve()
    main = base / "repo"
    main.mkdir()
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    for name in ("deleted", "removed"):
        git("worktree", "add", "-q", "-b", name, str(base / name))
    common = str((main / ".git").resolve())
    shutil.rmtree(base / "deleted")
    git("worktree", "remove", str(base / "removed"))
    assert listed_checkout(str(base / "deleted"), [common]) == Checkout(
        repository=common, folder="."
    )
    assert listed_checkout(str(base / "removed"), [common]) is None
    git("worktree", "prune")
    assert listed_checkout(str(base / "deleted"), [common]) is None

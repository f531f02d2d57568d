"""The same file in other git worktrees links their sessions in the file-edit graph
(`engine.file_paths`; corpus: `tests.engine.worktree_corpus`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.file_paths import same_file_paths
from engine.git_repo import Checkout
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.worktree_corpus import worktree_memory

REPO = Checkout(repository="/r/.git", folder=".")


@pytest.fixture
def worktrees(tmp_path: Path) -> tuple[Memory, dict[str, Path], dict[str, str]]:
    return worktree_memory(tmp_path)


def test_a_path_names_the_same_relative_path_in_every_worktree_of_its_folder() -> None:
    checkouts = {
        "/w/a": REPO,
        "/w/b/": REPO,  # a recorded folder with a trailing slash
        "/w/a/pkg": Checkout(repository="/r/.git", folder="pkg"),
        "/w/c/pkg": Checkout(repository="/r/.git", folder="pkg"),
        "/o": Checkout(repository="/other/.git", folder="."),
    }
    assert same_file_paths("/w/a/src/x.py", checkouts) == ["/w/a/src/x.py", "/w/b/src/x.py"]
    # the deepest recorded folder decides: pkg in a is pkg in c, not the root of b
    assert same_file_paths("/w/a/pkg/y.py", checkouts) == ["/w/a/pkg/y.py", "/w/c/pkg/y.py"]
    assert same_file_paths("/o/src/x.py", checkouts) == ["/o/src/x.py"]  # another repository
    assert same_file_paths("/w/ab/x.py", checkouts) == ["/w/ab/x.py"]  # not under /w/a
    assert same_file_paths("/elsewhere/x.py", {}) == ["/elsewhere/x.py"]


def test_the_sessions_of_a_file_include_its_other_worktrees_in_scope(
    worktrees: tuple[Memory, dict[str, Path], dict[str, str]],
) -> None:
    memory, folders, ids = worktrees
    a, b, other = (str(folders[k]) for k in ("a", "b", "other"))
    everywhere = Scope.of(a, b, other)
    in_a = f"{a}/src/store.py"
    assert memory.sessions_for_file(in_a, everywhere, 10) == [ids["b"], ids["a"]]
    # the other repository's src/store.py is another file (control: its own path finds it)
    assert memory.sessions_for_file(f"{other}/src/store.py", everywhere, 10) == [ids["other"]]
    # scope still decides: wt-b's session answers only with wt-b in scope
    assert memory.sessions_for_file(in_a, Scope.of(a), 10) == [ids["a"]]
    assert memory.sessions_for_file(in_a, everywhere, 10, exclude=ids["a"]) == [ids["b"]]

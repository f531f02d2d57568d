"""`engine.git_repo.checkout_of`: a folder's repository and place in its working tree, read from git's files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.git_repo import MAX_POINTER_BYTES, Checkout, checkout_of
from tests.engine.git_layout import repository, worktree


def test_a_main_tree_and_its_linked_worktrees_share_the_common_git_directory(
    tmp_path: Path,
) -> None:
    main = tmp_path / "repo"
    common = repository(main)
    worktree(main, tmp_path / "wt-a", "wt-a")
    worktree(main, tmp_path / "wt-b", "wt-b", relative=True)
    (main / "src" / "lib").mkdir(parents=True)
    (tmp_path / "wt-a" / "src" / "lib").mkdir(parents=True)
    expected = str(common.resolve())
    assert checkout_of(str(main)) == Checkout(repository=expected, folder=".")
    assert checkout_of(str(tmp_path / "wt-a")) == Checkout(repository=expected, folder=".")
    assert checkout_of(str(tmp_path / "wt-b")) == Checkout(repository=expected, folder=".")
    assert checkout_of(str(main / "src" / "lib")) == Checkout(repository=expected, folder="src/lib")
    assert checkout_of(str(tmp_path / "wt-a" / "src" / "lib")) == Checkout(
        repository=expected, folder="src/lib"
    )


def test_a_folder_outside_any_repository_or_missing_has_no_checkout(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert checkout_of(str(plain)) is None
    assert checkout_of(str(tmp_path / "gone")) is None
    # positive control: the same folder once it holds a repository
    repository(plain)
    assert checkout_of(str(plain)) == Checkout(
        repository=str((plain / ".git").resolve()), folder="."
    )


def test_a_symlinked_path_is_read_where_it_physically_is(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    common = repository(main)
    (main / "docs").mkdir()
    (tmp_path / "link").symlink_to(main / "docs", target_is_directory=True)
    assert checkout_of(str(tmp_path / "link")) == Checkout(
        repository=str(common.resolve()), folder="docs"
    )


def test_a_submodule_is_its_own_repository(tmp_path: Path) -> None:
    main = tmp_path / "super"
    common = repository(main)
    module_git = common / "modules" / "dep"
    module_git.mkdir(parents=True)
    (main / "dep").mkdir()
    (main / "dep" / ".git").write_text("gitdir: ../.git/modules/dep\n", encoding="utf-8")
    assert checkout_of(str(main / "dep")) == Checkout(
        repository=str(module_git.resolve()), folder="."
    )
    assert checkout_of(str(main)) == Checkout(repository=str(common.resolve()), folder=".")


@pytest.mark.parametrize(
    "content",
    [
        "not a pointer\n",
        "gitdir: /no/such/folder\n",
        "gitdir: " + "x" * MAX_POINTER_BYTES + "\n",
        b"gitdir: \xff\xfe\n",
        "",
    ],
)
def test_a_git_file_that_is_not_what_git_writes_gives_no_checkout(
    tmp_path: Path, content: str | bytes
) -> None:
    folder = tmp_path / "wt"
    folder.mkdir()
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    (folder / ".git").write_bytes(data)
    assert checkout_of(str(folder)) is None
    # positive control: the same folder with a pointer git would write
    main = tmp_path / "repo"
    repository(main)
    worktree(main, folder, "wt")
    assert checkout_of(str(folder)) == Checkout(
        repository=str((main / ".git").resolve()), folder="."
    )


def test_a_worktree_whose_commondir_is_gone_gives_no_checkout(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    repository(main)
    gitdir = worktree(main, tmp_path / "wt", "wt")
    assert checkout_of(str(tmp_path / "wt")) is not None  # control
    (gitdir / "commondir").write_text("../../../elsewhere\n", encoding="utf-8")
    assert checkout_of(str(tmp_path / "wt")) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_worktrees_made_by_git_itself_are_read_the_same(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

    def git(*args: str, cwd: Path) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    main = tmp_path / "repo"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "0",
        cwd=main,
    )
    git("worktree", "add", "-q", "-b", "task", str(tmp_path / "task"), cwd=main)
    (tmp_path / "task" / "sub").mkdir()
    expected = str((main / ".git").resolve())
    assert checkout_of(str(tmp_path / "task" / "sub")) == Checkout(
        repository=expected, folder="sub"
    )
    assert checkout_of(str(main)) == Checkout(repository=expected, folder=".")

"""`engine.scope.explain_project` with checkouts: the same folder in other git worktrees of a repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.git_repo import Checkout, checkout_of
from engine.scope import explain_project
from tests.engine.git_layout import repository, worktree


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A repository with worktrees a, b and c; `other` is a second repository."""
    main = tmp_path / "repo"
    repository(main)
    for name in ("a", "b", "c"):
        worktree(main, tmp_path / f"wt-{name}", f"wt-{name}")
        (tmp_path / f"wt-{name}" / "src").mkdir()
    (main / "src").mkdir()
    other = tmp_path / "other"
    repository(other)
    return {
        "main": main,
        "a": tmp_path / "wt-a",
        "b": tmp_path / "wt-b",
        "c": tmp_path / "wt-c",
        "other": other,
    }


def records(*folders: Path) -> dict[str, Checkout]:
    found = {str(f): checkout_of(str(f)) for f in folders}
    return {p: c for p, c in found.items() if c is not None}


def test_a_fresh_worktree_joins_the_other_worktrees_only_when_asked(
    layout: dict[str, Path],
) -> None:
    recorded = [str(layout["main"]), str(layout["a"]), str(layout["other"])]
    checkouts = records(layout["main"], layout["a"], layout["other"])
    off = explain_project(recorded, layout["b"], checkouts=checkouts)
    assert off.project is None
    assert off.projects == ()
    assert off.worktrees == (str(layout["main"]), str(layout["a"]))  # offered, not joined
    assert off.joined is False
    assert off.reason == "no sessions were recorded in this folder or a folder above it"
    on = explain_project(recorded, layout["b"], checkouts=checkouts, join_worktrees=True)
    assert on.project is None
    assert on.projects == (str(layout["main"]), str(layout["a"]))
    repo = (layout["main"] / ".git").resolve()
    assert on.reason == (
        "no sessions were recorded in this folder; joined with the same folder in 2 other "
        f"worktrees of its git repository ({repo})"
    )
    # without checkouts (what a caller passes while the setting is off) nothing is looked up
    plain = explain_project(recorded, layout["b"], join_worktrees=True)
    assert (plain.projects, plain.worktrees) == ((), ())


def test_a_worktree_with_sessions_of_its_own_reads_them_first_and_the_others_with_them(
    layout: dict[str, Path],
) -> None:
    recorded = [str(layout["a"]), str(layout["b"])]
    checkouts = records(layout["a"], layout["b"])
    found = explain_project(recorded, layout["b"], checkouts=checkouts, join_worktrees=True)
    assert found.project == str(layout["b"])
    assert found.projects == (str(layout["b"]), str(layout["a"]))
    assert found.reason == (
        "sessions were recorded in this folder; joined with the same folder in 1 other worktree "
        f"of its git repository ({(layout['main'] / '.git').resolve()})"
    )


def test_only_the_same_folder_of_the_same_repository_joins(layout: dict[str, Path]) -> None:
    src_a = layout["a"] / "src"
    recorded = [str(src_a), str(layout["other"])]
    checkouts = records(src_a, layout["other"])
    at_root = explain_project(recorded, layout["c"], checkouts=checkouts, join_worktrees=True)
    assert at_root.projects == ()  # wt-c's root is not wt-a's src
    other_repo = explain_project(
        recorded, layout["other"], checkouts=checkouts, join_worktrees=True
    )
    assert other_repo.projects == (str(layout["other"]),)  # its own only
    # positive control: wt-c's src is the same folder as wt-a's src
    in_src = explain_project(
        recorded, layout["c"] / "src", checkouts=checkouts, join_worktrees=True
    )
    assert in_src.projects == (str(src_a),)


def test_a_removed_worktree_still_joins_by_its_recorded_checkout(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    common = str((layout["main"] / ".git").resolve())
    gone = str(tmp_path / "wt-removed")  # never on disk now: only the import's record knows it
    checkouts = {gone: Checkout(repository=common, folder=".")}
    found = explain_project([gone], layout["c"], checkouts=checkouts, join_worktrees=True)
    assert found.projects == (gone,)
    # positive control: a record of another repository's folder does not join
    elsewhere = {gone: Checkout(repository=str(tmp_path / "x" / ".git"), folder=".")}
    assert (
        explain_project([gone], layout["c"], checkouts=elsewhere, join_worktrees=True).projects
        == ()
    )


def test_an_inherited_parent_joins_by_the_parents_folder(layout: dict[str, Path]) -> None:
    recorded = [str(layout["a"]), str(layout["b"])]
    checkouts = records(layout["a"], layout["b"])
    below = layout["b"] / "src"  # no sessions of its own; its parent wt-b has
    found = explain_project(
        recorded, below, inherit_parent=True, checkouts=checkouts, join_worktrees=True
    )
    assert found.project == str(layout["b"])
    assert found.projects == (str(layout["b"]), str(layout["a"]))
    # control: without inheritance the folder is src, and no recorded worktree is at src
    alone = explain_project(recorded, below, checkouts=checkouts, join_worktrees=True)
    assert alone.projects == ()
    assert alone.parent == str(layout["b"])

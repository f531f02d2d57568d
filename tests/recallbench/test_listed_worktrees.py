"""A worktree deleted before its first import is recorded from the repository that still lists it, so
`scope.worktrees` joins it without anyone stating it (`recallbench projects join`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.engine.git_layout import repository, worktree
from tests.recallbench.cli_run import ok

ANSWER = "The retry decorator swallowed the timeout error."
SIDS = {
    "main": "5a1f0000-0000-4000-8000-000000000001",
    "deleted": "5a1f0000-0000-4000-8000-000000000002",  # folder deleted; the repository lists it
    "pruned": "5a1f0000-0000-4000-8000-000000000003",  # folder deleted and the entry pruned
}


def write_session(transcripts: Path, key: str, cwd: Path) -> None:
    answer = ANSWER if key == "deleted" else f"Nothing about retries in {key}."
    write_jsonl(
        transcripts / key / f"{SIDS[key]}.jsonl",
        simple_session(
            f"What did we change in {key}?",
            session_id=SIDS[key],
            cwd=str(cwd),
            answer=answer,
            prefix=f"{key}-",
        ),
    )


@pytest.fixture
def tree(tmp_path: Path, home: Path) -> dict[str, Path]:
    """`repo` (a main tree), its fresh worktree `wt-new`, and two worktrees whose folders were deleted
    before any import: `wt-deleted` (still listed by the repository) and `wt-pruned` (entry pruned)."""
    base = tmp_path.resolve()
    main = base / "repo"
    repository(main)
    paths = {
        "main": main,
        "deleted": base / "wt-deleted",
        "pruned": base / "wt-pruned",
        "new": base / "wt-new",
        "transcripts": base / "transcripts",
        "common": (main / ".git").resolve(),
    }
    for key in ("deleted", "pruned", "new"):
        worktree(main, paths[key], f"wt-{key}")
    for key in ("deleted", "pruned"):
        shutil.rmtree(paths[key])
    shutil.rmtree(main / ".git" / "worktrees" / "wt-pruned")
    return paths


def listed(home: Path) -> dict[str, dict[str, object]]:
    rows = json.loads(ok("projects", "list", "--json"))["projects"]
    return {str(r.pop("project")): r for r in rows}


def test_the_import_records_a_deleted_worktree_its_repository_lists(
    tree: dict[str, Path], home: Path
) -> None:
    for key in ("main", "deleted", "pruned"):
        write_session(tree["transcripts"], key, tree[key])
    ok("import", "--no-embed", str(tree["transcripts"]))
    rows = listed(home)
    common = str(tree["common"])
    assert rows[str(tree["deleted"])]["repository"] == common
    assert rows[str(tree["deleted"])]["folder"] == "."
    assert rows[str(tree["deleted"])]["joined_at"] is None  # git's record, not a statement
    assert rows[str(tree["deleted"])]["folder_exists"] is False
    assert rows[str(tree["main"])]["repository"] == common  # control: read from its folder
    assert rows[str(tree["pruned"])]["repository"] is None  # nothing lists it any more


def test_a_later_import_records_it_once_the_repository_is_known(
    tree: dict[str, Path], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the worktree's session is imported first, while no recorded project names the repository
    write_session(tree["transcripts"], "deleted", tree["deleted"])
    ok("import", "--no-embed", str(tree["transcripts"]))
    assert listed(home)[str(tree["deleted"])]["repository"] is None
    ok("config", "set", "scope.worktrees", "true")
    monkeypatch.chdir(tree["new"])
    status = json.loads(ok("status", "--json"))
    assert status["unrecorded_projects"] == 1

    write_session(tree["transcripts"], "main", tree["main"])
    ok("import", "--no-embed", str(tree["transcripts"]))
    assert listed(home)[str(tree["deleted"])]["repository"] == str(tree["common"])
    assert json.loads(ok("status", "--json"))["unrecorded_projects"] == 0
    hits = json.loads(ok("search", "retry decorator timeout", "--json"))["hits"]
    projects = {h["project"] for h in hits}
    assert str(tree["deleted"]) in projects  # joined from the fresh worktree
    assert projects <= {str(tree["deleted"]), str(tree["main"])}

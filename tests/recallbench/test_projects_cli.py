"""`recallbench projects`: the listing, and stating which repository a removed worktree belonged to."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.engine.git_layout import repository, worktree
from tests.recallbench.cli_run import ok, run

ANSWER = "The retry decorator swallowed the timeout error."
SIDS = {
    "main": "4e0f0000-0000-4000-8000-000000000001",
    "a": "4e0f0000-0000-4000-8000-000000000002",  # a worktree removed before its first import
    "c": "4e0f0000-0000-4000-8000-000000000003",  # a worktree imported, then removed
    "gone_main": "4e0f0000-0000-4000-8000-000000000004",  # another repository, all gone
    "gone_wt": "4e0f0000-0000-4000-8000-000000000005",
}


@pytest.fixture
def tree(tmp_path: Path, home: Path) -> dict[str, Path]:
    """`repo` (a main tree with a session) and its fresh worktree `wt-b` (none); `wt-a`, whose
    session is imported only after the worktree was removed; `wt-c`, imported while it existed and
    removed since; and `gone-main` / `gone-wt`, a repository and its worktree never on this disk."""
    base = tmp_path.resolve()
    main = base / "repo"
    repository(main)
    paths = {
        "main": main,
        "a": base / "wt-a",
        "b": base / "wt-b",
        "c": base / "wt-c",
        "gone_main": base / "gone-main",
        "gone_wt": base / "gone-wt",
    }
    worktree(main, paths["b"], "wt-b")
    worktree(main, paths["c"], "wt-c")
    transcripts = base / "transcripts"
    for key, sid in SIDS.items():
        answer = ANSWER if key == "a" else f"Nothing about retries in {key}."
        write_jsonl(
            transcripts / key / f"{sid}.jsonl",
            simple_session(
                f"What did we change in {key}?",
                session_id=sid,
                cwd=str(paths[key]),
                answer=answer,
                prefix=f"{key}-",
            ),
        )
    ok("import", "--no-embed", str(transcripts))
    shutil.rmtree(paths["c"])
    shutil.rmtree(main / ".git" / "worktrees" / "wt-c")
    paths["transcripts"] = transcripts
    paths["common"] = (main / ".git").resolve()
    return paths


def listed(home: Path) -> dict[str, dict[str, object]]:
    rows = json.loads(ok("projects", "list", "--json"))["projects"]
    return {str(r.pop("project")): r for r in rows}


def listed_stated(project: Path) -> bool:
    rows = json.loads(ok("projects", "list", "--json"))["projects"]
    return any(r["project"] == str(project) and r["joined_at"] for r in rows)


def test_the_listing_says_where_each_project_sat_in_git(tree: dict[str, Path], home: Path) -> None:
    rows = listed(home)

    common = str(tree["common"])
    assert rows[str(tree["main"])] == {
        "sessions": 1,
        "chunks": 1,
        "last_started": "2026-03-01T10:00:00.000Z",
        "folder_exists": True,
        "repository": common,
        "folder": ".",
        "joined_at": None,
    }
    assert rows[str(tree["c"])]["repository"] == common  # imported while it existed
    assert rows[str(tree["c"])]["folder_exists"] is False
    for gone in ("a", "gone_main", "gone_wt"):
        assert rows[str(tree[gone])]["repository"] is None
    assert len(rows) == 5  # wt-b has no session: not a project
    text = ok("projects").splitlines()
    assert text[0] == f"database: {home / 'memory.db'}  projects: 5 (4 whose folder is gone)"
    assert (
        f"{tree['a']} · 1 session · 1 chunk · latest 2026-03-01 10:00 · folder gone · "
        "git: not recorded"
    ) in text
    assert (
        f"folder here · git: {common} (folder .)" in text[1 + sorted(rows).index(str(tree["main"]))]
    )
    assert text[-1].startswith(
        "not recorded: 3 projects whose folder was gone when it was imported"
    )


def test_a_stated_worktree_joins_the_fresh_one_and_undo_takes_it_back(
    tree: dict[str, Path], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok("config", "set", "scope.worktrees", "true")
    monkeypatch.chdir(tree["b"])
    before = json.loads(ok("search", "retry decorator timeout", "--json"))["hits"]
    assert str(tree["a"]) not in {h["project"] for h in before}  # wt-a has no record yet
    assert {h["project"] for h in before} <= {str(tree["main"]), str(tree["c"])}

    dry = ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--dry-run")
    assert dry.splitlines() == [
        f"{tree['a']} (1 session, 1 chunk) would be folder . of {tree['common']} "
        f"(from the record of {tree['main']})",
        f"projects at the same folder of that repository: {tree['main']}, {tree['c']}",
        "nothing was recorded (--dry-run)",
    ]
    assert listed(home)[str(tree["a"])]["repository"] is None
    unasked = run("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]))
    assert unasked.exit_code == 1
    assert "no terminal to ask on: give --yes" in unasked.output

    done = ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--yes")

    assert (
        done.splitlines()[-1]
        == f"recorded {tree['a']} as a worktree of {tree['common']} (audit entry 1)"
    )
    row = listed(home)[str(tree["a"])]
    assert (row["repository"], row["folder"]) == (str(tree["common"]), ".")
    stated_at = str(row["joined_at"])
    assert stated_at.endswith("Z")
    hits = json.loads(ok("search", "retry decorator timeout", "--json"))["hits"]
    assert hits[0]["project"] == str(tree["a"])
    assert ANSWER in hits[0]["text"]
    audit = ok("audit").splitlines()[-1]
    assert f"projects.join    {tree['a']}  (worktree of {tree['common']} (folder .))" in audit

    undone = ok("projects", "join", str(tree["a"]), "--undo", "--yes")

    assert undone.splitlines() == [
        f"{tree['a']}: git: {tree['common']} (folder ., stated by you {stated_at})",
        f"{tree['a']} has no record of its git repository again (audit entry 2)",
    ]
    assert listed(home)[str(tree["a"])]["repository"] is None
    again = json.loads(ok("search", "retry decorator timeout", "--json"))["hits"]
    assert str(tree["a"]) not in {h["project"] for h in again}
    assert "projects.unjoin" in ok("audit").splitlines()[-1]


@pytest.mark.parametrize(
    ("project", "worktree_of", "says"),
    [
        ("nowhere", "main", "is not a project the memory holds; the projects without a record"),
        ("main", "a", "exists here, so where it sits in git is read from it"),
        ("c", "main", "already has a record: folder . of"),
        ("a", "a", "cannot be a worktree of itself"),
        ("a", "nowhere", "has no record of its git repository and is not in a git working tree"),
    ],
)
def test_a_statement_that_cannot_hold_is_refused_and_nothing_is_recorded(
    tree: dict[str, Path], home: Path, project: str, worktree_of: str, says: str
) -> None:
    def path(key: str) -> str:
        return str(tree[key]) if key in tree else str(tree["main"].parent / key)

    result = run("projects", "join", path(project), "--worktree-of", path(worktree_of), "--yes")

    assert result.exit_code == 1
    assert says in " ".join(result.output.split())
    assert "nothing was recorded" in result.output
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        assert conn.execute("SELECT count(*) FROM audit").fetchone()[0] == 0
        stated = conn.execute("SELECT count(*) FROM project_checkouts WHERE joined_at IS NOT NULL")
        assert stated.fetchone()[0] == 0
    # control: the statement the parameters spoil goes through
    ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--yes")
    assert listed(home)[str(tree["a"])]["joined_at"] is not None


def test_undo_refuses_a_record_an_import_read_and_a_project_without_one(
    tree: dict[str, Path],
) -> None:
    ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--yes")
    dry = ok("projects", "join", str(tree["a"]), "--undo", "--dry-run").splitlines()
    assert dry[-1] == "nothing was changed (--dry-run)"
    assert listed_stated(tree["a"])  # the dry run changed nothing
    ok("projects", "join", str(tree["a"]), "--undo", "--yes")
    assert not listed_stated(tree["a"])
    read = run("projects", "join", str(tree["c"]), "--undo", "--yes")
    assert read.exit_code == 1
    assert "its record was read by an import" in read.output
    none = run("projects", "join", str(tree["a"]), "--undo", "--yes")
    assert none.exit_code == 1
    assert "it has no record" in none.output
    both = run("projects", "join", str(tree["a"]), "--undo", "--worktree-of", str(tree["main"]))
    assert both.exit_code == 2
    assert (
        run("projects", "join", str(tree["a"])).exit_code == 2
    )  # neither --worktree-of nor --undo


def test_a_gone_repository_is_named_by_its_main_checkout_and_the_folder_coming_back_wins(
    tree: dict[str, Path], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone_main, gone_wt = tree["gone_main"], tree["gone_wt"]
    said = ok("projects", "join", str(gone_wt), "--worktree-of", str(gone_main), "--yes")
    assert f"{gone_main} would be recorded as that repository's main checkout too" in said
    rows = listed(home)
    for key in (gone_main, gone_wt):
        assert (rows[str(key)]["repository"], rows[str(key)]["folder"]) == (
            str(gone_main / ".git"),
            ".",
        )
        assert rows[str(key)]["joined_at"] is not None

    # The repository is cloned again where it was: its folder reads the stated worktree's memory.
    repository(gone_main)
    ok("config", "set", "scope.worktrees", "true")
    monkeypatch.chdir(gone_main)
    assert (
        ok("status")
        .splitlines()[-1]
        .startswith(f"project here: {gone_main}, {gone_wt} for {gone_main} ")
    )
    # An import reads the folder that came back and replaces the statement about it (not the other).
    ok("import", "--no-embed", str(tree["transcripts"]))
    rows = listed(home)
    assert rows[str(gone_main)]["joined_at"] is None
    assert rows[str(gone_main)]["repository"] == str((gone_main / ".git").resolve())
    assert rows[str(gone_wt)]["joined_at"] is not None


def test_rebuild_keeps_a_statement_as_stated(tree: dict[str, Path], home: Path) -> None:
    ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--yes")
    stated = listed(home)[str(tree["a"])]

    ok("rebuild", "--no-embed")

    rows = listed(home)
    assert rows[str(tree["a"])] == stated
    assert rows[str(tree["c"])]["joined_at"] is None  # carried as read, not as stated
    assert rows[str(tree["c"])]["repository"] == str(tree["common"])


def test_a_gone_repository_under_a_symlink_is_named_physically(tmp_path: Path, home: Path) -> None:
    real = tmp_path.resolve() / "real"
    real.mkdir()
    link = tmp_path.resolve() / "link"
    link.symlink_to(real)
    transcripts = tmp_path / "t"
    for key, sid in (("main", SIDS["gone_main"]), ("wt", SIDS["gone_wt"])):
        write_jsonl(
            transcripts / key / f"{sid}.jsonl",
            simple_session("Q?", session_id=sid, cwd=str(link / key), prefix=f"{key}-"),
        )
    ok("import", "--no-embed", str(transcripts))
    ok("projects", "join", str(link / "wt"), "--worktree-of", str(link / "main"), "--yes")

    rows = listed(home)

    # what `checkout_of` will read once the main checkout is back at link/main
    assert rows[str(link / "wt")]["repository"] == str(real / "main" / ".git")
    repository(real / "main")
    assert rows[str(link / "wt")]["repository"] == str((link / "main" / ".git").resolve())


def test_status_in_a_fresh_worktree_that_joins_nothing_names_the_unrecorded_projects(
    tree: dict[str, Path], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tree["main"].parent / "fresh"
    repository(fresh)  # a repository with no sessions anywhere
    monkeypatch.chdir(fresh)
    note = "no worktree joins 3 projects whose folder was gone when it was imported"
    assert not any(line.startswith("no worktree joins") for line in ok("status").splitlines())
    assert (
        json.loads(ok("status", "--json"))["unrecorded_projects"] == 3
    )  # wt-a, gone-main, gone-wt

    ok("config", "set", "scope.worktrees", "true")

    assert ok("status").splitlines()[-1].startswith(note)
    monkeypatch.chdir(tree["b"])  # control: a worktree that joined the recorded ones
    assert not any(line.startswith("no worktree joins") for line in ok("status").splitlines())
    monkeypatch.chdir(fresh)
    ok("projects", "join", str(tree["a"]), "--worktree-of", str(tree["main"]), "--yes")
    assert ok("status").splitlines()[-1].startswith("no worktree joins 2 projects")


def test_several_projects_are_stated_together_or_not_at_all(
    tree: dict[str, Path], home: Path
) -> None:
    a, gone_wt, c, main = (str(tree[k]) for k in ("a", "gone_wt", "c", "main"))
    refused = run("projects", "join", a, c, "nowhere-at-all", "--worktree-of", main, "--yes")
    assert refused.exit_code == 1
    said = " ".join(refused.output.split())
    assert f"{c} already has a record" in said
    assert "nowhere-at-all is not a project the memory holds" in said
    assert said.endswith("nothing was recorded")
    assert not listed_stated(tree["a"])  # the joinable one was not recorded either

    done = ok("projects", "join", a, gone_wt, a, "--worktree-of", main, "--yes").splitlines()

    common = tree["common"]
    assert done == [
        f"2 projects would be folder . of {common} (from the record of {main}):",
        f"  {a} (1 session, 1 chunk)",
        f"  {gone_wt} (1 session, 1 chunk)",
        f"projects at the same folder of that repository: {main}, {c}",
        "scope.worktrees is off: nothing reads across worktrees until "
        "`recallbench config set scope.worktrees true`",
        f"recorded 2 projects as worktrees of {common} (audit entry 1)",
    ]
    rows = listed(home)
    for key in (a, gone_wt):
        assert (rows[key]["repository"], rows[key]["folder"]) == (str(common), ".")
    assert rows[str(tree["gone_main"])]["repository"] is None  # control: not named, not recorded
    assert f"projects.join    {a}, {gone_wt}  (worktree of {common}" in ok("audit")

    partial = run("projects", "join", a, c, "--undo", "--yes")
    assert partial.exit_code == 1
    assert "(its record was read by an import); nothing was changed" in partial.output
    assert listed_stated(tree["a"])
    undone = ok("projects", "join", a, gone_wt, "--undo", "--yes").splitlines()
    assert undone[-2:] == [
        f"{a} has no record of its git repository again (audit entry 2)",
        f"{gone_wt} has no record of its git repository again (audit entry 2)",
    ]
    assert not listed_stated(tree["a"])
    assert not listed_stated(tree["gone_wt"])

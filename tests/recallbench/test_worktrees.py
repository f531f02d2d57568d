"""The same folder in several git worktrees of one repository (`scope.worktrees`): recorded at import,
kept when the worktree is removed, joined by search, status, the hooks and the MCP tools only when the
person turns it on."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.embed import HashEmbedder
from engine.git_repo import Checkout
from engine.memory import Memory
from recallbench.serve_cli import hook_command
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.engine.git_layout import repository, worktree
from tests.recallbench.cli_run import ok, run
from tests.recallbench.prompt_hook import inject
from tests.recallbench.test_mcp_server import call, server_for

SID_A = "3d0e0000-0000-4000-8000-00000000000a"  # ran in worktree wt-a, later removed
SID_OTHER = "3d0e0000-0000-4000-8000-00000000000c"  # ran in another repository
QUESTION = "Why does the flaky retry test in the importer fail on CI?"
ANSWER = "The retry decorator swallowed the timeout error."


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> dict[str, Path]:
    """A repository with worktree wt-a (one session, imported, then the worktree removed) and a
    fresh worktree wt-b (no sessions); a second repository `other` with one session."""
    base = tmp_path.resolve()
    main_tree = base / "repo"
    repository(main_tree)
    wt_a, wt_b, other = base / "wt-a", base / "wt-b", base / "other"
    worktree(main_tree, wt_a, "wt-a")
    worktree(main_tree, wt_b, "wt-b")
    repository(other)
    transcripts = base / "transcripts"
    write_jsonl(
        transcripts / "a" / f"{SID_A}.jsonl",
        simple_session(QUESTION, session_id=SID_A, cwd=str(wt_a), answer=ANSWER, prefix="a-"),
    )
    write_jsonl(
        transcripts / "o" / f"{SID_OTHER}.jsonl",
        simple_session(
            "Why does the flaky retry test of the other tool fail on CI?",
            session_id=SID_OTHER,
            cwd=str(other),
            answer="The other tool's retry test needs a network.",
            prefix="o-",
        ),
    )
    ok("import", str(transcripts))
    # the task is merged: git removes the worktree's folder and its entry
    shutil.rmtree(wt_a)
    shutil.rmtree(main_tree / ".git" / "worktrees" / "wt-a")
    return {"main": main_tree, "a": wt_a, "b": wt_b, "other": other, "transcripts": transcripts}


def test_import_records_where_each_project_sat_in_git(repo: dict[str, Path], home: Path) -> None:
    common = str((repo["main"] / ".git").resolve())
    memory = Memory(home / "memory.db", HashEmbedder())
    try:
        assert memory.project_checkouts() == {
            str(repo["a"]): Checkout(repository=common, folder="."),
            str(repo["other"]): Checkout(
                repository=str((repo["other"] / ".git").resolve()), folder="."
            ),
        }
    finally:
        memory.close()


def test_search_in_a_fresh_worktree_joins_the_removed_one_only_when_turned_on(
    repo: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo["b"])
    refused = run("search", "flaky retry test")
    assert refused.exit_code == 2
    assert (
        f"the same folder in 1 other git worktree of its repository has sessions ({repo['a']}); "
        "`recallbench config set scope.worktrees true` would join them"
    ) in " ".join(refused.output.split())
    ok("config", "set", "scope.worktrees", "true")
    hits = json.loads(ok("search", "flaky retry test", "--json"))["hits"]
    assert {h["project"] for h in hits} == {str(repo["a"])}  # never the other repository
    assert ANSWER in hits[0]["text"]
    assert ok("status").splitlines()[-1].startswith(f"project here: {repo['a']} for {repo['b']} ")
    listed = ok("sessions")
    assert f"session {SID_A}" in listed
    assert SID_OTHER not in listed


def test_the_session_start_brief_and_the_prompt_hook_join_only_when_turned_on(
    repo: dict[str, Path],
) -> None:
    payload = {"session_id": "fresh", "cwd": str(repo["b"]), "hook_event_name": "SessionStart"}

    def brief() -> str:
        result = CliRunner().invoke(hook_command, ["SessionStart"], input=json.dumps(payload))
        assert result.exit_code == 0
        return result.stdout

    assert brief() == ""
    assert inject(QUESTION, session="fresh", cwd=str(repo["b"])) == ""
    ok("config", "set", "scope.worktrees", "true")
    out = brief()
    assert (
        "earlier Claude Code sessions in the same folder in 1 other git worktree of this "
        "repository. Most recent:" in " ".join(out.split())
    )
    assert f"session {SID_A[:8]} · in {repo['a']} · 1 chunk · " in out
    injected = inject(QUESTION, session="fresh", cwd=str(repo["b"]))
    assert ANSWER in injected
    assert "other tool" not in injected


def test_the_mcp_tools_join_only_when_turned_on(repo: dict[str, Path], home: Path) -> None:
    server = server_for(home / "memory.db", repo["b"])
    (off,) = call(server, "legacy", ("search_memory", {"query": "flaky retry test"}))
    assert off["hits"] == []
    assert "no sessions are recorded for" in off["message"]
    ok("config", "set", "scope.worktrees", "true")
    found, status = call(
        server,
        "legacy",
        ("search_memory", {"query": "flaky retry test"}),
        ("memory_status", {}),
    )
    assert {h["project"] for h in found["hits"]} == {str(repo["a"])}
    assert status["current_project"] is None
    assert status["worktrees"] == [str(repo["a"])]


def test_forget_removes_a_projects_record_and_rebuild_keeps_a_removed_worktrees(
    repo: dict[str, Path], home: Path
) -> None:
    def records() -> dict[str, Checkout]:
        memory = Memory(home / "memory.db", HashEmbedder())
        try:
            return memory.project_checkouts()
        finally:
            memory.close()

    ok("rebuild", str(repo["transcripts"]), "--no-embed")
    assert str(repo["a"]) in records()  # wt-a is gone from disk: carried from the old database
    assert stored_rows(home) == sorted([str(repo["a"]), str(repo["other"])])  # control
    project = str(repo["other"])
    ok("forget", "--project", project, "--confirm", project)
    assert stored_rows(home) == [str(repo["a"])]  # the row itself is gone, not only hidden


def stored_rows(home: Path) -> list[str]:
    """Every project the table holds a row for, whether or not it still has sessions."""
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        rows = conn.execute("SELECT project FROM project_checkouts ORDER BY project").fetchall()
    return [str(r[0]) for r in rows]


def test_a_worktree_with_its_own_sessions_is_briefed_with_the_others(repo: dict[str, Path]) -> None:
    sid = "3d0e0000-0000-4000-8000-00000000000b"
    write_jsonl(
        repo["transcripts"] / "b" / f"{sid}.jsonl",
        simple_session("Rename the importer flag", session_id=sid, cwd=str(repo["b"]), prefix="b-"),
    )
    ok("import", str(repo["transcripts"]))
    ok("config", "set", "scope.worktrees", "true")
    payload = {"session_id": "fresh", "cwd": str(repo["b"]), "hook_event_name": "SessionStart"}
    result = CliRunner().invoke(hook_command, ["SessionStart"], input=json.dumps(payload))
    out = " ".join(result.stdout.split())
    assert (
        f"sessions in {repo['b']} and the same folder in 1 other git worktree of this repository."
        in out
    )
    assert f"session {sid[:8]} · in {repo['b']}" in out
    assert f"session {SID_A[:8]} · in {repo['a']}" in out


def test_an_import_records_the_projects_a_store_made_before_the_records_has(
    repo: dict[str, Path], home: Path
) -> None:
    with closing(sqlite3.connect(home / "memory.db")) as conn, conn:
        conn.execute("DELETE FROM project_checkouts")  # as a store migrated from before them
    assert stored_rows(home) == []
    ok("import", str(repo["transcripts"]))  # nothing new to read in any file
    # other's folder still exists; wt-a's was removed, so nothing can say where it sat
    assert stored_rows(home) == [str(repo["other"])]

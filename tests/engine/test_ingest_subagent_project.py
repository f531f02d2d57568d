"""A subagent's transcript is filed under its session's project when it started in a folder inside it.

Claude Code starts a subagent (or a compaction) in whatever folder the session's shell is in. After a
`cd assets` that folder is `<project>/assets`, which no session is recorded in: filed there, the
subagent's text belonged to no project a directory resolves to, and only `--all-projects` found it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import ingest
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import simple_session, user_line, write_jsonl

A = "/home/dev/alpha"
B = "/home/dev/beta"
SID = "5b1c0000-0000-4000-8000-000000000001"


def _session(root: Path) -> Path:
    project = root / "projects" / "alpha"
    write_jsonl(
        project / f"{SID}.jsonl",
        simple_session("Main prompt here", session_id=SID, cwd=A, answer="Main answer."),
    )
    agents = project / SID / "subagents"
    inside = [user_line("zebracorn summary", uuid="s1", session_id=SID, cwd=f"{A}/assets")]
    write_jsonl(agents / "agent-acompact-1.jsonl", inside)
    outside = [user_line("quokka notes", uuid="q1", session_id=SID, cwd=B, sidechain=True)]
    write_jsonl(agents / "agent-a2.jsonl", outside)
    return project


def _projects(memory: Memory) -> dict[str, str]:
    """Each chunk's first word -> its project."""
    return {text.split()[0]: project for _, _, project, text in memory.chunk_rows()}


def _found(memory: Memory, word: str, project: str) -> list[str]:
    return [s.chunk_id for s in memory.lexical(word, Scope.of(project), 10)]


def test_a_subagent_started_in_a_subfolder_is_filed_under_its_sessions_project(
    tmp_path: Path,
) -> None:
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([_session(tmp_path)])

    assert _projects(memory) == {"Main": A, "zebracorn": A, "quokka": B}
    assert len(_found(memory, "zebracorn", A)) == 1
    assert _found(memory, "zebracorn", f"{A}/assets") == []
    # control: a subagent that started outside the project keeps its own folder, as before
    assert _found(memory, "quokka", A) == []
    assert len(_found(memory, "quokka", B)) == 1


def test_a_store_that_filed_it_under_the_subfolder_is_refiled_by_the_next_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _session(tmp_path)
    old = Memory(tmp_path / "old.db", HashEmbedder(64))
    with monkeypatch.context() as m:
        m.setattr(ingest, "_project", lambda state, session_project=None: state.cwd or "?")
        old.import_paths([project])
    # positive control of the old filing
    assert _projects(old) == {"Main": A, "zebracorn": f"{A}/assets", "quokka": B}

    report = old.import_paths([project])

    assert report.files_reimported == 1  # the compaction's file only
    assert report.files_unchanged == 2
    fresh = Memory(tmp_path / "fresh.db", HashEmbedder(64))
    fresh.import_paths([project])
    assert sorted((i, p, t) for _, i, p, t in old.chunk_rows()) == sorted(
        (i, p, t) for _, i, p, t in fresh.chunk_rows()
    )  # the same ids, projects and texts, no duplicate
    assert old.import_paths([project]).files_unchanged == 3

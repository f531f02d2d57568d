"""`recallbench status` says whether Claude Code runs recallbench's hooks (which keep the memory
current) and when an import last stored new lines."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.cli import main
from tests.recallbench.corpus import import_corpus, write_corpus


def cli(*args: str) -> Result:
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == 0, out.output
    return out


def line(start: str, work: Path) -> str:
    (found,) = [
        x for x in cli("status", "--project", str(work)).stdout.splitlines() if x.startswith(start)
    ]
    return found


def test_status_says_where_the_hooks_run_and_which_are_missing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)  # else it names the project settings
    write_corpus(tmp_path / "projects")
    import_corpus(home / "memory.db", tmp_path / "projects").close()
    work = tmp_path / "work"
    work.mkdir()
    user = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"  # the autouse fixture's
    project = work / ".claude" / "settings.json"
    assert line("hooks:", work) == (
        f"hooks: none in {user} or {project}, so the memory changes only when you run "
        "`recallbench import` (`recallbench hooks install` imports as you work)"
    )
    cli("hooks", "install")
    every = "SessionStart, UserPromptSubmit, Stop, SessionEnd, PreCompact"
    assert line("hooks:", work) == f"hooks: {every} in {user}"
    # another tool's Stop hook stays; ours is gone: status names what is missing
    settings = json.loads(user.read_text(encoding="utf-8"))
    settings["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "other-tool stop"}]}]
    user.write_text(json.dumps(settings), encoding="utf-8")
    assert line("hooks:", work) == (
        f"hooks: SessionStart, UserPromptSubmit, SessionEnd, PreCompact in {user}; not Stop "
        "(`recallbench hooks install` adds them)"
    )
    project.parent.mkdir()
    project.write_text("{", encoding="utf-8")
    assert line("hooks:", work).startswith(
        f"hooks: SessionStart, UserPromptSubmit, SessionEnd, PreCompact in {user}; not Stop "
        f"(`recallbench hooks install` adds them); cannot read {project}: Claude Code settings "
        f"{project} is not valid JSON"
    )
    listed = json.loads(cli("status", "--json", "--project", str(work)).stdout)["hooks"]
    assert [(f["scope"], f["events"], f["error"] is None) for f in listed] == [
        ("user", ["SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"], True),
        ("project", [], False),
    ]


def test_status_says_when_an_import_last_stored_new_lines(tmp_path: Path, home: Path) -> None:
    db = home / "memory.db"
    Memory(db, HashEmbedder()).close()
    work = tmp_path / "work"
    work.mkdir()
    assert line("imported:", work) == "imported: nothing yet"
    write_corpus(tmp_path / "projects")
    import_corpus(db, tmp_path / "projects").close()
    (stored,) = sqlite3.connect(db).execute("SELECT MAX(imported_at) FROM files").fetchone()
    # the corpus's last line: session A2's answer at 10:20:30 on 2026-03-01 (tests/recallbench/corpus.py)
    assert line("imported:", work) == (
        f"imported: last stored new lines {stored.replace('T', ' ')[:16]} UTC; the newest session "
        "ended 2026-03-01 10:20 UTC"
    )
    status = json.loads(cli("status", "--json", "--project", str(work)).stdout)
    assert (status["last_import"], status["newest_session"]) == (stored, "2026-03-01T10:20:30.000Z")

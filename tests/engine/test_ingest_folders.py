"""Folders an import is pointed at: one it may not list is reported, one without transcripts warns.

Tests run as root here, where a `chmod 000` folder is still readable, so the unreadable folder is
simulated by making `os.scandir` refuse it; the real `chmod` test runs only for an ordinary user.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.transcript_files import discover
from recallbench.cli import main
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

A = "/home/dev/alpha"
S1 = "88888888-0000-4000-8000-000000000001"
S2 = "88888888-0000-4000-8000-000000000002"


@pytest.fixture
def two_projects(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    write_jsonl(root / "readable" / f"{S1}.jsonl", simple_session(session_id=S1, cwd=A))
    write_jsonl(root / "locked" / f"{S2}.jsonl", simple_session(session_id=S2, cwd=A, prefix="b-"))
    return root


def refuse(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make listing `folder` fail as it does for a `chmod 000` folder of another user."""
    real = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unlistable_subfolder_is_counted_and_reported(
    tmp_path: Path, two_projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `Path.rglob` passed over it silently; 1 of 2 files imported and nothing said why."""
    refuse(monkeypatch, two_projects / "locked")
    unreadable: list[Path] = []
    files, skipped = discover([two_projects], unreadable)
    assert [f.session_id for f in files] == [S1]  # positive control: the readable one is found
    assert skipped == {"unreadable_folder": 1}
    assert unreadable == [two_projects / "locked"]

    report = Memory(tmp_path / "m.db", HashEmbedder(64)).import_paths([two_projects])

    assert report.files_imported == 1
    assert report.skipped["unreadable_folder"] == 1
    assert report.files_failed == {
        str(two_projects / "locked"): "PermissionError: folder could not be listed; skipped"
    }


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads a chmod 000 folder anyway; the simulated test above covers this case",
)
def test_a_chmod_000_subfolder_is_counted(two_projects: Path) -> None:
    locked = two_projects / "locked"
    locked.chmod(0)
    try:
        files, skipped = discover([two_projects])
    finally:
        locked.chmod(0o755)
    assert [f.session_id for f in files] == [S1]
    assert skipped == {"unreadable_folder": 1}


def cli(tmp_path: Path, *args: str) -> Any:
    db = str(tmp_path / "cli.db")
    return CliRunner().invoke(main, ["--db", db, "import", "--no-embed", *args])


def test_import_of_a_folder_without_transcripts_warns_once_and_succeeds(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("not a transcript")
    one = tmp_path / "one"
    write_jsonl(one / f"{S1}.jsonl", simple_session(session_id=S1, cwd=A))

    warned = cli(tmp_path, str(empty))
    quiet = cli(tmp_path, str(one))

    assert warned.exit_code == 0
    assert warned.stderr == f"warning: no transcripts (.jsonl files) found in {empty}\n"
    assert "files: 0 seen" in warned.stdout
    assert quiet.exit_code == 0  # positive control: one transcript, no warning
    assert quiet.stderr == ""
    assert "files: 1 seen, 1 imported" in quiet.stdout


def test_import_takes_the_message_cap_from_the_command_line(tmp_path: Path) -> None:
    one = tmp_path / "one"
    write_jsonl(one / f"{S1}.jsonl", simple_session("q" * 2000, session_id=S1, cwd=A))
    capped = cli(tmp_path, "--max-message-bytes", "1000", str(one))
    assert capped.exit_code == 0, capped.output
    assert "skipped: message_cut=1" in capped.stdout
    refused = cli(tmp_path, "--max-message-bytes", "0", str(one))
    assert refused.exit_code == 2
    assert "--max-message-bytes" in refused.stderr

"""`recallbench import` after the transcripts' folder moved says so, and `status` counts no file
gone (`engine.moved_files`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from recallbench.cli import main
from tests.engine.fixtures_transcripts import SESSION, simple_session, write_jsonl


def test_import_after_a_move_names_the_moved_files_and_status_counts_none_gone(
    home: Path, tmp_path: Path
) -> None:
    write_jsonl(tmp_path / "a" / f"{SESSION}.jsonl", simple_session("Why is the cache cold?"))
    runner = CliRunner()
    assert runner.invoke(main, ["import", "--no-embed", str(tmp_path / "a")]).exit_code == 0
    shutil.move(tmp_path / "a", tmp_path / "b")
    moved = runner.invoke(main, ["import", "--no-embed", str(tmp_path / "b")])
    assert moved.exit_code == 0, moved.output
    assert moved.output.splitlines()[1] == (
        "files: 1 seen, 1 imported, 0 unchanged, 0 re-imported (rewritten), 0 failed; "
        "1 moved (a file imported before, at a path now gone)"
    )
    status = runner.invoke(main, ["status"]).stdout.splitlines()
    assert "files: 1" in status
    assert "messages: 4" in status  # not 8: nothing stored twice
    # control: a plain import says nothing of a move
    again = runner.invoke(main, ["import", "--no-embed", str(tmp_path / "b")])
    assert "moved" not in again.output

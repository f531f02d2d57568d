"""The console script's short path for hooks: same contract (exit 0, stdout only context), fewer imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nLOADED:' + ','.join(sorted("
    "m for m in ('click', 'torch', 'harness', 'mcp') if m in sys.modules))))\n"
    "sys.argv = ['recallbench'] + sys.argv[1:]\n"
    "from recallbench.entry import main\n"
    "main()\n"
)


def run(args: list[str], stdin: bytes, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "RECALLBENCH_HOME": str(home),
        "RECALLBENCH_EMBEDDER": "hash",
    }
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_hook_short_path_exits_zero_prints_nothing_on_bad_input_and_skips_the_cli(
    tmp_path: Path,
) -> None:
    result = run(["hook", "UserPromptSubmit"], b"{not json", tmp_path)
    assert result.returncode == 0
    assert result.stdout == b""
    loaded = result.stderr.decode().rsplit("LOADED:", 1)[1]
    assert loaded == ""  # neither Click, the harness, the MCP SDK nor torch was imported


def test_other_commands_still_go_through_the_cli(tmp_path: Path) -> None:
    result = run(["arms"], b"", tmp_path)
    assert result.returncode == 0
    assert b"rrf(min_score=0.2,pool=20,rrf_k=60)" in result.stdout
    assert (
        "click" in result.stderr.decode().rsplit("LOADED:", 1)[1]
    )  # positive control for the probe


def test_search_into_a_pipe_closed_early_exits_zero_without_a_traceback(
    tmp_path: Path, home: Path
) -> None:
    from click.testing import CliRunner

    from recallbench.cli import main
    from tests.engine.fixtures_transcripts import simple_session, write_jsonl

    sid = "77777777-0000-4000-8000-000000000001"
    transcripts = tmp_path / "projects"
    write_jsonl(
        transcripts / "p" / f"{sid}.jsonl",
        simple_session(
            "Why does the retry test flake?", session_id=sid, cwd="/w/p", answer="clock"
        ),
    )
    assert CliRunner().invoke(main, ["import", str(transcripts)]).exit_code == 0
    env = {**os.environ, "PYTHONPATH": str(REPO), "RECALLBENCH_HOME": str(home)}
    args = [sys.executable, "-c", PROBE, "search", "retry", "--all-projects"]

    def search_into_pipe(close_early: bool) -> subprocess.CompletedProcess[bytes]:
        read_end, write_end = os.pipe()
        if close_early:
            os.close(read_end)  # like `| head -1` gone before the output: every write hits EPIPE
        try:
            return subprocess.run(
                args, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60, check=False
            )
        finally:
            os.close(write_end)
            if not close_early:
                with os.fdopen(read_end, "rb") as reader:
                    assert b"#1 via rrf" in reader.read()  # control: the output was there to lose

    closed = search_into_pipe(close_early=True)
    assert closed.returncode == 0
    assert b"Traceback" not in closed.stderr
    assert b"BrokenPipeError" not in closed.stderr
    assert search_into_pipe(close_early=False).returncode == 0

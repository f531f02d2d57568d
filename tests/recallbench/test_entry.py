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

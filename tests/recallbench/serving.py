"""A real `recallbench serve` process for tests: started on the hash embedder, stopped by a signal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def start_serve(home: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """`recallbench serve` on the hash embedder, and its stderr up to the line saying it listens."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "RECALLBENCH_HOME": str(home),
        "RECALLBENCH_EMBEDDER": "hash",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "recallbench.cli", "serve", "--no-background-embed"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    while not lines or "listening on" not in lines[-1]:
        line = proc.stderr.readline()  # blocks until the server writes or exits
        assert line, f"the server exited before it listened: {lines}"
        lines.append(line)
    return proc, lines


def stop(proc: subprocess.Popen[str], sig: int) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait(timeout=30)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

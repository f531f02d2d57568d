"""`python -m perf.child_usage OUT ERR -- COMMAND...`: run COMMAND, print its wall time and peak memory.

A process's peak resident set cannot be read from outside once it has exited, and the perf process
cannot read it from its own `wait`: Linux starts a child's peak at its parent's (the fork, or the
parent's memory under vfork), and the perf process holds a whole corpus. This small launcher imports the
standard library only, starts COMMAND (its output goes to the files OUT and ERR), waits, and prints one
JSON line: `wall_s` from just before the start to the exit, `returncode`, `peak_rss_bytes` (the child's
`ru_maxrss`, which is at least the launcher's own small peak, `launcher_peak_rss_bytes`).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def _kib_field(name: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _maxrss_bytes(who: int) -> int:
    maxrss = int(resource.getrusage(who).ru_maxrss)
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # Linux reports kilobytes


def run_measured(command: Sequence[str], out: Path, err: Path) -> dict[str, float | int]:
    """Run `command` with its output in `out` and `err`; its wall time and peak memory."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        started = time.perf_counter()
        code = subprocess.call(
            list(command), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
        )
        wall = time.perf_counter() - started
    own = _kib_field("VmHWM")
    return {
        "wall_s": wall,
        "returncode": code,
        "peak_rss_bytes": _maxrss_bytes(resource.RUSAGE_CHILDREN),
        "launcher_peak_rss_bytes": own if own is not None else _maxrss_bytes(resource.RUSAGE_SELF),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[2] != "--":
        print("usage: python -m perf.child_usage OUT ERR -- COMMAND...", file=sys.stderr)
        return 2
    print(json.dumps(run_measured(args[3:], Path(args[0]), Path(args[1]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

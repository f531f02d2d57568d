"""The `recallbench` console script.

`recallbench hook EVENT` runs on every prompt and every turn of a Claude Code session, so it takes a
short path that skips the command line's imports (Click, the harness, the MCP SDK); everything else
goes to the Click application in `recallbench.cli`.

Every recallbench process (the command line, the hooks, the server) starts here and first sets its
umask to 077: the memory holds every prompt and answer, so everything it writes under
`$RECALLBENCH_HOME` (database, logs, config, indexes, sockets) is for its owner only. The engine also
creates its own files 0600 itself, for programs that use `engine.memory.Memory` directly.
"""

from __future__ import annotations

import contextlib
import os
import sys

# What a recallbench process may never grant: any access for the group or for other users.
PRIVATE_UMASK = 0o077


def main() -> None:
    os.umask(PRIVATE_UMASK)
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and len(argv) <= 2 and not any(a.startswith("-") for a in argv):
        _hook(argv[1] if len(argv) == 2 else "")
    from recallbench.cli import main as cli_main

    cli_main()


def _hook(event: str) -> None:
    """Same behaviour as `recallbench.serve_cli.hook_command`: never fails, prints only context."""
    out = ""
    try:
        from recallbench.hooks import run_hook

        try:
            data = sys.stdin.buffer.read()
        except Exception:
            data = b""
        # Anything a library prints while handling goes to stderr: stdout is what Claude Code injects.
        with contextlib.redirect_stdout(sys.stderr):
            out = run_hook(event, data)
    except Exception:  # run_hook never raises; an import failure must not break the session either
        out = ""
    if out:
        with contextlib.suppress(Exception):
            sys.stdout.write(out)
            sys.stdout.flush()
    sys.exit(0)

"""Forget is the person's alone: nothing the server, the MCP tools or the hooks reach imports it.

The walk follows every import (module level and inside functions) through recallbench, arms, harness
and engine, from each module that code the model can trigger runs in: the MCP tools and server, the
`serve` command, the socket service that answers the prompt hook, the hook handlers and the prompt
search. The forget modules must be in none of those graphs. The positive controls show the walk reaches
them from the command line, and that a module which imports them is caught.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.recallbench.test_mcp_read_only import default_finder, walk

REPO = Path(__file__).resolve().parents[2]
ALL_PACKAGES = ("recallbench", "arms", "harness", "engine")
FORGET_MODULES = {
    "engine.forget",
    "engine.forget_sql",
    "engine.forget_credentials",
    "engine.forget_parts",
    "recallbench.forget_cli",
}
MODEL_REACHABLE = (
    "recallbench.mcp_tools",
    "recallbench.mcp_server",
    "recallbench.serve_cli",
    "recallbench.search_service",
    "recallbench.prompt_search",
    "recallbench.background_embed",
    "recallbench.hooks",
)


def test_no_module_the_server_tools_or_hooks_reach_imports_the_forget_modules() -> None:
    for root in MODEL_REACHABLE:
        graph = walk(root, packages=ALL_PACKAGES)
        assert root in graph.modules
        assert graph.modules & FORGET_MODULES == set(), root
    # the walks are real: the hooks reach the import (which reads the tombstones), the server the arms
    hooks = walk("recallbench.hooks", packages=ALL_PACKAGES).modules
    assert {"engine.ingest", "engine.tombstone_sql"} <= hooks
    assert {"arms.registry", "engine.memory"} <= walk(
        "recallbench.mcp_server", ALL_PACKAGES
    ).modules


def test_the_walk_reaches_the_forget_modules_from_the_command_line() -> None:
    from recallbench.cli import main

    # The command line loads each command's module when it is named: `forget` from forget_cli.
    module = main.lazy_module("forget")
    assert module == "recallbench.forget_cli"
    assert walk(module, packages=ALL_PACKAGES).modules >= FORGET_MODULES
    assert {"engine.forget", "engine.forget_sql"} <= walk(
        "recallbench.forget_cli", packages=ALL_PACKAGES
    ).modules


def test_the_walk_catches_a_served_module_that_imports_forget(tmp_path: Path) -> None:
    served = tmp_path / "served.py"
    served.write_text("def tool():\n    from engine.forget import forget\n", encoding="utf-8")

    def finder(name: str) -> Path | None:
        return served if name == "fake.served" else default_finder(name)

    graph = walk("fake.served", packages=("fake", *ALL_PACKAGES), finder=finder)
    assert "engine.forget" in graph.modules


def test_a_serving_process_never_loads_the_forget_engine() -> None:
    # What `python -m recallbench.cli serve` and `recallbench hook` import before they run: the forget
    # command is registered on the command line by module name, loaded only when named, and even then
    # its engine is imported only when it runs.
    code = (
        "import sys, click\n"
        "import recallbench.cli, recallbench.mcp_server, recallbench.hooks, recallbench.prompt_search\n"
        "print(sorted(m for m in sys.modules if 'forget' in m))\n"
        "main = recallbench.cli.main\n"
        "print(main.get_command(click.Context(main), 'forget').name)\n"
        "print(sorted(m for m in sys.modules if 'forget' in m))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        check=True,
        timeout=120,
    )
    assert done.stdout.splitlines() == ["[]", "forget", "['recallbench.forget_cli']"]

"""Where recallbench keeps its state, and which embedder it uses."""

from __future__ import annotations

import os
from pathlib import Path

from engine.embed import Embedder


def home() -> Path:
    """`$RECALLBENCH_HOME`, else `~/.local/share/recallbench`."""
    env = os.environ.get("RECALLBENCH_HOME")
    return Path(env).expanduser() if env else Path.home() / ".local" / "share" / "recallbench"


def default_db() -> Path:
    return home() / "memory.db"


def claude_projects() -> Path:
    """`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(env).expanduser() if env else Path.home() / ".claude"
    return base / "projects"


def embedder_name() -> str:
    """`$RECALLBENCH_EMBEDDER` (`minilm` by default; `hash` needs no model)."""
    return os.environ.get("RECALLBENCH_EMBEDDER", "minilm")


def make_embedder(name: str | None = None) -> Embedder:
    from engine.embed import get_embedder

    return get_embedder(name or embedder_name())

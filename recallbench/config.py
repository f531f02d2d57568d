"""Where recallbench keeps its state, and which embedder it uses."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbench.home_trust import check_home

if TYPE_CHECKING:
    from engine.embed import Embedder


def home() -> Path:
    """`$RECALLBENCH_HOME`, else `~/.local/share/recallbench`."""
    env = os.environ.get("RECALLBENCH_HOME")
    return Path(env).expanduser() if env else Path.home() / ".local" / "share" / "recallbench"


def trusted_home() -> Path:
    """`home()`, once it is known that no other user can change it (the prompt hook's socket is there).

    Raises:
        recallbench.home_trust.UntrustedHomeError: the folder is not the current user's, or group or
            others may write it; the message names the folder and the fix (chmod 700 / chown).
    """
    path = home()
    check_home(path)
    return path


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


def config_file() -> Path:
    """`$RECALLBENCH_HOME/config.toml`, where `recallbench ship` records the shipped arm."""
    return home() / "config.toml"


def shipped() -> dict[str, Any] | None:
    """The `[ship]` table written by `recallbench ship`, or None when nothing was shipped.

    Raises:
        ValueError: the file is not valid TOML (tomllib.TOMLDecodeError).
    """
    path = config_file()
    if not path.exists():
        return None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    ship = data.get("ship")
    return ship if isinstance(ship, dict) else None


def shipped_spec() -> str | None:
    """The shipped arm spec; None when nothing (readable) was shipped. Reads only the stdlib, so the
    prompt hook can call it without importing the command line."""
    try:
        ship = shipped()
    except (OSError, ValueError):
        return None
    spec = ship.get("arm") if ship else None
    return spec if isinstance(spec, str) else None


def show_progress() -> bool:
    """Progress bars on an interactive terminal, or when `RECALLBENCH_PROGRESS=1` (nox sessions)."""
    return sys.stderr.isatty() or os.environ.get("RECALLBENCH_PROGRESS") == "1"

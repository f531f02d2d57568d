"""Claude Code's settings file: install and remove recallbench's hook entries, keeping everyone else's.

`recallbench hooks install|uninstall` edits `settings.json` (user or project scope) through these
functions: our entries are recognised by their command prefix (`recallbench hook `), so removing them
never touches another tool's hooks, and installing twice gives the same file. The handlers those
entries run are in `recallbench.hooks`.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from engine.markers import OWN_SERVER
from recallbench.hooks import EVENTS

# Seconds Claude Code waits for each hook. SessionEnd gets its own timeout because SessionEnd hooks
# otherwise share 1.5 s; UserPromptSubmit stays short because the user is waiting for the answer.
HOOK_TIMEOUTS: Mapping[str, int] = {
    "SessionStart": 15,
    "UserPromptSubmit": 15,
    "Stop": 60,
    "SessionEnd": 30,
    "PreCompact": 120,
}
COMMAND = "recallbench"
HOOK_COMMAND_PREFIX = f"{COMMAND} hook "
MCP_ADD_LINE = f"claude mcp add {OWN_SERVER} -- {COMMAND} serve"
BACKUP_SUFFIX = ".recallbench.bak"


class SettingsError(ValueError):
    """A Claude Code settings file could not be read or has an unexpected shape."""


def settings_path(
    scope: Literal["user", "project"],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path:
    """`$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/settings.json`) or `<project>/.claude/settings.json`.

    The project is `$CLAUDE_PROJECT_DIR`, else the current directory.
    """
    environ = os.environ if env is None else env
    if scope == "user":
        base = environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"
    project = environ.get("CLAUDE_PROJECT_DIR")
    root = Path(project).expanduser() if project else (cwd or Path.cwd())
    return root / ".claude" / "settings.json"


def load_settings(path: Path) -> dict[str, Any]:
    """The settings object at `path` ({} when the file is missing or empty).

    Raises:
        SettingsError: the file is not valid JSON, not an object, or its `hooks` have the wrong shape.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read Claude Code settings {path}: {exc}; fix the file and run again (nothing was changed)"
        raise SettingsError(msg) from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        msg = (
            f"Claude Code settings {path} is not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}); fix it and run again (nothing was changed)"
        )
        raise SettingsError(msg) from exc
    if not isinstance(data, dict):
        msg = f"Claude Code settings {path} must hold a JSON object, found {type(data).__name__}; nothing was changed"
        raise SettingsError(msg)
    _check_hooks_shape(data, path)
    return data


def _check_hooks_shape(data: Mapping[str, Any], path: Path) -> None:
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        msg = f'"hooks" in {path} must be an object of event -> list, found {type(hooks).__name__}; nothing was changed'
        raise SettingsError(msg)
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            msg = f'"hooks.{event}" in {path} must be a list of matcher groups, found {type(groups).__name__}; nothing was changed'
            raise SettingsError(msg)


def is_ours(entry: object) -> bool:
    """Whether a hook entry is one this project installed (identified by its command prefix)."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    return isinstance(command, str) and command.strip().startswith(HOOK_COMMAND_PREFIX)


def without_our_hooks(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `settings` with exactly our hook entries removed; everything else is kept as it was.

    A matcher group or event list is dropped only when removing our entries emptied it.
    """
    out = copy.deepcopy(dict(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups: list[Any] = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list) or not any(is_ours(e) for e in entries):
                kept_groups.append(group)
                continue
            remaining = [e for e in entries if not is_ours(e)]
            if remaining:
                kept_groups.append({**group, "hooks": remaining})
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks and "hooks" in settings and settings["hooks"]:
        del out["hooks"]
    return out


def with_our_hooks(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `settings` with our entries (one matcher group per event) after everyone else's.

    Idempotent: our previous entries are removed first, so installing twice gives the same file.
    """
    out = without_our_hooks(settings)
    hooks = out.setdefault("hooks", {})
    for event in EVENTS:
        group = {
            "hooks": [
                {
                    "type": "command",
                    "command": f"{HOOK_COMMAND_PREFIX}{event}",
                    "timeout": HOOK_TIMEOUTS[event],
                }
            ]
        }
        hooks.setdefault(event, []).append(group)
    return out


def render_settings(settings: Mapping[str, Any]) -> str:
    """Settings as Claude Code writes them: two-space indented JSON with a final newline."""
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def write_settings(path: Path, settings: Mapping[str, Any]) -> Path | None:
    """Write `settings` atomically, keeping the previous file as `<name>.recallbench.bak`.

    Returns the backup path, or None when there was no previous file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    backup: Path | None = None
    mode = 0o644
    if path.exists():
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(render_settings(settings), encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return backup

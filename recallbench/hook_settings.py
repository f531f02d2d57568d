"""Claude Code's settings file: install and remove recallbench's hook entries, keeping everyone else's.

`recallbench hooks install|uninstall` edits `settings.json` (user or project scope) through these
functions. Our entries run `<absolute path of recallbench> hook EVENT` (a bare name would depend on the
PATH Claude Code happens to run with) and are recognised by that shape, so removing them never touches
another tool's hooks, and installing twice gives the same file.

Uninstall gives back what install found, byte for byte. The first install that changes the file keeps
the original bytes in `<name>.recallbench.bak` (never overwritten by a later install) and records in
`<name>.recallbench-install.json` whether it created the file and the sha256 of what it wrote. When the
file is still exactly what install last wrote, uninstall puts the original back (or deletes the file, and
the `.claude` folder, if install created them). When someone edited it since, uninstall removes exactly
our entries and keeps the rest; JSON has no comments or layout to preserve beyond indentation, key order,
line endings and the final newline, and those are kept. The handlers the entries run are in
`recallbench.hooks`.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
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
BACKUP_SUFFIX = ".recallbench.bak"
RECORD_SUFFIX = ".recallbench-install.json"
DEFAULT_INDENT = "  "  # what Claude Code writes; used for a new file or one written on one line


class SettingsError(ValueError):
    """A Claude Code settings file could not be read or has an unexpected shape."""


def settings_path(
    scope: Literal["user", "project"],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path:
    """`$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/settings.json`) or `<project>/.claude/settings.json`.

    The project is `$CLAUDE_PROJECT_DIR`, else the git root above the current directory (Claude Code
    reads project settings there, not in a subfolder), else the current directory.
    """
    environ = os.environ if env is None else env
    if scope == "user":
        base = environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"
    project = environ.get("CLAUDE_PROJECT_DIR")
    root = Path(project).expanduser().resolve() if project else project_root(cwd or Path.cwd())
    return root / ".claude" / "settings.json"


def project_root(cwd: Path) -> Path:
    """The nearest folder at or above `cwd` holding `.git` (a folder, or a file in a worktree); else `cwd`."""
    start = cwd.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def hook_executable(argv0: str | None = None) -> str:
    """The absolute path of the `recallbench` executable the hooks should run.

    The running console script when that is what started us (`sys.argv[0]`), else the first
    `recallbench` on PATH, else the bare name (install then warns). Symlinks are kept, not resolved: a tool
    manager's link such as `~/.local/bin/recallbench` survives upgrades that move the environment.
    """
    first = sys.argv[0] if argv0 is None else argv0
    if first and Path(first).name == COMMAND and Path(first).is_file():
        return os.path.abspath(first)
    found = shutil.which(COMMAND)
    return os.path.abspath(found) if found else COMMAND


def hook_command(executable: str, event: str) -> str:
    """The shell command of our entry for `event`, the executable quoted for the shell."""
    return f"{shlex.quote(executable)} hook {event}"


def mcp_add_line(executable: str) -> str:
    """The `claude mcp add` command that registers the server run by `executable`."""
    return f"claude mcp add {OWN_SERVER} -- {shlex.quote(executable)} serve"


def load_settings(path: Path) -> dict[str, Any]:
    """The settings object at `path` ({} when the file is missing or empty).

    Raises:
        SettingsError: the file is not valid JSON, not an object, or its `hooks` have the wrong shape.
    """
    return parse_settings(read_raw(path), path)


def read_raw(path: Path) -> str | None:
    """The settings file's text exactly as stored (None when there is no file).

    Raises:
        SettingsError: the file cannot be read or is not UTF-8.
    """
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read Claude Code settings {path}: {exc}; fix the file and run again (nothing was changed)"
        raise SettingsError(msg) from exc


def parse_settings(raw: str | None, path: Path) -> dict[str, Any]:
    """The settings object held by `raw` ({} for no file or a blank one).

    Raises:
        SettingsError: not valid JSON, not an object, or `hooks` of the wrong shape.
    """
    if raw is None or not raw.strip():
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
    """Whether a hook entry is one this project installed: `[/any/path/]recallbench hook EVENT`."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: someone else's command
        return False
    return len(words) == 3 and Path(words[0]).name == COMMAND and words[1] == "hook"


def our_events(settings: Mapping[str, Any]) -> list[str]:
    """The events of `settings` whose matcher groups hold one of our hook entries, in file order."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [
        str(event)
        for event, groups in hooks.items()
        if isinstance(groups, list) and any(_holds_ours(group) for group in groups)
    ]


def _holds_ours(group: object) -> bool:
    """Whether a matcher group's `hooks` list holds one of our entries."""
    entries = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(entries, list) and any(is_ours(e) for e in entries)


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
            if not _holds_ours(group):
                kept_groups.append(group)
                continue
            remaining = [e for e in group["hooks"] if not is_ours(e)]
            if remaining:
                kept_groups.append({**group, "hooks": remaining})
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks and "hooks" in settings and settings["hooks"]:
        del out["hooks"]
    return out


def with_our_hooks(settings: Mapping[str, Any], executable: str) -> dict[str, Any]:
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
                    "command": hook_command(executable, event),
                    "timeout": HOOK_TIMEOUTS[event],
                }
            ]
        }
        hooks.setdefault(event, []).append(group)
    return out


# --- writing: the file's own style, the install record, install and uninstall --------------------


@dataclass(frozen=True, kw_only=True)
class Style:
    """How a settings file is laid out, as far as JSON lets us keep it."""

    indent: str = DEFAULT_INDENT
    newline: str = "\n"
    final_newline: bool = True


def style_of(raw: str | None) -> Style:
    """The indentation, line ending and final newline of `raw`; Claude Code's own for no file."""
    if raw is None or not raw.strip():
        return Style()
    found = re.search(r"\n([ \t]+)\S", raw)
    return Style(
        indent=found.group(1) if found else DEFAULT_INDENT,
        newline="\r\n" if "\r\n" in raw else "\n",
        final_newline=raw.endswith("\n"),
    )


def render_settings(settings: Mapping[str, Any], style: Style | None = None) -> str:
    """Settings as JSON in `style` (default: two-space indent and a final newline, as Claude Code writes).

    Key order is kept; JSON strings never hold a raw newline, so the line ending can be swapped safely.
    """
    chosen = style or Style()
    text = json.dumps(settings, indent=chosen.indent, ensure_ascii=False)
    if chosen.newline != "\n":
        text = text.replace("\n", chosen.newline)
    return text + (chosen.newline if chosen.final_newline else "")


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What install or uninstall did (or, in a dry run, would do) to one settings file."""

    path: Path
    changed: bool
    message: str  # one line for the person, e.g. "restored ... byte for byte"
    text: str | None  # the resulting file text; None when the file is (or would be) deleted


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def _sha256(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_record(path: Path) -> dict[str, Any] | None:
    """The install record, or None when there is none or it is unreadable (then nothing is restored)."""
    try:
        data = json.loads(record_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_atomic(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o644


def install(path: Path, executable: str, *, dry_run: bool = False) -> Outcome:
    """Add our entries to the settings file at `path`, recording what the first change replaced.

    Raises:
        SettingsError: the file cannot be read or has an unexpected shape (nothing is changed).
    """
    raw = read_raw(path)
    current = parse_settings(raw, path)
    updated = with_our_hooks(current, executable)
    if updated == current:
        return Outcome(path=path, changed=False, message=f"already installed in {path}", text=raw)
    text = render_settings(updated, style_of(raw))
    if dry_run:
        return Outcome(path=path, changed=True, message=f"would install in {path}", text=text)
    record = _read_record(path)
    if record is None:
        # The first change: keep what was there, once; a later install never overwrites it.
        record = {"created": raw is None, "created_folder": not path.parent.exists()}
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            shutil.copy2(path, backup_path(path))
        record["written_sha256"] = _sha256(text)
    elif record.get("written_sha256") is not None and record["written_sha256"] == _sha256(raw):
        record["written_sha256"] = _sha256(text)  # still ours alone: restoring stays exact
    else:
        # Edited since our last write: restoring the original would lose those edits, so
        # uninstall will remove only our entries.
        record["written_sha256"] = None
    record_path(path).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    _write_atomic(path, text, _mode(path))
    return Outcome(path=path, changed=True, message=f"installed in {path}", text=text)


def uninstall(path: Path, *, dry_run: bool = False) -> Outcome:
    """Remove our entries: give back the original bytes when the file is exactly what install wrote.

    Raises:
        SettingsError: the file cannot be read or has an unexpected shape (nothing is changed).
    """
    raw = read_raw(path)
    record = _read_record(path)
    untouched = (
        record is not None and raw is not None and record.get("written_sha256") == _sha256(raw)
    )
    if record is not None and untouched and record.get("created") is True:
        if not dry_run:
            path.unlink()
            _forget(path, remove_folder=record.get("created_folder") is True)
        return Outcome(
            path=path, changed=True, message=f"deleted {path}, which install had created", text=None
        )
    if untouched and backup_path(path).is_file():
        original = backup_path(path).read_bytes().decode("utf-8")
        if not dry_run:
            os.replace(backup_path(path), path)  # the exact bytes and mode install found
            _forget(path, remove_folder=False)
        message = f"restored {path} byte for byte as it was before install"
        return Outcome(path=path, changed=True, message=message, text=original)
    return _remove_entries(path, raw, dry_run=dry_run, had_record=record is not None)


def _remove_entries(path: Path, raw: str | None, *, dry_run: bool, had_record: bool) -> Outcome:
    """Uninstall from a file edited since install (or installed by an older version): our entries only."""
    current = parse_settings(raw, path)
    updated = without_our_hooks(current)
    if updated == current:
        if had_record and not dry_run:
            _forget(path, remove_folder=False)
        return Outcome(path=path, changed=False, message=f"were not present in {path}", text=raw)
    text = render_settings(updated, style_of(raw))
    if not dry_run:
        _write_atomic(path, text, _mode(path))
        if had_record:
            _forget(path, remove_folder=False)
    kept = backup_path(path)
    message = f"removed from {path}; it changed since install, so only our entries went and the rest kept its layout"
    if kept.is_file():
        message += f" (the file as install found it is in {kept})"
    return Outcome(path=path, changed=True, message=message, text=text)


def _forget(path: Path, *, remove_folder: bool) -> None:
    """Drop the install record (the backup goes only when restored); and the folder install created."""
    record_path(path).unlink(missing_ok=True)
    if remove_folder:
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty: anything else put there stays

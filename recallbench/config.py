"""Where recallbench keeps its state, and which embedder it uses."""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.private_files import write_private
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


def embedder_name(*, from_ship: bool = True, from_env: bool = True) -> str:
    """`$RECALLBENCH_EMBEDDER` (read only with `from_env`); else, with `from_ship`, the embedder id of
    the fine-tuned encoder the shipped arm ranks by (`recallbench ship` records it), so that `serve`,
    the hooks and `search` embed with it wherever they are started; else `minilm` (`hash` needs no
    model)."""
    named = os.environ.get("RECALLBENCH_EMBEDDER") if from_env else None
    if named:
        return named
    if from_ship:
        try:
            ship = shipped()
        except (OSError, ValueError):  # an unreadable config.toml is reported where it is read
            ship = None
        encoder = ship.get("embedder") if ship and "encoder" in ship else None
        if isinstance(encoder, str):
            return encoder
    return "minilm"


def embedders_in_use() -> dict[str, str]:
    """The embedder ids whose vectors are read, each with why: the one this process selects (with
    `$RECALLBENCH_EMBEDDER` when set) and the one `serve` and the hooks select from `config.toml`
    (Claude Code may start them without that variable). Builds no model."""
    from engine.embed import UnknownEmbedderError, get_embedder
    from engine.tuned_cache import is_tuned_id

    def id_of(name: str) -> str:
        if is_tuned_id(name):
            return name
        try:
            return get_embedder(name).id
        except UnknownEmbedderError:  # named where it is used, with the names it could be
            return name

    used: dict[str, str] = {}
    env = os.environ.get("RECALLBENCH_EMBEDDER")
    if env:
        used[id_of(env)] = "selected by $RECALLBENCH_EMBEDDER"
    configured = embedder_name(from_env=False)
    why = "the shipped encoder" if is_tuned_id(configured) else "the default embedder"
    used.setdefault(id_of(configured), f"{why}, which serve and the hooks use")
    return used


def make_embedder(name: str | None = None, *, few_texts: bool = False) -> Embedder:
    """The configured embedder (`embedder_name`); `few_texts` for a process that embeds a query or
    two and exits."""
    from engine.embed import get_embedder

    return get_embedder(name or embedder_name(), few_texts=few_texts)


def config_file() -> Path:
    """`$RECALLBENCH_HOME/config.toml`, where `recallbench ship` records the shipped arm."""
    return home() / "config.toml"


def shipped(home_dir: Path | None = None) -> dict[str, Any] | None:
    """The `[ship]` table written by `recallbench ship` (in `home_dir`'s config.toml, default
    `home()`'s), or None when nothing was shipped.

    Raises:
        ValueError: the file is not valid TOML (tomllib.TOMLDecodeError).
    """
    path = config_file() if home_dir is None else home_dir / "config.toml"
    if not path.exists():
        return None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    ship = data.get("ship")
    return ship if isinstance(ship, dict) else None


def shipped_spec(home_dir: Path | None = None) -> str | None:
    """The shipped arm spec (`shipped`); None when nothing (readable) was shipped. Reads only the
    stdlib, so the prompt hook can call it without importing the command line."""
    try:
        ship = shipped(home_dir)
    except (OSError, ValueError):
        return None
    spec = ship.get("arm") if ship else None
    return spec if isinstance(spec, str) else None


def no_memory(spec: str | None) -> bool:
    """Whether `spec` is the no-memory arm `none()` (the own-history templates' default when no ship
    rule's conditions hold): it searches nothing, so every search, `search_memory` call and prompt hook
    finds nothing. A string test, so the callers need not import the arms."""
    return spec is not None and "".join(spec.split()) in ("none", "none()")


def no_memory_note(spec: str | None, ship: dict[str, Any] | None) -> str | None:
    """The line `search`, `serve` and `ship` print when `spec` (the shipped arm; `ship` its table,
    naming the run) is `none()`, else None."""
    if not no_memory(spec):
        return None
    run = f" (from {ship.get('protocol_id')} run {ship.get('run_id')})" if ship else ""
    return (
        f"the shipped arm is none(){run}: it searches no memory, so `search`, the MCP tool "
        "`search_memory` and the prompt hook find nothing, and sessions start without a brief, "
        "until another run is shipped; "
        "`recallbench ship --show` says why it shipped, `recallbench search --arm rrf` searches anyway"
    )


def show_progress() -> bool:
    """Progress bars on an interactive terminal, or when `RECALLBENCH_PROGRESS=1` (nox sessions)."""
    return sys.stderr.isatty() or os.environ.get("RECALLBENCH_PROGRESS") == "1"


# --- settings -----------------------------------------------------------------------------------
# The person's switches in config.toml, beside the `[ship]` table. Only the person changes them
# (`recallbench config set`); the model-facing tools read them through the server's wiring and never
# import this module.


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One switch in config.toml: its dotted key (table.name), default and what it does."""

    key: str
    default: bool
    help: str

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.key.split("."))


SETTINGS: Mapping[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            key="mcp.all_projects",
            default=False,
            help="Let the MCP tools read every project when a call passes all_projects=true "
            "(off: a call may read only the current project).",
        ),
        Setting(
            key="scope.inherit_parent",
            default=False,
            help="Let a folder without sessions of its own use the memory of its nearest recorded "
            "parent folder (never / or your home folder).",
        ),
        Setting(
            key="time.local",
            default=False,
            help="Show times on the command line (search, sessions, show, projects) in this machine's "
            "time zone, and read the dates and times you type there (--since, --until, forget --before) "
            "in it (off: UTC, as transcripts store them; the hooks and MCP tools always use UTC).",
        ),
        Setting(
            key="scope.worktrees",
            default=False,
            help="Let a folder use the memory of the same folder in the other git worktrees of its "
            "repository (recorded when their sessions were imported).",
        ),
    )
}
TRUE_WORDS = ("true", "on", "yes", "1")
FALSE_WORDS = ("false", "off", "no", "0")


class ConfigError(ValueError):
    """config.toml cannot be read or written, or a key or value is not a known setting."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The switches in effect; every one is off unless the person turned it on."""

    mcp_all_projects: bool = False
    scope_inherit_parent: bool = False
    scope_worktrees: bool = False
    time_local: bool = False


def setting(key: str) -> Setting:
    """The known setting `key`.

    Raises:
        ConfigError: `key` is not a known setting (the message lists the known ones).
    """
    try:
        return SETTINGS[key]
    except KeyError:
        msg = f"unknown setting {key!r}; known settings: {', '.join(sorted(SETTINGS))}"
        raise ConfigError(msg) from None


def parse_bool(key: str, text: str) -> bool:
    """`true`/`false` (also on/off, yes/no, 1/0) as typed on the command line.

    Raises:
        ConfigError: `text` is none of those words.
    """
    word = text.strip().lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    msg = f"{key} takes true or false, got {text!r}"
    raise ConfigError(msg)


def load_config(home_dir: Path | None = None) -> dict[str, Any]:
    """Everything in config.toml (empty when there is no file).

    Raises:
        ConfigError: the file cannot be read or is not valid TOML.
    """
    path = (home_dir if home_dir is not None else home()) / "config.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"cannot read {path}: {exc}"
        raise ConfigError(msg) from exc


def configured(data: Mapping[str, Any], key: str) -> bool | None:
    """The value of `key` in loaded config data; None when it is not set.

    Raises:
        ConfigError: the value is set but is not true or false.
    """
    node: Any = data
    for part in setting(key).path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if not isinstance(node, bool):
        msg = f"config.toml sets {key} = {node!r}; it must be true or false"
        raise ConfigError(msg)
    return node


def read_settings(home_dir: Path | None = None) -> Settings:
    """The settings in effect. Fails closed: a setting that cannot be read is off."""
    try:
        data = load_config(home_dir)
    except ConfigError:
        return Settings()

    def value(key: str) -> bool:
        try:
            found = configured(data, key)
        except ConfigError:
            return False
        return SETTINGS[key].default if found is None else found

    return Settings(
        mcp_all_projects=value("mcp.all_projects"),
        scope_inherit_parent=value("scope.inherit_parent"),
        scope_worktrees=value("scope.worktrees"),
        time_local=value("time.local"),
    )


def update_config(change: Callable[[dict[str, Any]], None], home_dir: Path | None = None) -> Path:
    """Apply `change` to config.toml's data and write it back, keeping every key it does not touch.

    The file is replaced atomically and readable by its owner only. Comments are not kept.

    Raises:
        ConfigError: the file cannot be read or written, or holds a value TOML cannot write back.
    """
    base = home_dir if home_dir is not None else home()
    data = load_config(base)
    change(data)
    text = "# recallbench settings: `recallbench config` and `recallbench ship` write this file.\n"
    text += dump_toml(data)
    # The writer below is small: never write what would read back differently (compared as text,
    # so a nan value equals itself).
    if dump_toml(tomllib.loads(text)) != dump_toml(data):
        msg = "config.toml would not read back as written; it was left unchanged"
        raise ConfigError(msg)
    path = base / "config.toml"
    tmp = path.with_suffix(".toml.tmp")
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(tmp, text)
        tmp.replace(path)
    except OSError as exc:
        msg = f"cannot write {path}: {exc}"
        raise ConfigError(msg) from exc
    return path


# --- a small TOML writer (the standard library only reads TOML) --------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML text for `data` as `tomllib` loads it (tables, arrays, strings, numbers, dates).

    Raises:
        ConfigError: a value has no TOML form.
    """
    lines: list[str] = []
    _dump_table(lines, (), data)
    return "".join(f"{line}\n" for line in lines)


def _dump_table(lines: list[str], path: tuple[str, ...], table: Mapping[str, Any]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, dict)]
    if path and (scalars or not tables):
        lines.append(f"[{'.'.join(_toml_key(p) for p in path)}]")
    lines.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars)
    for key, sub in tables:
        _dump_table(lines, (*path, key), sub)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("-inf" if value < 0 else "inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    msg = f"cannot write {value!r} ({type(value).__name__}) to config.toml"
    raise ConfigError(msg)

"""`recallbench config`: the person's switches in `$RECALLBENCH_HOME/config.toml` (list, get, set, unset).

The switches are the ones `recallbench.config.SETTINGS` declares; this group only reads and writes them,
keeping every other key in the file (the `[ship]` table above all) as it was.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import click

from recallbench import config
from recallbench.cli_options import HelpGroup

KEYS = click.Choice(sorted(config.SETTINGS), case_sensitive=True)


def _describe(setting: config.Setting) -> list[str]:
    """A setting's key, then its help wrapped below it (click keeps `\\b` paragraphs as written)."""
    return [
        f"  {setting.key}",
        *textwrap.wrap(setting.help, 72, initial_indent="      ", subsequent_indent="      "),
    ]


def _group_help() -> str:
    lines = [
        "Show and change recallbench's settings (stored in $RECALLBENCH_HOME/config.toml).",
        "",
        "Every setting is off until you turn it on.",
        "",
        "\b",
        "Settings:",
        *(line for s in config.SETTINGS.values() for line in _describe(s)),
    ]
    return "\n".join(lines)


@click.group("config", cls=HelpGroup, help=_group_help())
def config_group() -> None:
    pass


def _load() -> dict[str, Any]:
    try:
        return config.load_config()
    except config.ConfigError as exc:
        raise click.ClickException(f"{exc}; fix or remove the file, then try again") from exc


def _value(data: dict[str, Any], key: str) -> tuple[bool, bool]:
    """The value in effect and whether it is the default (not set in the file)."""
    try:
        found = config.configured(data, key)
    except config.ConfigError as exc:
        raise click.ClickException(
            f"{exc}; run `recallbench config set {key} true` (or false) to replace it"
        ) from exc
    return (config.SETTINGS[key].default, True) if found is None else (found, False)


def _word(value: bool) -> str:
    return "true" if value else "false"


@config_group.command("list")
def list_command() -> None:
    """List every setting with its value, and whether it is the default."""
    data = _load()
    for key in sorted(config.SETTINGS):
        value, default = _value(data, key)
        click.echo(f"{key} = {_word(value)}{'  (default)' if default else ''}")


@config_group.command("get")
@click.argument("key", type=KEYS, metavar="KEY")
def get_command(key: str) -> None:
    """Print the value of KEY (true or false)."""
    value, _ = _value(_load(), key)
    click.echo(_word(value))


def _parse_value(ctx: click.Context, param: click.Parameter, text: str) -> bool:
    try:
        return config.parse_bool(str(ctx.params.get("key", "the setting")), text)
    except config.ConfigError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


@config_group.command("set")
@click.argument("key", type=KEYS, metavar="KEY")
@click.argument("value", callback=_parse_value)
def set_command(key: str, value: bool) -> None:
    """Set KEY to VALUE (true or false; on/off, yes/no and 1/0 also work)."""
    path = config.SETTINGS[key].path

    def change(data: dict[str, Any]) -> None:
        node = data
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                msg = f"config.toml has {part} = {child!r} where the table [{part}] belongs"
                raise config.ConfigError(msg)
            node = child
        node[path[-1]] = value

    written = _update(change)
    click.echo(f"{key} = {_word(value)}  (wrote {written})")


@config_group.command("unset")
@click.argument("key", type=KEYS, metavar="KEY")
def unset_command(key: str) -> None:
    """Remove KEY from config.toml, so its default applies again."""
    path = config.SETTINGS[key].path
    default = _word(config.SETTINGS[key].default)
    if not _is_set(_load(), path):
        click.echo(f"{key} was not set; the default ({default}) applies")
        return

    def change(data: dict[str, Any]) -> None:
        parents = [data]
        for part in path[:-1]:
            parents.append(parents[-1][part])
        del parents[-1][path[-1]]
        # Drop the tables the key leaves empty, innermost first.
        for part, parent in zip(reversed(path[:-1]), reversed(parents[:-1]), strict=True):
            if parent[part]:
                break
            del parent[part]

    written = _update(change)
    click.echo(f"{key} removed; the default ({default}) applies  (wrote {written})")


def _is_set(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _update(change: Callable[[dict[str, Any]], None]) -> str:
    try:
        return str(config.update_config(change))
    except config.ConfigError as exc:
        raise click.ClickException(f"{exc}; fix or remove the file, then try again") from exc

"""What the command line's modules share: the `--db` option, the group class that lists commands, the
`--since` / `--until` pair of the commands that read a time window, and the `--dry-run` / `--yes` pair
of the commands that remove what is not in use.

`recallbench --db X search q` and `recallbench search --db X q` mean the same: both spellings store the
path in the invocation's shared `meta` (one dict for the whole command chain), the later one winning, and
commands read it back with `chosen_db`.

`HelpGroup` lists its commands with their whole summary (wrapped), where Click would cut it at the
terminal's width and add "...". Kept apart from `recallbench.cli` so that the serving and harness
commands can use both without importing the main group.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

DB_KEY = "recallbench.db"
DB_HELP = (
    "Database file (default: $RECALLBENCH_HOME/memory.db, $RECALLBENCH_HOME defaulting to "
    "~/.local/share/recallbench). Accepted before or after the command."
)

F = TypeVar("F", bound=Callable[..., Any])


def _remember_db(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.meta[DB_KEY] = value


def db_option(f: F) -> F:
    """`--db PATH` on a command or group; the value is read with `chosen_db`, not passed as an argument."""
    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        expose_value=False,
        callback=_remember_db,
        help=DB_HELP,
    )(f)


def chosen_db(ctx: click.Context) -> Path | None:
    """The `--db` given anywhere on the command line, or None."""
    value = ctx.meta.get(DB_KEY)
    return value if isinstance(value, Path) else None


def summary(command: click.Command) -> str:
    """The command's `short_help`, else the first sentence of its help, whole."""
    if command.short_help:
        return command.short_help
    first = " ".join((command.help or "").split("\n\n", 1)[0].split())
    end = first.find(". ")
    return first if end == -1 else first[: end + 1]


class QueryCommand(click.Command):
    """A command whose argument is free text: an unknown option may be text that starts with `-`
    (searching for a flag such as `--force-with-lease`), so its error says how to pass that."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if exc.possibilities:  # close to one of the command's options: a typo, said as such
                raise
            hint = (
                f"{exc.message} Text that starts with '-' goes after `--`, as in: "
                f"{ctx.command_path} -- '{exc.option_name}'"
            )
            raise click.NoSuchOption(exc.option_name, message=hint, ctx=exc.ctx) from None


class HelpGroup(click.Group):
    """A group whose help lists each command with its whole summary, wrapped rather than cut."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class LazyGroup(HelpGroup):
    """A group some of whose commands are imported only when named (or when help lists them).

    `lazy(name, module, attribute)` registers one; `prepare` is called with each command as it is
    loaded (the CLI puts its examples in the epilog there). A command whose module is slow to import
    (e.g. `ship`, which loads the harness's statistics and scipy) then costs nothing to the others.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy: dict[str, tuple[str, str]] = {}
        self.prepare: Callable[[str, click.Command], None] = lambda _name, _command: None

    def lazy(self, name: str, module: str, attribute: str) -> None:
        self._lazy[name] = (module, attribute)

    def lazy_module(self, name: str) -> str | None:
        """The module a lazily registered command is loaded from (None: not registered lazily)."""
        found = self._lazy.get(name)
        return None if found is None else found[0]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and cmd_name not in self.commands:
            module, attribute = self._lazy[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                msg = f"{module}.{attribute} is not the command {cmd_name!r}"
                raise TypeError(msg)
            self.prepare(cmd_name, command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


def drop_options(command: F) -> F:
    """`--dry-run` and `--yes`, as the commands that remove something not in use take them
    (`go_ahead` reads them)."""
    command = click.option("--yes", is_flag=True, help="Do not ask (needed without a terminal).")(
        command
    )
    return click.option("--dry-run", is_flag=True, help="Only say what would be removed.")(command)


def go_ahead(
    question: str, *, dry_run: bool, yes: bool, nothing: str = "nothing was removed"
) -> bool:
    """Whether to remove what the command just described: not with `dry_run` (it says so), at once
    with `yes`, else when the person answers `question` yes on a terminal. Without a terminal and
    without `yes` it refuses (ClickException), as an unanswered prompt would otherwise remove nothing
    silently or hang on a pipe."""
    if dry_run:
        click.echo(f"{nothing} (--dry-run)")
        return False
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("no terminal to ask on: give --yes to go ahead")
        click.confirm(question, abort=True)
    return True


def window_options(what: str) -> Callable[[F], F]:
    """`--since WHEN` and `--until WHEN` (`recallbench.time_window` reads them), worded for `what`
    the command lists ("what was written", "sessions with a chunk written")."""

    def add(command: F) -> F:
        command = click.option(
            "--until",
            metavar="WHEN",
            help=f"Only {what} before WHEN (as --since; a bare date counts that whole day).",
        )(command)
        return click.option(
            "--since",
            metavar="WHEN",
            help=f"Only {what} at or after WHEN: a date (2026-02-11), a date and time "
            "(2026-02-11T14:30; UTC, as every time shown, unless it ends in Z or +02:00, or the "
            "machine's zone with `config set time.local true`) or an age "
            "(90m, 12h, 7d, 2w).",
        )(command)

    return add

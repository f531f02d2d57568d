"""Click commands for serving: `serve`, `hooks install|uninstall`, and `hook EVENT`.

The main group attaches them (`recallbench.cli`). They only parse options and print: the server's
wiring is `recallbench.mcp_server`, the settings editing `recallbench.hook_settings`, the handlers
`recallbench.hooks`. The server's wiring (the MCP SDK, the embedder) is imported inside `serve`, so
`recallbench hook ...` stays quick and never loads torch.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from pathlib import Path
from typing import Literal

import click

from engine.markers import OWN_SERVER
from recallbench import config, hook_settings
from recallbench.hooks import EVENTS, run_hook


def _db_option(ctx: click.Context) -> Path | None:
    """The main group's `--db`, when the command runs under it."""
    root = ctx.find_root().obj
    db = getattr(root, "db", None)
    return db if isinstance(db, Path) else None


# --- serve --------------------------------------------------------------------------------------


@click.command("serve")
@click.option(
    "--no-embed-service",  # the flag's name predates the search requests; kept for users' commands
    "no_search_service",
    is_flag=True,
    help="Do not answer the hooks' search and embedding requests on the Unix socket.",
)
@click.option(
    "--no-background-embed",
    is_flag=True,
    help="Do not fill missing vectors in the background.",
)
@click.pass_context
def serve_command(ctx: click.Context, no_search_service: bool, no_background_embed: bool) -> None:
    """Run the MCP stdio server over the shipped arm (register it with `claude mcp add`).

    The server's tools only read memory, scoped to the Claude Code project ($CLAUDE_PROJECT_DIR, else
    the current directory). The process also answers the prompt hook's search and embedding requests on
    a Unix socket under $RECALLBENCH_HOME and fills missing vectors in the background.
    """
    # Imported here: the MCP SDK and the engine are heavy, and `recallbench hook` must stay quick.
    from recallbench.mcp_server import ServeError, serve

    db = _db_option(ctx) or config.default_db()
    try:
        serve(db, search_service=not no_search_service, background_embed=not no_background_embed)
    except ServeError as exc:
        raise click.ClickException(str(exc)) from exc


# --- hooks install / uninstall --------------------------------------------------------------------


@click.group("hooks")
def hooks_group() -> None:
    """Install or remove recallbench's Claude Code hooks."""


_SCOPE = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="user: $CLAUDE_CONFIG_DIR/settings.json (else ~/.claude/settings.json); "
    "project: .claude/settings.json of $CLAUDE_PROJECT_DIR or the current directory.",
)
_DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Print the resulting settings JSON and write nothing."
)


def _update_settings(
    scope: Literal["user", "project"], dry_run: bool, install: bool
) -> tuple[Path, bool]:
    """Apply the install or uninstall to the settings file; returns (path, changed)."""
    path = hook_settings.settings_path(scope)
    try:
        current = hook_settings.load_settings(path)
    except hook_settings.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    updated = (
        hook_settings.with_our_hooks(current)
        if install
        else hook_settings.without_our_hooks(current)
    )
    if dry_run:
        click.echo(hook_settings.render_settings(updated), nl=False)
        click.echo(f"(dry run: {path} was not changed)", err=True)
        return path, updated != current
    if updated == current:
        return path, False
    backup = hook_settings.write_settings(path, updated)
    if backup is not None:
        click.echo(f"previous settings kept in {backup}")
    return path, True


@hooks_group.command("install")
@_SCOPE
@_DRY_RUN
def install_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Add recallbench's hooks to Claude Code's settings, keeping every other tool's hooks."""
    path, changed = _update_settings(scope, dry_run, install=True)
    if not dry_run:
        state = "installed in" if changed else "already installed in"
        click.echo(f"recallbench hooks {state} {path}: {', '.join(EVENTS)}")
    if shutil.which(hook_settings.COMMAND) is None:
        click.echo(
            f"note: `{hook_settings.COMMAND}` is not on PATH; Claude Code runs hooks and MCP servers through "
            "it, so install recallbench where the shell finds it",
            err=True,
        )
    # In a dry run stdout holds only the JSON, so the reminder goes to stderr.
    click.echo("Register the MCP server with:", err=dry_run)
    click.echo(f"  {hook_settings.MCP_ADD_LINE}", err=dry_run)


@hooks_group.command("uninstall")
@_SCOPE
@_DRY_RUN
def uninstall_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Remove exactly recallbench's hooks from Claude Code's settings."""
    path, changed = _update_settings(scope, dry_run, install=False)
    if not dry_run:
        state = "removed from" if changed else "were not present in"
        click.echo(f"recallbench hooks {state} {path}")
        click.echo(f"To remove the MCP server too: claude mcp remove {OWN_SERVER}")


# --- hook EVENT ---------------------------------------------------------------------------------


@click.command("hook")
@click.argument("event", required=False, default="")
@click.pass_context
def hook_command(ctx: click.Context, event: str) -> None:
    """Handle one Claude Code hook EVENT (stdin: the hook's JSON); always exits 0.

    EVENT is SessionStart, UserPromptSubmit, Stop, SessionEnd or PreCompact. Failures go to
    $RECALLBENCH_HOME/hooks.log, never to the session.
    """
    try:
        data = sys.stdin.buffer.read()
    except Exception:
        data = b""
    # Anything a library prints while handling goes to stderr: stdout is what Claude Code injects.
    with contextlib.redirect_stdout(sys.stderr):
        out = run_hook(event, data, db=_db_option(ctx))
    if out:
        with contextlib.suppress(Exception):
            click.echo(out, nl=False)  # no newline: the budget counts every character printed

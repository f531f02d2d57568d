"""Click commands for serving: `serve`, `hooks install|uninstall`, and `hook EVENT`.

The main group attaches them (`recallbench.cli`). They only parse options and print: the server's
wiring is `recallbench.mcp_server`, the settings editing `recallbench.hook_settings`, the handlers
`recallbench.hooks`. The server's wiring (the MCP SDK, the embedder) is imported inside `serve`, so
`recallbench hook ...` stays quick and never loads torch.
"""

from __future__ import annotations

import contextlib
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import click

from engine.markers import OWN_SERVER
from recallbench import config, hook_settings
from recallbench.audit_cli import record_audit
from recallbench.cli_options import HelpGroup, chosen_db, db_option
from recallbench.hooks import EVENTS, run_hook

# --- serve --------------------------------------------------------------------------------------


@click.command(
    "serve",
    short_help="Run the MCP server over the shipped arm (for claude mcp add).",
)
@db_option
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

    db = chosen_db(ctx) or config.default_db()
    try:
        serve(db, search_service=not no_search_service, background_embed=not no_background_embed)
    except ServeError as exc:
        raise click.ClickException(str(exc)) from exc


# --- hooks install / uninstall --------------------------------------------------------------------


@click.group("hooks", cls=HelpGroup)
def hooks_group() -> None:
    """Install or remove recallbench's Claude Code hooks."""


_SCOPE = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="user: $CLAUDE_CONFIG_DIR/settings.json (else ~/.claude/settings.json); "
    "project: .claude/settings.json at the project root ($CLAUDE_PROJECT_DIR, else the git root "
    "above the current directory, else the current directory).",
)
_DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Print the resulting settings JSON and write nothing."
)


def _settings_path(scope: Literal["user", "project"]) -> Path:
    path = hook_settings.settings_path(scope)
    if scope == "project" and "CLAUDE_PROJECT_DIR" not in os.environ:
        root = path.parent.parent
        if not (root / ".git").exists():
            click.echo(
                f"note: no git repository at or above {root}; its project settings are used",
                err=True,
            )
    return path


def _show(outcome: hook_settings.Outcome, dry_run: bool, action: str) -> None:
    """In a dry run stdout holds only the resulting file, so everything else goes to stderr.

    A real change is recorded in the audit trail (`action`); a dry run or a no-op is not.
    """
    if not dry_run and outcome.changed:
        record_audit(action, [str(outcome.path)], outcome.message, datetime.now(UTC))
    if dry_run:
        if outcome.text is not None:
            click.echo(outcome.text, nl=False)
        click.echo(f"(dry run: {outcome.message}; {outcome.path} was not changed)", err=True)
    else:
        click.echo(f"recallbench hooks {outcome.message}")


@hooks_group.command(
    "install",
)
@_SCOPE
@_DRY_RUN
def install_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Add recallbench's hooks to Claude Code's settings, keeping every other tool's hooks.

    The hooks run this recallbench by its absolute path. The first install keeps the file as it was
    in settings.json.recallbench.bak, so that `hooks uninstall` can give it back byte for byte.
    """
    executable = hook_settings.hook_executable()
    try:
        outcome = hook_settings.install(_settings_path(scope), executable, dry_run=dry_run)
    except hook_settings.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    _show(outcome, dry_run, "hooks.install")
    if not dry_run:
        click.echo(f"events: {', '.join(EVENTS)}")
    if not os.path.isabs(executable):
        click.echo(
            f"note: `{hook_settings.COMMAND}` is not on PATH; Claude Code runs hooks and MCP servers through "
            "it, so install recallbench where the shell finds it",
            err=True,
        )
    click.echo("Register the MCP server with:", err=dry_run)
    click.echo(f"  {hook_settings.mcp_add_line(executable)}", err=dry_run)


@hooks_group.command(
    "uninstall",
)
@_SCOPE
@_DRY_RUN
def uninstall_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Remove recallbench's hooks, restoring settings.json exactly as install found it.

    When the file is still what install wrote, the original bytes come back (or the file is deleted if
    install created it). When it was edited since, only recallbench's entries are removed and the rest
    keeps its indentation, key order and line endings.
    """
    try:
        outcome = hook_settings.uninstall(_settings_path(scope), dry_run=dry_run)
    except hook_settings.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    _show(outcome, dry_run, "hooks.uninstall")
    if not dry_run:
        click.echo(f"To remove the MCP server too: claude mcp remove {OWN_SERVER}")


# --- hook EVENT ---------------------------------------------------------------------------------


@click.command(
    "hook",
    short_help="Handle one Claude Code hook event (run by Claude Code).",
)
@db_option
@click.argument("event", required=False, default="")
@click.pass_context
def hook_command(ctx: click.Context, event: str) -> None:
    """Handle one Claude Code hook EVENT (stdin: the hook's JSON); always exits 0.

    EVENT is SessionStart, UserPromptSubmit, Stop, SessionEnd or PreCompact; without it, the
    event stdin's `hook_event_name` names. Failures go to $RECALLBENCH_HOME/hooks.log, never to the
    session.
    """
    try:
        data = sys.stdin.buffer.read()
    except Exception:
        data = b""
    # Anything a library prints while handling goes to stderr: stdout is what Claude Code injects.
    with contextlib.redirect_stdout(sys.stderr):
        out = run_hook(event, data, db=chosen_db(ctx))
    if out:
        with contextlib.suppress(Exception):
            click.echo(out, nl=False)  # no newline: the budget counts every character printed

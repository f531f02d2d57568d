"""Click commands for serving: `serve`, `hooks install|uninstall`, and `hook EVENT`.

The lead attaches them to the main group: `main.add_command(serve_command)`, `main.add_command(hooks_group)`,
`main.add_command(hook_command)`. Heavy modules (the MCP SDK, the embedder) are imported inside the
commands, so `recallbench hook ...` stays quick and never loads torch.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Literal

import click

if TYPE_CHECKING:
    from engine.memory import Memory

log = logging.getLogger("recallbench.serve")


def _db_option(ctx: click.Context) -> Path | None:
    """The main group's `--db`, when the command runs under it."""
    root = ctx.find_root().obj
    db = getattr(root, "db", None)
    return db if isinstance(db, Path) else None


# --- serve --------------------------------------------------------------------------------------


class BackgroundEmbedder:
    """Fills missing vectors and refreshes the vector index while the server runs.

    Every `interval_s` it checks (cheaply) whether the stored vectors changed since the index was built;
    only then does it embed what is missing and rebuild. A file lock makes one server at a time do it
    when several run (Claude Code starts one per session).
    """

    def __init__(
        self,
        memory_factory: Callable[[], Memory],
        lock_path: Path,
        *,
        interval_s: float = 2.0,
        warm_up: bool = True,
    ) -> None:
        self._memory_factory = memory_factory
        self._lock_path = lock_path
        self._interval_s = interval_s
        self._warm_up = warm_up
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0
        self.embedded = 0

    def start(self) -> BackgroundEmbedder:
        self._thread = threading.Thread(target=self._run, name="recallbench-embed-bg", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def run_once(self, memory: Memory) -> int:
        """Embed pending chunks and rebuild the index if the stored vectors changed; returns vectors added."""
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock_path.open("a+b") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # another server is on it
            try:
                if memory.index_state() == "current":
                    return 0
                added = memory.embed_pending()
                memory.ensure_index()
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        self.passes += 1
        self.embedded += added
        if added:
            log.info("embedded %d pending chunk(s)", added)
        return added

    def _run(self) -> None:
        try:
            memory = self._memory_factory()
            if self._warm_up and memory.embedder is not None:
                # Load the model now, so the first hook query is answered within its short timeout.
                memory.embedder.embed(["recallbench warm-up"])
        except Exception as exc:
            log.warning("background embedding disabled: %s", exc)
            return
        try:
            while not self._stop.is_set():
                try:
                    self.run_once(memory)
                except Exception as exc:  # a failed pass is retried on the next tick
                    log.warning("background embedding pass failed: %s", exc)
                self._stop.wait(self._interval_s)
        finally:
            memory.close()


def _exit_on_sigterm(cleanup: contextlib.ExitStack) -> None:
    """On SIGTERM, remove the socket file and stop the helpers, then exit at once.

    Raising SystemExit instead is not enough: the stdio transport's reader thread blocks on stdin, and
    the interpreter would wait for it forever (a zombie server).
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            cleanup.close()
        finally:
            os._exit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _configure_logging() -> None:
    logger = logging.getLogger("recallbench")
    if not any(isinstance(h, logging.StreamHandler) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("recallbench %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


@click.command("serve")
@click.option(
    "--no-embed-service",
    is_flag=True,
    help="Do not answer the hooks' search and embedding requests on the Unix socket.",
)
@click.option(
    "--no-background-embed",
    is_flag=True,
    help="Do not fill missing vectors in the background.",
)
@click.pass_context
def serve_command(ctx: click.Context, no_embed_service: bool, no_background_embed: bool) -> None:
    """Run the MCP stdio server over the shipped arm (register it with `claude mcp add`).

    The server's tools only read memory, scoped to the Claude Code project ($CLAUDE_PROJECT_DIR, else
    the current directory). The process also answers the prompt hook's search and embedding requests on
    a Unix socket under $RECALLBENCH_HOME and fills missing vectors in the background.
    """
    from engine.memory import Memory
    from recallbench import config
    from recallbench.embed_service import EmbedService, EmbedServiceError, socket_path
    from recallbench.hooks import prompt_search_handler
    from recallbench.mcp_server import DEFAULT_ARM, build_server

    _configure_logging()
    db = _db_option(ctx) or config.default_db()
    try:
        embedder = config.make_embedder()
    except Exception as exc:
        msg = f"cannot set up the embedder {config.embedder_name()!r}: {exc}"
        raise click.ClickException(msg) from exc
    spec = config.shipped_spec()
    # One Memory for the tools and the background embedder, so they share its index lock and a
    # stale index is rebuilt once, not once per caller.
    try:
        # Other processes keep importing into this store, so the in-memory lexical snapshot is
        # rebuilt in the background after each change while FTS5 answers (same results).
        memory = Memory(db, embedder, lexical_index="background")
        memory.warm_lexical(wait=False)
    except Exception as exc:
        msg = f"cannot open the memory database {db}: {exc}"
        raise click.ClickException(msg) from exc
    try:
        server = build_server(lambda: memory, spec)
    except ValueError as exc:
        msg = f"the shipped arm {spec!r} is not a valid arm spec ({exc}); run `recallbench ship` again"
        raise click.ClickException(msg) from exc
    with contextlib.ExitStack() as stack:
        _exit_on_sigterm(stack)
        if not no_embed_service:
            services: list[EmbedService] = []

            def stop_services() -> None:
                for service in services:
                    service.stop()

            stack.callback(stop_services)

            def serve_embeddings() -> None:
                # Load the model before the socket listens: a prompt hook that finds the socket
                # must not wait on a cold model (until then hooks read lexically, which is quick).
                try:
                    embedder.embed(["recallbench warm-up"])
                    # The prompt hook's search runs here, over this process's warm model and indexes.
                    search = prompt_search_handler(memory, spec or DEFAULT_ARM)
                    path = socket_path(config.home(), embedder.id)
                    services.append(EmbedService(embedder, path, search=search).start())
                except (EmbedServiceError, OSError, RuntimeError, ValueError) as exc:
                    log.warning(
                        "embedding service not started (hooks will read lexically): %s", exc
                    )

            threading.Thread(
                target=serve_embeddings, name="recallbench-warm-up", daemon=True
            ).start()
        if not no_background_embed:
            background = BackgroundEmbedder(lambda: memory, config.home() / "embed.lock").start()
            stack.callback(background.stop)
        server.run("stdio")


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
    from recallbench import hooks

    path = hooks.settings_path(scope)
    try:
        current = hooks.load_settings(path)
    except hooks.SettingsError as exc:
        raise click.ClickException(str(exc)) from exc
    updated = hooks.with_our_hooks(current) if install else hooks.without_our_hooks(current)
    if dry_run:
        click.echo(hooks.render_settings(updated), nl=False)
        click.echo(f"(dry run: {path} was not changed)", err=True)
        return path, updated != current
    if updated == current:
        return path, False
    backup = hooks.write_settings(path, updated)
    if backup is not None:
        click.echo(f"previous settings kept in {backup}")
    return path, True


@hooks_group.command("install")
@_SCOPE
@_DRY_RUN
def install_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Add recallbench's hooks to Claude Code's settings, keeping every other tool's hooks."""
    from recallbench import hooks

    path, changed = _update_settings(scope, dry_run, install=True)
    if not dry_run:
        state = "installed in" if changed else "already installed in"
        click.echo(f"recallbench hooks {state} {path}: {', '.join(hooks.EVENTS)}")
    if shutil.which(hooks.COMMAND) is None:
        click.echo(
            f"note: `{hooks.COMMAND}` is not on PATH; Claude Code runs hooks and MCP servers through "
            "it, so install recallbench where the shell finds it",
            err=True,
        )
    # In a dry run stdout holds only the JSON, so the reminder goes to stderr.
    click.echo("Register the MCP server with:", err=dry_run)
    click.echo(f"  {hooks.MCP_ADD_LINE}", err=dry_run)


@hooks_group.command("uninstall")
@_SCOPE
@_DRY_RUN
def uninstall_command(scope: Literal["user", "project"], dry_run: bool) -> None:
    """Remove exactly recallbench's hooks from Claude Code's settings."""
    from engine.markers import OWN_SERVER

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
    from recallbench.hooks import run_hook

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

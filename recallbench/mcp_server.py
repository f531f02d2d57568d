"""Wiring of `recallbench serve`: the Memory, the shipped arm, the MCP tools and the stdio MCPServer.

`build_server` puts a reader, the arm and `recallbench.mcp_tools.MemoryTools` together into an
`MCPServer`; `serve` opens the memory database and runs that server on stdio with the helpers that live
as long as it does: the search service that answers the prompt hook on a Unix socket
(`recallbench.search_service`) and the background embedder (`recallbench.background_embed`).
Before anything, `serve` refuses a home folder another user could change and removes what a killed
server left there (a socket nobody answers on, temporary files of dead processes).
Logs go to stderr: stdout is the protocol channel.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import NoReturn

from mcp.server import MCPServer

from arms.registry import full_canonical
from engine.audit import AGENT_PREFIX, AuditError, check_actor
from engine.embed import Embedder
from engine.markers import OWN_SERVER
from engine.memory import Memory
from recallbench import config
from recallbench.background_embed import BackgroundEmbedder
from recallbench.home_trust import UntrustedHomeError, describe_error
from recallbench.mcp_tools import MemoryTools, default_project_dir
from recallbench.prompt_search import PromptSearch
from recallbench.search_service import (
    SearchService,
    SearchServiceError,
    remove_stale_files,
    socket_path,
)
from recallbench.shipped_model import ShippedModelError, build_arm

log = logging.getLogger("recallbench.mcp")

DEFAULT_ARM = "rrf"
# What the server logs once its first lexical snapshot is held (`nox -s perf` waits for it).
LEXICAL_READY = "lexical snapshot ready"
# What it logs when the prompt hook's search service could not start (`perf.hooks` stops waiting on it).
SEARCH_NOT_STARTED = "search service not started"
INSTRUCTIONS = (
    "Long-term memory of earlier Claude Code sessions (recallbench). Use `search_memory` when the user "
    "refers to earlier work, or before re-deriving a decision, an error's cause, a command or a fix that "
    "may have come up before; read a whole chunk and its neighbours with `get_memory`. Results are "
    "limited to the current project; all_projects=true works only where the person allowed it. Every "
    "tool but `flag_memory` only reads. When two memories disagree, `flag_memory` marks the older one "
    "corrected (it was wrong), changed (true then, no longer) or open (unresolved); it deletes nothing "
    "and the person reviews every flag."
)
# Claude Code gives a stdio MCP server its session id in this variable (v2.1.154 and later).
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


class ServeError(RuntimeError):
    """`recallbench serve` cannot start; the message says what to fix."""


def build_server(
    memory: Memory,
    arm_spec: str | None,
    *,
    project_dir: Path | None = None,
    now: Callable[[], datetime] | None = None,
    settings: Callable[[], config.Settings] = config.read_settings,
) -> MCPServer:
    """The MCP server over the arm `arm_spec` (the default `rrf`, with a notice on stderr, when None).

    `project_dir` defaults to `default_project_dir()` at build time; `now` to the current UTC time;
    `settings` (the person's switches in config.toml) is read on every tool call.

    Raises:
        ValueError: `arm_spec` does not parse or names an unknown arm or parameter, or is fitted and
            its shipped model cannot be used (`recallbench.shipped_model.ShippedModelError`).
    """
    if arm_spec is None:
        print(
            f"recallbench: no arm has been shipped (config.toml [ship] arm); serving {DEFAULT_ARM!r}",
            file=sys.stderr,
        )
        arm_spec = DEFAULT_ARM
    canonical = full_canonical(arm_spec)  # validates the spec now rather than on the first search
    tools = MemoryTools(
        memory,
        build_arm(canonical, memory),  # a fitted arm with the shipped model, hash checked
        canonical,
        project_dir=project_dir if project_dir is not None else default_project_dir(),
        clock=now if now is not None else (lambda: datetime.now(UTC)),
        settings=settings,
        flagger=memory,
        actor=agent_actor(os.environ),
        session_id=running_session_id(os.environ),
    )
    server = MCPServer(OWN_SERVER, instructions=INSTRUCTIONS, log_level="WARNING")
    tools.register(server)
    return server


def running_session_id(env: Mapping[str, str]) -> str | None:
    """The Claude Code session this server serves (`SESSION_ENV`), when it is a plain id: what
    `search_memory` leaves out of its answers is what that session has in context."""
    session = env.get(SESSION_ENV, "").strip()
    try:
        return session if session and check_actor(AGENT_PREFIX + session) else None
    except AuditError:
        return None


def agent_actor(env: Mapping[str, str]) -> str:
    """Who the model's flags are recorded as: ``agent:<Claude Code session id>``.

    The id comes from `SESSION_ENV`. Without it (an older Claude Code, another client) or with a
    value that is not a plain id, the actor is ``agent:mcp-<random hex>``, new for each server
    process: the flags stay attributable to one agent, which can undo only its own, and
    `recallbench corrections --pending` lists them all the same.
    """
    session = running_session_id(env)
    return AGENT_PREFIX + session if session is not None else _unknown_session()


def _unknown_session() -> str:
    return f"{AGENT_PREFIX}mcp-{uuid.uuid4().hex[:16]}"


def serve(db: Path, *, search_service: bool = True, background_embed: bool = True) -> NoReturn:
    """Run the MCP server over the shipped arm on stdio until the client goes away, SIGTERM or SIGINT,
    stop its helpers, then end the process (`_end_process`: exit status 0, or 128 + the signal).

    Raises:
        ServeError: the home folder could be changed by another user, the embedder cannot be set up,
            the database cannot be opened, or the shipped arm spec is invalid.
    """
    _configure_logging()
    _tidy_home(db)
    try:
        embedder = config.make_embedder()
    except Exception as exc:
        msg = f"cannot set up the embedder {config.embedder_name()!r}: {exc}"
        raise ServeError(msg) from exc
    spec = config.shipped_spec()
    if note := config.no_memory_note(spec, config.shipped() if spec else None):
        print(f"recallbench: {note}", file=sys.stderr)
    # One Memory for the tools, the prompt search and the background embedder, so they share its
    # index lock and a stale index is rebuilt once, not once per caller.
    try:
        # Other processes keep importing into this store, so the in-memory lexical snapshot is
        # rebuilt in the background after each change while FTS5 answers (same results).
        memory = Memory(db, embedder, lexical_index="background")
        memory.warm_lexical(wait=False)
        _log_when_lexical_ready(memory)
    except Exception as exc:
        msg = f"cannot open the memory database {db}: {exc}"
        raise ServeError(msg) from exc
    try:
        server = build_server(memory, spec)
    except ShippedModelError as exc:
        raise ServeError(str(exc)) from exc
    except ValueError as exc:
        msg = f"the shipped arm {spec!r} is not a valid arm spec ({exc}); run `recallbench ship` again"
        raise ServeError(msg) from exc
    with contextlib.ExitStack() as stack:
        _exit_on_signals(stack)
        if search_service:
            _start_search_service(stack, memory, embedder, spec or DEFAULT_ARM)
        if background_embed:
            background = BackgroundEmbedder(lambda: memory, config.home() / "embed.lock").start()
            stack.callback(background.stop)
        server.run("stdio")
    _end_process(0)


def _log_when_lexical_ready(memory: Memory) -> None:
    """Log once the first lexical snapshot is held: until then FTS5 answers lexical reads (the same
    hits, slower at scale) while the build shares the CPU, so searches answered before it are slower."""
    started = time.monotonic()

    def wait() -> None:
        if memory.await_lexical():
            log.info("%s %.1f s after start", LEXICAL_READY, time.monotonic() - started)

    threading.Thread(target=wait, name="recallbench-lexical-ready", daemon=True).start()


def _tidy_home(db: Path) -> None:
    """Refuse an untrusted home folder; remove the stale socket and temporary files a killed server left.

    Raises:
        ServeError: the home folder is another user's or writable by group or others.
    """
    try:
        home = config.trusted_home()
    except UntrustedHomeError as exc:
        raise ServeError(str(exc)) from None
    stale = remove_stale_files(home, db)
    if stale.sockets or stale.temporary:
        names = ", ".join(p.name for p in (*stale.sockets, *stale.temporary))
        log.info(
            "removed %d stale socket(s) and %d temporary file(s) a stopped server left: %s",
            len(stale.sockets),
            len(stale.temporary),
            names,
        )


def _start_search_service(
    stack: contextlib.ExitStack, memory: Memory, embedder: Embedder, arm_spec: str
) -> None:
    """Answer the prompt hook on the socket once the model is loaded, from a thread; stop on exit."""
    services: list[SearchService] = []

    def stop_services() -> None:
        for service in services:
            service.stop()

    stack.callback(stop_services)

    def start() -> None:
        # Load the model before the socket listens: a prompt hook that finds the socket must not
        # wait on a cold model (until then hooks read lexically, which is quick).
        try:
            embedder.embed(["recallbench warm-up"])
            _warm_partitions(memory)
            # The prompt hook's search runs here, over this process's warm model and indexes.
            search = PromptSearch(memory, arm_spec, database=memory.db_path)
            path = socket_path(config.home(), embedder.id)
            # Listed before it binds: a signal that arrives once the socket exists must find it to
            # remove (listed after `start` returned, it was missed in that gap).
            service = SearchService(embedder, path, search=search)
            services.append(service)
            service.start()
        except (SearchServiceError, OSError, RuntimeError, ValueError) as exc:
            log.warning(
                "%s (hooks will read lexically): %s", SEARCH_NOT_STARTED, describe_error(exc)
            )

    threading.Thread(target=start, name="recallbench-warm-up", daemon=True).start()


def _warm_partitions(memory: Memory) -> None:
    """Load (or build) every project's vector partition before the socket listens: a read scoped to
    one project loads only its own (what a one-shot search wants), so each project's first hook would
    pay it. A failure here is logged and left to the first read, which tries again."""
    try:
        memory.ensure_index()
    except Exception as exc:  # sqlite3, hnswlib and file errors alike: the service still starts
        log.warning("vector partitions not warmed: %s", describe_error(exc))


def _exit_on_signals(cleanup: contextlib.ExitStack) -> None:
    """On SIGTERM or SIGINT (Ctrl-C at a terminal), remove the socket file and stop the helpers, then
    exit at once.

    Raising SystemExit or KeyboardInterrupt instead is not enough: the stdio transport's reader thread
    blocks on stdin, and the interpreter would wait for it (a zombie server; after Ctrl-C, one that
    exits only once its stdin closes).
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            cleanup.close()
        finally:
            _end_process(128 + signum)

    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, handler)


def _end_process(status: int) -> NoReturn:
    """Flush the standard streams and end the process without finalising the interpreter.

    A client that goes away while the server warms up leaves daemon threads (the warm-up, the lexical
    snapshot, an embedding) inside ONNX Runtime or hnswlib. Finalising the interpreter under them
    aborted the process: "terminate called without an active exception", exit status 134, in 6 of 26
    background starts whose stdin was already closed (0 of 22 since). Everything `serve` started has
    stopped by now.
    """
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe or file (OSError, ValueError), or, from a signal handler that interrupted
        # a write to the same stream, "reentrant call" (RuntimeError): nothing may keep the process.
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _configure_logging() -> None:
    logger = logging.getLogger("recallbench")
    if not any(isinstance(h, logging.StreamHandler) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("recallbench %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

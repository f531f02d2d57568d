"""The handlers `recallbench hook EVENT` runs for Claude Code (installing them: `recallbench.hook_settings`).

Handlers (stdin: the hook's JSON):
- Stop, SessionEnd, PreCompact: import the session's transcript incrementally (text and FTS rows only;
  vectors are filled by the MCP server or the next `recallbench import`); print nothing.
- SessionStart: a short brief of this project's recent sessions and how to use the `search_memory` tool.
- UserPromptSubmit: the shipped arm's relevant hits for the prompt, scoped to the project, within a
  character budget. The running MCP server computes them on its socket (it holds the model, the vector
  index and the lexical snapshot warm; `recallbench.prompt_search` is its side); when nothing answers in
  time the lexical read (FTS5, through `engine.text_reads`) is used alone. This process imports neither
  torch nor numpy. Hits already in the session's context (its own lines since its last compaction,
  and other sessions' copies of them) are left out (`recallbench.running_session`).

A hook must never break the user's session: every handler catches everything, exits 0, prints nothing on
Stop, and logs failures to `$RECALLBENCH_HOME/hooks.log`. Everything printed is wrapped in the context
sentinels of `engine.markers`, so the importer scrubs it from later transcripts.

The log records sizes, ids, paths, counts, timings and reasons, never prompt or transcript text: an
exception is logged by its type and where it was raised (`home_trust.describe_error`), since its message
can quote the input. The hooks do nothing in a home folder another user could change
(`home_trust.home_problem`), send the prompt only to a server of the same user, and never write the log
through a symlink.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine.checks import is_number
from engine.markers import OWN_SERVER
from engine.scope import RecordedProjects, Resolution, Scope, explain_recorded
from engine.text_reads import TextReads, is_lock_error, is_lock_message
from engine.trust_order import settle_ranked
from recallbench import config
from recallbench.home_trust import (
    LoggableError,
    append_private,
    describe_error,
    home_problem,
    make_private_dir,
    open_private,
)
from recallbench.inject import (
    MAX_PROMPT_CHARS,
    WRAP_CHARS,
    InjectSettings,
    content_terms,
    coverage,
    format_context,
    read_part,
    relevant,
    wrap,
)
from recallbench.present import clip, counted, hit_rows, minute, one_line
from recallbench.running_session import resumed_from
from recallbench.same_text import outside_context
from recallbench.search_service import MAX_SEARCH_K, search_via_socket, socket_path

if TYPE_CHECKING:
    from engine.memory import Memory

T = TypeVar("T")

# --- constants ----------------------------------------------------------------------------------

EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact")
IMPORT_EVENTS = frozenset({"Stop", "SessionEnd", "PreCompact"})
LOG_NAME = "hooks.log"
_LOG_MAX_BYTES = 1 << 20
# Hooks wait this long for SQLite locks per statement, then retry the whole step a few times.
HOOK_BUSY_TIMEOUT_MS = 2000
_LOCK_RETRIES = 5
_IMPORT_LOCK_WAIT_S = 20.0
_MAX_STDIN_BYTES = 4 << 20
# What a log may quote of the input: an event name, a session id (a UUID). Anything else is counted.
_EVENT_NAME = re.compile(r"[A-Za-z]{1,40}")
_SESSION_ID = re.compile(r"[0-9A-Fa-f-]{1,64}")


class HookInputError(LoggableError, ValueError):
    """The hook's input cannot be handled; the message gives sizes and paths, never the input's text."""


def quoted_if(pattern: re.Pattern[str], value: object) -> str:
    """`value` quoted when it is a str of the harmless shape `pattern`, else only its size."""
    if isinstance(value, str):
        return repr(value) if pattern.fullmatch(value) else f"<{len(value)} characters>"
    return "none" if value is None else f"<{type(value).__name__}>"


class HookLog:
    """Appends one line per record to `hooks.log`; never raises (a hook must not fail on its log).

    The file is opened with O_NOFOLLOW and created 0600 (`home_trust.open_private`): a planted symlink
    or another user's file is refused, and the refusal goes to stderr.
    """

    def __init__(self, path: Path, event: str) -> None:
        self.path = path
        self.event = event if _EVENT_NAME.fullmatch(event) else "-"

    def write(self, level: str, message: str) -> None:
        try:
            make_private_dir(self.path.parent)
            stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
            line = f"{stamp} pid={os.getpid()} {self.event} {level}: {message}\n"
            append_private(self.path, line.encode("utf-8"), rotate_over=_LOG_MAX_BYTES)
        except Exception as exc:  # the log is best effort: say so on stderr, never raise
            with contextlib.suppress(Exception):
                reason = describe_error(exc)
                os.write(2, f"recallbench hook: cannot write {self.path}: {reason}\n".encode())

    def info(self, message: str) -> None:
        self.write("INFO", message)

    def error(self, message: str) -> None:
        self.write("ERROR", message)


@dataclass(frozen=True, kw_only=True)
class HookContext:
    """Where a hook reads and writes, resolved once per invocation."""

    db: Path
    home: Path
    env: Mapping[str, str]
    now: datetime
    settings: InjectSettings


def run_hook(
    event: str,
    stdin: bytes,
    *,
    db: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    settings: InjectSettings | None = None,
) -> str:
    """Handle one hook invocation and return what to print (often nothing). Never raises."""
    log = HookLog(Path(os.devnull), event)
    try:
        base = home if home is not None else config.home()
        log = HookLog(base / LOG_NAME, event)
        problem = home_problem(base)
        if problem is not None:
            log.error(f"{problem}. The hooks do nothing until then.")
            with contextlib.suppress(Exception):
                print(f"recallbench hook: {problem}", file=sys.stderr)
            return ""
        default_db = config.default_db() if home is None else base / config.default_db().name
        ctx = HookContext(
            db=db if db is not None else default_db,
            home=base,
            env=os.environ if env is None else env,
            now=now if now is not None else datetime.now(UTC),
            settings=settings if settings is not None else InjectSettings(),
        )
        if event and event not in EVENTS:
            shown = quoted_if(_EVENT_NAME, event)
            log.error(f"unknown hook event {shown}; expected one of {', '.join(EVENTS)}")
            return ""
        payload = parse_payload(stdin)
        named = payload.get("hook_event_name")
        if not event:
            # `recallbench hook` without EVENT (a settings entry written by hand): the event stdin names
            if not (isinstance(named, str) and named in EVENTS):
                shown = quoted_if(_EVENT_NAME, named)
                log.error(
                    f"no hook event given, and stdin's hook_event_name is {shown}; expected one of "
                    f"{', '.join(EVENTS)}"
                )
                return ""
            event = named
            log = HookLog(base / LOG_NAME, event)
            log.info("no event given on the command line; handling the one stdin names")
        session = quoted_if(_SESSION_ID, payload.get("session_id"))
        log.info(f"stdin: {len(stdin)} bytes, session {session}")
        if isinstance(named, str) and named and named != event:
            shown = quoted_if(_EVENT_NAME, named)
            log.info(f"stdin names event {shown}; handling it as {event!r} as the command says")
        start = time.monotonic()
        if event in IMPORT_EVENTS:
            import_transcript(payload, ctx, log)
            out = ""
        elif event == "SessionStart":
            out = session_brief(payload, ctx, log)
        else:
            out = prompt_context(payload, ctx, log)
        log.info(f"done in {time.monotonic() - start:.3f}s, {len(out)} characters out")
        return out
    except BaseException as exc:  # a hook must never break the session, whatever happened
        log.error(f"{describe_error(exc)} (at {_raised_at(exc)})")
        return ""


def _raised_at(exc: BaseException) -> str:
    """Where `exc` was raised, as file:line function steps: a traceback without any message or value."""
    steps = [
        f"{Path(frame.f_code.co_filename).name}:{line} {frame.f_code.co_name}"
        for frame, line in traceback.walk_tb(exc.__traceback__)
    ]
    return " > ".join(steps[-4:]) or "?"


def parse_payload(stdin: bytes) -> dict[str, Any]:
    """The hook's stdin JSON object.

    Raises:
        HookInputError: the input is not a JSON object (the message gives its size and the position of
            the error, never its text).
    """
    data = stdin[:_MAX_STDIN_BYTES].decode("utf-8", errors="replace")
    if not data.strip():
        msg = "hook stdin was empty; expected Claude Code's JSON object"
        raise HookInputError(msg)
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, RecursionError) as exc:
        # JSONDecodeError's own message can quote the input (an invalid escape), so only its position.
        where = (
            f"line {exc.lineno} column {exc.colno}" if isinstance(exc, ValueError) else "nesting"
        )
        msg = f"hook stdin of {len(stdin)} bytes is not JSON (error at {where})"
        raise HookInputError(msg) from None
    if not isinstance(obj, dict):
        msg = f"hook stdin of {len(stdin)} bytes must be a JSON object, got {type(obj).__name__}"
        raise HookInputError(msg)
    return obj


def _text_field(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def project_dir(payload: Mapping[str, Any], env: Mapping[str, str]) -> Path:
    """The Claude Code project: `$CLAUDE_PROJECT_DIR`, else the hook's `cwd`, else this process's cwd."""
    for candidate in (env.get("CLAUDE_PROJECT_DIR", ""), _text_field(payload, "cwd")):
        if candidate:
            return Path(candidate).expanduser()
    return Path.cwd()


def _resolve(reads: RecordedProjects, here: Path, ctx: HookContext) -> Resolution:
    """The projects `here` reads under the person's `scope.inherit_parent` and `scope.worktrees`
    (config.toml in the hook's home; off if unreadable)."""
    settings = config.read_settings(ctx.home)
    return explain_recorded(
        reads,
        here,
        inherit_parent=settings.scope_inherit_parent,
        join_worktrees=settings.scope_worktrees,
    )


def _retry_locked(step: Callable[[], T], log: HookLog, what: str) -> T:
    """Run `step`, retrying with backoff while SQLite reports a lock, so the user never sees one."""
    attempt = 0
    while True:
        try:
            return step()
        except Exception as exc:
            attempt += 1
            if not is_lock_error(exc) or attempt >= _LOCK_RETRIES:
                raise
            log.info(f"{what}: database busy ({type(exc).__name__}); retry {attempt}")
            time.sleep(0.05 * 2**attempt)


def _open_text_reads(ctx: HookContext) -> TextReads:
    return TextReads(ctx.db, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)


def _open_memory(ctx: HookContext) -> Memory:
    # Imported here, not at the top: the prompt hook never needs Memory, and it brings numpy.
    from engine.memory import Memory

    return Memory(ctx.db, None, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)


# --- Stop / SessionEnd / PreCompact -------------------------------------------------------------


@contextlib.contextmanager
def _import_lock(home: Path, wait_s: float) -> Iterator[bool]:
    """Serialise hook imports across processes; yields False when the lock was not had in time.

    Two imports of the same growing file at once would each store the same new lines; one at a time
    keeps the offset bookkeeping simple and costs nothing (an incremental import takes milliseconds).
    """
    import fcntl

    make_private_dir(home)
    fd = open_private(home / "import.lock", os.O_RDWR)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.02)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def transcript_paths(payload: Mapping[str, Any]) -> list[Path]:
    """The session's transcript and, when present, its subagent folder `<session-id>/`."""
    raw = _text_field(payload, "transcript_path")
    if not raw:
        msg = "hook stdin has no transcript_path; nothing to import"
        raise HookInputError(msg)
    path = Path(raw).expanduser()
    if not path.is_file():
        msg = f"transcript {path} does not exist (yet); nothing to import"
        raise HookInputError(msg)
    paths = [path]
    side = path.with_suffix("")
    if side.is_dir():
        paths.append(side)
    return paths


def import_transcript(payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> None:
    """Import the session's transcript (text and FTS rows; no vectors), retrying while locked."""
    paths = transcript_paths(payload)
    with _import_lock(ctx.home, _IMPORT_LOCK_WAIT_S) as locked:
        if not locked:
            log.info(
                f"another import held the lock for {_IMPORT_LOCK_WAIT_S}s; the next hook catches up"
            )
            return
        for attempt in range(_LOCK_RETRIES):
            memory = _retry_locked(lambda: _open_memory(ctx), log, "open")
            try:
                report = memory.import_paths(paths, embed=False)
            finally:
                memory.close()
            locked_files = {
                p: why for p, why in report.files_failed.items() if is_lock_message(why)
            }
            for path, why in report.files_failed.items():
                if path not in locked_files:
                    # `why` is "Type: message", and the message can quote the transcript.
                    log.error(f"import of {path} failed: {why.split(':', 1)[0]}")
            log.info(
                f"imported {report.files_imported} file(s), {report.messages} message(s), "
                f"{report.chunks_written} chunk(s) written"
            )
            if not locked_files:
                return
            log.info(f"database busy for {sorted(locked_files)}; retry {attempt + 1}")
            time.sleep(0.05 * 2**attempt)
        log.error("database stayed busy; the next hook will import the rest")


# --- SessionStart -------------------------------------------------------------------------------


def _no_memory_shipped(ctx: HookContext, log: HookLog, outcome: str) -> bool:
    """Whether the shipped arm is `none()` (no memory), logged with what the hook does about it."""
    if not config.no_memory(config.shipped_spec(ctx.home)):
        return False
    log.info(f"the shipped arm is none() (no memory); {outcome}")
    return True


def session_brief(payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> str:
    """The SessionStart brief: this project's recent sessions and how to search them."""
    if not ctx.db.exists():
        log.info(f"no database at {ctx.db}; nothing to brief")
        return ""
    if _no_memory_shipped(ctx, log, "no brief"):
        return ""
    memory = _retry_locked(lambda: _open_memory(ctx), log, "open")
    try:
        return _retry_locked(lambda: _brief(memory, payload, ctx, log), log, "brief")
    finally:
        memory.close()


def _brief(memory: Memory, payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> str:
    here = project_dir(payload, ctx.env)
    found = _resolve(memory, here, ctx)
    if not found.projects:
        log.info(f"no sessions recorded for {here}; no brief")
        return ""
    scope = Scope.of(found.projects)
    where = found.project or ""
    if found.joined:
        n = len(found.worktrees)
        others = (
            f"the same folder in {n} other git worktree{'' if n == 1 else 's'} of this repository"
        )
        where = f"{where} and {others}" if where else others
    current = _text_field(payload, "session_id")
    sessions = [s for s in memory.recent_sessions(scope, 7) if s["session_id"] != current]
    # A main stream's chunk 0 opens the session, usually with the user's first prompt.
    first = memory.chunks(
        [str(s["opening_chunk_id"]) for s in sessions if s["opening_chunk_id"]], scope
    )
    copied = resumed_from(first, payload)
    sessions = [s for s in sessions if s["session_id"] not in copied][:5]
    if not sessions:
        log.info(f"no earlier sessions in {scope}; no brief")
        return ""
    openings = {r.session_id: r.text for r in first}
    lines = [f"recallbench remembers earlier Claude Code sessions in {where}. Most recent:"]
    for s in sessions:
        sid = str(s["session_id"])
        opening = clip(one_line(openings.get(sid, "")), 110)
        quoted = f' · "{opening}"' if opening else ""
        worktree = f" · in {s['project']}" if found.joined else ""
        chunks = counted(int(str(s["chunks"])), "chunk")
        lines.append(f"- {minute(s['started'])} · session {sid[:8]}{worktree} · {chunks}{quoted}")
    lines.append(
        f"To recall earlier decisions, errors, commands or fixes, call the `search_memory` tool of the "
        f"`{OWN_SERVER}` MCP server with a short description of what you need; `get_memory` shows a "
        "whole chunk with its neighbours."
    )
    return wrap(clip("\n".join(lines), ctx.settings.budget_chars - WRAP_CHARS))


# --- UserPromptSubmit ---------------------------------------------------------------------------

# `via` of a hit the hook found itself: FTS5's BM25, as the `fts` arm labels its hits.
LEXICAL_VIA = "fts"


@dataclass(frozen=True, kw_only=True)
class _Hit:
    chunk_id: str
    score: float
    via: str  # the serving arm's name, or LEXICAL_VIA
    cosine: float | None  # the prompt's cosine to the chunk's stored vector; None when unknown


def prompt_context(payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> str:
    """Relevant memory for the prompt, wrapped in the context sentinels; "" when there is none."""
    prompt = _text_field(payload, "prompt").strip()
    settings = ctx.settings
    if len(prompt) < settings.min_prompt_chars:
        log.info(
            f"prompt of {len(prompt)} characters is under {settings.min_prompt_chars}; nothing injected"
        )
        return ""
    if not ctx.db.exists():
        log.info(f"no database at {ctx.db}; nothing injected")
        return ""
    # What a running server answers with that arm; without one the lexical read below would inject
    # what the shipped decision said not to.
    if _no_memory_shipped(ctx, log, "nothing injected"):
        return ""
    # The text reads need neither numpy nor the vector catalog.
    reads = _retry_locked(lambda: _open_text_reads(ctx), log, "open")
    with reads:
        return _retry_locked(lambda: _inject(reads, payload, prompt, ctx, log), log, "search")


def _inject(
    reads: TextReads,
    payload: Mapping[str, Any],
    prompt: str,
    ctx: HookContext,
    log: HookLog,
) -> str:
    # the server would refuse a longer prompt, and a lexical read of all of it is slow
    if len(prompt) > MAX_PROMPT_CHARS:
        log.info(f"prompt of {len(prompt)} characters: its first and last parts read")
        prompt = read_part(prompt)
    here = project_dir(payload, ctx.env)
    found = _resolve(reads, here, ctx)
    if not found.projects:
        log.info(f"no sessions recorded for {here}; nothing injected")
        return ""
    scope = Scope.of(found.projects)
    settings = ctx.settings
    # Four times what is shown (within the server's cap): the running session's own chunks (and,
    # resumed, the lines it copied) are dropped below, and on its own topic they can fill the top;
    # so are hits that repeat a text shown or held (`recallbench.same_text`).
    wanted = min(settings.limit * 4, MAX_SEARCH_K)
    hits = _served_hits(prompt, sorted(scope.projects), wanted, ctx, log)
    if hits is None:  # the served arm's hits are settled already (arms.settled); these, here
        lexical = [
            _Hit(chunk_id=s.chunk_id, score=s.score, via=LEXICAL_VIA, cosine=None)
            for s in reads.lexical(prompt, scope, wanted)
        ]
        hits = settle_ranked(lexical, reads, scope)
    cosines = {h.chunk_id: h.cosine for h in hits}
    shown = outside_context(reads.chunks(list(cosines), scope), reads, payload)
    records = shown.first(settings.limit).records
    terms = content_terms(prompt)
    kept = [
        record
        for record in records
        if relevant(cosines.get(record.id), coverage(terms, record.text), settings)
    ]
    log.info(f"{len(hits)} hit(s), {len(records)} not in context, {len(kept)} relevant")
    rows = hit_rows(shown.hits_of(hits), kept)
    return format_context(rows, settings, _text_field(payload, "session_id"))


def _served_hits(
    prompt: str, projects: list[str], k: int, ctx: HookContext, log: HookLog
) -> list[_Hit] | None:
    """The shipped arm's hits as the running server computes them, or None to read lexically."""
    base = config.make_embedder()  # only its id: the model is never loaded here
    sock = socket_path(ctx.home, base.id)
    timeout = ctx.settings.search_timeout_s
    started = time.monotonic()
    request = {"text": prompt, "projects": projects, "k": k, "now": ctx.now.isoformat()}
    reasons: list[str] = []
    answer = search_via_socket(request, timeout, path=sock, embedder_id=base.id, why=reasons.append)
    hits = None if answer is None else _parse_hits(answer.get("hits"), answer.get("arm"))
    if answer is None or hits is None:
        why = reasons[0] if reasons else "its answer was malformed"
        log.info(f"search service at {sock}: {why}; lexical read only")
        return None
    log.info(
        f"answered by the server at {sock}: arm {answer.get('arm')} gave {len(hits)} hit(s) "
        f"in {time.monotonic() - started:.3f}s"
    )
    return hits


def _parse_hits(raw: object, arm: object) -> list[_Hit] | None:
    """The answer's hits ({"chunk_id", "score", "cosine"} each), or None when they are malformed."""
    if not isinstance(raw, list):
        return None
    via = arm.split("(", 1)[0] if isinstance(arm, str) and arm else "server"
    hits: list[_Hit] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("chunk_id"), str):
            return None
        score, cosine = item.get("score"), item.get("cosine")
        if not is_number(score):
            return None
        hits.append(
            _Hit(
                chunk_id=item["chunk_id"],
                score=float(score),
                via=via,
                cosine=float(cosine) if is_number(cosine) else None,
            )
        )
    return hits

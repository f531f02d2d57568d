"""Claude Code hooks: install/uninstall in a settings file, and the handlers `recallbench hook EVENT` runs.

Handlers (stdin: the hook's JSON):
- Stop, SessionEnd, PreCompact: import the session's transcript incrementally (text and FTS rows only;
  vectors are filled by the MCP server or the next `recallbench import`); print nothing.
- SessionStart: a short brief of this project's recent sessions and how to use the `search_memory` tool.
- UserPromptSubmit: the shipped arm's relevant hits for the prompt, scoped to the project, within a
  character budget. The running MCP server computes them on its socket (it holds the model, the vector
  index and the lexical snapshot warm; `prompt_search_handler` is its side); when nothing answers in
  time the lexical read (FTS5) is used alone. This process imports neither torch nor numpy.

A hook must never break the user's session: every handler catches everything, exits 0, prints nothing on
Stop, and logs failures to `$RECALLBENCH_HOME/hooks.log`. Everything printed is wrapped in the context
sentinels of `engine.markers`, so the importer scrubs it from later transcripts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_SERVER
from engine.scope import resolve_project

if TYPE_CHECKING:
    from engine.embed import Embedder
    from engine.memory import Memory
    from engine.reads import ChunkRecord

T = TypeVar("T")

# --- constants ----------------------------------------------------------------------------------

EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact")
IMPORT_EVENTS = frozenset({"Stop", "SessionEnd", "PreCompact"})
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
LOG_NAME = "hooks.log"
_LOG_MAX_BYTES = 1 << 20
# Hooks wait this long for SQLite locks per statement, then retry the whole step a few times.
HOOK_BUSY_TIMEOUT_MS = 2000
_LOCK_RETRIES = 5
_IMPORT_LOCK_WAIT_S = 20.0
_MAX_STDIN_BYTES = 4 << 20
_TERM = re.compile(r"[\w-]+", re.UNICODE)
# Function words carry no evidence that a memory is about the prompt.
_STOPWORD_TEXT = """the and for are but not you all any can had her was one our out has him his how man new now
    old see two way who boy did its let put say she too use that with have this will your from they
    know want been good much some time very when come here just like long make many more only over
    such take than them well were what where which while would there their about into could should
    does doing done why also then these those because please still again"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


# ================================================================================================
# Settings: install / uninstall
# ================================================================================================


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
    import copy

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
        import shutil

        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(render_settings(settings), encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return backup


# ================================================================================================
# Hook runtime
# ================================================================================================


@dataclass(frozen=True, kw_only=True)
class InjectSettings:
    """What UserPromptSubmit injects.

    A hit is relevant when its stored vector's cosine to the prompt is at least `min_cosine`, or when at
    least `min_coverage` of the prompt's content words (3+ characters, not function words) occur in it.
    """

    min_prompt_chars: int = 15
    budget_chars: int = 2000
    limit: int = 5
    min_cosine: float = 0.35
    min_coverage: float = 0.5
    embed_timeout_s: float = 1.0
    min_entry_chars: int = 120

    def __post_init__(self) -> None:
        for name in ("min_prompt_chars", "budget_chars", "limit", "min_entry_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"InjectSettings.{name} must be a positive int, got {value!r}"
                raise ValueError(msg)
        if not -1.0 <= self.min_cosine <= 1.0:
            msg = f"InjectSettings.min_cosine must be in [-1, 1], got {self.min_cosine!r}"
            raise ValueError(msg)
        if not 0.0 <= self.min_coverage <= 1.0:
            msg = f"InjectSettings.min_coverage must be in [0, 1], got {self.min_coverage!r}"
            raise ValueError(msg)
        if self.embed_timeout_s <= 0:
            msg = (
                f"InjectSettings.embed_timeout_s must be > 0 seconds, got {self.embed_timeout_s!r}"
            )
            raise ValueError(msg)
        if self.budget_chars < len(CONTEXT_OPEN) + len(CONTEXT_CLOSE) + self.min_entry_chars:
            msg = (
                f"InjectSettings.budget_chars={self.budget_chars} cannot hold the sentinels and one "
                f"entry of {self.min_entry_chars} characters; raise it"
            )
            raise ValueError(msg)


class HookLog:
    """Appends one line per record to `hooks.log`; never raises (a hook must not fail on its log)."""

    def __init__(self, path: Path, event: str) -> None:
        self.path = path
        self.event = event

    def write(self, level: str, message: str) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size > _LOG_MAX_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
            line = f"{stamp} pid={os.getpid()} {self.event or '-'} {level}: {message}\n"
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
        except Exception as exc:  # the log is best effort: say so on stderr, never raise
            with contextlib.suppress(Exception):
                os.write(2, f"recallbench hook: cannot write {self.path}: {exc}\n".encode())

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
        from recallbench import config

        base = home if home is not None else config.home()
        log = HookLog(base / LOG_NAME, event)
        default_db = config.default_db() if home is None else base / config.default_db().name
        ctx = HookContext(
            db=db if db is not None else default_db,
            home=base,
            env=os.environ if env is None else env,
            now=now if now is not None else datetime.now(UTC),
            settings=settings if settings is not None else InjectSettings(),
        )
        if event not in EVENTS:
            log.error(f"unknown hook event {event!r}; expected one of {', '.join(EVENTS)}")
            return ""
        payload = parse_payload(stdin)
        named = payload.get("hook_event_name")
        if isinstance(named, str) and named and named != event:
            log.info(f"stdin names event {named!r}; handling it as {event!r} as the command says")
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
        import traceback

        log.error(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return ""


def parse_payload(stdin: bytes) -> dict[str, Any]:
    """The hook's stdin JSON object.

    Raises:
        ValueError: the input is not a JSON object.
    """
    data = stdin[:_MAX_STDIN_BYTES].decode("utf-8", errors="replace")
    if not data.strip():
        msg = "hook stdin was empty; expected Claude Code's JSON object"
        raise ValueError(msg)
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        msg = f"hook stdin is not JSON ({exc.msg} at line {exc.lineno}): {data[:200]!r}"
        raise ValueError(msg) from exc
    if not isinstance(obj, dict):
        msg = f"hook stdin must be a JSON object, got {type(obj).__name__}"
        raise ValueError(msg)
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


def _is_locked(text: str) -> bool:
    """Whether an SQLite error message is about a lock (what a retry can fix)."""
    lowered = text.lower()
    return "locked" in lowered or "busy" in lowered


def _retry_locked(step: Callable[[], T], log: HookLog, what: str) -> T:
    """Run `step`, retrying with backoff while SQLite reports a lock, so the user never sees one."""
    attempt = 0
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            attempt += 1
            if not _is_locked(str(exc)) or attempt >= _LOCK_RETRIES:
                raise
            log.info(f"{what}: database busy ({exc}); retry {attempt}")
            time.sleep(0.05 * 2**attempt)


def _open_conn(ctx: HookContext) -> sqlite3.Connection:
    from engine import store

    return store.connect(ctx.db, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)


def _open_memory(ctx: HookContext, embedder: Embedder | None = None) -> Memory:
    from engine.memory import Memory

    return Memory(ctx.db, embedder, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS)


# --- Stop / SessionEnd / PreCompact -------------------------------------------------------------


@contextlib.contextmanager
def _import_lock(home: Path, wait_s: float) -> Iterator[bool]:
    """Serialise hook imports across processes; yields False when the lock was not had in time.

    Two imports of the same growing file at once would each store the same new lines; one at a time
    keeps the offset bookkeeping simple and costs nothing (an incremental import takes milliseconds).
    """
    import fcntl

    home.mkdir(parents=True, exist_ok=True)
    with (home / "import.lock").open("a+b") as fh:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.02)
        try:
            yield True
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def transcript_paths(payload: Mapping[str, Any]) -> list[Path]:
    """The session's transcript and, when present, its subagent folder `<session-id>/`."""
    raw = _text_field(payload, "transcript_path")
    if not raw:
        msg = "hook stdin has no transcript_path; nothing to import"
        raise ValueError(msg)
    path = Path(raw).expanduser()
    if not path.is_file():
        msg = f"transcript {path} does not exist (yet); nothing to import"
        raise FileNotFoundError(msg)
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
            locked_files = {p: why for p, why in report.files_failed.items() if _is_locked(why)}
            for path, why in report.files_failed.items():
                if path not in locked_files:
                    log.error(f"import of {path} failed: {why}")
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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: max(size - 1, 0)].rstrip() + "…"


def _stamp(iso: object) -> str:
    if not isinstance(iso, str) or not iso:
        return "unknown time"
    return iso.replace("T", " ")[:16]


def session_brief(payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> str:
    """The SessionStart brief: this project's recent sessions and how to search them."""
    if not ctx.db.exists():
        log.info(f"no database at {ctx.db}; nothing to brief")
        return ""
    memory = _retry_locked(lambda: _open_memory(ctx), log, "open")
    try:
        return _retry_locked(lambda: _brief(memory, payload, ctx, log), log, "brief")
    finally:
        memory.close()


def _brief(memory: Memory, payload: Mapping[str, Any], ctx: HookContext, log: HookLog) -> str:
    from engine.chunking import chunk_id
    from engine.scope import Scope

    here = project_dir(payload, ctx.env)
    project = resolve_project(memory.projects(), here)
    if project is None:
        log.info(f"no sessions recorded for {here}; no brief")
        return ""
    scope = Scope.of(project)
    current = _text_field(payload, "session_id")
    sessions = [s for s in memory.recent_sessions(scope, 6) if s["session_id"] != current][:5]
    if not sessions:
        log.info(f"no earlier sessions in {project}; no brief")
        return ""
    # A main stream's chunk 0 opens the session, usually with the user's first prompt.
    first = memory.chunks([chunk_id(str(s["session_id"]), 0) for s in sessions], scope)
    openings = {r.session_id: r.text for r in first}
    lines = [f"recallbench remembers earlier Claude Code sessions in {project}. Most recent:"]
    for s in sessions:
        sid = str(s["session_id"])
        opening = _clip(_one_line(openings.get(sid, "")), 110)
        lines.append(
            f'- {_stamp(s["started"])} · session {sid[:8]} · {s["chunks"]} chunks · "{opening}"'
        )
    lines.append(
        f"To recall earlier decisions, errors, commands or fixes, call the `search_memory` tool of the "
        f"`{OWN_SERVER}` MCP server with a short description of what you need; `get_memory` shows a "
        "whole chunk with its neighbours."
    )
    return _wrap(_clip("\n".join(lines), ctx.settings.budget_chars - _WRAP_CHARS))


_WRAP_CHARS = len(CONTEXT_OPEN) + len(CONTEXT_CLOSE) + 2  # two newlines


def _wrap(body: str) -> str:
    return f"{CONTEXT_OPEN}\n{body}\n{CONTEXT_CLOSE}" if body else ""


# --- UserPromptSubmit ---------------------------------------------------------------------------


def content_terms(text: str) -> set[str]:
    """Lower-cased words of 3+ characters that are not function words."""
    return {t for t in _TERM.findall(text.lower()) if len(t) >= 3 and t not in _STOPWORDS}


def coverage(prompt_terms: set[str], text: str) -> float:
    """The fraction of the prompt's content words that occur in `text`."""
    if not prompt_terms:
        return 0.0
    return len(prompt_terms & content_terms(text)) / len(prompt_terms)


@dataclass(frozen=True, kw_only=True)
class _Hit:
    chunk_id: str
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
    # A bare connection: the text reads need neither numpy nor the vector catalog.
    conn = _retry_locked(lambda: _open_conn(ctx), log, "open")
    try:
        return _retry_locked(lambda: _inject(conn, payload, prompt, ctx, log), log, "search")
    finally:
        conn.close()


def _inject(
    conn: sqlite3.Connection,
    payload: Mapping[str, Any],
    prompt: str,
    ctx: HookContext,
    log: HookLog,
) -> str:
    from engine import reads
    from engine.scope import Scope

    here = project_dir(payload, ctx.env)
    project = resolve_project(reads.projects(conn), here)
    if project is None:
        log.info(f"no sessions recorded for {here}; nothing injected")
        return ""
    scope = Scope.of(project)
    settings = ctx.settings
    # One more than needed, since hits from the running session itself are dropped below.
    wanted = settings.limit + 1
    hits = _served_hits(prompt, project, wanted, ctx, log)
    if hits is None:
        hits = [
            _Hit(chunk_id=s.chunk_id, cosine=None)
            for s in reads.lexical(conn, prompt, scope, wanted)
        ]
    cosines = {h.chunk_id: h.cosine for h in hits}
    current = _text_field(payload, "session_id")
    records = [r for r in reads.chunks(conn, list(cosines), scope) if r.session_id != current]
    records = records[: settings.limit]
    terms = content_terms(prompt)
    kept: list[ChunkRecord] = []
    for record in records:
        cosine = cosines.get(record.id)
        if (cosine is not None and cosine >= settings.min_cosine) or (
            coverage(terms, record.text) >= settings.min_coverage
        ):
            kept.append(record)
    log.info(f"{len(hits)} hit(s), {len(records)} from other sessions, {len(kept)} relevant")
    return format_context(kept, settings)


def _served_hits(
    prompt: str, project: str, k: int, ctx: HookContext, log: HookLog
) -> list[_Hit] | None:
    """The shipped arm's hits as the running server computes them, or None to read lexically."""
    from recallbench import config
    from recallbench.embed_service import search_via_socket, socket_path

    base = config.make_embedder()  # only its id: the model is never loaded here
    sock = socket_path(ctx.home, base.id)
    timeout = ctx.settings.embed_timeout_s
    started = time.monotonic()
    request = {"text": prompt, "projects": [project], "k": k, "now": ctx.now.isoformat()}
    answer = search_via_socket(request, timeout, path=sock, embedder_id=base.id)
    hits = None if answer is None else _parse_hits(answer.get("hits"))
    if answer is None or hits is None:
        log.info(f"search service at {sock} did not answer within {timeout}s; lexical read only")
        return None
    log.info(
        f"answered by the server at {sock}: arm {answer.get('arm')} gave {len(hits)} hit(s) "
        f"in {time.monotonic() - started:.3f}s"
    )
    return hits


def _parse_hits(raw: object) -> list[_Hit] | None:
    if not isinstance(raw, list):
        return None
    hits: list[_Hit] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("chunk_id"), str):
            return None
        cosine = item.get("cosine")
        hits.append(
            _Hit(
                chunk_id=item["chunk_id"],
                cosine=float(cosine) if isinstance(cosine, int | float) else None,
            )
        )
    return hits


# --- the server side of the prompt search -------------------------------------------------------

_MAX_SEARCH_K = 50
_MAX_PROMPT_CHARS = 20_000


def prompt_search_handler(
    memory: Memory, arm_spec: str
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """What `recallbench serve` answers a prompt hook's search request with.

    Request: {"text": prompt, "projects": [project, ...], "k": int, "now": ISO-8601}. Answer:
    {"arm": canonical spec, "hits": [{"chunk_id", "score", "cosine"}, ...]} where cosine is the prompt's
    cosine to the chunk's stored vector (None without one), for the hook's relevance threshold. The arm
    runs in the server, over its loaded model, vector catalog and lexical snapshot.

    Raises (from the returned handler):
        ValueError: a malformed request.
    """
    from arms.base import Query
    from arms.registry import build, full_canonical
    from engine.scope import Scope

    arm = build(arm_spec, memory)
    canonical = full_canonical(arm_spec)

    def handle(request: Mapping[str, Any]) -> dict[str, Any]:
        text, projects, k, now = _search_request(request)
        query = Query(text=text, scope=Scope.of(*projects), now=now, k=k)
        found = arm.search(query)
        vector = memory.embed_query(text)  # cached: the arm has just embedded the same text
        hits = []
        for hit in found:
            stored = memory.vector(hit.chunk_id)
            cosine = None if stored is None else float(stored @ vector)
            hits.append({"chunk_id": hit.chunk_id, "score": float(hit.score), "cosine": cosine})
        return {"arm": canonical, "hits": hits}

    return handle


def _search_request(request: Mapping[str, Any]) -> tuple[str, list[str], int, datetime]:
    text, projects, k, now = (request.get(key) for key in ("text", "projects", "k", "now"))
    if not isinstance(text, str) or not 0 < len(text) <= _MAX_PROMPT_CHARS:
        msg = f"text must be a non-empty str of at most {_MAX_PROMPT_CHARS} characters"
        raise ValueError(msg)
    if (
        not isinstance(projects, list)
        or not projects
        or not all(isinstance(p, str) and p for p in projects)
    ):
        msg = "projects must be a non-empty list of project paths"
        raise ValueError(msg)
    if isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= _MAX_SEARCH_K:
        msg = f"k must be an int in 1..{_MAX_SEARCH_K}"
        raise ValueError(msg)
    if not isinstance(now, str):
        msg = "now must be an ISO-8601 timestamp"
        raise ValueError(msg)
    when = datetime.fromisoformat(now)
    if when.tzinfo is None:
        msg = "now must carry a UTC offset"
        raise ValueError(msg)
    return text, [str(p) for p in projects], k, when


def format_context(records: Sequence[ChunkRecord], settings: InjectSettings) -> str:
    """Hits as numbered entries under a header, wrapped in the sentinels, within `budget_chars`."""
    if not records:
        return ""
    header = (
        "Possibly relevant memory from earlier sessions in this project "
        "(recallbench; the `search_memory` tool finds more):"
    )
    room = settings.budget_chars - _WRAP_CHARS
    body = header
    entries = 0
    for n, record in enumerate(records, start=1):
        label = f"\n[{n}] {_stamp(record.ts_start)} · session {record.session_id[:8]} · {record.author.label}\n"
        space = room - len(body) - len(label)
        if space < settings.min_entry_chars:
            break
        body += label + _clip(_one_line(record.text), space)
        entries += 1
    return _wrap(body) if entries else ""

"""Find and parse Claude Code JSONL transcripts (2.x and 1.0.x formats) into `Message` records.

Claude Code's documentation calls the format internal and version-dependent, so parsing is lenient: a line
that cannot be used is counted per reason in `ParseResult.skipped` and skipped, never fatal.

Incremental use, per transcript file (one `StreamState` per file, persisted between imports):

    state = StreamState.from_json(saved) if saved else StreamState()
    result = parse_file(tf.path, start=saved_offset, state=state, session_id=tf.session_id)
    clean = sanitize(result.messages, state, counts)       # engine.sanitize; updates `state` too
    ... store `clean`, then persist `result.end_offset` and `state.to_json()` together ...

Persist the state only after `sanitize` ran on the same messages: parsing records raw tool inputs in
`state.tool_commands`, and `sanitize` rewrites them scrubbed and redacted.

Merging across calls: assistant lines sharing `message.id` are one API message. When the first message
of a call carries more lines of the API message the previous call ended on, `ParseResult.continues_previous`
is True; that message's `uuid` is the uuid of its first line *in this call* and its `api_message_id` is the
shared id. The caller appends its blocks and `line_uuids` to the stored message with that
`api_message_id` (or, having stored none because the earlier part was empty, stores it as a new message).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from engine.model import Author, Block, Message, TextBlock, ToolResult, ToolUse

# Bump when the messages or rendered text produced from the same bytes change; corpus manifests record it.
PARSER_VERSION = "1"

TOOL_RESULT_CAP = 4000  # the reference engine's cap on a tool result body
MARKER_ARG_CAP = 120  # first characters of a command, pattern or query shown in a tool marker
# Text past a cap is cut before a transform runs, keeping this margin so that a secret straddling the cap
# is still seen whole by the redaction (a PEM block longer than the margin counts as unclosed: redacted
# to the end). It bounds the work on huge tool outputs.
TRANSFORM_MARGIN = 2000

# Line types that carry no conversation text; counted under their own name.
SKIPPED_TYPES = frozenset(
    {"summary", "file-history-snapshot", "progress", "queue-operation", "ai-title", "system"}
)

# Tool calls whose input names a file that the call changes (the store counts edits per file).
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

# Tools whose marker shows a file path shortened to its last two parts.
_PATH_TOOLS = frozenset(
    {"Edit", "Write", "MultiEdit", "Read", "NotebookEdit", "NotebookRead", "LS"}
)
# Tools whose marker shows one named input field.
_FIELD_TOOLS = {
    "Bash": "command",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebSearch": "query",
    "WebFetch": "url",
    "Task": "description",
    "Agent": "description",
}

# Command wrappers (slash commands, local command output) are not typed prose.
_COMMAND_WRAPPER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
)

_SUBAGENTS_DIR = "subagents"
_TOOL_RESULTS_DIR = "tool-results"
_AGENT_PREFIX = "agent-"

_T = TypeVar("_T")


# ---------------------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------------------


class TranscriptError(ValueError):
    """A transcript path or stream state could not be used."""


@dataclass(frozen=True, kw_only=True)
class TranscriptFile:
    """One transcript file and the stream it feeds.

    `session_id` comes from the file name (`<sid>.jsonl`), or for a subagent file from its
    `<sid>/subagents/` folder or, failing that, from its lines' `sessionId`.
    """

    path: Path
    session_id: str
    agent_id: str | None  # None for a main session file
    stream: str  # session_id for main files; f"{session_id}/agent-{agent_id}" for subagent files

    def __post_init__(self) -> None:
        if not self.session_id:
            msg = f"TranscriptFile needs a non-empty session_id, got {self.session_id!r} for {self.path}"
            raise TranscriptError(msg)
        expected = stream_key(self.session_id, self.agent_id)
        if self.stream != expected:
            msg = (
                f"TranscriptFile.stream must be {expected!r} for session {self.session_id!r} and agent "
                f"{self.agent_id!r}, got {self.stream!r}; build it with stream_key()"
            )
            raise TranscriptError(msg)


def stream_key(session_id: str, agent_id: str | None) -> str:
    """The stream name: the session id, or `<session id>/agent-<agentId>` for a subagent transcript."""
    return session_id if agent_id is None else f"{session_id}/{_AGENT_PREFIX}{agent_id}"


def discover(paths: Sequence[Path]) -> tuple[list[TranscriptFile], Counter[str]]:
    """Find transcript files under `paths` (files or folders searched recursively).

    Understands `~/.claude/projects/<encoded>/<sid>.jsonl`, `<sid>/subagents/agent-*.jsonl` (2.x),
    `agent-*.jsonl` beside the session files (older), and flat folders of `<sid>.jsonl`. Files under a
    `tool-results/` folder and files not ending in `.jsonl` are skipped and counted per reason
    (`tool_results`, `not_jsonl`); a subagent file whose parent session cannot be read is counted as
    `agent_without_session`; a file reached twice is counted as `duplicate`.

    Returns:
        The files, main files first each followed by its subagents, groups ordered by the main file's path
        (or the first agent's path when the main file was not found), then the skip counts.

    Raises:
        TranscriptError: a path given does not exist.
    """
    skipped: Counter[str] = Counter()
    seen: set[Path] = set()
    found: list[TranscriptFile] = []
    for root in paths:
        for candidate in _candidates(Path(root), skipped):
            resolved = candidate.resolve()
            if resolved in seen:
                skipped["duplicate"] += 1
                continue
            seen.add(resolved)
            tf = _classify(candidate)
            if tf is None:
                skipped["agent_without_session"] += 1
                continue
            found.append(tf)
    return _ordered(found), skipped


# ---------------------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class StreamState:
    """What one transcript file's stream carries between incremental imports; JSON-serialisable.

    `parse_file` updates `tool_names`, `tool_commands`, `last_api_message_id` and `cwd`; `sanitize`
    updates `next_ordinal`, `suppressed_tool_ids`, `self_transcript` and rewrites `tool_commands`
    scrubbed. A caller may set `self_transcript = True` before sanitizing a subagent stream whose parent
    session was flagged, since a subagent's first prompt is written by the parent, not by our marker.
    """

    next_ordinal: int = 0
    tool_names: dict[str, str] = field(default_factory=dict)  # tool_use id -> tool name
    tool_commands: dict[str, str] = field(default_factory=dict)  # tool_use id -> compact input
    suppressed_tool_ids: set[str] = field(default_factory=set)  # ids of our own MCP tool_use blocks
    last_api_message_id: str | None = None
    self_transcript: bool | None = None  # decided at the first real user message
    cwd: str | None = None

    def to_json(self) -> str:
        """Serialise with sorted keys and sorted ids so equal states give equal strings."""
        data = {
            "next_ordinal": self.next_ordinal,
            "tool_names": self.tool_names,
            "tool_commands": self.tool_commands,
            "suppressed_tool_ids": sorted(self.suppressed_tool_ids),
            "last_api_message_id": self.last_api_message_id,
            "self_transcript": self.self_transcript,
            "cwd": self.cwd,
        }
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, s: str) -> StreamState:
        """Rebuild a state written by `to_json`.

        Raises:
            TranscriptError: the text is not a state object of the expected shape.
        """
        try:
            data = json.loads(s)
        except json.JSONDecodeError as exc:
            msg = f"StreamState.from_json expected JSON written by to_json, got {s[:80]!r}: {exc}"
            raise TranscriptError(msg) from exc
        if not isinstance(data, dict):
            msg = f"StreamState.from_json expected a JSON object, got {type(data).__name__}"
            raise TranscriptError(msg)
        return cls(
            next_ordinal=_typed(data, "next_ordinal", int, 0),
            tool_names=_str_dict(data, "tool_names"),
            tool_commands=_str_dict(data, "tool_commands"),
            suppressed_tool_ids=set(_str_list(data, "suppressed_tool_ids")),
            last_api_message_id=_optional(data, "last_api_message_id", str),
            self_transcript=_optional(data, "self_transcript", bool),
            cwd=_optional(data, "cwd", str),
        )


@dataclass(kw_only=True)
class ParseResult:
    """Messages parsed from one call, with what was skipped and where to resume."""

    messages: list[Message]  # merged assistant API messages, in file order of their first line
    skipped: Counter[str]  # per reason; see `parse_bytes`
    end_offset: int  # byte offset just after the last consumed line
    session_id: str | None  # the first `sessionId` read from the lines of this call
    cwd: str | None  # the stream's project: the first `cwd` its lines carry (state.cwd)
    continues_previous: bool = False  # messages[0] continues the API message the last call ended on
    state: StreamState = field(
        default_factory=StreamState
    )  # the state passed in (or a new one), updated


def parse_file(
    path: Path,
    start: int = 0,
    state: StreamState | None = None,
    *,
    session_id: str | None = None,
) -> ParseResult:
    """Parse a transcript file from byte offset `start`; see `parse_bytes` for the rules.

    `session_id` (normally `TranscriptFile.session_id`) is written on every message; without it each
    message takes its line's `sessionId`, or the file name's stem when the line has none.

    Raises:
        TranscriptError: `start` is negative.
    """
    if start < 0:
        msg = f"parse_file start offset must be >= 0, got {start} for {path}"
        raise TranscriptError(msg)
    with Path(path).open("rb") as fh:
        size = fh.seek(0, 2)
        if start > size:
            # The file shrank below the saved offset (rewritten or replaced): nothing here can be
            # resumed; the caller re-imports from 0 when it sees this reason.
            st = state if state is not None else StreamState()
            skipped: Counter[str] = Counter({"offset_past_end": 1})
            return ParseResult(
                messages=[],
                skipped=skipped,
                end_offset=start,
                session_id=None,
                cwd=st.cwd,
                state=st,
            )
        fh.seek(start)
        data = fh.read()
    return parse_bytes(
        data,
        state=state,
        base_offset=start,
        session_id=session_id,
        default_session_id=Path(path).stem,
    )


def parse_bytes(
    data: bytes,
    *,
    state: StreamState | None = None,
    base_offset: int = 0,
    session_id: str | None = None,
    default_session_id: str = "",
) -> ParseResult:
    """Parse JSONL bytes that start at `base_offset` of a transcript file.

    Complete lines (ending in a newline) are consumed; a last line without one is consumed only when it is
    valid JSON, otherwise left for the next call and counted `truncated_tail`. Skip reasons counted in
    `skipped`: the line types `summary`, `file-history-snapshot`, `progress`, `queue-operation`,
    `ai-title`, `system`; `is_meta`, `compact_summary`, `transcript_only` user lines; `malformed_json`,
    `not_object`, `no_envelope`, `unknown_type`; blocks left out: `thinking_block`,
    `redacted_thinking_block`, `image_block`, `document_block`, `unknown_block`; `empty_message` for a
    message with no block left. `invalid_utf8` counts lines decoded with replacement characters and kept.
    """
    st = state if state is not None else StreamState()
    parser = _Parser(st, session_id=session_id, default_session_id=default_session_id)
    consumed = 0
    for line, end, complete in _lines(data):
        if not line.strip():
            if complete:
                consumed = end
            continue
        text, bad_utf8 = _decode(line)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            if complete:
                parser.skipped["malformed_json"] += 1
                consumed = end
            else:
                parser.skipped["truncated_tail"] += 1
            continue
        if bad_utf8:
            parser.skipped["invalid_utf8"] += 1
        consumed = end
        parser.feed(obj)
    messages, continues = parser.finish()
    return ParseResult(
        messages=messages,
        skipped=parser.skipped,
        end_offset=base_offset + consumed,
        session_id=parser.first_session_id,
        cwd=st.cwd,
        continues_previous=continues,
        state=st,
    )


# ---------------------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------------------


def render_message(msg: Message, state: StreamState) -> tuple[str, Author]:
    """The message as text (unsanitized) and its author.

    Text blocks verbatim; a marker per tool call (`[Bash: git status]`, `[Edit: src/store.py]`,
    `[Tool: name]` for tools without a known argument); each tool result as a header naming the paired
    tool (`[Bash result: git status]`, `[Bash error: …]`, `[tool result]` when unpaired) above its body
    capped at `TOOL_RESULT_CAP` characters. Pieces are joined with newlines; thinking is never present.
    """
    pieces = [render_block(block, state) for block in msg.blocks]
    return "\n".join(p for p in pieces if p.strip()), message_author(msg)


def render_block(
    block: Block,
    state: StreamState,
    transform: Callable[[str], str] | None = None,
    cap: int = TOOL_RESULT_CAP,
) -> str:
    """One block as text; `transform` is applied to raw text before any truncation (the sanitizer's hook)."""
    tf = transform if transform is not None else _identity
    if isinstance(block, TextBlock):
        return tf(block.text)
    if isinstance(block, ToolUse):
        return tool_marker(block.name, marker_arg(block, tf))
    header = tf(result_header(block, state))
    body = cap_body(tf(block.content[: cap + TRANSFORM_MARGIN]), cap)
    return f"{header}\n{body}" if body.strip() else header


def message_author(msg: Message) -> Author:
    """Assistant -> ASSISTANT; user text -> USER; a user message of tool results only -> TOOL_RESULT.

    A subagent's prompt (a user line with `isSidechain`) was written by the parent assistant, not by a
    person (TRANSCRIPTS.md: a real human prompt is never a sidechain line), so it counts as ASSISTANT.
    """
    if msg.kind == "assistant":
        return Author.ASSISTANT
    has_text = any(isinstance(b, TextBlock) and b.text.strip() for b in msg.blocks)
    if not has_text:
        return Author.TOOL_RESULT
    return Author.ASSISTANT if msg.is_sidechain else Author.USER


def tool_arg(name: str, tool_input: dict[str, Any]) -> str | None:
    """The raw argument a tool marker shows (full command, last two path parts, pattern, query), or None."""
    if name in _PATH_TOOLS:
        for key in ("file_path", "notebook_path", "path"):
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return short_path(value)
        return None
    field_name = _FIELD_TOOLS.get(name)
    if field_name is None:
        return None
    value = tool_input.get(field_name)
    return value if isinstance(value, str) and value.strip() else None


def marker_arg(block: ToolUse, transform: Callable[[str], str] | None = None) -> str | None:
    """The compact argument of a tool marker, `transform` applied to the raw text before the cut."""
    arg = tool_arg(block.name, block.input)
    if arg is None:
        return None
    raw = arg[: MARKER_ARG_CAP + TRANSFORM_MARGIN]
    return compact(transform(raw) if transform is not None else raw)


def tool_marker(name: str, arg: str | None) -> str:
    """`[Name: arg]` for tools with a known argument, `[Tool: name]` for the others."""
    if arg is not None:
        return f"[{name}: {arg}]"
    if name in _PATH_TOOLS or name in _FIELD_TOOLS:
        return f"[{name}]"
    return f"[Tool: {name}]"


def result_header(block: ToolResult, state: StreamState) -> str:
    """`[Bash result: git status]`, `[Read error: a/b.py]`, or `[tool result]` when the call is unknown."""
    name = state.tool_names.get(block.tool_use_id)
    word = "error" if block.is_error else "result"
    if name is None:
        return f"[tool {word}]"
    arg = state.tool_commands.get(block.tool_use_id)
    return f"[{name} {word}: {arg}]" if arg else f"[{name} {word}]"


def compact(text: str, cap: int = MARKER_ARG_CAP) -> str:
    """Whitespace collapsed to single spaces and cut to `cap` characters at a word boundary (then `…`).

    Cutting between words keeps a half-printed token (possibly half a secret) out of the marker.
    """
    flat = " ".join(text.split())
    if len(flat) <= cap:
        return flat
    cut = flat[:cap]
    if flat[cap] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


def short_path(path: str) -> str:
    """The last two parts of a file path (`/repo/src/store.py` -> `src/store.py`)."""
    parts = [p for p in re.split(r"[\\/]+", path.strip()) if p]
    return "/".join(parts[-2:]) if parts else path.strip()


def cap_body(text: str, cap: int = TOOL_RESULT_CAP) -> str:
    """A tool result body cut to `cap` characters, with ` […]` marking the cut."""
    return text if len(text) <= cap else text[:cap] + " […]"


def is_command_wrapper(text: str) -> bool:
    """True for slash-command and local-command wrapper text, which is not typed prose."""
    return text.lstrip().startswith(_COMMAND_WRAPPER_PREFIXES)


def file_edits(messages: Sequence[Message], state: StreamState) -> list[str]:
    """Paths from Edit/Write/MultiEdit/NotebookEdit calls, in order, repeats kept (the store counts them).

    Calls remembered in `state.suppressed_tool_ids` (this project's own tools) are not edits of the user's.
    """
    paths: list[str] = []
    for msg in messages:
        for block in msg.blocks:
            if not isinstance(block, ToolUse) or block.name not in EDIT_TOOLS:
                continue
            if block.id in state.suppressed_tool_ids:
                continue
            for key in ("file_path", "notebook_path"):
                value = block.input.get(key)
                if isinstance(value, str) and value:
                    paths.append(value)
                    break
    return paths


# ---------------------------------------------------------------------------------------------------------
# Helpers: discovery
# ---------------------------------------------------------------------------------------------------------


def _candidates(root: Path, skipped: Counter[str]) -> Iterator[Path]:
    """Every .jsonl file under `root` outside tool-results folders; other files are counted."""
    if not root.exists():
        msg = (
            f"transcript path {root} does not exist; pass a .jsonl file or a folder of transcripts"
        )
        raise TranscriptError(msg)
    if root.is_file():
        if _TOOL_RESULTS_DIR in root.parts[:-1]:
            skipped["tool_results"] += 1
        elif root.suffix != ".jsonl":
            skipped["not_jsonl"] += 1
        else:
            yield root
        return
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        if _TOOL_RESULTS_DIR in p.relative_to(root).parts[:-1]:
            skipped["tool_results"] += 1
        elif p.suffix != ".jsonl":
            skipped["not_jsonl"] += 1
        else:
            yield p


def _classify(path: Path) -> TranscriptFile | None:
    """A main or subagent TranscriptFile; None when an agent file's parent session cannot be found."""
    in_subagents = path.parent.name == _SUBAGENTS_DIR
    is_agent = in_subagents or path.stem.startswith(_AGENT_PREFIX)
    if not is_agent:
        return TranscriptFile(path=path, session_id=path.stem, agent_id=None, stream=path.stem)
    agent_id = path.stem.removeprefix(_AGENT_PREFIX)
    parent_dir = path.parent.parent.name if in_subagents else ""
    session_id = parent_dir or _first_session_id(path)
    if not session_id:
        return None
    return TranscriptFile(
        path=path,
        session_id=session_id,
        agent_id=agent_id,
        stream=stream_key(session_id, agent_id),
    )


def _first_session_id(path: Path, max_lines: int = 1000) -> str | None:
    """The `sessionId` of the first parseable line that has one (older agent files beside sessions)."""
    try:
        with path.open("rb") as fh:
            for n, raw in enumerate(fh):
                if n >= max_lines:
                    break
                try:
                    obj = json.loads(raw.decode("utf-8", errors="replace"))
                except json.JSONDecodeError:
                    continue
                sid = obj.get("sessionId") if isinstance(obj, dict) else None
                if isinstance(sid, str) and sid:
                    return sid
    except OSError:
        return None
    return None


def _ordered(files: list[TranscriptFile]) -> list[TranscriptFile]:
    """Main files by path, each followed by its agents by path; orphan agents grouped by session."""
    mains: dict[str, Path] = {}
    for tf in sorted(files, key=lambda t: str(t.path)):
        if tf.agent_id is None:
            mains.setdefault(tf.session_id, tf.path)
    first_agent: dict[str, Path] = {}
    for tf in sorted(files, key=lambda t: str(t.path)):
        if tf.agent_id is not None:
            first_agent.setdefault(tf.session_id, tf.path)

    def key(tf: TranscriptFile) -> tuple[str, int, str]:
        if tf.agent_id is None:
            return (str(tf.path), 0, str(tf.path))
        group = mains.get(tf.session_id, first_agent[tf.session_id])
        return (str(group), 1, str(tf.path))

    return sorted(files, key=key)


# ---------------------------------------------------------------------------------------------------------
# Helpers: lines and blocks
# ---------------------------------------------------------------------------------------------------------


def _lines(data: bytes) -> Iterator[tuple[bytes, int, bool]]:
    """(line without newline, offset just after it, whether it ended in a newline)."""
    pos = 0
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl == -1:
            yield data[pos:], n, False
            return
        yield data[pos:nl], nl + 1, True
        pos = nl + 1


def _decode(line: bytes) -> tuple[str, bool]:
    """UTF-8 text of a line, and whether replacement characters had to be used."""
    try:
        return line.decode("utf-8"), False
    except UnicodeDecodeError:
        return line.decode("utf-8", errors="replace"), True


def _identity(text: str) -> str:
    return text


class _Parser:
    """Turns decoded line objects into merged Messages for one call of `parse_bytes`."""

    def __init__(
        self, state: StreamState, *, session_id: str | None, default_session_id: str
    ) -> None:
        self.state = state
        self.session_id = session_id
        self.default_session_id = default_session_id
        self.skipped: Counter[str] = Counter()
        self.messages: list[Message] = []
        self.open: dict[str, Message] = {}  # api message id -> the message its lines merge into
        self.carry = state.last_api_message_id  # the API message the previous call ended on
        self.continuation: Message | None = None
        self.first_session_id: str | None = None

    def feed(self, obj: object) -> None:
        if not isinstance(obj, dict):
            self.skipped["not_object"] += 1
            return
        kind = obj.get("type")
        if isinstance(kind, str) and kind in SKIPPED_TYPES:
            self.skipped[kind] += 1
            return
        if kind not in ("user", "assistant"):
            self.skipped["unknown_type"] += 1
            return
        uuid = obj.get("uuid")
        message = obj.get("message")
        if not isinstance(uuid, str) or not uuid or not isinstance(message, dict):
            self.skipped["no_envelope"] += 1
            return
        for flag, reason in (
            ("isMeta", "is_meta"),
            ("isCompactSummary", "compact_summary"),
            ("isVisibleInTranscriptOnly", "transcript_only"),
        ):
            if obj.get(flag) is True:
                self.skipped[reason] += 1
                return
        self._envelope(obj)
        blocks = self._blocks(message.get("content"))
        if kind == "assistant":
            self._assistant(obj, uuid, message, blocks)
        else:
            self.messages.append(self._message(obj, uuid, "user", blocks, None))

    def finish(self) -> tuple[list[Message], bool]:
        if self.messages:
            last = self.messages[-1]
            self.state.last_api_message_id = (
                last.api_message_id if last.kind == "assistant" else None
            )
        kept: list[Message] = []
        for msg in self.messages:
            if msg.blocks:
                kept.append(msg)
            else:
                self.skipped["empty_message"] += 1
        continues = self.continuation is not None and bool(kept) and kept[0] is self.continuation
        return kept, continues

    def _envelope(self, obj: dict[str, Any]) -> None:
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd and self.state.cwd is None:
            # The first cwd is where the session started: the project, even if the shell later cd's.
            self.state.cwd = cwd
        sid = obj.get("sessionId")
        if self.first_session_id is None and isinstance(sid, str) and sid:
            self.first_session_id = sid

    def _assistant(
        self, obj: dict[str, Any], uuid: str, message: dict[str, Any], blocks: list[Block]
    ) -> None:
        raw_id = message.get("id")
        api_id = raw_id if isinstance(raw_id, str) and raw_id else None
        if api_id is not None:
            target = self.open.get(api_id)
            if target is not None:
                parent = obj.get("parentUuid")
                consecutive = bool(self.messages) and self.messages[-1] is target
                if consecutive or (isinstance(parent, str) and parent in target.line_uuids):
                    target.blocks.extend(blocks)
                    target.line_uuids.append(uuid)
                    return
        msg = self._message(obj, uuid, "assistant", blocks, api_id)
        if api_id is not None:
            if not self.messages and api_id == self.carry:
                self.continuation = msg
            self.open[api_id] = msg
        self.messages.append(msg)

    def _message(
        self,
        obj: dict[str, Any],
        uuid: str,
        kind: str,
        blocks: list[Block],
        api_id: str | None,
    ) -> Message:
        sid = self.session_id
        if sid is None:
            line_sid = obj.get("sessionId")
            sid = line_sid if isinstance(line_sid, str) and line_sid else self.default_session_id
        parent = obj.get("parentUuid")
        ts = obj.get("timestamp")
        cwd = obj.get("cwd")
        agent = obj.get("agentId")
        return Message(
            uuid=uuid,
            session_id=sid,
            parent_uuid=parent if isinstance(parent, str) else None,
            kind=kind,
            blocks=blocks,
            timestamp=ts if isinstance(ts, str) else None,
            cwd=cwd if isinstance(cwd, str) and cwd else None,
            is_sidechain=obj.get("isSidechain") is True,
            agent_id=agent if isinstance(agent, str) and agent else None,
            api_message_id=api_id,
            line_uuids=[uuid],
        )

    def _blocks(self, content: object) -> list[Block]:
        if isinstance(content, str):
            return [TextBlock(text=content)] if content.strip() else []
        if not isinstance(content, list):
            self.skipped["unknown_block"] += 1
            return []
        blocks: list[Block] = []
        for raw in content:
            block = self._block(raw)
            if block is not None:
                blocks.append(block)
        return blocks

    def _block(self, raw: object) -> Block | None:
        if isinstance(raw, str):
            return TextBlock(text=raw) if raw.strip() else None
        if not isinstance(raw, dict):
            self.skipped["unknown_block"] += 1
            return None
        kind = raw.get("type")
        if kind == "text":
            text = raw.get("text")
            return TextBlock(text=text) if isinstance(text, str) and text.strip() else None
        if kind in ("tool_use", "server_tool_use"):
            return self._tool_use(raw)
        if kind == "tool_result":
            return self._tool_result(raw)
        if kind in ("thinking", "redacted_thinking", "image", "document"):
            self.skipped[f"{kind}_block"] += 1
            return None
        self.skipped["unknown_block"] += 1
        return None

    def _tool_use(self, raw: dict[str, Any]) -> ToolUse | None:
        tid = raw.get("id")
        name = raw.get("name")
        if not isinstance(tid, str) or not tid or not isinstance(name, str) or not name:
            self.skipped["unknown_block"] += 1
            return None
        tool_input = raw.get("input")
        inp: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        block = ToolUse(id=tid, name=name, input=inp)
        self.state.tool_names[tid] = name
        arg = marker_arg(block)
        if arg is not None:
            self.state.tool_commands[tid] = arg
        return block

    def _tool_result(self, raw: dict[str, Any]) -> ToolResult | None:
        tid = raw.get("tool_use_id")
        if not isinstance(tid, str) or not tid:
            self.skipped["unknown_block"] += 1
            return None
        return ToolResult(
            tool_use_id=tid,
            content=self._result_text(raw.get("content")),
            is_error=raw.get("is_error") is True,
        )

    def _result_text(self, content: object) -> str:
        """A tool result's text: a string, or the text blocks of a list joined by newlines."""
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            return ""
        parts: list[str] = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and item.get("type") == "text":
                text = item.get("text")
                if isinstance(text, str):
                    parts.append(text)
            elif isinstance(item, dict) and item.get("type") == "image":
                self.skipped["image_block"] += 1
        return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------------
# Helpers: state JSON
# ---------------------------------------------------------------------------------------------------------


def _typed(data: dict[str, Any], key: str, kind: type[int], default: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, kind) or isinstance(value, bool):
        msg = f"StreamState field {key!r} must be an integer, got {value!r}"
        raise TranscriptError(msg)
    return value


def _optional(data: dict[str, Any], key: str, kind: type[_T]) -> _T | None:
    value = data.get(key)
    if value is None or isinstance(value, kind):
        return value
    msg = f"StreamState field {key!r} must be {kind.__name__} or null, got {value!r}"
    raise TranscriptError(msg)


def _str_dict(data: dict[str, Any], key: str) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        msg = f"StreamState field {key!r} must map strings to strings, got {str(value)[:80]!r}"
        raise TranscriptError(msg)
    return dict(value)


def _str_list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        msg = f"StreamState field {key!r} must be a list of strings, got {str(value)[:80]!r}"
        raise TranscriptError(msg)
    return list(value)

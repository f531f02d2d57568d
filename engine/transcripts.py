"""Parse Claude Code JSONL transcript lines (2.x and 1.0.x formats) into `Message` records.

This is the public module for reading transcripts: besides the parser it offers `discover`,
`TranscriptFile` and `StreamState`, which live with the file layout in `engine.transcript_files`.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.model import Block, Message, TextBlock, ToolResult, ToolUse
from engine.parser_versions import (
    COMPACTION_AGENT_PREFIX,
    PARSER_VERSION,
    iso_timestamp,
    json_strings,
)
from engine.render import marker_arg
from engine.transcript_files import (
    StreamState,
    TranscriptError,
    TranscriptFile,
    discover,
)

__all__ = [
    "EDIT_TOOLS",
    "MAX_NESTING",
    "PARSER_VERSION",
    "SKIPPED_TYPES",
    "ParseResult",
    "StreamState",
    "TranscriptError",
    "TranscriptFile",
    "discover",
    "file_edits",
    "parse_bytes",
    "parse_file",
]

# Line types that carry no conversation text; counted under their own name.
SKIPPED_TYPES = frozenset(
    {"summary", "file-history-snapshot", "progress", "queue-operation", "ai-title", "system"}
)

# A line nested deeper than this is skipped (`nested_too_deep`): Python's JSON parser would raise
# RecursionError somewhere near 1,000, at a depth that depends on the caller's stack; real transcript
# lines nest a few dozen levels at most.
MAX_NESTING = 256

# A `\ud800`-`\udfff` escape (either case); only lines with one are walked for lone surrogates.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")

# Tool calls whose input names a file that the call changes (the store counts edits per file).
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


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
    `ai-title`, `system`; `is_meta`, `compact_summary`, `transcript_only` user lines, and the
    compaction agent's `compaction_input` (`_compaction_input`); `malformed_json`,
    `not_object`, `no_envelope`, `unknown_type`; blocks left out: `thinking_block`,
    `redacted_thinking_block`, `image_block`, `document_block`, `unknown_block`; `empty_message` for a
    message with no block left. `invalid_utf8` counts lines decoded with replacement characters and kept.
    `nested_too_deep` counts lines nested deeper than `MAX_NESTING` and `lone_surrogate` lines holding a
    `\\ud83d`-style escape of half a character (Node writes one when it cuts an emoji); both are skipped
    whole, since neither can be parsed or stored, and the rest of the file is read as usual.
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
            obj = _load(line, text)
        except json.JSONDecodeError:
            if complete:
                parser.skipped["malformed_json"] += 1
                consumed = end
            else:
                parser.skipped["truncated_tail"] += 1
            continue
        except _UnusableLineError as exc:
            if not complete and exc.reason == "nested_too_deep":
                # Not parsed, so maybe still being written: left for the next call like any tail.
                parser.skipped["truncated_tail"] += 1
            else:
                parser.skipped[exc.reason] += 1
                consumed = end
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


# --- lines and blocks ------------------------------------------------------------------------------------


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


class _UnusableLineError(ValueError):
    """A line that is valid JSON but cannot be used; `reason` is its skip count's name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _load(line: bytes, text: str) -> object:
    """The line's JSON value.

    Raises:
        json.JSONDecodeError: the line is not JSON (or not yet complete).
        _UnusableLineError: nested deeper than `MAX_NESTING`, or holding a lone surrogate.
    """
    if line.count(b"[") + line.count(b"{") > MAX_NESTING and _nesting(line) > MAX_NESTING:
        raise _UnusableLineError("nested_too_deep")
    try:
        # A byte order mark (a file saved by a Windows editor) is not JSON; the line after it is.
        obj = json.loads(text.removeprefix("\ufeff"))
    except RecursionError:
        # Reached only when the stack is already deep; the explicit bound above is the rule.
        raise _UnusableLineError("nested_too_deep") from None
    if _SURROGATE_ESCAPE.search(line) and _holds_surrogate(obj):
        raise _UnusableLineError("lone_surrogate")
    return obj


def _nesting(line: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON line (brackets inside strings ignored)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_JSON_STRING.sub(b'""', line)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _holds_surrogate(obj: object) -> bool:
    """Whether any string (key or value) of a parsed JSON value holds a lone UTF-16 surrogate (the
    value may be nested as deep as `MAX_NESTING`)."""
    return any(_SURROGATE.search(text) for text in json_strings(obj))


def _compaction_input(obj: dict[str, Any], message: dict[str, Any]) -> bool:
    """A user line of Claude Code's compaction agent (`agentId` "acompact-…") that carries text, not tool
    results: Claude Code's instructions to summarize the conversation, or the hook output it hands the
    summarizer. Neither was said in the conversation, and the instructions are the same in every
    compaction. (Its tool results, where a compaction replays the calls, are kept.)"""
    agent = obj.get("agentId")
    if not (isinstance(agent, str) and agent.startswith(COMPACTION_AGENT_PREFIX)):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _decode(line: bytes) -> tuple[str, bool]:
    """UTF-8 text of a line, and whether replacement characters had to be used."""
    try:
        return line.decode("utf-8"), False
    except UnicodeDecodeError:
        return line.decode("utf-8", errors="replace"), True


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
        if kind == "user" and _compaction_input(obj, message):
            self.skipped["compaction_input"] += 1
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
            timestamp=iso_timestamp(ts),
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

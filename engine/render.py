"""Messages as text: tool-call markers, tool-result headers and capped bodies.

`render_message` gives what a message says, unsanitized; `engine.sanitize` renders through
`render_block` with its scrubbing transform, so a secret is redacted before any cut. What these
functions produce from the same bytes is part of `engine.transcripts.PARSER_VERSION`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from engine.model import Author, Block, Message, TextBlock, ToolResult, ToolUse
from engine.transcript_files import StreamState

TOOL_RESULT_CAP = 4000  # the reference engine's cap on a tool result body
MARKER_ARG_CAP = 120  # first characters of a command, pattern or query shown in a tool marker
# Text past a cap is cut before a transform runs, keeping this margin so that a secret straddling the cap
# is still seen whole by the redaction (a PEM block longer than the margin counts as unclosed: redacted
# to the end). It bounds the work on huge tool outputs.
TRANSFORM_MARGIN = 2000

# The most UTF-8 bytes of one message's text that are stored by default (`recallbench import
# --max-message-bytes`); the rest is cut, with a marker that says how much.
MAX_MESSAGE_BYTES = 64 * 1024

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

# What a terminal would act on instead of showing: ANSI control sequences (CSI `ESC [ ... final` or
# its one-character form U+009B, OSC `ESC ] ... BEL` or `ESC ] ... ESC \`, two-character escapes) and
# the other C0 and C1 control characters, whitespace aside. Tool output carries them (colours, titles).
_TERMINAL_CONTROL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-_]?"
    r"|[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]"
)

# A line that is a tool marker or a result header with an argument (`tool_marker`, `result_header`):
# `[Bash: cmd]`, `[Bash result: cmd]`, `[Read error: a/b.py]`; the argument cut by `compact` ends in `…`.
_MARKER_LINE = re.compile(r"^\[[A-Za-z]+(?: result| error)?:( )[^\n]*?(…?)\]$", re.MULTILINE)

# Command wrappers (slash commands, local command output) are not typed prose.
_COMMAND_WRAPPER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
)


def render_message(msg: Message, state: StreamState) -> tuple[str, Author]:
    """The message as text (unsanitized) and its author.

    Text blocks verbatim; a marker per tool call (`[Bash: git status]`, `[Edit: src/store.py]`,
    `[Tool: name]` for tools without a known argument); each tool result as a header naming the paired
    tool (`[Bash result: git status]`, `[Bash error: …]`, `[tool result]` when unpaired) above its body
    capped at `TOOL_RESULT_CAP` characters. Terminal control sequences are left out of all three
    (`strip_terminal_control`). Pieces are joined with newlines; thinking is never present.
    """
    pieces = [render_block(block, state) for block in msg.blocks]
    return "\n".join(p for p in pieces if p.strip()), message_author(msg)


def render_block(
    block: Block,
    state: StreamState,
    transform: Callable[[str], str] | None = None,
    cap: int = TOOL_RESULT_CAP,
) -> str:
    """One block as text, without terminal control sequences; `transform` is applied to the raw text
    before any truncation (the sanitizer's hook)."""
    given = transform if transform is not None else _identity

    def tf(text: str) -> str:
        return given(strip_terminal_control(text))

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


def opened_markers(text: str, view: str) -> str:
    """`view` (a same-length view of `text`) with each tool marker's and result header's argument on a
    line of its own, as the command was when the import redacted it: the space before the argument and
    the closing `]` are line ends, a cut's `…` a space (`[Bash: vault login s.x]` ->
    `[Bash:⏎vault login s.x⏎`)."""
    if "[" not in text:
        return view
    chars: list[str] | None = None
    for line in _MARKER_LINE.finditer(text):
        chars = chars if chars is not None else list(view)
        chars[line.start(1)] = chars[line.end() - 1] = "\n"
        if line.group(2):
            chars[line.start(2)] = " "
    return view if chars is None else "".join(chars)


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


def strip_terminal_control(text: str) -> str:
    """`text` without terminal control sequences and control characters other than whitespace: the
    colour codes of a test runner's output are not words (FTS5 would read `\x1b[0mWaiting` as the
    token `0mwaiting`), and a terminal showing a hit would act on them."""
    return _TERMINAL_CONTROL.sub("", text)


def holds_terminal_control(text: str) -> bool:
    """Whether `strip_terminal_control` would change `text`."""
    return _TERMINAL_CONTROL.search(text) is not None


def is_command_wrapper(text: str) -> bool:
    """True for slash-command and local-command wrapper text, which is not typed prose."""
    return text.lstrip().startswith(_COMMAND_WRAPPER_PREFIXES)


def _identity(text: str) -> str:
    return text


def precut_text_blocks(msg: Message, max_bytes: int) -> tuple[Message, int]:
    """The message with each text block cut to `max_bytes + TRANSFORM_MARGIN` characters, before sanitizing.

    Returns the message (the same object when nothing was cut) and the UTF-8 bytes cut off. Scrubbing
    50 MB of text only to store its first 64 KiB is wasted work; like the tool-result cap, the margin keeps
    a secret that straddles the final cut whole for the redaction (tool results and markers are already
    bounded by their own caps).
    """
    keep = max_bytes + TRANSFORM_MARGIN
    cut_bytes = 0
    blocks: list[Block] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock) and len(block.text) > keep:
            cut_bytes += len(block.text[keep:].encode("utf-8"))
            blocks.append(TextBlock(text=block.text[:keep]))
        else:
            blocks.append(block)
    if not cut_bytes:
        return msg, 0
    return replace(msg, blocks=blocks), cut_bytes


def cap_message(text: str, max_bytes: int, precut_bytes: int = 0) -> str | None:
    """`text` cut to its first `max_bytes` UTF-8 bytes with a marker saying what was cut; None if it fits.

    `precut_bytes` are the bytes `precut_text_blocks` already took off, so that the marker counts them:
    `[… 136 KiB cut by recallbench: message over 64 KiB …]`.
    """
    data = text.encode("utf-8")
    if len(data) <= max_bytes and not precut_bytes:
        return None
    head = data[:max_bytes].decode("utf-8", errors="ignore")  # never half a character
    cut = len(data) + precut_bytes - len(head.encode("utf-8"))
    return f"{head}\n[… {byte_size(cut)} cut by recallbench: message over {byte_size(max_bytes)} …]"


def byte_size(n: int) -> str:
    """`n` bytes for a person: `512 B`, `64 KiB`, `136.5 KiB`, `49.9 MiB`."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} B"

"""Plain values passed between the engine's stages (parse -> sanitize -> chunk -> store)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Author(enum.IntEnum):
    """Who wrote a message; a chunk's author is the highest it holds (User > Assistant > ToolResult)."""

    TOOL_RESULT = 1
    ASSISTANT = 2
    USER = 3

    @property
    def label(self) -> str:
        return {1: "ToolResult", 2: "Assistant", 3: "User"}[int(self)]


@dataclass(frozen=True, kw_only=True)
class TextBlock:
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    tool_use_id: str
    content: str
    is_error: bool = False


Block = TextBlock | ToolUse | ToolResult


@dataclass(kw_only=True)
class Message:
    """One logical message of a transcript stream (assistant lines sharing `message.id` are merged).

    `uuid` is the uuid of the first line that contributed to the message; `line_uuids` holds every
    line uuid merged into it, so gold given as any line uuid can be matched.
    """

    uuid: str
    session_id: str
    parent_uuid: str | None
    kind: str  # "user" | "assistant"
    blocks: list[Block]
    timestamp: str | None  # ISO-8601 as written; may be missing or unparseable
    cwd: str | None = None
    is_sidechain: bool = False
    is_meta: bool = False
    agent_id: str | None = None
    api_message_id: str | None = None  # assistant `message.id`, used for merging
    line_uuids: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CleanMessage:
    """A sanitized message rendered to text, ready for chunking."""

    uuid: str
    session_id: str
    author: Author
    text: str
    timestamp: str | None
    ordinal: int  # position within its stream, 0-based


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """A ~900-character span of one stream. `id` is UUIDv5 of (stream key, index)."""

    id: str
    session_id: str
    # The stream key: "<session id>[/agent-<agentId>]@<hash of project and file>" (stored_stream).
    stream: str
    index: int
    text: str
    author: Author
    message_uuids: tuple[str, ...]
    ts_start: str | None
    ts_end: str | None

"""Transcript files and their streams: where Claude Code's JSONL files are, and what one carries.

`discover` finds the transcript files under the paths given (2.x and 1.0.x layouts) and names the
stream each one feeds; `StreamState` is what one stream carries between incremental imports
(persisted as JSON with the file's offset). Parsing the lines is `engine.transcripts`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from engine.checks import is_int

_SUBAGENTS_DIR = "subagents"
_TOOL_RESULTS_DIR = "tool-results"
_AGENT_PREFIX = "agent-"

_T = TypeVar("_T")


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
    # The stream's name: session_id for main files, f"{session_id}/agent-{agent_id}" for subagent
    # files. The store keys the stream by project and file too (`stored_stream`).
    stream: str

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


def stored_stream(tf: TranscriptFile, project: str, resolved_path: str) -> str:
    """The key the store files one transcript file's messages and chunks under.

    `<stream name>@<16 hex digits>`, the digits a hash of the project and the file's resolved path, so
    two files share a stream only when they are the same file: two exported `session.jsonl` of two
    projects, or a file in one project reusing another project's session id, are kept apart. Chunk ids
    are derived from it (`engine.chunking.chunk_id`), so re-importing the same file keeps them.
    """
    digest = hashlib.sha256(f"{project}\0{resolved_path}".encode()).hexdigest()[:16]
    return f"{tf.stream}@{digest}"


def is_main_stream(stored: str, session_id: str) -> bool:
    """Whether `stored` (a `stored_stream` key) is the main transcript of `session_id`, not a
    subagent's."""
    return stored.rpartition("@")[0] == session_id


def discover(
    paths: Sequence[Path], unreadable: list[Path] | None = None
) -> tuple[list[TranscriptFile], Counter[str]]:
    """Find transcript files under `paths` (files or folders searched recursively).

    Understands `~/.claude/projects/<encoded>/<sid>.jsonl`, `<sid>/subagents/agent-*.jsonl` (2.x),
    `agent-*.jsonl` beside the session files (older), and flat folders of `<sid>.jsonl`. Files under a
    `tool-results/` folder and files not ending in `.jsonl` are skipped and counted per reason
    (`tool_results`, `not_jsonl`); a subagent file whose parent session cannot be read is counted as
    `agent_without_session`; a file reached twice is counted as `duplicate`. A folder that cannot be
    listed is counted as `unreadable_folder` and, when `unreadable` is given, appended to it.

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
        for candidate in _candidates(Path(root), skipped, unreadable):
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


# --- discovery helpers ---------------------------------------------------------------------------------


def _candidates(root: Path, skipped: Counter[str], unreadable: list[Path] | None) -> Iterator[Path]:
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
    for p in _walk(root, skipped, unreadable):
        if _TOOL_RESULTS_DIR in p.relative_to(root).parts[:-1]:
            skipped["tool_results"] += 1
        elif p.suffix != ".jsonl":
            skipped["not_jsonl"] += 1
        else:
            yield p


def _walk(root: Path, skipped: Counter[str], unreadable: list[Path] | None) -> list[Path]:
    """Every file under `root` (symlinked folders not followed), sorted; unlistable folders counted.

    `Path.rglob` passes over a folder it may not list without a word, which hid whole projects.
    """

    def failed(exc: OSError) -> None:
        skipped["unreadable_folder"] += 1
        if unreadable is not None:
            unreadable.append(Path(exc.filename) if exc.filename else root)

    found: list[Path] = []
    for folder, _, names in os.walk(root, onerror=failed):
        found.extend(p for p in (Path(folder, n) for n in names) if p.is_file())
    return sorted(found)


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
                except (json.JSONDecodeError, RecursionError):
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


# --- stream state --------------------------------------------------------------------------------------


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
            next_ordinal=_int(data, "next_ordinal", 0),
            tool_names=_str_dict(data, "tool_names"),
            tool_commands=_str_dict(data, "tool_commands"),
            suppressed_tool_ids=set(_str_list(data, "suppressed_tool_ids")),
            last_api_message_id=_optional(data, "last_api_message_id", str),
            self_transcript=_optional(data, "self_transcript", bool),
            cwd=_optional(data, "cwd", str),
        )


def _int(data: dict[str, Any], key: str, default: int) -> int:
    value = data.get(key, default)
    if not is_int(value):
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

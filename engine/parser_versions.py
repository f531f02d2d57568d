"""The transcript parser's versions: what each changed, and which raw lines a change acts on.

`PARSER_VERSION` names what the parser (`engine.transcripts`, `engine.render`) makes of the same bytes:
the messages kept and their rendered text. A change that can make different messages or text from the
same bytes is a new version, and names here the lines without which it changes nothing. Corpus
manifests record the version a corpus is read under (`ParserScan`, as `engine.sanitize.VersionScan`
does for the sanitizer): a corpus none of whose lines a change acts on reads exactly as before it, so
its manifest records the older version and every lock made on it stays valid. A memory records the
version its text was imported under (`engine.parsed_sql`), so `recallbench status` can say what an
import under an older parser left in it.

- Version 1: the parser before the three changes below, each of which shipped without a new version.
- Version 2: a `timestamp` that is not an ISO-8601 time leaves its message undated (version 1 kept the
  string, which then stood for the session's start or end); a line after a UTF-8 byte order mark is
  read (version 1 counted it as malformed JSON and lost its message).
- Version 3: the text Claude Code hands its compaction agent (`agent-acompact-*` user lines: the
  summarize instructions) is skipped as `compaction_input`; the summary is kept.
- Version 4: terminal control sequences and the other control characters, whitespace aside, are left
  out of rendered text (`engine.render.strip_terminal_control`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime

from engine.render import holds_terminal_control

__all__ = [
    "BASE_PARSER_VERSION",
    "COMPACTION_AGENT_PREFIX",
    "COMPACTION_INSTRUCTIONS_LEAD",
    "PARSER_VERSION",
    "VERSION_CHANGES",
    "ParserScan",
    "iso_timestamp",
    "json_strings",
]

PARSER_VERSION = "4"
BASE_PARSER_VERSION = "1"
# What each version after the first changed, in the words a lock's refusal uses
# (`harness.freeze.Manifest.read_before`).
VERSION_CHANGES: dict[str, str] = {
    "2": "a timestamp that is not a time leaves its message undated; a line after a byte order mark "
    "is read",
    "3": "the compaction agent's instructions are skipped",
    "4": "terminal control sequences are left out of the text",
}

# The agent id of Claude Code's compaction agent (its transcript: `agent-acompact-<hex>.jsonl`), and
# how the instructions it is handed begin (what a memory imported before version 3 holds of them).
COMPACTION_AGENT_PREFIX = "acompact"
COMPACTION_INSTRUCTIONS_LEAD = (
    "Your task is to create a detailed summary of the conversation so far"
)

_BOM = b"\xef\xbb\xbf"
_TIMESTAMP_KEY = re.compile(rb'"timestamp"\s*:\s*"')
_TIMESTAMP_VALUE = re.compile(rb'"timestamp"\s*:\s*"([^"\\]*)"')
# How JSON can spell a character `strip_terminal_control` removes: a `\u00XX` escape of a C0 or C1
# control character or DEL, the `\b` escape, or DEL and C1 characters written as themselves (JSON
# needs no escape for them). A line without any of these holds none; one with them is decoded to see.
_CONTROL_SPELLING = re.compile(rb"\\u00[0189][0-9a-fA-F]|\\u007[fF]|\\b|\x7f|\xc2[\x80-\x9f]")


def iso_timestamp(value: object) -> str | None:
    """A line's `timestamp` when it reads as an ISO-8601 time, else None: the message is kept, undated,
    since a session's start and end are the least and greatest of its messages' times as text, and a
    string that is not a time would stand for either (version 2)."""
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


class ParserScan:
    """The parser version a corpus's raw lines are read under (`feed` every line of every file).

    It is the newest version whose change acts on some line, and `BASE_PARSER_VERSION` when none
    does. A line is decoded only when its bytes may hold what a change acts on; one that is not JSON
    counts only for the byte order mark (the parser skips it otherwise, before and after every
    change).
    """

    def __init__(self) -> None:
        self._found: set[str] = set()

    def feed(self, line: bytes) -> None:
        decoded = _Decoded(line)
        for version, acts_on in _TRIGGERS:
            if version not in self._found and acts_on(line, decoded):
                self._found.add(version)

    @property
    def version(self) -> str:
        return max(self._found, key=int, default=BASE_PARSER_VERSION)


class _Decoded:
    """A line's top-level JSON object, decoded at most once and only when asked for."""

    def __init__(self, line: bytes) -> None:
        self._line = line
        self._obj: dict[str, object] | None = None
        self._done = False

    def get(self) -> dict[str, object] | None:
        if not self._done:
            self._done = True
            try:
                obj = json.loads(self._line.removeprefix(_BOM))
            except (ValueError, RecursionError):
                obj = None
            self._obj = obj if isinstance(obj, dict) else None
        return self._obj


def _undated_or_bom(line: bytes, decoded: _Decoded) -> bool:
    """Version 2: a line after a byte order mark, or a top-level `timestamp` that is not a time."""
    if line.startswith(_BOM):
        return True
    keys = len(_TIMESTAMP_KEY.findall(line))
    if keys == 0:
        return False
    values = _TIMESTAMP_VALUE.findall(line)
    if len(values) == keys and all(iso_timestamp(v.decode("utf-8", "replace")) for v in values):
        return False  # every timestamp in the line, nested ones too, is a time
    obj = decoded.get()
    stamp = None if obj is None else obj.get("timestamp")
    return isinstance(stamp, str) and iso_timestamp(stamp) is None


def _compaction_user_line(line: bytes, decoded: _Decoded) -> bool:
    """Version 3: a user line of the compaction agent (whether it carries text or tool results)."""
    if COMPACTION_AGENT_PREFIX.encode() not in line:
        return False
    obj = decoded.get()
    if obj is None or obj.get("type") != "user":
        return False
    agent = obj.get("agentId")
    return isinstance(agent, str) and agent.startswith(COMPACTION_AGENT_PREFIX)


def _control_characters(line: bytes, decoded: _Decoded) -> bool:
    """Version 4: a string anywhere in the line holds a character `strip_terminal_control` removes."""
    if not _CONTROL_SPELLING.search(line):
        return False
    return any(holds_terminal_control(text) for text in json_strings(decoded.get()))


def json_strings(obj: object) -> Iterator[str]:
    """Every string (key or value) of a parsed JSON value, walked with an explicit stack: the value
    may be nested as deep as the parser allows."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_TRIGGERS: tuple[tuple[str, Callable[[bytes, _Decoded], bool]], ...] = (
    ("2", _undated_or_bom),
    ("3", _compaction_user_line),
    ("4", _control_characters),
)

"""Build small Claude Code JSONL transcripts for tests (2.x and 1.0.x line shapes).

Every builder returns plain dicts shaped like the lines Claude Code writes; `write_jsonl` writes them (or
raw strings/bytes, for malformed lines) into a file under the test's `tmp_path`. Ids are whatever the
test passes, so expected values can be written by hand.

    lines = [
        user_line("fix the flaky test", uuid="u1"),
        *assistant_lines([text_block("Looking."), tool_use_block("t1", "Bash", {"command": "pytest"})],
                         message_id="msg_1", uuids=["a1", "a2"], parent="u1"),
        tool_result_line("t1", "1 passed", uuid="r1", parent="a2"),
    ]
    write_jsonl(tmp_path / "proj" / f"{SESSION}.jsonl", lines)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SESSION = "5e551011-0000-4000-8000-000000000001"
OTHER_SESSION = "5e551011-0000-4000-8000-000000000002"
CWD = "/home/dev/my_proj"
ENCODED_CWD = "-home-dev-my-proj"  # how Claude Code names the folder of CWD (lossy: `_` became `-`)
V2 = "2.1.74"
V1 = "1.0.108"
MODEL = "claude-opus-4-6"

Line = dict[str, Any]


def ts(minute: int, second: int = 0) -> str:
    """An ISO-8601 UTC timestamp `minute` minutes and `second` seconds after 10:00 on a fixed day, as
    Claude Code writes it (60 minutes and more run into the next hours: "10:60" is not a time)."""
    moment = datetime(2026, 3, 1, 10, tzinfo=UTC) + timedelta(minutes=minute, seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


# --- blocks -----------------------------------------------------------------------------------------------


def text_block(text: str) -> Line:
    return {"type": "text", "text": text}


def thinking_block(text: str) -> Line:
    return {"type": "thinking", "thinking": text, "signature": "c2lnbmF0dXJl"}


def redacted_thinking_block() -> Line:
    return {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}


def image_block() -> Line:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0"},
    }


def tool_use_block(tool_id: str, name: str, tool_input: dict[str, Any]) -> Line:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result_block(tool_id: str, content: str | list[Line], *, is_error: bool = False) -> Line:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


# --- lines ------------------------------------------------------------------------------------------------


def envelope(
    kind: str,
    *,
    uuid: str,
    parent: str | None = None,
    session_id: str = SESSION,
    cwd: str = CWD,
    timestamp: str | None = None,
    version: str = V2,
    sidechain: bool = False,
    agent_id: str | None = None,
    git_branch: str = "main",
) -> Line:
    """The fields shared by user, assistant, system and progress lines."""
    line: Line = {
        "parentUuid": parent,
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": version,
        "gitBranch": git_branch,
        "type": kind,
        "uuid": uuid,
        "timestamp": timestamp if timestamp is not None else ts(0),
    }
    if agent_id is not None:
        line["agentId"] = agent_id
    return line


def user_line(
    content: str | Sequence[Line],
    *,
    uuid: str,
    parent: str | None = None,
    meta: bool = False,
    **env: Any,
) -> Line:
    """A user line: a typed prompt (string) or a list of blocks; `meta` marks an expanded command."""
    line = envelope("user", uuid=uuid, parent=parent, **env)
    line["message"] = {
        "role": "user",
        "content": content if isinstance(content, str) else list(content),
    }
    if meta:
        line["isMeta"] = True
    return line


def assistant_lines(
    blocks: Sequence[Line],
    *,
    message_id: str,
    uuids: Sequence[str],
    parent: str | None = None,
    **env: Any,
) -> list[Line]:
    """One API message written as Claude Code does: one line per block, each the child of the last."""
    if len(blocks) != len(uuids):
        msg = f"assistant_lines needs one uuid per block, got {len(blocks)} blocks and {len(uuids)} uuids"
        raise ValueError(msg)
    lines: list[Line] = []
    prev = parent
    for i, (block, uuid) in enumerate(zip(blocks, uuids, strict=True)):
        line = envelope("assistant", uuid=uuid, parent=prev, **env)
        line["message"] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": "tool_use" if i == len(blocks) - 1 else None,
            "usage": {"input_tokens": 3, "output_tokens": 11},
        }
        if env.get("version", V2) == V1:
            line["requestId"] = f"req_{message_id}"
        lines.append(line)
        prev = uuid
    return lines


def tool_use_line(
    tool_id: str,
    name: str,
    tool_input: dict[str, Any],
    *,
    message_id: str,
    uuid: str,
    parent: str | None = None,
    **env: Any,
) -> Line:
    """An assistant line holding a single tool_use block."""
    [line] = assistant_lines(
        [tool_use_block(tool_id, name, tool_input)],
        message_id=message_id,
        uuids=[uuid],
        parent=parent,
        **env,
    )
    return line


def tool_result_line(
    tool_id: str,
    content: str | list[Line],
    *,
    uuid: str,
    parent: str | None = None,
    is_error: bool = False,
    tool_use_result: object = None,
    **env: Any,
) -> Line:
    """A user line carrying one tool_result, with the top-level `toolUseResult` (dict, or str on errors)."""
    line = user_line(
        [tool_result_block(tool_id, content, is_error=is_error)], uuid=uuid, parent=parent, **env
    )
    if tool_use_result is None:
        tool_use_result = {"stdout": content if isinstance(content, str) else "", "stderr": ""}
    line["toolUseResult"] = tool_use_result
    return line


def system_line(subtype: str | None, *, uuid: str, parent: str | None = None, **env: Any) -> Line:
    """A system line (`compact_boundary`, `turn_duration`, …; older hook lines have no subtype)."""
    line = envelope("system", uuid=uuid, parent=parent, **env)
    line["content"] = "system note"
    line["level"] = "info"
    if subtype is not None:
        line["subtype"] = subtype
    return line


def progress_line(*, uuid: str, parent: str | None = None, **env: Any) -> Line:
    line = envelope("progress", uuid=uuid, parent=parent, **env)
    line["data"] = {
        "type": "agent_progress",
        "message": {"type": "user", "message": {"content": "x"}},
    }
    line["toolUseID"] = "toolu_progress"
    return line


def summary_line(summary: str, leaf_uuid: str) -> Line:
    return {"type": "summary", "summary": summary, "leafUuid": leaf_uuid}


def snapshot_line(message_id: str) -> Line:
    return {
        "type": "file-history-snapshot",
        "messageId": message_id,
        "snapshot": {"messageId": message_id, "trackedFileBackups": {}, "timestamp": ts(0)},
        "isSnapshotUpdate": False,
    }


def queue_line(content: str = "queued prompt") -> Line:
    return {
        "type": "queue-operation",
        "operation": "enqueue",
        "content": content,
        "sessionId": SESSION,
        "timestamp": ts(0),
    }


def ai_title_line(title: str) -> Line:
    return {"type": "ai-title", "title": title, "sessionId": SESSION}


# --- files ------------------------------------------------------------------------------------------------


def encode(line: Line | str | bytes) -> bytes:
    """A line's bytes without the newline: dicts as compact JSON, strings as UTF-8, bytes as given."""
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode("utf-8")
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def write_jsonl(
    path: Path, lines: Iterable[Line | str | bytes], *, final_newline: bool = True
) -> Path:
    """Write `lines` as JSONL (creating folders); without `final_newline` the last line is left open."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"\n".join(encode(line) for line in lines)
    if final_newline and data:
        data += b"\n"
    path.write_bytes(data)
    return path


def append_jsonl(path: Path, lines: Iterable[Line | str | bytes]) -> None:
    """Append complete lines to an existing transcript, as Claude Code does while a session runs."""
    with path.open("ab") as fh:
        for line in lines:
            fh.write(encode(line) + b"\n")


def simple_session(
    prompt: str = "Why does the import test fail?",
    *,
    session_id: str = SESSION,
    cwd: str = CWD,
    answer: str = "Because the offset was stale.",
    prefix: str = "",
) -> list[Line]:
    """A three-message session: a prompt, a Bash call with its result, and a closing answer.

    Line uuids are `u1`, `a1`, `a2`, `r1`, `a3` and the tool id `t1`, each preceded by `prefix` (give
    sessions that share a database different prefixes).
    """
    p = prefix
    env: dict[str, Any] = {"session_id": session_id, "cwd": cwd}
    return [
        user_line(prompt, uuid=f"{p}u1", timestamp=ts(0), **env),
        *assistant_lines(
            [
                text_block("Let me run it."),
                tool_use_block(f"{p}t1", "Bash", {"command": "pytest -q"}),
            ],
            message_id=f"{p}msg_1",
            uuids=[f"{p}a1", f"{p}a2"],
            parent=f"{p}u1",
            timestamp=ts(1),
            **env,
        ),
        tool_result_line(
            f"{p}t1", "1 failed", uuid=f"{p}r1", parent=f"{p}a2", timestamp=ts(2), **env
        ),
        *assistant_lines(
            [text_block(answer)],
            message_id=f"{p}msg_2",
            uuids=[f"{p}a3"],
            parent=f"{p}r1",
            timestamp=ts(3),
            **env,
        ),
    ]


def two_calls(prompt: str, first: tuple[str, str], second: tuple[str, str]) -> list[Line]:
    """A prompt, then one assistant message of two Bash calls (`t1`, `t2`: each a (command, output)),
    then their results in order. Line uuids are `u1`, `a1`, `a2`, `r1`, `r2`."""
    return [
        user_line(prompt, uuid="u1"),
        *assistant_lines(
            [
                tool_use_block("t1", "Bash", {"command": first[0]}),
                tool_use_block("t2", "Bash", {"command": second[0]}),
            ],
            message_id="m1",
            uuids=["a1", "a2"],
            parent="u1",
        ),
        tool_result_line("t1", first[1], uuid="r1", parent="a2"),
        tool_result_line("t2", second[1], uuid="r2", parent="r1"),
    ]

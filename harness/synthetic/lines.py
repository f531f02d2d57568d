"""Turning abstract dialogue steps into Claude Code transcript lines (2.x and 1.0.x shapes).

Episodes produce `Step`s with no ids or times; a `StreamWriter` gives them uuids, message ids, tool ids
and timestamps from its own seeded generator and lays them out the way Claude Code does: one content
block per assistant line (lines of one API message share `message.id`), tool results as user lines with
a `tool_result` block plus a top-level `toolUseResult`, and noise lines the importer must skip.
"""

from __future__ import annotations

import copy
import random
import string
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

_B62 = string.ascii_letters + string.digits


@dataclass(frozen=True, kw_only=True)
class Format:
    """A Claude Code transcript generation: the version string and which line habits it has."""

    version: str
    modern: bool  # 2.x: promptId, thinking, snapshots, progress, subagents/ folder
    models: tuple[str, ...]
    agent_tool: str


MODERN = Format(
    version="2.1.74",
    modern=True,
    models=("claude-opus-4-6", "claude-sonnet-4-5-20250929"),
    agent_tool="Agent",
)
OLDER = Format(
    version="1.0.108",
    modern=False,
    models=("claude-sonnet-4-20250514", "claude-opus-4-1-20250805"),
    agent_tool="Task",
)
SUBAGENT_MODEL = "claude-haiku-4-5-20251001"


@dataclass(frozen=True, kw_only=True)
class Call:
    """One tool call and its result."""

    name: str
    input: dict[str, Any]
    result: str | list[dict[str, Any]]
    tur: dict[str, Any] | list[Any] | str | None
    is_error: bool = False
    subagent: SubAgent | None = None


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """A human prompt. `slot` says what the planner may attach to it (context block, private note)."""

    text: str
    blocks: bool = False
    slot: str = "filler"  # filler | gold | fixed


@dataclass(frozen=True, kw_only=True)
class Act:
    """One assistant API message: optional thinking, optional text, then tool calls."""

    text: str | None = None
    thinking: str | None = None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Command:
    """A slash command: `/clear` (caveat + command + local output) or a prompt command."""

    name: str
    args: str = ""
    expansion: str | None = None


Step = Prompt | Act | Command


@dataclass(frozen=True, kw_only=True)
class SubAgent:
    """A sidechain transcript launched by an Agent/Task call."""

    prompt: str
    steps: tuple[Step, ...]


@dataclass(kw_only=True)
class StreamFile:
    """The lines of one written file (a session or a subagent)."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    agent_id: str | None = None


def new_uuid(rng: random.Random) -> str:
    """A version-4 uuid drawn from `rng`."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def token(rng: random.Random, n: int, alphabet: str = _B62) -> str:
    """`n` characters drawn from `alphabet`."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def iso(ms: int, epoch: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a `Z`, `ms` after `epoch`."""
    moment = epoch + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class StreamWriter:
    """Writes one session's main stream (and its subagent streams) as line dicts."""

    def __init__(
        self,
        *,
        fmt: Format,
        session_id: str,
        cwd: str,
        branch: str,
        start_ms: int,
        epoch: datetime,
        rng: random.Random,
        sidechain: bool = False,
        agent_id: str | None = None,
        slug: str | None = None,
        model: str | None = None,
    ) -> None:
        self.fmt = fmt
        self.session_id = session_id
        self.cwd = cwd
        self.branch = branch
        self.clock = start_ms
        self.epoch = epoch
        self.rng = rng
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.slug = slug
        self.model = model or rng.choice(fmt.models)
        self.file = StreamFile(agent_id=agent_id)
        self.subfiles: list[StreamFile] = []
        self.last: str | None = None
        self.prompt_id: str | None = None
        self.slug_on = False

    # --- low-level pieces ------------------------------------------------------------------

    def _tick(self, low: float, high: float) -> str:
        self.clock += int(self.rng.uniform(low, high) * 1000)
        return iso(self.clock, self.epoch)

    def _envelope(self, kind: str, uid: str, stamp: str, parent: str | None) -> dict[str, Any]:
        line: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.fmt.version,
            "gitBranch": self.branch,
        }
        if self.fmt.modern and self.slug and self.slug_on:
            line["slug"] = self.slug
        if self.agent_id is not None:
            line["agentId"] = self.agent_id
        line["type"] = kind
        line["_uuid"] = uid
        line["_timestamp"] = stamp
        return line

    @staticmethod
    def _finish(line: dict[str, Any], **tail: Any) -> dict[str, Any]:
        """Move uuid/timestamp after the message, as Claude Code writes them, then the extras."""
        uid = line.pop("_uuid")
        stamp = line.pop("_timestamp")
        line["uuid"] = uid
        line["timestamp"] = stamp
        for key, value in tail.items():
            if value is not None:
                line[key] = value
        return line

    def _emit(self, line: dict[str, Any], *, chain: bool = True) -> None:
        self.file.lines.append(line)
        if chain:
            self.last = line["uuid"]

    def _usage(self, output_tokens: int) -> dict[str, Any]:
        cache_new = self.rng.randint(100, 20000)
        usage: dict[str, Any] = {
            "input_tokens": self.rng.randint(1, 9),
            "cache_creation_input_tokens": cache_new,
            "cache_read_input_tokens": self.rng.randint(0, 60000),
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache_new,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }
        return usage

    # --- human side -----------------------------------------------------------------------

    def user_text(
        self, content: str | list[dict[str, Any]], *, is_meta: bool = False, snapshot: bool = True
    ) -> str:
        """A user line whose content is typed text (or, with `is_meta`, an expansion)."""
        uid = new_uuid(self.rng)
        stamp = self._tick(20, 240) if not is_meta else self._tick(0.001, 0.05)
        if self.fmt.modern and snapshot and not is_meta and not self.sidechain:
            self.file.lines.append(
                {
                    "type": "file-history-snapshot",
                    "messageId": uid,
                    "snapshot": {"messageId": uid, "trackedFileBackups": {}, "timestamp": stamp},
                    "isSnapshotUpdate": False,
                }
            )
        if self.fmt.modern and not is_meta:
            self.prompt_id = new_uuid(self.rng)
        line = self._envelope("user", uid, stamp, self.last)
        line["message"] = {"role": "user", "content": content}
        if is_meta:
            line["isMeta"] = True
        self._emit(self._finish(line, promptId=self.prompt_id if self.fmt.modern else None))
        return uid

    def prompt(self, step: Prompt) -> None:
        content: str | list[dict[str, Any]] = (
            [{"type": "text", "text": step.text}] if step.blocks else step.text
        )
        self.user_text(content)

    def command(self, step: Command) -> None:
        if step.name == "clear":
            self.user_text(
                "<local-command-caveat>Caveat: The messages below were generated by the user while "
                "running local commands. DO NOT respond to these messages or otherwise consider them "
                "in your response unless the user explicitly asks you to.</local-command-caveat>",
                is_meta=True,
            )
            self.user_text(
                "<command-name>/clear</command-name>\n            <command-message>clear"
                "</command-message>\n            <command-args></command-args>"
            )
            if self.fmt.modern:
                self._system(
                    "local_command", content="<local-command-stdout></local-command-stdout>"
                )
            return
        self.user_text(
            f"<command-message>{step.name} is running…</command-message>\n"
            f"<command-name>/{step.name}</command-name>\n<command-args>{step.args}</command-args>"
        )
        if step.expansion is not None:
            self.user_text([{"type": "text", "text": step.expansion}], is_meta=True)

    def _system(self, subtype: str, **fields: Any) -> None:
        uid = new_uuid(self.rng)
        stamp = self._tick(0.001, 0.02)
        line = self._envelope("system", uid, stamp, self.last)
        line["subtype"] = subtype
        line.update(fields)
        if subtype == "local_command":
            line["level"] = "info"
        self._emit(self._finish(line, isMeta=False))

    # --- assistant side -------------------------------------------------------------------

    def act(self, step: Act) -> None:
        """One API message: each block on its own line, sharing `message.id`; then tool results."""
        msg_id = "msg_01" + token(self.rng, 22)
        request_id = "req_011C" + token(self.rng, 20)
        blocks: list[dict[str, Any]] = []
        if step.thinking is not None and self.fmt.modern:
            blocks.append(
                {"type": "thinking", "thinking": step.thinking, "signature": token(self.rng, 140)}
            )
        if step.text is not None:
            blocks.append({"type": "text", "text": step.text})
        call_ids: list[str] = []
        for call in step.calls:
            tool_id = "toolu_01" + token(self.rng, 22)
            call_ids.append(tool_id)
            blocks.append(
                {"type": "tool_use", "id": tool_id, "name": call.name, "input": call.input}
            )
        usage = self._usage(self.rng.randint(8, 900))
        line_of_call: dict[str, str] = {}
        self._tick(2, 25)
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            stop = None
            if last:
                stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
            uid = new_uuid(self.rng)
            stamp = self._tick(0.05, 1.5)
            line = self._envelope("assistant", uid, stamp, self.last)
            line["message"] = {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": copy.deepcopy(usage),
            }
            line["requestId"] = request_id
            # requestId sits before `type` in real files; rebuild order cheaply.
            line = self._reorder_assistant(line)
            self._emit(self._finish(line))
            if block["type"] == "tool_use":
                line_of_call[block["id"]] = uid
        for call, tool_id in zip(step.calls, call_ids, strict=True):
            self._result(call, tool_id, line_of_call[tool_id])
        if self.fmt.modern and not self.sidechain:
            self.slug_on = True

    @staticmethod
    def _reorder_assistant(line: dict[str, Any]) -> dict[str, Any]:
        ordered: dict[str, Any] = {}
        for key, value in line.items():
            if key not in ("type", "_uuid", "_timestamp", "requestId"):
                ordered[key] = value
        ordered["requestId"] = line["requestId"]
        ordered["type"] = line["type"]
        ordered["_uuid"] = line["_uuid"]
        ordered["_timestamp"] = line["_timestamp"]
        return ordered

    def _result(self, call: Call, tool_id: str, source_uuid: str) -> None:
        tur = call.tur
        result_content: str | list[dict[str, Any]] = call.result
        if call.subagent is not None:
            agent_id = self._run_subagent(call.subagent, tool_id)
            report = call.result if isinstance(call.result, str) else ""
            result_content = [{"type": "text", "text": report}]
            usage = self._usage(self.rng.randint(400, 3000))
            if self.fmt.modern:
                result_content.append(
                    {
                        "type": "text",
                        "text": f"agentId: {agent_id} (for resuming to continue this agent's work if needed)",
                    }
                )
                tur = {
                    "status": "completed",
                    "prompt": call.subagent.prompt,
                    "agentId": agent_id,
                    "content": [{"type": "text", "text": report}],
                    "totalDurationMs": self.rng.randint(8000, 120000),
                    "totalTokens": self.rng.randint(9000, 60000),
                    "totalToolUseCount": sum(
                        len(s.calls) for s in call.subagent.steps if isinstance(s, Act)
                    ),
                    "usage": usage,
                }
            else:
                tur = {
                    "content": [{"type": "text", "text": report}],
                    "totalDurationMs": self.rng.randint(8000, 120000),
                    "totalTokens": self.rng.randint(9000, 60000),
                    "totalToolUseCount": sum(
                        len(s.calls) for s in call.subagent.steps if isinstance(s, Act)
                    ),
                    "usage": usage,
                }
        uid = new_uuid(self.rng)
        stamp = self._tick(0.2, 6)
        line = self._envelope("user", uid, stamp, source_uuid)
        block: dict[str, Any] = {
            "tool_use_id": tool_id,
            "type": "tool_result",
            "content": result_content,
        }
        if call.is_error or not self.fmt.modern:
            block["is_error"] = call.is_error
        else:
            block["is_error"] = False
        line["message"] = {"role": "user", "content": [block]}
        self._emit(
            self._finish(
                line,
                promptId=self.prompt_id if self.fmt.modern else None,
                toolUseResult=tur,
                sourceToolAssistantUUID=source_uuid if self.fmt.modern else None,
            )
        )
        hooked = self.fmt.modern and not self.sidechain and call.name in ("Bash", "Edit", "Write")
        if hooked and self.rng.random() < 0.25:
            self._hook_progress(call.name, tool_id)

    def _hook_progress(self, tool: str, tool_id: str) -> None:
        uid = new_uuid(self.rng)
        stamp = self._tick(0.001, 0.05)
        line = self._envelope("progress", uid, stamp, self.last)
        line["data"] = {
            "type": "hook_progress",
            "hookEvent": "PostToolUse",
            "hookName": f"PostToolUse:{tool}",
            "command": "callback",
        }
        line["parentToolUseID"] = tool_id
        line["toolUseID"] = tool_id
        # Progress lines hang off the chain without becoming its tip.
        self._emit(self._finish(line), chain=False)

    def _run_subagent(self, sub: SubAgent, tool_id: str) -> str:
        if self.fmt.modern:
            agent_id = "a" + token(self.rng, 16, "0123456789abcdef")
        else:
            agent_id = token(self.rng, 8, "0123456789abcdef")
        child = StreamWriter(
            fmt=self.fmt,
            session_id=self.session_id,
            cwd=self.cwd,
            branch=self.branch,
            start_ms=self.clock,
            epoch=self.epoch,
            rng=random.Random(self.rng.getrandbits(64)),
            sidechain=True,
            agent_id=agent_id,
            slug=self.slug,
            model=SUBAGENT_MODEL if self.fmt.modern else self.model,
        )
        child.slug_on = self.slug_on
        child.user_text(sub.prompt, snapshot=False)
        for step in sub.steps:
            child.write(step)
        if self.fmt.modern:
            # The parent mirrors subagent activity as progress lines; importers prefer the file.
            uid = new_uuid(self.rng)
            stamp = self._tick(0.5, 3)
            line = self._envelope("progress", uid, stamp, self.last)
            line["data"] = {
                "type": "agent_progress",
                "prompt": sub.prompt,
                "agentId": agent_id,
                "message": {"type": "user", "message": {"role": "user", "content": sub.prompt}},
            }
            line["toolUseID"] = "agent_" + token(self.rng, 24)
            line["parentToolUseID"] = tool_id
            self._emit(self._finish(line), chain=False)
        self.clock = max(self.clock, child.clock)
        self.subfiles.append(child.file)
        return agent_id

    # --- driving --------------------------------------------------------------------------

    def write(self, step: Step) -> None:
        if isinstance(step, Prompt):
            self.prompt(step)
        elif isinstance(step, Act):
            self.act(step)
        else:
            self.command(step)

    def turn_duration(self) -> None:
        if self.fmt.modern and not self.sidechain:
            self._system("turn_duration", durationMs=self.rng.randint(4000, 240000))

    def summary(self, title: str) -> None:
        """Older files start with summary lines pointing at a leaf (here, this file's last line)."""
        leaf = self.last or new_uuid(self.rng)
        self.file.lines.insert(0, {"type": "summary", "summary": title, "leafUuid": leaf})

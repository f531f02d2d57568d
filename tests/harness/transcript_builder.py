"""Build small Claude Code sessions line by line for the miner and mask tests.

`SessionBuilder` writes lines shaped like Claude Code 2.x (full envelope, increasing times, a
``toolUseResult`` beside every tool result, as real Bash results carry) into a test's ``tmp_path``,
either in the ``projects/<encoded cwd>/`` layout or as a flat folder; `write_agent` writes a subagent
file under ``<session>/subagents/``. Raw strings are written as they are (for lines that are not JSON).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Line = dict[str, Any] | str


class SessionBuilder:
    """Builds the lines of one Claude Code session with a full envelope and increasing times."""

    def __init__(self, sid: str, cwd: str) -> None:
        self.sid, self.cwd = sid, cwd
        self.lines: list[Line] = []

    def _env(self, kind: str) -> dict[str, Any]:
        n = len(self.lines)
        parents = [line for line in self.lines if isinstance(line, dict)]
        return {
            "parentUuid": parents[-1]["uuid"] if parents else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": "2.1.74",
            "gitBranch": "main",
            "type": kind,
            "uuid": f"{self.sid[:8]}-line-{n}",
            "timestamp": f"2026-01-05T09:{n // 60:02d}:{n % 60:02d}.000Z",
        }

    def user(self, text: str) -> SessionBuilder:
        self.lines.append({**self._env("user"), "message": {"role": "user", "content": text}})
        return self

    def say(self, text: str) -> SessionBuilder:
        n = len(self.lines)
        self.lines.append(
            {
                **self._env("assistant"),
                "message": {
                    "id": f"msg_{self.sid[-4:]}_{n}",
                    "role": "assistant",
                    "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": text}],
                },
            }
        )
        return self

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        result: str | list[dict[str, Any]],
        *,
        tool_id: str | None = None,
    ) -> SessionBuilder:
        """A tool call and its result (a string, or a list of content blocks)."""
        n = len(self.lines)
        stdout = result if isinstance(result, str) else "\n".join(b["text"] for b in result)
        tool_id = tool_id or f"toolu_{self.sid[-4:]}_{n}"
        self.lines.append(
            {
                **self._env("assistant"),
                "message": {
                    "id": f"msg_{self.sid[-4:]}_{n}",
                    "role": "assistant",
                    "model": "claude-opus-4-6",
                    "content": [
                        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
                    ],
                },
            }
        )
        self.lines.append(
            {
                **self._env("user"),
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}],
                },
                "toolUseResult": {"stdout": stdout, "stderr": ""},
            }
        )
        return self

    def bash(
        self, command: str, result: str | list[dict[str, Any]], *, tool_id: str | None = None
    ) -> SessionBuilder:
        return self.tool("Bash", {"command": command}, result, tool_id=tool_id)

    def raw(self, line: Line) -> SessionBuilder:
        """Append a line as given: a dict is written as JSON, a string as it is."""
        self.lines.append(line)
        return self

    def copy_from(self, other: SessionBuilder, count: int | None = None) -> SessionBuilder:
        """Append `other`'s first `count` lines under this session id (a resumed session's copy)."""
        for line in other.lines[:count]:
            self.lines.append(dict(line, sessionId=self.sid) if isinstance(line, dict) else line)
        return self

    def text(self) -> str:
        return "".join(
            (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in self.lines
        )

    def write(self, root: Path, *, flat: bool = False) -> Path:
        folder = root if flat else root / "projects" / self.cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.sid}.jsonl"
        path.write_text(self.text(), encoding="utf-8")
        return path

    def write_agent(self, root: Path, session: str, agent: str, *, flat: bool = False) -> Path:
        """Write these lines as subagent `agent` of `session` (``<session>/subagents/``)."""
        folder = root if flat else root / "projects" / self.cwd.replace("/", "-")
        path = folder / session / "subagents" / f"agent-{agent}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            dict(line, agentId=agent, isSidechain=True) if isinstance(line, dict) else line
            for line in self.lines
        ]
        path.write_text(
            "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
            encoding="utf-8",
        )
        return path

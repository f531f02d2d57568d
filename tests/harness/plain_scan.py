"""A plain scan of transcript files for git's commit lines, written without any engine or harness code.

It is the yardstick for the miner: every ``[branch hash] subject`` line in a ``tool_result`` of any line
of any ``.jsonl`` file, with the session it belongs to (the file's stem, or ``<session>`` for a file in
``<session>/subagents/``). Lines that are not JSON are passed over.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

COMMIT_LINE = re.compile(r"^\[[^\]\n]+? ([0-9a-f]{7,40})\] (.*)$", re.M)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str | dict)
        )
    return ""


def session_of(path: Path) -> str:
    """The session a transcript file belongs to, by its place in the tree."""
    if path.parent.name == "subagents":
        return path.parent.parent.name
    return path.stem


def commit_lines(root: Path) -> dict[tuple[str, str], str]:
    """``(session, 7-char hash) -> subject`` for every commit line in a tool result under `root`."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(root.rglob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            message = line.get("message") if isinstance(line, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    for m in COMMIT_LINE.finditer(_result_text(block.get("content"))):
                        found[(session_of(path), m.group(1)[:7])] = m.group(2).strip()
    return found

"""Reading a generated synthetic tree back, independently of the generator's own records.

Shared by the `test_synthetic*` modules; it holds no tests of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.synthetic import GeneratedCorpus


def tree_sha256(root: Path) -> str:
    """sha256 over every file under `root`: sorted relative posix paths, each followed by its bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        digest.update(rel.encode("utf-8") + b"\0")
        data = path.read_bytes()
        digest.update(str(len(data)).encode("ascii") + b"\0" + data)
    return digest.hexdigest()


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def read_tree(root: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        p.relative_to(root).as_posix(): read_lines(p)
        for p in sorted((root / "projects").rglob("*.jsonl"))
    }


def by_session(tree: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Every line of every file grouped by sessionId (subagent lines join their parent)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for lines in tree.values():
        for line in lines:
            if "sessionId" in line:
                out.setdefault(line["sessionId"], []).append(line)
    return out


def blocks_of(line: dict[str, Any]) -> list[dict[str, Any]]:
    content = line.get("message", {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def strings_in(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def content_strings(line: dict[str, Any]) -> list[str]:
    """Strings of a line's message content: text, tool_use inputs, tool_result bodies."""
    return list(strings_in(line.get("message", {}).get("content")))


def session_text(lines: list[dict[str, Any]]) -> str:
    return "\n".join(s for line in lines for s in content_strings(line))


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def read_rosters(corpus: GeneratedCorpus) -> dict[str, dict[str, Any]]:
    return {
        name: json.loads(path.read_text(encoding="utf-8")) for name, path in corpus.rosters.items()
    }


def read_planted(corpus: GeneratedCorpus) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(corpus.planted_path.read_text(encoding="utf-8"))
    return data


def is_prompt(line: dict[str, Any]) -> bool:
    """A real human prompt, by the transcript spec's definition."""
    if line.get("type") != "user" or line.get("isSidechain") or line.get("isMeta"):
        return False
    if "toolUseResult" in line:
        return False
    blocks = blocks_of(line)
    if any(b.get("type") == "tool_result" for b in blocks):
        return False
    text = "".join(b.get("text", "") for b in blocks)
    return not text.lstrip().startswith(("<command-", "<local-command"))


def first_prompt(lines: list[dict[str, Any]]) -> str:
    for line in lines:
        if is_prompt(line):
            return "".join(b.get("text", "") for b in blocks_of(line))
    return ""


def git_results(lines: list[dict[str, Any]]) -> list[str]:
    """Bodies of tool results answering a Bash call whose command starts with `git`."""
    git_ids = {
        b["id"]
        for line in lines
        if line.get("type") == "assistant"
        for b in blocks_of(line)
        if b.get("type") == "tool_use" and b["name"] == "Bash" and "git " in b["input"]["command"]
    }
    return [
        s
        for line in lines
        if line.get("type") == "user"
        for b in blocks_of(line)
        if b.get("type") == "tool_result" and b["tool_use_id"] in git_ids
        for s in strings_in(b["content"])
    ]

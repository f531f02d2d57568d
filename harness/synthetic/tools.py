"""Tool-call builders with the result shapes Claude Code records (content + `toolUseResult`)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from harness.synthetic.lines import Call, Format
from harness.synthetic.text import cat_n
from harness.synthetic.vocab import Profile


@dataclass(frozen=True, kw_only=True)
class Ctx:
    """What an episode needs to know about the session it is written into."""

    profile: Profile
    fmt: Format
    branch: str
    day: str  # YYYY-MM-DD of the session start, for log lines

    def abs(self, rel: str) -> str:
        return f"{self.profile.cwd}/{rel}"


def read_call(ctx: Ctx, rel: str, lines: list[str], start: int = 1) -> Call:
    path = ctx.abs(rel)
    body = "\n".join(lines)
    inp: dict[str, Any] = {"file_path": path}
    if start != 1:
        inp["offset"] = start
        inp["limit"] = len(lines)
    return Call(
        name="Read",
        input=inp,
        result=cat_n(lines, start),
        tur={
            "type": "text",
            "file": {
                "filePath": path,
                "content": body,
                "numLines": len(lines),
                "startLine": start,
                "totalLines": start - 1 + len(lines),
            },
        },
    )


def edit_call(
    ctx: Ctx, rel: str, old: str, new: str, snippet: list[str] | None = None, start: int = 1
) -> Call:
    path = ctx.abs(rel)
    inp: dict[str, Any] = {"file_path": path, "old_string": old, "new_string": new}
    if ctx.fmt.modern:
        inp["replace_all"] = False
        result = f"The file {path} has been updated successfully."
    else:
        shown = snippet if snippet is not None else new.splitlines()
        result = (
            f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet "
            f"of the edited file:\n{cat_n(shown, start)}"
        )
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    return Call(
        name="Edit",
        input=inp,
        result=result,
        tur={
            "filePath": path,
            "oldString": old,
            "newString": new,
            "structuredPatch": [
                {
                    "oldStart": start,
                    "oldLines": len(old_lines),
                    "newStart": start,
                    "newLines": len(new_lines),
                    "lines": [f"-{x}" for x in old_lines] + [f"+{x}" for x in new_lines],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
    )


def multiedit_call(ctx: Ctx, rel: str, edits: list[tuple[str, str]]) -> Call:
    path = ctx.abs(rel)
    listed = [{"old_string": o, "new_string": n} for o, n in edits]
    summary = "\n".join(
        f'{i}. Replaced "{o.splitlines()[0][:60]}" with "{n.splitlines()[0][:60]}"'
        for i, (o, n) in enumerate(edits, start=1)
    )
    return Call(
        name="MultiEdit",
        input={"file_path": path, "edits": listed},
        result=f"Applied {len(edits)} edits to {path}:\n{summary}",
        tur={"filePath": path, "edits": listed, "structuredPatch": [], "userModified": False},
    )


def write_call(ctx: Ctx, rel: str, lines: list[str]) -> Call:
    path = ctx.abs(rel)
    body = "\n".join(lines) + "\n"
    return Call(
        name="Write",
        input={"file_path": path, "content": body},
        result=f"File created successfully at: {path}",
        tur={"type": "create", "filePath": path, "content": body, "structuredPatch": []},
    )


def bash_call(
    ctx: Ctx, command: str, output: str, description: str, *, error: bool = False
) -> Call:
    if error:
        return Call(
            name="Bash",
            input={"command": command, "description": description},
            result=output,
            tur=f"Error: {output}",
            is_error=True,
        )
    tur: dict[str, Any] = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
    if ctx.fmt.modern:
        tur["noOutputExpected"] = False
    return Call(
        name="Bash",
        input={"command": command, "description": description},
        result=output,
        tur=tur,
    )


def grep_call(pattern: str, output: str, path: str | None = None) -> Call:
    inp: dict[str, Any] = {"pattern": pattern, "output_mode": "content", "-n": True}
    if path is not None:
        inp["path"] = path
    lines = output.splitlines()
    return Call(
        name="Grep",
        input=inp,
        result=output or "No matches found",
        tur={
            "mode": "content",
            "numFiles": len({x.split(":", 1)[0] for x in lines}),
            "filenames": [],
            "content": output,
            "numLines": len(lines),
        },
    )


def glob_call(ctx: Ctx, pattern: str, rels: list[str], rng: random.Random) -> Call:
    files = [ctx.abs(r) for r in rels]
    return Call(
        name="Glob",
        input={"pattern": pattern},
        result="\n".join(files) if files else "No files found",
        tur={
            "filenames": files,
            "durationMs": rng.randint(2, 40),
            "numFiles": len(files),
            "truncated": False,
        },
    )


def todo_call(items: list[str], done: int) -> Call:
    todos = [
        {
            "content": item,
            "status": "completed" if i < done else ("in_progress" if i == done else "pending"),
            "activeForm": item[:1].upper() + item[1:],
        }
        for i, item in enumerate(items)
    ]
    return Call(
        name="TodoWrite",
        input={"todos": todos},
        result=(
            "Todos have been modified successfully. Ensure that you continue to use the todo list "
            "to track your progress. Please proceed with the current tasks if applicable"
        ),
        tur={"oldTodos": [], "newTodos": todos},
    )


def mcp_call(name: str, arguments: dict[str, Any], text: str) -> Call:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    return Call(name=name, input=arguments, result=blocks, tur=[{"type": "text", "text": text}])

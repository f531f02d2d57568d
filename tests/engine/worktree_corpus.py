"""Sessions in two git worktrees of one repository and in a second repository, each editing its own
`src/store.py`, laid out on disk as git writes them (`tests.engine.git_layout`) so that the import
records where each folder sits in git.

wt-a's session names the identifier `hoist_overdue_remnants`; wt-b's and other's do not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.embed import HashEmbedder
from engine.memory import Memory
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    text_block,
    tool_use_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.engine.git_layout import repository, worktree


def session(root: Path, n: int, cwd: Path, prompt: str, answer: str, edited: str) -> str:
    """A session in `cwd` whose answer edits `cwd/edited`; returns its id."""
    sid = f"88888888-0000-4000-8000-{n:012d}"
    env: dict[str, Any] = {"session_id": sid, "cwd": str(cwd)}
    blocks = [
        text_block(answer),
        tool_use_block(f"{n}-t", "Edit", {"file_path": f"{cwd}/{edited}"}),
    ]
    lines = [user_line(prompt, uuid=f"{n}-u", timestamp=ts(10 * n), **env)]
    lines += assistant_lines(
        blocks,
        message_id=f"{n}-m",
        uuids=[f"{n}-a0", f"{n}-a1"],
        parent=f"{n}-u",
        timestamp=ts(10 * n, 30),
        **env,
    )
    write_jsonl(root / "projects" / f"p{n}" / f"{sid}.jsonl", lines)
    return sid


def worktree_memory(tmp_path: Path) -> tuple[Memory, dict[str, Path], dict[str, str]]:
    """The memory (hash embedder) of the three sessions, the folders by name and the session ids."""
    main = tmp_path / "repo"
    repository(main)
    folders = {"a": tmp_path / "wt-a", "b": tmp_path / "wt-b", "other": tmp_path / "other"}
    worktree(main, folders["a"], "wt-a")
    worktree(main, folders["b"], "wt-b")
    repository(folders["other"])
    root = tmp_path / "c"
    ids = {
        "a": session(
            root,
            1,
            folders["a"],
            "add hoist_overdue_remnants to the store",
            "Added hoist_overdue_remnants in store.py.",
            "src/store.py",
        ),
        "b": session(
            root,
            2,
            folders["b"],
            "tune it",
            "Set the batch size to 512 for nightly jobs.",
            "src/store.py",
        ),
        "other": session(
            root,
            3,
            folders["other"],
            "tune the other store",
            "Set the retry limit to 3.",
            "src/store.py",
        ),
    }
    memory = Memory(tmp_path / "m.db", HashEmbedder(256))
    memory.import_paths([root])
    return memory, folders, ids

"""A corpus whose chunks were written on known days, for the reads of a scope with a time window.

Each session is one prompt and one edit, so it is one chunk whose time is the prompt's: 2026-01-10, -20 and -30 at
09:00 UTC in project `P`, and 2026-01-20 in project `Q`. The best match for "deploy gateway" is the
earliest chunk, lexically and by the hash embedder's cosine (it holds the query's words most often).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.embed import HashEmbedder
from engine.lexical_reads import LexicalMode
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    tool_use_block,
    user_line,
    write_jsonl,
)

P = "/home/dev/proj"
Q = "/home/dev/other"
QUERY = "deploy gateway"
TEXTS = {
    1: "deploy gateway deploy gateway: the gateway deploy failed on the first try",
    2: "deploy notes: the gateway came up after the retry",
    3: "deploy checklist written, gateway untouched",
    4: "deploy gateway in the other project",
}
DAYS = {1: "2026-01-10", 2: "2026-01-20", 3: "2026-01-30", 4: "2026-01-20"}
EDITED = "src/gateway.py"


def session_id(n: int) -> str:
    return f"77777777-0000-4000-8000-{n:012d}"


def write_window_corpus(root: Path) -> Path:
    """The four one-chunk sessions under `root/projects`; returns `root`. Each prompt is answered
    half a minute later by an edit of `EDITED` (the same file in P's three sessions), so the walk's
    graph links them."""
    for n, text in TEXTS.items():
        cwd = Q if n == 4 else P
        env: dict[str, Any] = {"session_id": session_id(n), "cwd": cwd}
        day = DAYS[n]
        lines = [
            user_line(text, uuid=f"w{n}", timestamp=f"{day}T09:00:00.000Z", **env),
            *assistant_lines(
                [tool_use_block(f"t{n}", "Edit", {"file_path": f"{cwd}/{EDITED}"})],
                message_id=f"m{n}",
                uuids=[f"a{n}"],
                parent=f"w{n}",
                timestamp=f"{day}T09:00:30.000Z",
                **env,
            ),
        ]
        folder = cwd.replace("/", "-")
        write_jsonl(root / "projects" / folder / f"{session_id(n)}.jsonl", lines)
    return root


def window_memory(tmp_path: Path, lexical_index: LexicalMode = "off") -> Memory:
    """A memory (hash embedder) holding the window corpus, imported and embedded."""
    memory = Memory(tmp_path / "w.db", HashEmbedder(64), lexical_index=lexical_index)
    memory.import_paths([write_window_corpus(tmp_path / "c")])
    return memory


def chunk_of(memory: Memory, n: int) -> str:
    """The id of session `n`'s one chunk."""
    found = memory.recent_sessions(Scope.everywhere(), 10)
    by_session = {row["session_id"]: row["opening_chunk_id"] for row in found}
    return str(by_session[session_id(n)])

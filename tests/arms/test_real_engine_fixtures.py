"""The walk's known failure and its sibling success, on the real engine (SQLite, FTS5, stored vectors)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arms.base import Query
from arms.registry import build
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    text_block,
    tool_use_block,
    ts,
    user_line,
    write_jsonl,
)

P = "/home/dev/proj"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def session(
    root: Path, n: int, minute: int, prompt: str, answer: str, edits: tuple[str, ...] = ()
) -> str:
    sid = f"66666666-0000-4000-8000-{n:012d}"
    env: dict[str, Any] = {"session_id": sid, "cwd": P}
    lines: list[dict[str, Any]] = [user_line(prompt, uuid=f"{n}-u", timestamp=ts(minute), **env)]
    blocks = [text_block(answer)] + [
        tool_use_block(f"{n}-t{i}", "Edit", {"file_path": f}) for i, f in enumerate(edits)
    ]
    lines += assistant_lines(
        blocks,
        message_id=f"{n}-m",
        uuids=[f"{n}-a{i}" for i in range(len(blocks))],
        parent=f"{n}-u",
        timestamp=ts(minute, 30),
        **env,
    )
    write_jsonl(root / "projects" / "-home-dev-proj" / f"{sid}.jsonl", lines)
    return sid


def rank_of(memory: Memory, spec: str, text: str, session_id: str) -> int | None:
    hits = build(spec, memory).search(Query(text=text, scope=Scope.of(P), now=NOW, k=10))
    records = {r.id: r.session_id for r in memory.chunks([h.chunk_id for h in hits], Scope.of(P))}
    sessions = [records[h.chunk_id] for h in hits]
    return sessions.index(session_id) + 1 if session_id in sessions else None


def test_walk_ranks_the_exact_key_chunk_lower_than_rrf(tmp_path: Path) -> None:
    root = tmp_path / "c"
    key = "fix flaky retry loop commit 3f9c2ab"
    gold = session(root, 1, 1, "commit it", f"Ran git commit; the log reads: {key} on main.")
    for n in range(2, 7):
        session(
            root,
            n,
            10 * n,
            f"the flaky retry loop fix again, attempt {n}",
            f"We looked at the flaky retry loop fix ({n}).",
        )
    memory = Memory(tmp_path / "m.db", HashEmbedder(256))
    memory.import_paths([root])
    rrf_rank = rank_of(memory, "rrf", key, gold)
    walk_rank = rank_of(memory, "walk", key, gold)
    assert rrf_rank == 1  # the chunk holding the key verbatim is fusion's first hit
    assert walk_rank is None or walk_rank > rrf_rank  # the echo demotion pushes it down in the walk


def test_walk_beats_rrf_when_the_answer_is_reachable_only_through_a_shared_file_edit(
    tmp_path: Path,
) -> None:
    root = tmp_path / "c"
    question = "where is hoist_overdue_remnants configured"
    session(
        root,
        1,
        1,
        "add hoist_overdue_remnants to the ledger module",
        "Added hoist_overdue_remnants in ledger_batch.",
        ("src/ledger_batch.py",),
    )
    answer = session(
        root,
        2,
        30,
        "tune it",
        "Set the batch size to 512 for nightly jobs.",
        ("src/ledger_batch.py",),
    )
    session(root, 3, 60, "unrelated", "Updated the README badges.", ("README.md",))
    memory = Memory(tmp_path / "m.db", HashEmbedder(256))
    memory.import_paths([root])
    assert rank_of(memory, "rrf", question, answer) is None  # no word or meaning leads fusion there
    walk_rank = rank_of(memory, "walk", question, answer)
    assert walk_rank is not None  # the walk follows the shared file edit
    hits = build("walk", memory).search(Query(text=question, scope=Scope.of(P), now=NOW, k=10))
    vias = {memory.chunks([h.chunk_id], Scope.of(P))[0].session_id: h.via for h in hits}
    assert vias[answer] == "graph"

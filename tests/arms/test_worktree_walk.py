"""The walk follows a file edit into another git worktree of the same folder
(`engine.file_paths`; corpus: `tests.engine.worktree_corpus`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from arms.base import Query
from arms.registry import build
from engine.scope import Scope
from tests.engine.worktree_corpus import worktree_memory

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_the_walk_follows_a_file_edit_into_another_worktree(tmp_path: Path) -> None:
    memory, folders, ids = worktree_memory(tmp_path)
    scope = Scope.of(str(folders["a"]), str(folders["b"]))
    question = "where is hoist_overdue_remnants configured"
    hits = build("walk", memory).search(Query(text=question, scope=scope, now=NOW, k=10))
    sessions = {r.id: r.session_id for r in memory.chunks([h.chunk_id for h in hits], scope)}
    vias = {sessions[h.chunk_id]: h.via for h in hits}
    assert ids["a"] in vias  # control: the seed, in wt-a, holds the identifier
    assert vias.get(ids["b"]) == "graph"  # wt-b's session is reached through src/store.py

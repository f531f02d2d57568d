"""A small corpus for typed corrections: one chunk per session, all about the orders database.

Project SHOP holds four sessions (one chunk each, every one holding the words "orders database"):
OLD says the port is 5432 (and says "port" four times, so every arm ranks it first for "orders
database port"), NEW says it moved to 6543, and BACKUP and POOL are bystanders. Chunk ids are keyed
by the path below the corpus folder (`stream_root`), so they are the same in every test's tmp_path. Project BLOG
holds one more session about its own database, for scope controls. `shop_memory` imports them and
returns the chunk id of each session by name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from engine.embed import HashEmbedder
from engine.lexical_reads import LexicalMode
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

SHOP = "/home/dev/shop"
BLOG = "/home/dev/blog"
T0 = datetime(2026, 5, 1, 9, 30, 0, tzinfo=UTC)
T1 = datetime(2026, 5, 2, 8, 0, 0, tzinfo=UTC)

SESSIONS: dict[str, tuple[str, str, str, str]] = {
    # name: (session id, project, prompt, answer)
    "old": (
        "7a000000-0000-4000-8000-000000000001",
        SHOP,
        "Which port is the orders database port?",
        "The orders database port is port 5432.",
    ),
    "new": (
        "7a000000-0000-4000-8000-000000000002",
        SHOP,
        "The orders database moved to a new host",
        "The orders database now listens on 6543.",
    ),
    "backup": (
        "7a000000-0000-4000-8000-000000000003",
        SHOP,
        "When does the orders database backup run?",
        "Backups of the orders database run nightly.",
    ),
    "pool": (
        "7a000000-0000-4000-8000-000000000004",
        SHOP,
        "How large is the orders database connection pool?",
        "The pool holds twenty orders database connections.",
    ),
    "blog": (
        "7a000000-0000-4000-8000-000000000005",
        BLOG,
        "Which port does the blog database listen on?",
        "The blog database listens on port 5432.",
    ),
}


def write_corpus(root: Path) -> Path:
    """The transcripts of `SESSIONS` under `root`; returns the folder to import."""
    for name, (sid, cwd, prompt, answer) in SESSIONS.items():
        write_jsonl(
            root / name / f"{sid}.jsonl",
            simple_session(prompt, session_id=sid, cwd=cwd, answer=answer, prefix=f"{name}-"),
        )
    return root


def chunk_ids(memory: Memory) -> dict[str, str]:
    """Session name -> the id of its one chunk."""
    rows = memory.chunks([r[1] for r in memory.chunk_rows()], Scope.everywhere())
    by_session = {r.session_id: r.id for r in rows}
    return {name: by_session[sid] for name, (sid, *_) in SESSIONS.items()}


def shop_memory(
    tmp_path: Path, *, lexical_index: LexicalMode = "off", db: Path | None = None
) -> tuple[Memory, dict[str, str]]:
    """A memory of the corpus (hash embedder, 64-d; in `db`, default tmp_path/trust.db) and each
    session's chunk id by name."""
    path = db if db is not None else tmp_path / "trust.db"
    memory = Memory(path, HashEmbedder(64), lexical_index=lexical_index)
    root = write_corpus(tmp_path / "projects")
    memory.import_paths([root], stream_root=root)
    ids = chunk_ids(memory)
    if len(memory.chunk_rows()) != len(SESSIONS):  # the fixture's premise: one chunk per session
        msg = f"expected one chunk per session, got {len(memory.chunk_rows())} chunks"
        raise AssertionError(msg)
    return memory, ids

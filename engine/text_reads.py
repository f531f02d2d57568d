"""A numpy-free read facade over the store for short-lived processes such as the prompt hook.

It answers the text side of the read API (projects, FTS5 lexical search, chunk records) through one
SQLite connection, importing neither numpy nor the vector catalog, so a hook can start and answer
within its budget. Long-lived processes use `engine.memory.Memory`, which gives identical answers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from engine import checkout_sql, reads, store
from engine.api import ChunkRecord, Scored, Settlement
from engine.git_repo import Checkout
from engine.scope import Scope

# The words a lexical read searches for, for callers outside engine/ (`recallbench search`'s note).
query_terms = reads.query_terms


def is_lock_error(exc: BaseException) -> bool:
    """Whether `exc` is the store reporting a lock held by another process (what a retry can fix)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    return is_lock_message(str(exc))


def is_lock_message(text: str) -> bool:
    """Whether an error message from the store is about a lock (as import reports keep them)."""
    lowered = text.lower()
    return "locked" in lowered or "busy" in lowered


class TextReads:
    """Scoped text reads over one database; every read takes a required `Scope`."""

    def __init__(self, db_path: Path, *, busy_timeout_ms: int = store.BUSY_TIMEOUT_MS) -> None:
        self._conn = store.connect(Path(db_path), busy_timeout_ms=busy_timeout_ms)

    def projects(self) -> list[str]:
        """Every project with a recorded session, sorted."""
        return reads.projects(self._conn)

    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        """FTS5 BM25 over chunk text (score = -bm25, higher is better), as `Memory.lexical`; `stem`
        reads the Porter-stemmed index. Corrected chunks are left out, as there."""
        return reads.lexical(self._conn, text, scope, limit, stem=stem)

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        """Records for `ids` in the order given; ids unknown or outside `scope` are omitted."""
        return reads.chunks(self._conn, ids, scope)

    def project_checkouts(self) -> dict[str, Checkout]:
        """Where each recorded project's folder sat in git when it was imported
        (`engine.checkout_sql`); scope resolution joins worktrees with them."""
        return checkout_sql.checkouts(self._conn)

    def recent_sessions(self, scope: Scope, limit: int) -> list[dict[str, object]]:
        """Most recently started sessions in scope with their chunk counts and opening chunk, as
        `Memory.recent_sessions` (`engine.reads.recent_sessions`)."""
        return reads.recent_sessions(self._conn, scope, limit)

    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]:
        """Active settles in which a chunk of `ids` that lies in `scope` is old or new, oldest first."""
        return reads.settlements_of(self._conn, ids, scope)

    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None:
        """Which of `uuids` the session's stored messages hold; None when the session is not stored
        (`engine.reads.held_messages`)."""
        return reads.held_messages(self._conn, session_id, uuids)

    def ids_starting_with(
        self, kind: str, prefix: str, scope: Scope, limit: int
    ) -> tuple[list[str], int]:
        """Up to `limit` session or chunk ids (`kind`) in scope that start with `prefix` and are
        longer, and how many (`engine.reads.ids_starting_with`)."""
        return reads.ids_starting_with(self._conn, kind, prefix, scope, limit)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> TextReads:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

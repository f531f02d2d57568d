"""How `Memory.lexical` is answered: by FTS5 itself, or by the in-memory lexical index of FTS5.

The two give identical results (ids, order and scores); the mode only chooses what a query costs:

- "off": FTS5 for every query (a process that asks once, such as a hook);
- "sync": an in-memory `engine.lexical_index.LexicalIndex` snapshot of FTS5, brought up to date on
  the next query after the store changed (a benchmark over a frozen corpus);
- "background": the same snapshot, brought up to date by a background thread while FTS5 answers (a
  server whose store other processes keep writing to).

Bringing a snapshot up to date catches it up with the rows that changed (`engine.lexical_layers`: a
fraction of a second after one session's import) and falls back to a full rebuild when many did.

Each index (plain, and Porter-stemmed for `stem=True`) has its own snapshot, built the first time a
query asks for that index: a process that never stems never holds the stemmed one.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from engine import reads, store, trust_sql, window_reads
from engine.api import Scored
from engine.lexical_index import LexicalIndex
from engine.lexical_layers import catch_up
from engine.scope import Scope, require_scope

LexicalMode = Literal["off", "sync", "background"]
LEXICAL_MODES: tuple[LexicalMode, ...] = ("off", "sync", "background")


class LexicalReads:
    """Lexical reads over one database in one mode; `conn` gives the calling thread's connection.

    Raises:
        ValueError: `mode` is not one of LEXICAL_MODES.
    """

    def __init__(
        self,
        db_path: Path,
        conn: Callable[[], sqlite3.Connection],
        *,
        mode: LexicalMode,
        busy_timeout_ms: int,
    ) -> None:
        if mode not in LEXICAL_MODES:
            msg = f"lexical_index must be one of {', '.join(LEXICAL_MODES)}, got {mode!r}"
            raise ValueError(msg)
        self._db_path = db_path
        self._conn = conn
        self._mode: LexicalMode = mode
        self._busy_timeout_ms = busy_timeout_ms
        # By `stem`: the snapshot of that index, and the thread building one in the background.
        self._cache: dict[bool, LexicalIndex] = {}
        self._lock = threading.Lock()
        self._builder: dict[bool, threading.Thread] = {}

    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        """FTS5 BM25 over chunk text; score = -bm25 (higher is better). User text is plain words only.

        `stem` reads the Porter-stemmed index. Answered by the in-memory snapshot of that index when
        this mode keeps one and it is current (the same ids, order and scores), else by FTS5 itself.
        A scope with a time window: see `_windowed` (the snapshot holds no times).
        A chunk an active `corrected` settle hides is never returned: the snapshot is asked for as
        many more rows as there are hidden chunks, so `limit` still fills exactly as FTS5's does.
        """
        stem = bool(stem)
        require_scope(scope)
        if scope.windowed:
            return self._windowed(text, scope, limit, stem)
        index = self._current_index(stem)
        if index is None:
            return reads.lexical(self._conn(), text, scope, limit, stem=stem)
        return self._search(index, text, scope, limit)

    def _search(
        self,
        index: LexicalIndex,
        text: str,
        scope: Scope,
        limit: int,
        chunks: list[str] | None = None,
    ) -> list[Scored]:
        """The snapshot's answer for the scope's projects (and, given `chunks`, those chunks only)."""
        allowed = None if scope.all_projects else frozenset(scope.projects)
        hidden = trust_sql.corrected_ids(self._conn(), None if allowed is None else sorted(allowed))
        found = index.search(
            reads.query_terms(text),
            allowed,
            limit + len(hidden) if limit > 0 else 0,
            chunks=chunks,
        )
        return [
            Scored(chunk_id=chunk, score=score) for chunk, score in found if chunk not in hidden
        ][:limit]

    def _windowed(self, text: str, scope: Scope, limit: int, stem: bool) -> list[Scored]:
        """A windowed read: the window's hits among `reads.WINDOW_OVERFETCH` times as many read
        without it from a current snapshot, when `limit` of them are inside or the snapshot held
        fewer matches than asked (then they are the window's best, scored as FTS5 scores them);
        else the snapshot's answer over the window's chunks alone (their ids a range of the time
        index). FTS5 with the window in its SQL when no snapshot is current."""
        index = self._current_index(stem)
        if limit > 0 and index is not None:
            kept = reads.kept_in_window(
                self._conn(), scope, limit, lambda whole, k: self.lexical(text, whole, k, stem=stem)
            )
            if kept is not None:
                return kept
            window = window_reads.ids_in_window(self._conn(), scope)
            return self._search(index, text, scope, limit, window)
        return reads.lexical(self._conn(), text, scope, limit, stem=stem)

    def warm(self, *, wait: bool = True, stem: bool = False) -> None:
        """Bring the snapshot of one index (`stem`: the stemmed one) up to date now (`wait`), or start
        building it in the background.

        Does nothing in mode "off".
        """
        stem = bool(stem)
        if self._mode == "off":
            return
        if not wait:
            self._start_build(stem)
            return
        with self._lock:
            index = self._cache.get(stem)
            if index is None or not index.is_current(self._conn()):
                self._cache[stem] = self._fresh(self._conn(), stem)

    def wait(self, *, stem: bool = False, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: as long as it takes) for a background build of one
        index's snapshot, if one is running; True when a snapshot of that index is held."""
        with self._lock:
            builder = self._builder.get(bool(stem))
        if builder is not None:
            builder.join(timeout)
        return self._cache.get(bool(stem)) is not None

    def snapshot(self, *, stem: bool = False) -> LexicalIndex | None:
        """The snapshot of one index held now, current or not (None before the first build)."""
        return self._cache.get(bool(stem))

    def _current_index(self, stem: bool) -> LexicalIndex | None:
        """The current snapshot, or None when FTS5 must answer this query."""
        if self._mode == "off":
            return None
        index = self._cache.get(stem)
        if index is not None and index.is_current(self._conn()):
            return index
        if self._mode == "sync":
            self.warm(stem=stem)
            return self._cache.get(stem)
        self._start_build(stem)
        return None

    def _fresh(self, conn: sqlite3.Connection, stem: bool) -> LexicalIndex:
        """A snapshot of the store now: the held one caught up when few rows changed since its last
        full build (`engine.lexical_layers`), else a full build; identical results either way."""
        held = self._cache.get(stem)
        if held is not None:
            caught = catch_up(conn, held)
            if caught is not None:
                return caught
        return LexicalIndex.build(conn, stem=stem)

    def _start_build(self, stem: bool) -> None:
        with self._lock:
            builder = self._builder.get(stem)
            if builder is None or not builder.is_alive():
                builder = threading.Thread(
                    target=self._build_in_background,
                    args=(stem,),
                    name="recallbench-lexical-index" + ("-porter" if stem else ""),
                    daemon=True,
                )
                self._builder[stem] = builder
                builder.start()

    def _build_in_background(self, stem: bool) -> None:
        # The thread's own connection: the caller's belongs to the thread that opened it.
        conn = store.connect(self._db_path, busy_timeout_ms=self._busy_timeout_ms)
        try:
            index = self._fresh(conn, stem)
        except Exception:  # FTS5 keeps answering; the next query starts another build
            logging.getLogger(__name__).exception("building the lexical snapshot failed")
            return
        finally:
            conn.close()
        with self._lock:
            current = self._cache.get(stem)
            if current is None or current.generation < index.generation:
                self._cache[stem] = index

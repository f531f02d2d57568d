"""Bringing the in-memory lexical index up to date after a small write, without rebuilding it.

A full `LexicalIndex.build` reads every token instance FTS5 holds (seconds at 100k chunks). After an
import of one session only a few rows are new or rewritten, so `catch_up` instead:

1. reads every chunk's (rowid, key) in one read transaction with the store generation
   (`engine.lexical_sql.chunk_keys`: the key changes with the row's id, project or text), and FTS5's row
   count;
2. keeps the rows of the last full snapshot (the *base*) whose key is unchanged; every other chunk row
   (new, or rewritten in place) is a *delta* row;
3. tokenises the delta rows' text with SQLite's own tokenizer (`engine.lexical_sql.token_instances`),
   reads their FTS5 sizes, and snapshots them as a small `LexicalIndex` of their own.

`LayeredIndex` answers from both: base rows that are gone or replaced never match, and every score uses
the statistics of the store as it is now (N = live rows, avgdl over live rows, a phrase's nHit counted
over live rows of both layers), with the arithmetic of `LexicalIndex` in the same order, so the ids,
their order and their scores equal those of a full rebuild (and of FTS5; tests/engine/
test_lexical_layers.py compares them).

`catch_up` returns None, and the caller rebuilds, when it cannot be exact or cheap: the base was built
without row keys or holds an FTS5 row without a chunk, FTS5's row count differs from the chunk count,
a delta row lacks its FTS5 size, or the delta outgrew `max_delta_rows(base)`.
"""

from __future__ import annotations

import bisect
import sqlite3
import threading

import numpy as np

from engine import lexical_sql, store
from engine.lexical_index import (
    K1,
    B,
    Bools,
    Floats,
    Int32s,
    Int64s,
    LexicalIndex,
)
from engine.lexical_tokens import parse_instances, varint_sum
from engine.reads import FTS_TABLE

# A delta larger than this share of the base (and than MIN_DELTA_ROWS) is cheaper to fold in by a rebuild.
DELTA_SHARE = 0.05
MIN_DELTA_ROWS = 1_000


def max_delta_rows(base: LexicalIndex) -> int:
    """The most delta rows a catch-up over `base` takes before a rebuild is due."""
    return max(MIN_DELTA_ROWS, int(base.width * DELTA_SHARE))


class LayeredIndex(LexicalIndex):
    """A base snapshot, less its replaced rows, plus a delta snapshot of the rows new since: answers
    `search` exactly as a `LexicalIndex` of the store at `generation` would. Build with `catch_up`.

    Rows are numbered base first (0 .. base.width - 1), then delta; a base row that is gone or
    replaced keeps its number but has no project (code -1), so it never matches.
    """

    def __init__(  # the parent's arrays are not rebuilt: search reads only what is set here
        self, base: LexicalIndex, delta: LexicalIndex | None, alive: Bools, generation: int
    ) -> None:
        self.base = base
        self.delta = delta
        self.generation = generation
        self.stem = base.stem
        self.rowids = None
        self.row_keys = None
        self._alive = alive
        self._n_base = base.width
        lengths = base.lengths if delta is None else np.concatenate((base.lengths, delta.lengths))
        self.lengths = lengths
        self.width = int(lengths.size)
        self.n_rows = int(np.count_nonzero(alive)) + (0 if delta is None else delta.width)
        live_tokens = int(base.lengths[alive].sum())
        self.total_tokens = live_tokens + (0 if delta is None else int(delta.lengths.sum()))
        self.avgdl = float(self.total_tokens) / float(self.n_rows) if self.n_rows else 0.0
        d = lengths.astype(np.float64)
        self._norm: Floats = K1 * ((1 - B) + B * d / self.avgdl) if self.n_rows else d
        self._combine_rows(base, delta, alive)
        self._tokenizer = base._tokenizer
        self._lock = threading.Lock()
        self._masks: dict[frozenset[str], Bools] = {}
        self._phrases: dict[tuple[object, ...], tuple[Int32s, Floats] | None] = {}
        self._phrase_entries = 0
        self._ids_by_rank = None
        self._row_of = None

    def _combine_rows(self, base: LexicalIndex, delta: LexicalIndex | None, alive: Bools) -> None:
        """Chunk ids, projects and the id order over both layers."""
        projects = list(base._projects)
        index = dict(base._project_index)
        code = np.where(alive, base._project_code, -1).astype(np.int32)
        ids = base._chunk_ids
        rank = base._id_rank
        if delta is not None:
            lut = np.full(len(delta._projects) + 1, -1, dtype=np.int32)
            for i, project in enumerate(delta._projects):
                if project not in index:
                    index[project] = len(projects)
                    projects.append(project)
                lut[i] = index[project]
            code = np.concatenate((code, lut[delta._project_code]))
            ids = ids + delta._chunk_ids
            rank = _merged_rank(base, delta._chunk_ids)
        self._projects = projects
        self._project_index = index
        self._project_code = code
        self._has_chunk = code >= 0
        self._chunk_ids = ids
        self._id_rank = rank

    def _phrase_scores(self, tokens: tuple[str, ...]) -> tuple[Int32s, Floats] | None:
        """(rows, scores) of the phrase over live rows of both layers, with the store's statistics."""
        key = ("layered", *tokens)
        with self._lock:
            if key in self._phrases:
                return self._phrases[key]
        rows_parts: list[Int64s] = []
        tf_parts: list[Floats] = []
        found_base = self.base.phrase_tf(tokens)
        if found_base is not None:
            rows, tf = found_base
            keep = self._alive[rows]
            rows_parts.append(rows[keep].astype(np.int64))
            tf_parts.append(tf[keep].astype(np.float64))
        found_delta = None if self.delta is None else self.delta.phrase_tf(tokens)
        if found_delta is not None:
            rows_parts.append(found_delta[0].astype(np.int64) + self._n_base)
            tf_parts.append(found_delta[1].astype(np.float64))
        all_rows = np.concatenate(rows_parts) if rows_parts else np.zeros(0, dtype=np.int64)
        found: tuple[Int32s, Floats] | None = None
        if all_rows.size:
            f = np.concatenate(tf_parts)
            weight = (f * (K1 + 1.0)) / (f + self._norm[all_rows])
            found = all_rows.astype(np.int32), self.idf(int(all_rows.size)) * weight
        self._remember(key, found)
        return found


def _merged_rank(base: LexicalIndex, delta_ids: list[str]) -> Int64s:
    """Each row's place in code-point order of the chunk ids of both layers (base rows, then delta).

    Base rows keep their order; each delta id is placed by binary search among the base ids, and a
    base row moves down by the number of delta ids placed at or before it.
    """
    ordered = base.ids_by_rank()
    placed = sorted((bisect.bisect_left(ordered, cid), cid, j) for j, cid in enumerate(delta_ids))
    points = np.asarray([p for p, _, _ in placed], dtype=np.int64)
    base_rank = base._id_rank + np.searchsorted(points, base._id_rank, side="right")
    delta_rank = np.empty(len(delta_ids), dtype=np.int64)
    for k, (p, _, j) in enumerate(placed):
        delta_rank[j] = p + k
    return np.concatenate((base_rank, delta_rank))


def catch_up(conn: sqlite3.Connection, current: LexicalIndex) -> LexicalIndex | None:
    """`current` brought up to the store's generation from its base snapshot, or None when a full
    `LexicalIndex.build` is due (see the module docstring). Call it outside a write transaction."""
    base = current.base if isinstance(current, LayeredIndex) else current
    base_rowids, base_keys = base.rowids, base.row_keys
    if base_rowids is None or base_keys is None or not bool(base._has_chunk.all()):
        return None
    stem = base.stem
    with store.read(conn):
        gen = store.generation(conn)
        if gen == current.generation:
            return current
        keys = lexical_sql.chunk_keys(conn)
        if lexical_sql.fts_row_count(conn, stem=stem) != len(keys):
            return None
        alive, delta_rowids = _compare(base_rowids, base_keys, keys)
        if delta_rowids.size > max_delta_rows(base):
            return None
        listed = delta_rowids.tolist()
        sizes = lexical_sql.fts_docsizes_of(conn, listed, stem=stem)
        rows = lexical_sql.chunk_rows_of(conn, listed)
    if [r for r, _ in sizes] != listed or [r[0] for r in rows] != listed:
        return None
    delta = None
    if listed:
        lengths = np.fromiter((varint_sum(sz) for _, sz in sizes), dtype=np.int64, count=len(sizes))
        tokens = lexical_sql.token_instances([(r[0], r[3]) for r in rows], stem=stem)
        instances = parse_instances(tokens, delta_rowids, FTS_TABLE[stem])
        delta = LexicalIndex.from_snapshot(
            gen, delta_rowids, lengths, [(r[0], r[1], r[2]) for r in rows], instances, stem=stem
        )
    return LayeredIndex(base, delta, alive, gen)


def _compare(
    base_rowids: Int64s, base_keys: Int64s, keys: list[tuple[int, int]]
) -> tuple[Bools, Int64s]:
    """(which base rows are unchanged, the rowids of every other chunk row, ascending)."""
    rowids = np.fromiter((k[0] for k in keys), dtype=np.int64, count=len(keys))
    values = np.fromiter((k[1] for k in keys), dtype=np.int64, count=len(keys))
    alive = np.zeros(base_rowids.size, dtype=np.bool_)
    if base_rowids.size == 0:
        return alive, rowids
    pos = np.minimum(np.searchsorted(base_rowids, rowids), base_rowids.size - 1)
    same = (base_rowids[pos] == rowids) & (base_keys[pos] == values)
    alive[pos[same]] = True
    return alive, rowids[~same]

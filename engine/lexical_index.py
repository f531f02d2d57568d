"""The in-memory lexical index: FTS5's bm25 ranking over `chunks_fts`, with identical results.

One index snapshots one FTS5 table: `chunks_fts`, or with `stem=True` the Porter-stemmed
`chunks_fts_porter` (`engine.reads.FTS_TABLE`); everything below holds for either.

`engine.reads.lexical` asks SQLite for `bm25(chunks_fts)` over an OR of quoted phrases. FTS5 scores
every row that matches any phrase, which for common words is most of the table (about 100 ms at 100k
chunks). `LexicalIndex` holds a snapshot of FTS5's own index in numpy arrays and answers the same
query terms with the same ids, in the same order, with the same scores, in a few milliseconds.

FTS5 stays the source of truth; this is a cache of it:

* `LexicalIndex.build` copies what FTS5 holds, not a re-tokenisation of the chunk text: the postings
  and token offsets come from an `fts5vocab` instance table over `chunks_fts`, the row lengths from
  `chunks_fts_docsize` (the sizes FTS5's bm25 reads), and the chunk ids and projects from `chunks`,
  all inside one read transaction together with the store generation (`engine.store.generation`).
  The statements are `engine.reads`'s; this module holds no SQL.
* `search` takes the query terms `engine.reads.query_terms` produced (each is one phrase of the FTS5
  query `engine.reads.match_query` would build from them). Each phrase is tokenised by SQLite's own
  tokenizer (`engine.reads.PhraseTokenizer`: unicode61, or Porter over unicode61), so case folding,
  diacritics, `foo-bar`, `my_var`, `Straße` and stems such as "running" -> "run" come out exactly
  as in FTS5. No tokenizer or stemmer is re-implemented in Python.
* The score is FTS5's bm25 (ext/fts5/fts5_aux.c), evaluated in float64 with the C code's operation
  order: k1 = 1.2, b = 0.75, avgdl = tokens / rows of the whole table; per phrase i (duplicates count
  separately) idf_i = log((N - nHit_i + 0.5) / (nHit_i + 0.5)), floored to 1e-6 when <= 0, and
  score = sum_i idf_i * (f_i * (k1 + 1)) / (f_i + k1 * (1 - b + b * D / avgdl)) where f_i counts the
  phrase's occurrences in the row (overlapping ones included, as FTS5 counts them). Rows match when
  at least one phrase occurs; they are ordered by score descending, then chunk id ascending.

Staleness: the snapshot describes the store at `generation`. Every write that changes chunks bumps
the store's generation, so a caller compares `index.generation` with `store.generation(conn)` (or
calls `is_current`) and rebuilds, or falls back to FTS5, when they differ. A stale index must never
be used: it would miss new chunks and score with old statistics.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from engine import lexical_sql, reads, store
from engine.lexical_tokens import Instances, read_instances, varint_sum

# FTS5's bm25 constants (fts5_aux.c: fts5Bm25Function).
K1 = 1.2
B = 0.75
# FTS5's floor for an idf that would be <= 0 (a phrase in at least half of the rows).
MIN_IDF = 1e-6
# Scope masks kept per index.
_MASK_CACHE = 64
# Rows of multi-token phrase results kept per index (12 bytes each).
_PHRASE_ROWS = 2_000_000
# Postings scored per step of the build.
_SCORE_BLOCK = 1 << 20

Int32s = NDArray[np.int32]
Int64s = NDArray[np.int64]
Floats = NDArray[np.float64]
Bools = NDArray[np.bool_]
# Global token positions: row_base[row] + offset (int32 while the table has < 2**31 positions).
Positions = NDArray[np.int32] | NDArray[np.int64]


def _in_sorted(
    values: NDArray[np.int32] | NDArray[np.int64],
    sorted_unique: NDArray[np.int32] | NDArray[np.int64],
) -> Bools:
    """Which of `values` occur in `sorted_unique` (ascending, no repeats)."""
    if sorted_unique.size == 0:
        return np.zeros(values.shape, dtype=np.bool_)
    pos = np.searchsorted(sorted_unique, values)
    np.minimum(pos, sorted_unique.size - 1, out=pos)
    found: Bools = sorted_unique[pos] == values
    return found


def _intersect_sorted(a: Positions, b: Positions) -> Positions:
    """The values in both `a` and `b` (each ascending without repeats), ascending."""
    if a.size > b.size:
        a, b = b, a
    if a.size == 0:
        return a
    if b.size >= 8 * a.size:  # few needles: binary search each in the long list
        return a[_in_sorted(a, b)]
    # Similar sizes: one stable sort of two sorted runs is a linear merge (timsort); a value of both
    # lists is then next to its twin.
    merged = np.concatenate((a, b))
    merged.sort(kind="stable")
    both: Positions = merged[:-1][merged[1:] == merged[:-1]]
    return both


def _chunk_columns(
    rowids: Int64s, chunk_rows: Sequence[tuple[int, str, str]]
) -> tuple[list[str], Int32s, list[str]]:
    """(chunk id per FTS5 row, project code per row, projects by code).

    An FTS5 row without a chunk keeps id "" and code -1: it counts in the statistics (as in FTS5)
    but is never returned (`engine.reads.lexical` joins chunks).
    """
    n_rows = int(rowids.size)
    chunk_ids = [""] * n_rows
    project_code = np.full(n_rows, -1, dtype=np.int32)
    projects: list[str] = []
    project_index: dict[str, int] = {}
    if n_rows and chunk_rows:
        crowids = np.fromiter(
            (int(r[0]) for r in chunk_rows), dtype=np.int64, count=len(chunk_rows)
        )
        pos = np.minimum(np.searchsorted(rowids, crowids), n_rows - 1)
        present = rowids[pos] == crowids
        for k in np.flatnonzero(present).tolist():
            _, cid, project = chunk_rows[k]
            row = int(pos[k])
            chunk_ids[row] = str(cid)
            code = project_index.get(project)
            if code is None:
                code = project_index[project] = len(projects)
                projects.append(str(project))
            project_code[row] = code
    return chunk_ids, project_code, projects


def _row_keys(rowids: Int64s, keys: Sequence[tuple[int, int]]) -> Int64s:
    """The key of each FTS5 row's chunk (0 where no chunk has that rowid)."""
    out = np.zeros(rowids.size, dtype=np.int64)
    if rowids.size and keys:
        krow = np.fromiter((k[0] for k in keys), dtype=np.int64, count=len(keys))
        kval = np.fromiter((k[1] for k in keys), dtype=np.int64, count=len(keys))
        pos = np.minimum(np.searchsorted(rowids, krow), rowids.size - 1)
        present = rowids[pos] == krow
        out[pos[present]] = kval[present]
    return out


def best_rows(
    score: Floats, candidates: Int64s, id_rank: Int64s, chunk_ids: Sequence[str], limit: int
) -> list[tuple[str, float]]:
    """(chunk id, score) of the best `limit` of `candidates` (rows), by score descending, then by
    chunk id (`id_rank`: each row's place in code-point order of the ids) ascending."""
    neg = -score[candidates]  # FTS5's bm25 value: lower is better
    if candidates.size > limit:
        # Everything tied with the limit-th value stays, so the id order decides the boundary.
        kth = np.partition(neg, limit - 1)[limit - 1]
        keep = neg <= kth
        candidates, neg = candidates[keep], neg[keep]
    order = np.lexsort((id_rank[candidates], neg))[:limit]
    return [(chunk_ids[int(candidates[i])], float(score[candidates[i]])) for i in order.tolist()]


def _term_starts(counts: Int64s) -> tuple[Int64s, Bools]:
    """(offset of each term's first instance, plus the total; which instances start a term)."""
    inst_start = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=inst_start[1:])
    new_term = np.zeros(int(inst_start[-1]), dtype=np.bool_)
    new_term[inst_start[:-1][counts > 0]] = True
    return inst_start, new_term


def _in_term_order(inst: Instances) -> tuple[Int32s, Int32s]:
    """(rows, offsets) with each term's instances ascending by (row, offset).

    fts5vocab yields them in that order; should a SQLite ever concatenate a term's instances in
    another, they are sorted rather than misread.
    """
    rows, offsets = inst.rows, inst.offsets
    if rows.size == 0:
        return rows, offsets
    _, new_term = _term_starts(inst.counts)
    same_row = rows[1:] == rows[:-1]
    backwards = (rows[1:] < rows[:-1]) | (same_row & (offsets[1:] <= offsets[:-1]))
    if not np.any(~new_term[1:] & backwards):
        return rows, offsets
    term_of = np.repeat(np.arange(len(inst.terms), dtype=np.int64), inst.counts)
    order = np.lexsort((offsets, rows, term_of))
    return rows[order], offsets[order]


def _postings(counts: Int64s, inst_row: Int32s) -> tuple[Int64s, Int32s, Int32s]:
    """(post_start per term, row per posting, instances per posting): one posting per (term, row)."""
    inst_start, first = _term_starts(counts)
    first[1:] |= inst_row[1:] != inst_row[:-1]
    pair_first = np.flatnonzero(first)
    del first
    post_row = inst_row[pair_first]
    post_tf = np.diff(np.append(pair_first, inst_row.size)).astype(np.int32)
    post_start = np.searchsorted(pair_first, inst_start).astype(np.int64)
    return post_start, post_row, post_tf


def _positions(
    lengths: Int64s, inst_row: Int32s, offsets: Int32s
) -> tuple[Positions, Int64s, Int64s]:
    """(global position per instance, first position per row, positions per row).

    Each row owns max(length, last offset + 1) positions (an offset past the recorded length would
    otherwise run into the next row), so a phrase is consecutive positions that lie in one row.
    """
    n_rows = int(lengths.size)
    row_span = lengths.copy()
    if inst_row.size:
        np.maximum.at(row_span, inst_row, offsets.astype(np.int64) + 1)
    row_base = np.zeros(n_rows, dtype=np.int64)
    if n_rows:
        np.cumsum(row_span[:-1], out=row_base[1:])
    small = n_rows == 0 or int(row_base[-1] + row_span[-1]) < 2**31 - 1
    inst_pos: Positions
    if small:
        inst_pos = row_base.astype(np.int32)[inst_row]
        inst_pos += offsets
    else:
        inst_pos = row_base[inst_row] + offsets
    return inst_pos, row_base, row_span


class LexicalIndex:
    """FTS5's bm25 over `chunks_fts`, answered from an in-memory snapshot of FTS5's index.

    Results equal `engine.reads.lexical`'s (ids, order and scores) for the generation the snapshot
    was built at; see the module docstring for how it stays correct. Build with
    `LexicalIndex.build`. Searching is thread-safe; the arrays are read-only after the build.
    """

    def __init__(
        self,
        *,
        generation: int,
        lengths: Int64s,
        chunk_ids: list[str],
        project_code: Int32s,
        projects: list[str],
        terms: dict[str, int],
        post_start: Int64s,
        post_row: Int32s,
        post_tf: Int32s,
        inst_start: Int64s,
        inst_pos: Positions,
        row_base: Int64s,
        row_span: Int64s,
        stem: bool = False,
        rowids: Int64s | None = None,
        row_keys: Int64s | None = None,
    ) -> None:
        """Use `LexicalIndex.build`; the arguments are the snapshot's arrays, by FTS5 row.

        Rows are FTS5's rows in rowid order. Term t's postings are post_row/post_tf[post_start[t]:
        post_start[t + 1]] (ascending rows; tf = instances in the row), and its instances, as global
        positions row_base[row] + offset, are inst_pos[inst_start[t]:inst_start[t + 1]] (ascending).
        Row r owns positions row_base[r] .. row_base[r] + row_span[r] - 1. A row without a chunk has
        project code -1 and id "": it counts in the statistics but is never returned. `stem`: the
        snapshot is of the Porter-stemmed index, so query phrases are stemmed the same way. `rowids`
        (FTS5's, by row) and `row_keys` (`engine.lexical_sql.chunk_keys`' key of each row's chunk)
        let `engine.lexical_layers.catch_up` find the rows that changed since.
        """
        self.generation = generation
        self.stem = bool(stem)
        self.n_rows = int(lengths.size)
        self.width = self.n_rows  # rows in the arrays (a layered index also holds replaced ones)
        self.total_tokens = int(lengths.sum())
        self.lengths = lengths
        self.rowids = rowids
        self.row_keys = row_keys
        # FTS5: avgdl = (double)nToken / (double)nRow over the whole table, whatever the scope.
        self.avgdl = float(self.total_tokens) / float(self.n_rows) if self.n_rows else 0.0
        self._chunk_ids = chunk_ids
        # Ties in bm25 are broken by chunk id: SQLite's BINARY order, i.e. code point order.
        self._id_rank = np.zeros(self.n_rows, dtype=np.int64)
        order = sorted(range(self.n_rows), key=chunk_ids.__getitem__)
        self._id_rank[np.asarray(order, dtype=np.int64)] = np.arange(self.n_rows, dtype=np.int64)
        self._project_code = project_code
        self._projects = projects
        self._project_index = {p: i for i, p in enumerate(projects)}
        self._has_chunk: Bools = project_code >= 0
        self._terms = terms
        self._post_start = post_start
        self._post_row = post_row
        self._post_tf = post_tf
        self._inst_start = inst_start
        self._inst_pos = inst_pos
        self._row_base = row_base
        self._row_span = row_span
        # k1 * (1 - b + b * D / avgdl) per row, in fts5_aux.c's order of operations.
        d = lengths.astype(np.float64)
        self._norm: Floats = K1 * ((1 - B) + B * d / self.avgdl) if self.n_rows else d
        self._post_score = self._single_token_scores(post_tf)
        self._tokenizer = reads.PhraseTokenizer(stem=self.stem)
        self._lock = threading.Lock()
        self._masks: dict[frozenset[str], Bools] = {}
        # Multi-token phrases' (rows, scores), the costly part of a query; bounded in entries.
        self._phrases: dict[tuple[object, ...], tuple[Int32s, Floats] | None] = {}
        self._phrase_entries = 0
        self._ids_by_rank: list[str] | None = None
        self._row_of: dict[str, int] | None = None  # a chunk id's live row, built on first use

    def _single_token_scores(self, post_tf: Int32s) -> Floats:
        """A single-token phrase's bm25 term in each row it occurs in, idf * (f * (k1 + 1)) / (f +
        norm), computed once here with the operations FTS5 performs for every query."""
        post_start, post_row = self._post_start, self._post_row
        n_hit = np.diff(post_start)
        idf = np.asarray([self.idf(n) for n in n_hit.tolist()], dtype=np.float64)
        scores: Floats = np.empty(post_row.size, dtype=np.float64)
        for lo in range(0, post_row.size, _SCORE_BLOCK):  # in blocks, to bound the temporaries
            hi = min(lo + _SCORE_BLOCK, post_row.size)
            tf = post_tf[lo:hi].astype(np.float64)
            weight = (tf * (K1 + 1.0)) / (tf + self._norm[post_row[lo:hi]])
            terms_of = np.searchsorted(post_start, np.arange(lo, hi), side="right") - 1
            np.multiply(idf[terms_of], weight, out=scores[lo:hi])
        return scores

    # --- build -------------------------------------------------------------------------------
    @classmethod
    def build(cls, conn: sqlite3.Connection, *, stem: bool = False) -> LexicalIndex:
        """Snapshot FTS5's index of `chunks_fts`, or with `stem` of `chunks_fts_porter` (one read
        transaction, with the store generation).

        Creates (once per connection) the fts5vocab table `engine.reads.open_fts_vocab` names. Call
        it outside a write transaction: the snapshot is what other connections can see.
        """
        reads.open_fts_vocab(conn, stem=stem)
        with store.read(conn):
            gen = store.generation(conn)
            sizes = reads.fts_docsizes(conn, stem=stem)
            rowids = np.fromiter((r for r, _ in sizes), dtype=np.int64, count=len(sizes))
            lengths = np.fromiter(
                (varint_sum(sz) for _, sz in sizes), dtype=np.int64, count=len(sizes)
            )
            del sizes
            keyed = lexical_sql.chunk_key_rows(conn)
            instances = read_instances(conn, rowids, stem=stem)
        chunk_rows = [(rowid, cid, project) for rowid, cid, project, _ in keyed]
        keys = [(rowid, key) for rowid, _, _, key in keyed]
        return cls.from_snapshot(gen, rowids, lengths, chunk_rows, instances, stem=stem, keys=keys)

    @classmethod
    def from_snapshot(
        cls,
        gen: int,
        rowids: Int64s,
        lengths: Int64s,
        chunk_rows: Sequence[tuple[int, str, str]],
        instances: Instances,
        *,
        stem: bool = False,
        keys: Sequence[tuple[int, int]] | None = None,
    ) -> LexicalIndex:
        """The index of what `build` read: FTS5 rowids (ascending) and row lengths, the chunks'
        (rowid, id, project), the token instances (of the stemmed index with `stem`), and the
        chunks' (rowid, key) (`engine.lexical_sql.chunk_keys`; 0 for a row without a chunk)."""
        chunk_ids, project_code, projects = _chunk_columns(rowids, chunk_rows)
        inst_row, offsets = _in_term_order(instances)
        post_start, post_row, post_tf = _postings(instances.counts, inst_row)
        inst_start, _ = _term_starts(instances.counts)
        inst_pos, row_base, row_span = _positions(lengths, inst_row, offsets)
        return cls(
            generation=gen,
            lengths=lengths,
            chunk_ids=chunk_ids,
            project_code=project_code,
            projects=projects,
            terms={t: i for i, t in enumerate(instances.terms)},
            post_start=post_start,
            post_row=post_row,
            post_tf=post_tf,
            inst_start=inst_start,
            inst_pos=inst_pos,
            row_base=row_base,
            row_span=row_span,
            stem=stem,
            rowids=rowids,
            row_keys=None if keys is None else _row_keys(rowids, keys),
        )

    def ids_by_rank(self) -> list[str]:
        """Every row's chunk id in code-point order (computed once; `engine.lexical_layers`)."""
        with self._lock:
            if self._ids_by_rank is None:
                order = np.argsort(self._id_rank, kind="stable").tolist()
                self._ids_by_rank = [self._chunk_ids[i] for i in order]
            return self._ids_by_rank

    # --- state ---------------------------------------------------------------------------------
    def is_current(self, conn: sqlite3.Connection) -> bool:
        """Whether the store is still at the generation this snapshot was built from."""
        return store.generation(conn) == self.generation

    # --- search --------------------------------------------------------------------------------
    def search(
        self,
        terms: Sequence[str],
        allowed_projects: frozenset[str] | None,
        limit: int,
        *,
        chunks: Iterable[str] | None = None,
    ) -> list[tuple[str, float]]:
        """(chunk id, -bm25) of the best `limit` rows for the query terms, best first.

        `terms` are `engine.reads.query_terms(text)`, each one phrase; the answer equals
        `engine.reads.lexical(conn, text, scope, limit, stem=self.stem)` with `allowed_projects` =
        the scope's projects (None for every project). No terms, or `limit` < 1, gives [].
        `chunks`: only these chunks may answer (a time window's, `engine.window_reads.ids_in_window`;
        then the answer equals FTS5's with the window in its SQL: a window only removes rows).

        Raises:
            TypeError: `terms` is one string rather than a sequence of terms.
        """
        if isinstance(terms, str):
            msg = (
                f"search takes a sequence of query terms (engine.reads.query_terms), got {terms!r}"
            )
            raise TypeError(msg)
        if not terms or limit < 1 or self.n_rows == 0:
            return []
        score = np.zeros(self.width, dtype=np.float64)
        hits: dict[tuple[str, ...], tuple[Int32s, Floats] | None] = {}
        # FTS5 sums the phrases in query order; a row adds 0.0 for a phrase it lacks, which leaves its
        # sum unchanged, so adding only to the rows a phrase occurs in gives the same float64 sums
        # (np.add.at adds one index at a time, and a phrase's rows are distinct).
        for tokens in self._tokenizer.tokens_of(terms):
            if tokens not in hits:
                hits[tokens] = self._phrase_scores(tokens)
            hit = hits[tokens]
            if hit is not None:
                np.add.at(score, hit[0], hit[1])
        # Every phrase term added is > 0 (idf >= 1e-6, f >= 1, and the weight is far above the
        # smallest double), so the rows with a positive score are exactly the rows FTS5 matches.
        eligible = score > 0.0
        eligible &= self._scope_mask(allowed_projects)
        if chunks is not None:
            eligible &= self._chunk_mask(chunks)
        candidates = np.flatnonzero(eligible)
        if candidates.size == 0:
            return []
        return best_rows(score, candidates, self._id_rank, self._chunk_ids, limit)

    def search_text(
        self, text: str, allowed_projects: frozenset[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """`search` over the query terms of plain words `text` (`engine.reads.query_terms`)."""
        return self.search(reads.query_terms(text), allowed_projects, limit)

    def _scope_mask(self, allowed_projects: frozenset[str] | None) -> Bools:
        if allowed_projects is None:
            return self._has_chunk
        with self._lock:
            mask = self._masks.get(allowed_projects)
            if mask is None:
                lut = np.zeros(len(self._projects) + 1, dtype=np.bool_)  # the last slot: no chunk
                for project in allowed_projects:
                    code = self._project_index.get(project)
                    if code is not None:
                        lut[code] = True
                mask = lut[self._project_code]  # -1 picks the last slot
                if len(self._masks) >= _MASK_CACHE:
                    self._masks.clear()
                self._masks[allowed_projects] = mask
            return mask

    def _chunk_mask(self, chunk_ids: Iterable[str]) -> Bools:
        """The rows of these chunks (a chunk this snapshot does not hold has none)."""
        with self._lock:
            if self._row_of is None:
                live = np.flatnonzero(self._has_chunk).tolist()
                self._row_of = {self._chunk_ids[r]: r for r in live}
            row_of = self._row_of
        rows = [row_of[c] for c in chunk_ids if c in row_of]
        mask = np.zeros(self.width, dtype=np.bool_)
        mask[np.asarray(rows, dtype=np.int64)] = True
        return mask

    def _term_rows(self, term: int) -> tuple[int, int]:
        return int(self._post_start[term]), int(self._post_start[term + 1])

    def idf(self, n_hit: int) -> float:
        """FTS5's idf of a phrase found in `n_hit` rows (C's log, floored at 1e-6)."""
        idf = math.log((self.n_rows - n_hit + 0.5) / (n_hit + 0.5))
        return MIN_IDF if idf <= 0.0 else idf

    def _phrase_scores(self, tokens: tuple[str, ...]) -> tuple[Int32s, Floats] | None:
        """(rows the phrase occurs in, ascending; the phrase's bm25 term in each).

        None when it occurs nowhere: a phrase with no tokens, or with a token FTS5 never indexed.
        """
        ids = self._term_ids(tokens)
        if not ids:
            return None
        if len(ids) == 1:
            lo, hi = self._term_rows(ids[0])
            if lo == hi:
                return None
            return self._post_row[lo:hi], self._post_score[lo:hi]
        key = tuple(ids)
        with self._lock:
            if key in self._phrases:
                return self._phrases[key]
        rows, freq = self._phrase_freq(ids)
        found: tuple[Int32s, Floats] | None = None
        if rows.size:
            f = freq.astype(np.float64)
            weight = (f * (K1 + 1.0)) / (f + self._norm[rows])
            found = rows, self.idf(int(rows.size)) * weight
        self._remember(key, found)
        return found

    def _remember(self, key: tuple[object, ...], found: tuple[Int32s, Floats] | None) -> None:
        """Keep a multi-token phrase's (rows, scores), within `_PHRASE_ROWS` rows in all."""
        with self._lock:
            size = 1 + (0 if found is None else int(found[0].size))
            if self._phrase_entries + size > _PHRASE_ROWS:
                self._phrases.clear()
                self._phrase_entries = 0
            self._phrases[key] = found
            self._phrase_entries += size

    def _term_ids(self, tokens: tuple[str, ...]) -> list[int] | None:
        """The term of each token; None when FTS5 never indexed one of them."""
        ids: list[int] = []
        for token in tokens:
            term = self._terms.get(token)
            if term is None:
                return None
            ids.append(term)
        return ids

    def phrase_tf(self, tokens: tuple[str, ...]) -> tuple[Int32s, Int32s | Int64s] | None:
        """(rows the phrase occurs in, ascending; its occurrences in each), unscored; None when it
        occurs nowhere (`engine.lexical_layers` scores it with statistics of its own)."""
        ids = self._term_ids(tokens)
        if not ids:
            return None
        if len(ids) == 1:
            lo, hi = self._term_rows(ids[0])
            return (self._post_row[lo:hi], self._post_tf[lo:hi]) if hi > lo else None
        rows, freq = self._phrase_freq(ids)
        return (rows, freq) if rows.size else None

    def _phrase_freq(self, ids: list[int]) -> tuple[Int32s, Int64s]:
        """Rows where tokens ids[0..m) sit at consecutive offsets, and how many times (overlaps count).

        A start position p matches when token j has an instance at p + j for every j, and the m
        positions lie in one row; FTS5 counts every such p (so "a a" occurs twice in "a a a").
        """
        empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64))
        lists = sorted(
            (
                (j, self._inst_pos[self._inst_start[t] : self._inst_start[t + 1]])
                for j, t in enumerate(ids)
            ),
            key=lambda item: item[1].size,
        )
        starts: Positions | None = None
        for j, positions in lists:
            shifted = positions - j if j else positions
            starts = shifted if starts is None else _intersect_sorted(starts, shifted)
            if starts.size == 0:
                return empty
        assert starts is not None
        rows = np.searchsorted(self._row_base, starts, side="right") - 1
        fits = (starts - self._row_base[rows]) + len(ids) <= self._row_span[rows]
        rows = rows[fits]
        if rows.size == 0:
            return empty
        firsts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
        freq = np.diff(np.append(firsts, rows.size)).astype(np.int64)
        return rows[firsts].astype(np.int32), freq

"""Reading FTS5's own index for the in-memory lexical index (`engine.lexical_index`): the token
instances of every term (from an fts5vocab instance table, or from SQLite's tokenizer for a few rows in
`engine.lexical_layers`) and the row sizes of FTS5's docsize records."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from engine import reads

# Characters of comma-separated integers gathered from SQLite before they are parsed in one go.
_PARSE_BATCH = 8_000_000

Int32s = NDArray[np.int32]
Int64s = NDArray[np.int64]


def varint_sum(blob: bytes) -> int:
    """The sum of the SQLite varints in `blob` (a docsize record: one size per FTS5 column)."""
    total, pos, end = 0, 0, len(blob)
    while pos < end:
        value = 0
        for i in range(9):
            byte = blob[pos]
            pos += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        total += value
    return total


def _parse_ints(parts: list[str], expected: int) -> Int64s:
    """Comma-separated integers (several strings, each non-empty) -> one int64 array."""
    text = ",".join(parts)
    values = np.fromstring(text, dtype=np.int64, sep=",")
    if values.size != expected:
        msg = f"read {values.size} integers from the FTS5 index where {expected} were expected"
        raise RuntimeError(msg)
    return values


@dataclass(frozen=True, kw_only=True)
class Instances:
    """FTS5's token instances, by term, then row, then offset (as fts5vocab lists them)."""

    terms: list[str]  # ascending
    counts: Int64s  # instances of each term
    rows: Int32s  # row index (position in the ascending FTS5 rowids) of each instance
    offsets: Int32s  # token offset in its row of each instance


def read_instances(conn: sqlite3.Connection, rowids: Int64s, *, stem: bool = False) -> Instances:
    """Every token instance FTS5 holds; `rowids` are the FTS5 rowids in ascending order."""
    return parse_instances(reads.fts_instances(conn, stem=stem), rowids, reads.FTS_TABLE[stem])


def parse_instances(
    per_term: Iterable[tuple[str, int, str, str]], rowids: Int64s, table: str
) -> Instances:
    """The instances of `per_term` rows (term, instances, rowids, offsets; `reads.fts_instances`'s
    shape), each rowid one of `rowids` (ascending); `table` names the index in errors.

    The comma-separated lists SQLite gathers per term are parsed in batches of about
    `_PARSE_BATCH` characters, to bound the memory of the text held at once.
    """
    terms: list[str] = []
    counts: list[int] = []
    row_chunks: list[Int32s] = []
    off_chunks: list[Int32s] = []
    doc_parts: list[str] = []
    off_parts: list[str] = []
    pending, pending_chars = 0, 0

    def flush() -> None:
        docs = _parse_ints(doc_parts, pending)
        rows = np.searchsorted(rowids, docs)
        if rows.size and (int(rows.max()) >= rowids.size or not np.array_equal(rowids[rows], docs)):
            msg = f"the FTS5 index holds a row that {table}_docsize lacks; rebuild {table}"
            raise RuntimeError(msg)
        row_chunks.append(rows.astype(np.int32))
        off_chunks.append(_parse_ints(off_parts, pending).astype(np.int32))
        doc_parts.clear()
        off_parts.clear()

    for term, n, doc_text, off_text in per_term:
        terms.append(term)
        counts.append(n)
        doc_parts.append(doc_text)
        off_parts.append(off_text)
        pending += n
        pending_chars += len(doc_text) + len(off_text)
        if pending_chars >= _PARSE_BATCH:
            flush()
            pending, pending_chars = 0, 0
    if pending:
        flush()
    empty = np.zeros(0, dtype=np.int32)
    return Instances(
        terms=terms,
        counts=np.asarray(counts, dtype=np.int64),
        rows=np.concatenate(row_chunks) if row_chunks else empty,
        offsets=np.concatenate(off_chunks) if off_chunks else empty,
    )

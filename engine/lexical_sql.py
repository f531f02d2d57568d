"""The reads that bring the in-memory lexical index up to date without rebuilding it
(`engine.lexical_layers`): which chunk rows changed, and the FTS5 sizes and tokens of those rows.

Tokens come from SQLite's own tokenizer: the changed rows' text is written to a contentless FTS5 table
with the same tokenizer as `chunks_fts` (or `chunks_fts_porter`) in a private in-memory database and read
back through an fts5vocab instance table, so they equal what the triggers gave the real index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

from engine.reads import FTS_TABLE, TOKENIZER

# Ids bound per statement (SQLite's default limit on variables is 32766).
_BATCH = 900


def chunk_keys(conn: sqlite3.Connection) -> list[tuple[int, int]]:
    """(rowid, key) of every chunk by rowid; the key hashes (rowid, id, project, sha256).

    Python's hash of a tuple of the row's values: stable within the process, which is as long as an
    in-memory snapshot lives. A row whose text, id or project changed gets another key.
    """
    return [(rowid, key) for rowid, _, _, key in chunk_key_rows(conn)]


def chunk_key_rows(conn: sqlite3.Connection) -> list[tuple[int, str, str, int]]:
    """(rowid, id, project, key) of every chunk by rowid (`chunk_keys`' key): what a full snapshot
    needs from `chunks`, in one scan."""
    cursor = conn.execute("SELECT rowid, id, project, sha256 FROM chunks ORDER BY rowid")
    return [
        (int(r[0]), str(r[1]), str(r[2]), hash((int(r[0]), str(r[1]), str(r[2]), str(r[3]))))
        for r in cursor
    ]


def fts_row_count(conn: sqlite3.Connection, *, stem: bool = False) -> int:
    """Rows FTS5 holds sizes for (the N of its bm25)."""
    row = conn.execute(f"SELECT count(*) FROM {FTS_TABLE[bool(stem)]}_docsize").fetchone()
    return int(row[0])


def fts_docsizes_of(
    conn: sqlite3.Connection, rowids: Sequence[int], *, stem: bool = False
) -> list[tuple[int, bytes]]:
    """(FTS5 rowid, docsize record) of the given rows that FTS5 holds, by rowid."""
    table = FTS_TABLE[bool(stem)]
    found: list[tuple[int, bytes]] = []
    for lo in range(0, len(rowids), _BATCH):
        part = [int(r) for r in rowids[lo : lo + _BATCH]]
        marks = ",".join("?" * len(part))
        cursor = conn.execute(f"SELECT id, sz FROM {table}_docsize WHERE id IN ({marks})", part)
        found.extend((int(r[0]), bytes(r[1])) for r in cursor)
    found.sort()
    return found


def chunk_rows_of(
    conn: sqlite3.Connection, rowids: Sequence[int]
) -> list[tuple[int, str, str, str]]:
    """(rowid, id, project, text) of the given chunk rows, by rowid."""
    found: list[tuple[int, str, str, str]] = []
    for lo in range(0, len(rowids), _BATCH):
        part = [int(r) for r in rowids[lo : lo + _BATCH]]
        marks = ",".join("?" * len(part))
        cursor = conn.execute(
            f"SELECT rowid, id, project, text FROM chunks WHERE rowid IN ({marks})", part
        )
        found.extend((int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in cursor)
    found.sort()
    return found


def token_instances(
    texts: Sequence[tuple[int, str]], *, stem: bool = False
) -> Iterator[tuple[str, int, str, str]]:
    """(term, instances, comma-separated rowids, comma-separated offsets) per term, by term, of the
    given (rowid, text) rows, tokenised as `chunks_fts` (with `stem`: `chunks_fts_porter`) does: the
    shape `engine.reads.fts_instances` reads from the real index."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE scratch USING fts5(text, content='', "
            f"tokenize='{TOKENIZER[bool(stem)]}')"
        )
        conn.execute("CREATE VIRTUAL TABLE scratch_vocab USING fts5vocab(scratch, instance)")
        conn.executemany("INSERT INTO scratch(rowid, text) VALUES (?, ?)", texts)
        cursor = conn.execute(
            "SELECT term, count(*), group_concat(doc), group_concat(offset) "
            "FROM scratch_vocab GROUP BY term ORDER BY term"
        )
        rows = cursor.fetchall()
    finally:
        conn.close()
    for term, n, docs, offsets in rows:
        yield str(term), int(n), str(docs), str(offsets)

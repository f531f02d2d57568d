"""The chunking version a memory's first import split long messages under (the `meta` row
`chunking`), and the chunks that begin inside a word because version 1 cut a message there
(`engine.chunking`), counted so that `recallbench status` can say so and name the fix.

A stored stream keeps the version its chunks were made with (an import of a stream that grew, and a
forget, chunk it again under the version that reproduces its stored chunks:
`engine.chunking.chunk_as_stored`), so a memory imported before version 2 keeps what version 1 cut
until `recallbench rebuild` imports every transcript afresh.
The row is written into a memory that holds nothing yet, as the parser's is (`engine.parsed_sql`); a
memory first imported before version 2 has none, and only such a memory, or one a benchmark imported
under version 1, is scanned: the scan reads every chunk a version-1 piece may end.
"""

from __future__ import annotations

import sqlite3

from engine.chunking import CHUNK_CHARS
from engine.sanitized_sql import meta_value, record_in_empty

# The `meta` row naming the chunking version of the memory's first import.
VERSION_KEY = "chunking"

# Under version 1 a piece that does not end its message is exactly CHUNK_CHARS long and alone in its
# chunk, and the next chunk begins with the rest of that message. Version 2 ends a piece at a position
# in the second half of the budget with whitespace on either side of it, so a boundary between two
# characters other than whitespace, after a piece whose second half holds whitespace, is version 1's.
_HALF = CHUNK_CHARS - CHUNK_CHARS // 2
_BOUNDARIES = """
SELECT substr(a.text, -?), substr(b.text, 1, 1)
FROM chunks a JOIN chunks b ON b.stream = a.stream AND b.idx = a.idx + 1
WHERE length(a.text) = ?
  AND json_extract(a.message_uuids, '$[#-1]') = json_extract(b.message_uuids, '$[0]')
"""


def record_version(conn: sqlite3.Connection, chunking: int) -> None:
    """Record `chunking` in a memory without files or chunks; else nothing (inside the caller's
    transaction, before the first file's rows are written under it)."""
    record_in_empty(conn, VERSION_KEY, str(chunking))


def version(conn: sqlite3.Connection) -> int | None:
    """The chunking version of the memory's first import; None: before version 2 (so, 1)."""
    value = meta_value(conn, VERSION_KEY)
    return None if value is None else int(value)


def stream_chunk_shas(
    conn: sqlite3.Connection, stream: str, from_index: int = 0
) -> list[tuple[str, str]]:
    """(id, text sha256) of the chunks of `stream` from index `from_index` on, in index order: what
    `engine.chunking.chunk_as_stored` compares a new chunking with."""
    rows = conn.execute(
        "SELECT id, sha256 FROM chunks WHERE stream = ? AND idx >= ? ORDER BY idx",
        (stream, from_index),
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def cut_words(conn: sqlite3.Connection) -> int:
    """How many chunks begin inside a word that chunking version 1 cut in two, where version 2
    would have split the message between words (neither half is found by the word); 0 without a
    scan in a memory first imported under version 2."""
    held = version(conn)
    if held is not None and held >= 2:
        return 0
    count = 0
    for tail, first in conn.execute(_BOUNDARIES, (_HALF, CHUNK_CHARS)):
        if not first or first.isspace() or not tail or tail[-1].isspace():
            continue
        if any(c.isspace() for c in tail):
            count += 1
    return count

"""Sentence vectors: a person's own words, embedded sentence by sentence beside the chunk's vector.

A chunk's one vector is the mean of every word piece in it. A prompt that states a decision in one
sentence among several ("Use Postgres, not SQLite, for the ledger. Also rename the flag …") is
averaged away from a question about that sentence. So every chunk text a person wrote (author `User`)
also keeps the vectors of its first `MAX_SENTENCES` sentences of at least `MIN_CHARS` characters
(split after `.`, `!` or `?` and at line breaks); an arm that asks (`vector_channel(sentences=True)`
in `arms.pools`) scores such a chunk by the best of its own cosine and its sentences' cosines.

Stored like `vectors`: content-addressed by the chunk text's sha256 and the embedder id, one row per
text holding its sentences as a float32 matrix (0 rows when no sentence is long enough, so that the
text is not split again), in a table of its own so the vector catalog and the index never read them.
`recallbench forget` deletes them with the chunk's vector
(`engine.forget_sql.delete_unshared_sentence_vectors`). Schema: migration 6
of `engine.store.MIGRATIONS`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.model import Author

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "MAX_SENTENCES",
    "MIN_CHARS",
    "SCHEMA",
    "matrices",
    "missing",
    "put",
    "split",
]

# Measured with rrf's vector channel on the synthetic training corpus (arms-v2-train, 7,544 chunks of
# which 1,848 hold a user line): at most 8 / 16 / 32 sentences per text stored 13,897 / 21,926 / 22,597
# vectors, and recall@5 on its decisions roster went 0.203 (no sentences) to 0.344 / 0.359 / 0.359, on
# multihop 0.455 to 0.523 / 0.568 / 0.614. 32 keeps almost every sentence and bounds a pasted wall.
MAX_SENTENCES = 32
MIN_CHARS = 20
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
# Which chunk texts keep sentence vectors: the person's (`Author.USER`: a chunk holding a user line).
AUTHORS: tuple[Author, ...] = (Author.USER,)

SCHEMA = """
CREATE TABLE sentence_vectors (
    embedder TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    count INTEGER NOT NULL,
    dim INTEGER NOT NULL,
    vecs BLOB NOT NULL,
    PRIMARY KEY (embedder, sha256)
);
"""


# CROSS JOIN keeps `chunks` the outer loop: the few ids by their unique index, then each text's row
# by primary key. A plain JOIN let SQLite walk every sentence row of the embedder instead (measured on
# perf's 100k store: sbridge's p50 78 ms, linear in the store).
MATRICES_SQL = (
    "SELECT c.id, s.dim, s.vecs FROM chunks c "
    "CROSS JOIN sentence_vectors s ON s.embedder = ? AND s.sha256 = c.sha256 AND s.count > 0 "
    "WHERE c.id IN (SELECT value FROM json_each(?))"
)


def split(text: str) -> list[str]:
    """The sentences of `text` that get a vector: at most `MAX_SENTENCES`, each stripped and at
    least `MIN_CHARS` characters long, in order."""
    out: list[str] = []
    for part in _SPLIT.split(text):
        sentence = part.strip()
        if len(sentence) >= MIN_CHARS:
            out.append(sentence)
            if len(out) == MAX_SENTENCES:
                break
    return out


def missing(conn: sqlite3.Connection, embedder: str) -> list[tuple[str, str]]:
    """(sha256, text) of the texts of `AUTHORS`' chunks with no sentence row for `embedder`, one per
    distinct sha, by sha."""
    authors = ",".join(str(int(a)) for a in AUTHORS)
    rows = conn.execute(
        "SELECT c.sha256, MIN(c.text) FROM chunks c "
        "LEFT JOIN sentence_vectors s ON s.embedder = ? AND s.sha256 = c.sha256 "
        f"WHERE c.author IN ({authors}) AND s.sha256 IS NULL GROUP BY c.sha256 ORDER BY c.sha256",
        (embedder,),
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def put(
    conn: sqlite3.Connection,
    embedder: str,
    dim: int,
    rows: Sequence[tuple[str, NDArray[np.float32]]],
) -> None:
    """Store each text's (sha256, sentence matrix of shape (n, dim)); n may be 0. The caller holds
    the write transaction."""
    import numpy as np

    values = []
    for sha, matrix in rows:
        m = np.ascontiguousarray(matrix, dtype="<f4").reshape(-1, dim)
        values.append((embedder, sha, int(m.shape[0]), dim, m.tobytes()))
    conn.executemany(
        "INSERT OR IGNORE INTO sentence_vectors(embedder, sha256, count, dim, vecs) "
        "VALUES (?, ?, ?, ?, ?)",
        values,
    )


def matrices(
    conn: sqlite3.Connection,
    embedder: str,
    ids: Sequence[str],
    scope_where: str,
    params: list[object],
) -> dict[str, NDArray[np.float32]]:
    """Chunk id -> its text's sentence matrix, for the chunks of `ids` that have one with at least one
    row; `scope_where`/`params` restrict `c.project` (`engine.reads.scope_sql`)."""
    import numpy as np

    if not ids:
        return {}
    rows = conn.execute(
        MATRICES_SQL + scope_where, (embedder, json.dumps(list(ids)), *params)
    ).fetchall()
    return {
        str(r[0]): np.frombuffer(r[2], dtype="<f4").reshape(-1, int(r[1])).astype(np.float32)
        for r in rows
    }

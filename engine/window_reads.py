"""The reads of a scope narrowed to a time window (`Scope.within`) that the in-memory indexes cannot
answer: the vector channel and a session's chunks outside the window.

The hnswlib partitions and the catalog hold no times. A windowed vector read (`Memory.nearest`)
first asks them for `engine.reads.WINDOW_OVERFETCH` times as many hits without the window and keeps
those inside it (`engine.reads.kept_in_window`): when `limit` of them are inside, they are the
window's best (any better chunk of the window would be among the hits asked for), and so they are
when the answer held fewer hits than asked (every chunk above the floor was seen). Otherwise, as
for a narrow window, it is an exact scan of the stored vectors of the chunks in the window
(`nearest_in_window`: one SQL read and one matrix product), so `limit` fills exactly as it would
over those chunks alone. A windowed lexical read does the same over the in-memory snapshot, with
the snapshot's read of the window's chunks alone (`ids_in_window`) in the exact scan's place, and
FTS5 (the window in its SQL, `engine.reads.lexical`) when no snapshot is current
(`engine.lexical_reads`).
"""

from __future__ import annotations

import sqlite3

import numpy as np
from numpy.typing import NDArray

from engine import trust_sql
from engine.api import Scored
from engine.reads import scope_sql, window_sql
from engine.scope import Scope


def nearest_in_window(
    conn: sqlite3.Connection,
    embedder_id: str,
    vector: NDArray[np.float32],
    scope: Scope,
    limit: int,
    min_score: float,
) -> list[Scored]:
    """Cosine similarity of `vector` to every stored vector of the chunks in `scope` (its projects
    and its window) that no active `corrected` settle hides; the `limit` best with score >=
    `min_score`, by (-score, chunk id). Chunks whose text has no vector yet are not read."""
    if limit < 1:
        return []
    sql, params = window_vectors_sql(embedder_id, scope)
    rows = sorted(conn.execute(sql, params).fetchall(), key=lambda r: str(r[0]))  # by chunk id
    if not rows:
        return []
    ids = [str(r[0]) for r in rows]
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), -1)
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    unit = query / max(float(np.linalg.norm(query)), 1e-12)
    scores = matrix.astype(np.float32) @ unit
    order = np.lexsort((np.arange(len(ids)), -scores))  # rows are in id order: ties by chunk id
    return [
        Scored(chunk_id=ids[int(i)], score=float(scores[i]))
        for i in order[:limit]
        if float(scores[i]) >= min_score
    ]


def window_vectors_sql(embedder_id: str, scope: Scope) -> tuple[str, list[object]]:
    """The read of (chunk id, vector) for every chunk in `scope` that no active `corrected` settle
    hides, in no order.

    The chunks lead (CROSS JOIN keeps SQLite from walking every vector of the embedder instead), and
    there is no ORDER BY (it would walk the chunks in id order): so a window is a range of the
    chunks' time index (`engine.reads.TIME_INDEX`). Measured on perf's 100k store, a window holding a
    hundredth of the chunks: 216 ms for the read led by the vectors, 56 ms led by the chunks without
    the index, 4.9 ms with it.
    """
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    sql = (
        "SELECT c.id, v.vec FROM chunks c CROSS JOIN vectors v "
        "ON v.embedder = ? AND v.sha256 = c.sha256 "
        f"WHERE c.id NOT IN ({trust_sql.CORRECTED_IDS})" + where
    )
    return sql, [embedder_id, *params]


def ids_in_window(conn: sqlite3.Connection, scope: Scope) -> list[str]:
    """The ids of the chunks in `scope` (its projects and its window: a range of the chunks' time
    index), for the lexical snapshot's read of the window's chunks alone."""
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    return [str(r[0]) for r in conn.execute("SELECT c.id FROM chunks c WHERE 1" + where, params)]


def outside_window(conn: sqlite3.Connection, session_id: str, scope: Scope) -> frozenset[str]:
    """The ids of the session's chunks that lie outside `scope`'s window (none for an unwindowed
    scope): what a read of the session's best chunk must leave out."""
    if not scope.windowed:
        return frozenset()
    clause, params = window_sql(scope, "c.ts_start")
    rows = conn.execute(
        "SELECT id FROM chunks WHERE session_id = ? AND id NOT IN "
        "(SELECT c.id FROM chunks c WHERE c.session_id = ?" + clause + ")",
        (session_id, session_id, *params),
    ).fetchall()
    return frozenset(str(r[0]) for r in rows)

"""The SQL of one read: which stored chunks cover given messages of a session.

Kept out of `engine.reads` and `engine.store` (both full, and edited by others); like them, nothing
outside engine/ imports this module: `engine.memory.Memory.chunks_for_messages` is the public read.
The read returns chunk ids only (never text), whatever a settle has since done to those chunks: it is
how a settle written against messages (a benchmark corpus's ``settles.json``) finds the chunks to name.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from engine.reads import scope_sql
from engine.scope import Scope


def chunks_for_messages(
    conn: sqlite3.Connection, session_id: str, uuids: Sequence[str], scope: Scope
) -> dict[str, tuple[str, ...]]:
    """Message uuid -> ids of the chunks of `session_id` in `scope` that cover it, in stream order.

    A uuid no chunk covers (unknown, out of scope, or scrubbed whole by the sanitizer) is left out.
    """
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    if not uuids:
        return {}
    rows = conn.execute(
        "SELECT j.value, c.id FROM chunks c, json_each(c.message_uuids) j "
        "WHERE c.session_id = ? AND j.value IN (SELECT value FROM json_each(?))"
        + where
        + " ORDER BY c.stream, c.idx",
        (session_id, json.dumps(list(uuids)), *params),
    ).fetchall()
    out: dict[str, list[str]] = {}
    for uuid, chunk_id in rows:
        ids = out.setdefault(str(uuid), [])
        if str(chunk_id) not in ids:
            ids.append(str(chunk_id))
    return {u: tuple(out[u]) for u in dict.fromkeys(uuids) if u in out}

"""The SQL of typed corrections: the settlements table, its writes and the reads that filter on it.

Kept beside `engine.store` (which holds the numbered migrations and applies this schema as one of
them) because that module is full; like it, nothing outside engine/ imports this module. The rules
of what may be settled (known kinds, existing chunks, who may undo what) are `engine.trust`'s.

A settlement holds ids only: two chunk ids, the kind, the reason the person or agent gave, the actor
and the times. No chunk text is copied here, so a forget of either chunk leaves nothing of it behind.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from engine.api import MIN_SAME_TEXT

# Applied by `engine.store.MIGRATIONS`. A row is written once and may later be marked undone once;
# the trigger refuses every other change, so an undo cannot be rewritten into something else. Only its
# chunk ids follow their text when the store chunks a stream again (`move_row`, `engine.settle_moves`).
SCHEMA = """
CREATE TABLE settlements (
    id INTEGER PRIMARY KEY,
    old TEXT NOT NULL,
    new TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('corrected', 'changed', 'open')),
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    created TEXT NOT NULL,
    undone TEXT,
    undone_by TEXT,
    CHECK (old != new),
    CHECK ((undone IS NULL) = (undone_by IS NULL))
);
CREATE INDEX settlements_old ON settlements(old, id);
CREATE INDEX settlements_new ON settlements(new, id);
CREATE TRIGGER settlements_undo_once BEFORE UPDATE ON settlements
WHEN OLD.undone IS NOT NULL OR NEW.old != OLD.old OR NEW.new != OLD.new OR NEW.kind != OLD.kind
    OR NEW.reason != OLD.reason OR NEW.actor != OLD.actor OR NEW.created != OLD.created
BEGIN
    SELECT RAISE(ABORT, 'a settlement is only ever marked undone, once');
END;
"""

# Chunk `copy` says what chunk `o` says: an exact copy (another session with the same text and the same
# messages, as a resumed or forked session holds of the lines it copied: `engine.copies`), or the same
# text of at least MIN_SAME_TEXT characters anywhere else. Found through the `chunks_sha` index.
_SAME_AS_OLD = (
    "copy.sha256 = o.sha256 AND copy.id != o.id AND ("
    "(copy.message_uuids = o.message_uuids AND copy.session_id != o.session_id) "
    f"OR length(o.text) >= {MIN_SAME_TEXT})"
)
# The ids an active `corrected` settle hides from every search; a sub-select the read statements of
# `engine.reads` use as `AND c.id NOT IN (...)`: the corrected chunk, and every chunk that says what it
# says (`_SAME_AS_OLD`), so that a statement judged wrong does not come back in another session's words.
CORRECTED_IDS = (
    "SELECT old FROM settlements WHERE kind = 'corrected' AND undone IS NULL "
    "UNION SELECT copy.id FROM settlements s JOIN chunks o ON o.id = s.old "
    f"JOIN chunks copy ON {_SAME_AS_OLD} "
    "WHERE s.kind = 'corrected' AND s.undone IS NULL"
)

SettlementRow = tuple[int, str, str, str, str, str, str, str | None, str | None]
_COLUMNS = "s.id, s.old, s.new, s.kind, s.reason, s.actor, s.created, s.undone, s.undone_by"


def _rows(cursor: sqlite3.Cursor) -> list[SettlementRow]:
    return _rows_of(cursor.fetchall())


def _rows_of(rows: Sequence[Sequence[Any]]) -> list[SettlementRow]:
    """Settlement rows (their first nine columns `_COLUMNS`) as typed tuples."""
    return [
        (
            int(r[0]),
            str(r[1]),
            str(r[2]),
            str(r[3]),
            str(r[4]),
            str(r[5]),
            str(r[6]),
            None if r[7] is None else str(r[7]),
            None if r[8] is None else str(r[8]),
        )
        for r in rows
    ]


def insert(
    conn: sqlite3.Connection, old: str, new: str, kind: str, reason: str, actor: str, created: str
) -> int:
    """Append one active settlement; returns its id. Runs in the caller's transaction."""
    cur = conn.execute(
        "INSERT INTO settlements(old, new, kind, reason, actor, created) VALUES (?, ?, ?, ?, ?, ?)",
        (old, new, kind, reason, actor, created),
    )
    return int(cur.lastrowid or 0)


def mark_undone(conn: sqlite3.Connection, settlement_id: int, when: str, actor: str) -> None:
    """Mark an active settlement undone. Runs in the caller's transaction."""
    conn.execute(
        "UPDATE settlements SET undone = ?, undone_by = ? WHERE id = ? AND undone IS NULL",
        (when, actor, settlement_id),
    )


def by_id(conn: sqlite3.Connection, settlement_id: int) -> SettlementRow | None:
    """The settlement with this id, or None."""
    rows = _rows(
        conn.execute(f"SELECT {_COLUMNS} FROM settlements s WHERE s.id = ?", (settlement_id,))
    )
    return rows[0] if rows else None


def chunk_projects(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str]:
    """chunk id -> project for the ids that exist."""
    rows = conn.execute(
        "SELECT id, project FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def active_between(conn: sqlite3.Connection, a: str, b: str) -> list[SettlementRow]:
    """Active settlements between chunks `a` and `b`, in either direction, by id."""
    return _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM settlements s WHERE s.undone IS NULL "
            "AND ((s.old = ? AND s.new = ?) OR (s.old = ? AND s.new = ?)) ORDER BY s.id",
            (a, b, b, a),
        )
    )


def listed(
    conn: sqlite3.Connection, projects: Sequence[str] | None, include_undone: bool
) -> list[SettlementRow]:
    """Settlements whose old or new chunk lies in `projects` (every one when None), by id.

    A settlement whose chunks are both gone (forgotten) is listed only without a project filter.
    """
    where = "" if include_undone else " AND s.undone IS NULL"
    if projects is None:
        return _rows(
            conn.execute(f"SELECT {_COLUMNS} FROM settlements s WHERE 1{where} ORDER BY s.id")
        )
    return _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM settlements s WHERE EXISTS (SELECT 1 FROM chunks c "
            "WHERE c.id IN (s.old, s.new) AND c.project IN (SELECT value FROM json_each(?)))"
            f"{where} ORDER BY s.id",
            (json.dumps(sorted(projects)),),
        )
    )


def active_touching(
    conn: sqlite3.Connection, ids: Sequence[str], projects: Sequence[str] | None
) -> list[SettlementRow]:
    """Active settlements with `old` or `new` among `ids`, where that chunk lies in `projects`
    (any project when None), by id."""
    if not ids:
        return []
    scope = "" if projects is None else " AND c.project IN (SELECT value FROM json_each(?))"
    params: list[object] = [json.dumps(list(dict.fromkeys(ids)))]
    if projects is not None:
        params.append(json.dumps(sorted(projects)))
    return _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM settlements s WHERE s.undone IS NULL AND EXISTS ("
            "SELECT 1 FROM chunks c WHERE c.id IN (s.old, s.new) "
            "AND c.id IN (SELECT value FROM json_each(?))" + scope + ") ORDER BY s.id",
            params,
        )
    )


def settled_twins(
    conn: sqlite3.Connection, ids: Sequence[str], projects: Sequence[str] | None = None
) -> list[tuple[str, SettlementRow, Literal["old", "new"]]]:
    """(chunk id, settlement, role) for each chunk of `ids` (in `projects`; any when None) that says
    what the old chunk of an active settle says (`_SAME_AS_OLD`) and is not its replacement, role
    "old": the settle applies to it as to its old chunk (a corrected one is hidden, a changed one
    ranks below the replacement, an open one is shown with the other); and for an `open` settle,
    each that says what its new chunk says, role "new" (both sides are in dispute). By settlement
    id, then chunk id."""
    if not ids:
        return []
    scope = "" if projects is None else " AND copy.project IN (SELECT value FROM json_each(?))"
    params = [json.dumps(list(dict.fromkeys(ids)))]
    if projects is not None:
        params.append(json.dumps(sorted(projects)))
    # CROSS JOIN keeps SQLite's order: from the active settles (usually none) to their copies, not
    # from every id read to its text's other holders (`chunks` runs this on every read by id).
    sides = [
        f"SELECT {_COLUMNS}, copy.id, '{role}' FROM settlements s CROSS JOIN chunks o "
        f"ON o.id = s.{role} CROSS JOIN chunks copy ON {_SAME_AS_OLD} WHERE s.undone IS NULL "
        f"AND copy.id != s.{other}{kinds} AND copy.id IN (SELECT value FROM json_each(?)){scope}"
        for role, other, kinds in (("old", "new", ""), ("new", "old", " AND s.kind = 'open'"))
    ]
    rows = conn.execute(" UNION ALL ".join(sides) + " ORDER BY 1, 10", params * 2).fetchall()
    return [
        (str(r[9]), settle, "new" if r[10] == "new" else "old")
        for r, settle in zip(rows, _rows_of(rows), strict=True)
    ]


def said_again(conn: sqlite3.Connection, sha256: str, *not_ids: str) -> str | None:
    """The first chunk (by id) other than `not_ids` whose text has `sha256` and at least
    MIN_SAME_TEXT characters: one that says what a chunk with that text said (`_SAME_AS_OLD`)."""
    row = conn.execute(
        "SELECT id FROM chunks WHERE sha256 = ? AND length(text) >= ? "
        "AND id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1",
        (sha256, MIN_SAME_TEXT, json.dumps(list(not_ids))),
    ).fetchone()
    return None if row is None else str(row[0])


def same_text_ids(conn: sqlite3.Connection, chunk_id: str) -> list[str]:
    """The chunks a settle of `chunk_id` applies to with it (`_SAME_AS_OLD`), by id."""
    rows = conn.execute(
        f"SELECT copy.id FROM chunks o JOIN chunks copy ON {_SAME_AS_OLD} "
        "WHERE o.id = ? ORDER BY copy.id",
        (chunk_id,),
    )
    return [str(r[0]) for r in rows]


def corrected_ids(
    conn: sqlite3.Connection, projects: Sequence[str] | None = None
) -> frozenset[str]:
    """The chunk ids an active `corrected` settle hides from every search: those of chunks in
    `projects` (every one when None), so that a scoped read over-fetches only for its own."""
    if projects is None:
        return frozenset(str(r[0]) for r in conn.execute(CORRECTED_IDS))
    rows = conn.execute(
        f"SELECT c.id FROM chunks c WHERE c.id IN ({CORRECTED_IDS}) "
        "AND c.project IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(projects)),),
    )
    return frozenset(str(r[0]) for r in rows)


def all_rows(conn: sqlite3.Connection) -> list[SettlementRow]:
    """Every settlement, undone ones too, by id (for `rebuild`, which carries them over)."""
    return _rows(conn.execute(f"SELECT {_COLUMNS} FROM settlements s ORDER BY s.id"))


ChunkPlace = tuple[str, tuple[str, ...], str]  # (chunk id, message uuids, text sha256)


def chunk_places(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, tuple[str, ChunkPlace]]:
    """chunk id -> (its stream, its place) for the ids that exist."""
    rows = conn.execute(
        "SELECT id, stream, message_uuids, sha256 FROM chunks "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    ).fetchall()
    return {str(r[0]): (str(r[1]), (str(r[0]), tuple(json.loads(r[2])), str(r[3]))) for r in rows}


def stream_places(conn: sqlite3.Connection, stream: str) -> list[ChunkPlace]:
    """The places of a stream's chunks, in stream order."""
    rows = conn.execute(
        "SELECT id, message_uuids, sha256 FROM chunks WHERE stream = ? ORDER BY idx", (stream,)
    ).fetchall()
    return [(str(r[0]), tuple(json.loads(r[1])), str(r[2])) for r in rows]


def settled_in(conn: sqlite3.Connection, streams: Sequence[str]) -> list[str]:
    """The ids of the chunks of `streams` that a settlement (undone ones too) names, sorted."""
    rows = conn.execute(
        "SELECT DISTINCT c.id FROM chunks c JOIN settlements s ON c.id IN (s.old, s.new) "
        "WHERE c.stream IN (SELECT value FROM json_each(?)) ORDER BY c.id",
        (json.dumps(list(streams)),),
    ).fetchall()
    return [str(r[0]) for r in rows]


def naming(conn: sqlite3.Connection, ids: Sequence[str]) -> list[SettlementRow]:
    """Every settlement (undone ones too) whose old or new chunk is one of `ids`, by id."""
    return _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM settlements s WHERE s.old IN (SELECT value FROM json_each(?)) "
            "OR s.new IN (SELECT value FROM json_each(?)) ORDER BY s.id",
            (json.dumps(list(ids)), json.dumps(list(ids))),
        )
    )


def move_row(conn: sqlite3.Connection, row: SettlementRow, old: str, new: str) -> None:
    """Write settlement `row` again, under its own id, naming chunks `old` and `new`: the chunks that
    hold its text after the store chunked their stream again (`engine.settle_moves`). The update
    trigger keeps a settlement's meaning (kind, reason, actor, time, undo) from ever changing; its
    ids follow their text only through this delete and insert, in the caller's transaction."""
    conn.execute("DELETE FROM settlements WHERE id = ?", (row[0],))
    insert_row(conn, (row[0], old, new, *row[3:]))


def insert_row(conn: sqlite3.Connection, row: SettlementRow) -> None:
    """Write a settlement exactly as it was, id and undo included; one already there is kept."""
    conn.execute(
        "INSERT OR IGNORE INTO settlements(id, old, new, kind, reason, actor, created, undone, "
        "undone_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )


def note_sessions(conn: sqlite3.Connection, prefix: str) -> list[tuple[str, str, str | None]]:
    """(session id, project, started) of the sessions whose id starts with `prefix`, by id."""
    rows = conn.execute(
        "SELECT id, project, started FROM sessions WHERE substr(id, 1, length(?)) = ? ORDER BY id",
        (prefix, prefix),
    ).fetchall()
    return [(str(r[0]), str(r[1]), None if r[2] is None else str(r[2])) for r in rows]

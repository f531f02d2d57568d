"""Every read statement of the engine: lexical search, chunk records, the session graph, listings.

Together with `engine.store` (schema and writes) this is the only place that writes SQL. The module
needs no numpy: `engine.text_reads` answers the prompt hook through it, and a numpy import alone would
spend a third of the hook's budget. `engine.memory.Memory` answers the same reads through the same
functions, so both give identical answers.

User text never reaches SQL as syntax: `query_terms` reduces it to plain words once, and
`match_query` quotes each one before FTS5's `MATCH`.

Two FTS5 indexes hold the same chunk text (engine/store.py): `chunks_fts` (unicode61) and
`chunks_fts_porter` (Porter stemming over unicode61). Every lexical read takes `stem` to choose one;
`stem=False`, the default, is the plain index.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

from engine import trust_sql
from engine.api import SETTLEMENT_KINDS, ChunkRecord, Scored, SettledAs, Settlement
from engine.function_words import WORD
from engine.model import Author
from engine.scope import Scope, ScopeError, require_scope

# Phrase tokenisations kept per `PhraseTokenizer`.
_PHRASE_CACHE = 65_536
# By `stem`: the FTS5 table (engine/store.py), its tokenizer, and the name of the fts5vocab table
# `open_fts_vocab` creates over it in the connection's temp schema. The tokenizers must match store.py.
FTS_TABLE = {False: "chunks_fts", True: "chunks_fts_porter"}
TOKENIZER = {False: "unicode61", True: "porter unicode61"}
VOCAB_TABLE = {False: "recallbench_bm25_vocab", True: "recallbench_bm25_vocab_porter"}


# --- query text ----------------------------------------------------------------------------------


def query_terms(text: str) -> tuple[str, ...]:
    """The words a lexical read searches for: runs of word characters and `-` of >= 2 characters.

    In order of first appearance, each once (case kept: FTS5 folds case itself, and a word written
    twice in different cases counts twice, as FTS5 counts it).
    """
    terms: list[str] = []
    for raw in text.split():
        for token in WORD.findall(raw):
            if len(token) >= 2 and token not in terms:
                terms.append(token)
    return tuple(terms)


def match_query(terms: Sequence[str]) -> str | None:
    """A safe FTS5 query for `terms`: each one a quoted phrase, joined with OR (None for no terms)."""
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts_query(text: str) -> str | None:
    """Plain words -> a safe FTS5 query: quoted tokens of >= 2 characters joined with OR."""
    return match_query(query_terms(text))


class PhraseTokenizer:
    """Token lists of phrases, produced by SQLite's own tokenizer (and cached): unicode61, or with
    `stem` Porter stemming over unicode61, as `chunks_fts` and `chunks_fts_porter` tokenize.

    A phrase is written to a contentless FTS5 table in a private in-memory database and read back
    through an fts5vocab instance table, so no part of unicode61 or of the Porter stemmer is
    re-implemented by the in-memory lexical index (`engine.lexical_index`).
    """

    def __init__(self, *, stem: bool = False) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._conn.execute(
            "CREATE VIRTUAL TABLE scratch USING fts5(text, content='', "
            f"tokenize='{TOKENIZER[bool(stem)]}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE scratch_vocab USING fts5vocab(scratch, instance)")
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokens_of(self, phrases: Sequence[str]) -> list[tuple[str, ...]]:
        """The token list of each phrase (the new ones go through SQLite together)."""
        with self._lock:
            new = list(dict.fromkeys(p for p in phrases if p not in self._cache))
            if len(self._cache) + len(new) > _PHRASE_CACHE:
                self._cache.clear()
                new = list(dict.fromkeys(phrases))
            if new:
                self._tokenize(new)
            return [self._cache[p] for p in phrases]

    def _tokenize(self, phrases: list[str]) -> None:
        self._conn.executemany(
            "INSERT INTO scratch(rowid, text) VALUES (?, ?)", enumerate(phrases, start=1)
        )
        try:
            rows = self._conn.execute("SELECT doc, offset, term FROM scratch_vocab").fetchall()
        finally:
            self._conn.execute("INSERT INTO scratch(scratch) VALUES ('delete-all')")
        found: list[list[tuple[int, str]]] = [[] for _ in phrases]
        for doc, offset, term in rows:
            found[int(doc) - 1].append((int(offset), str(term)))
        for phrase, tokens in zip(phrases, found, strict=True):
            self._cache[phrase] = tuple(term for _, term in sorted(tokens))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# --- scope ----------------------------------------------------------------------------------------


def scope_sql(
    scope: Scope, column: str, *, ts: str | None = None, session: str | None = None
) -> tuple[str, list[object]]:
    """An `AND column IN (...)` clause and its parameters for `scope` ("" for every project), with
    its time window when it has one: on the chunk time column `ts`, or, for a read of sessions, on
    the chunks of the session whose id is the column `session` (a session lies in a window when one
    of its chunks does). A windowed scope given to a read that names neither is refused
    (`ScopeError`): a read that cannot honour the window must not ignore it.
    """
    require_scope(scope)
    where, params = "", list[object]()
    if not scope.all_projects:
        where, params = (
            f" AND {column} IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted(scope.projects))],
        )
    if not scope.windowed:
        return where, params
    if ts is None and session is None:
        msg = f"this read ({column}) cannot honour a time window; ask it without one"
        raise ScopeError(msg)
    clause, bounds = window_sql(scope, ts or "w.ts_start")
    if ts is None:
        clause = f" AND EXISTS (SELECT 1 FROM chunks w WHERE w.session_id = {session}{clause})"
    return where + clause, [*params, *bounds]


# Applied by `engine.store.MIGRATIONS`: a window on the chunks' time (`window_sql` on `ts_start`, the
# same expression) is a range of this index, not a scan of every chunk.
TIME_INDEX = "CREATE INDEX chunks_time ON chunks(julianday(ts_start));"


def window_sql(scope: Scope, ts: str) -> tuple[str, list[object]]:
    """`AND` clauses keeping the rows whose time column `ts` lies in `scope`'s window (compared as
    instants, so `Z` and `+02:00` agree; a time SQLite cannot read lies in no window)."""
    since, until = scope.window_bounds()
    clause, params = f" AND julianday({ts}) IS NOT NULL", list[object]()
    if since is not None:
        clause += f" AND julianday({ts}) >= julianday(?)"
        params.append(since)
    if until is not None:
        clause += f" AND julianday({ts}) < julianday(?)"
        params.append(until)
    return clause, params


# How many more hits than asked a windowed read takes from an index that holds no times (the lexical
# snapshot, the hnswlib partitions) before it falls back to a read of the window itself.
WINDOW_OVERFETCH = 8


def in_window(conn: sqlite3.Connection, ids: Sequence[str], scope: Scope) -> frozenset[str]:
    """Which of the chunk ids `ids` lie in `scope` (its projects and its window)."""
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    if not ids:
        return frozenset()
    rows = conn.execute(
        "SELECT c.id FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?))" + where,
        (json.dumps(list(ids)), *params),
    ).fetchall()
    return frozenset(str(r[0]) for r in rows)


def kept_in_window(
    conn: sqlite3.Connection,
    scope: Scope,
    limit: int,
    read: Callable[[Scope, int], list[Scored]],
) -> list[Scored] | None:
    """The window's best `limit` hits, taken from `read` asked without the window for
    `WINDOW_OVERFETCH` times as many: they are the window's best when `limit` of them lie in it, or
    when `read` held fewer hits than asked (it had no more). None when neither holds, and the caller
    reads the window itself."""
    asked = limit * WINDOW_OVERFETCH
    found = read(scope.within(None, None), asked)
    inside = in_window(conn, [s.chunk_id for s in found], scope)
    kept = [s for s in found if s.chunk_id in inside]
    return kept[:limit] if len(kept) >= limit or len(found) < asked else None


# --- the text side of the read API ----------------------------------------------------------------


def lexical(
    conn: sqlite3.Connection, text: str, scope: Scope, limit: int, *, stem: bool = False
) -> list[Scored]:
    """FTS5 BM25 over chunk text; score = -bm25 (higher is better). User text is plain words only.

    `stem` reads the Porter-stemmed index, where "running" and "runs" both match "run". A chunk an
    active `corrected` settle hides is never returned (filtered in SQL, so `limit` still fills).
    """
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    query = fts_query(text)
    if query is None or limit < 1:
        return []
    table = FTS_TABLE[bool(stem)]
    rows = conn.execute(
        f"SELECT c.id, bm25({table}) AS r FROM {table} "
        f"JOIN chunks c ON c.rowid = {table}.rowid "
        f"WHERE {table} MATCH ?" + where + f" AND c.id NOT IN ({trust_sql.CORRECTED_IDS})"
        " ORDER BY r, c.id LIMIT ?",
        (query, *params, limit),
    ).fetchall()
    return [Scored(chunk_id=str(r[0]), score=-float(r[1])) for r in rows]


def chunks(conn: sqlite3.Connection, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
    """Records for `ids` in the order given; ids unknown or outside `scope` are omitted.

    A read by id answers for a corrected chunk too: its `settled` says what replaced it and when.
    """
    where, params = scope_sql(scope, "c.project", ts="c.ts_start")
    if not ids:
        return []
    rows = conn.execute(
        "SELECT c.id, c.session_id, c.stream, c.idx, c.project, c.text, c.author, "
        "c.message_uuids, c.ts_start, c.ts_end, s.started, c.sha256 FROM chunks c "
        "LEFT JOIN sessions s ON s.id = c.session_id "
        "WHERE c.id IN (SELECT value FROM json_each(?))" + where,
        (json.dumps(list(ids)), *params),
    ).fetchall()
    links = settled_links(conn, [str(r[0]) for r in rows])
    by_id = {
        str(r[0]): ChunkRecord(
            id=str(r[0]),
            session_id=str(r[1]),
            stream=str(r[2]),
            index=int(r[3]),
            project=str(r[4]),
            text=str(r[5]),
            author=Author(int(r[6])),
            message_uuids=tuple(json.loads(r[7])),
            ts_start=r[8],
            ts_end=r[9],
            session_start=r[10],
            sha256=str(r[11]),
            settled=links.get(str(r[0]), ()),
        )
        for r in rows
    }
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


def settlement(row: trust_sql.SettlementRow) -> Settlement:
    """A settlements row as the read API's value."""
    kind = next((k for k in SETTLEMENT_KINDS if k == row[3]), None)
    if kind is None:  # the table's CHECK refuses any other kind
        msg = f"settlement {row[0]} has unknown kind {row[3]!r}"
        raise ValueError(msg)
    return Settlement(
        id=row[0],
        old=row[1],
        new=row[2],
        kind=kind,
        reason=row[4],
        actor=row[5],
        time=row[6],
        undone=row[7],
        undone_by=row[8],
    )


def settlements_of(conn: sqlite3.Connection, ids: Sequence[str], scope: Scope) -> list[Settlement]:
    """Active settles in which a chunk of `ids` that lies in `scope` is old or new, oldest first;
    for a chunk of `ids` in `scope` that says what a settle's old chunk (or an open one's new chunk)
    says (`trust_sql.settled_twins`), that settle again with it in that chunk's place, after the
    settle itself."""
    require_scope(scope)
    projects = None if scope.all_projects else sorted(scope.projects)
    found = [settlement(r) for r in trust_sql.active_touching(conn, ids, projects)]
    for twin, row, role in trust_sql.settled_twins(conn, ids, projects):
        settle = settlement(row)
        twinned = (
            dataclasses.replace(settle, old=twin)
            if role == "old"
            else dataclasses.replace(settle, new=twin)
        )
        found.append(twinned)
    return sorted(found, key=lambda s: s.id)  # stable: a settle's own chunks first


def settled_links(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, tuple[SettledAs, ...]]:
    """Chunk id -> its part in every active settle, oldest first (ids in none are absent). A chunk that
    says what a settle's old chunk (or an open one's new chunk) says (`trust_sql.settled_twins`)
    takes its part."""
    parts: list[tuple[str, Literal["old", "new"], Settlement]] = []  # (chunk, role, settle)
    for row in trust_sql.active_touching(conn, ids, None):
        found = settlement(row)
        parts += [(found.old, "old", found), (found.new, "new", found)]
    parts += [
        (twin, role, settlement(row)) for twin, row, role in trust_sql.settled_twins(conn, ids)
    ]
    out: dict[str, list[SettledAs]] = {}
    wanted = set(ids)
    for chunk, role, found in sorted(parts, key=lambda part: part[2].id):
        if chunk in wanted:
            other = found.new if role == "old" else found.old
            out.setdefault(chunk, []).append(
                SettledAs(
                    settlement=found.id, kind=found.kind, role=role, other=other, time=found.time
                )
            )
    return {k: tuple(v) for k, v in out.items()}


def projects(conn: sqlite3.Connection) -> list[str]:
    """Every project with a recorded session, sorted."""
    rows = conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project")
    return [str(r[0]) for r in rows]


def vector_blob(conn: sqlite3.Connection, embedder: str, chunk_id: str) -> bytes | None:
    """The stored float32 vector of a chunk for `embedder` (little-endian bytes), or None."""
    row = conn.execute(
        "SELECT v.vec FROM chunks c JOIN vectors v ON v.embedder = ? AND v.sha256 = c.sha256 "
        "WHERE c.id = ?",
        (embedder, chunk_id),
    ).fetchone()
    return None if row is None else bytes(row[0])


# --- sessions and the file-edit graph -------------------------------------------------------------


def session_project(conn: sqlite3.Connection, session_id: str, scope: Scope) -> str | None:
    """The session's project when `scope` allows it, else None (also for an unknown session)."""
    require_scope(scope)
    row = conn.execute("SELECT project FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or not scope.allows(str(row[0])):
        return None
    return str(row[0])


def session_flagged(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether the session is recorded as one of this project's own transcripts."""
    row = conn.execute(
        "SELECT self_transcript FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return bool(row and row[0])


def files_for_session(conn: sqlite3.Connection, session_id: str, limit: int) -> list[str]:
    """Files the session edited, most edits first, ties by path (the caller checks the scope)."""
    rows = conn.execute(
        "SELECT path, SUM(n) AS total FROM file_edits WHERE session_id = ? "
        "GROUP BY path ORDER BY total DESC, path LIMIT ?",
        (session_id, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]


def sessions_for_file(
    conn: sqlite3.Connection, paths: Sequence[str], scope: Scope, limit: int, exclude: str | None
) -> list[str]:
    """Sessions in scope that edited one of `paths` (a file's paths: `engine.file_paths`), most
    recent start first, ties by id."""
    where, params = scope_sql(scope, "s.project", session="s.id")
    rows = conn.execute(
        "SELECT DISTINCT s.id, s.started FROM file_edits fe JOIN sessions s "
        "ON s.id = fe.session_id WHERE fe.path IN (SELECT value FROM json_each(?)) "
        "AND s.self_transcript = 0 AND s.id != ?"
        + where
        + " ORDER BY s.started IS NULL, s.started DESC, s.id LIMIT ?",
        (json.dumps(sorted(paths)), exclude or "", *params, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]


def held_messages(
    conn: sqlite3.Connection, session_id: str, uuids: Sequence[str]
) -> set[str] | None:
    """Which of `uuids` the session's stored messages hold (in any of its streams, subagents' too);
    None when the session has no stored chunk. A resumed or forked session holds its earlier lines
    under their uuids, so this says which lines of other sessions it already has.

    The session's streams come from its chunks (the `chunks_session` index; `files` has none on the
    session, and scanning it took 4 ms at 100k chunks), the messages through the (stream, uuid) index.
    """
    streams = [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT stream FROM chunks WHERE session_id = ? ORDER BY stream", (session_id,)
        )
    ]
    if not streams:
        return None
    wanted = json.dumps(sorted(set(uuids)))
    held: set[str] = set()
    for stream in streams:
        rows = conn.execute(
            "SELECT uuid FROM messages WHERE stream = ? AND uuid IN (SELECT value FROM json_each(?))",
            (stream, wanted),
        )
        held.update(str(r[0]) for r in rows)
    return held


def previous_session(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The session of the same project that started last before this one (ties by id)."""
    row = conn.execute(
        "SELECT p.id FROM sessions s JOIN sessions p ON p.project = s.project "
        "WHERE s.id = ? AND p.id != s.id AND p.self_transcript = 0 AND p.started IS NOT NULL "
        "AND s.started IS NOT NULL AND p.started < s.started "
        "ORDER BY p.started DESC, p.id LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else str(row[0])


# --- listings and status --------------------------------------------------------------------------


_NEWEST_FIRST = "ORDER BY s.started IS NULL, s.started DESC, s.id"


def recent_sessions(conn: sqlite3.Connection, scope: Scope, limit: int) -> list[dict[str, object]]:
    """Most recently started sessions in scope with their chunk counts.

    `opening_chunk_id` is the session's first chunk in its project that no active `corrected` settle
    hides: in a main stream (a file of the conversation) first, else in a subagent's (a session whose
    main transcript was not imported), each in stream order; None when every chunk is hidden. The
    main stream is told by its key, not by the session id: a subagent's key has `/agent-` before the
    `@`, and a main file's key is named after the file (`<session id>@<hash>`, or whatever a copied
    transcript was renamed to), while its chunks carry the session id of their lines.
    """
    where, params = scope_sql(scope, "s.project", session="s.id")
    rows = conn.execute(
        # The sessions are chosen first, so the per-session reads run for those `limit` alone.
        "SELECT s.id, s.project, s.started, s.ended, "
        "(SELECT COUNT(*) FROM chunks c WHERE c.session_id = s.id), "
        "(SELECT c.id FROM chunks c WHERE c.session_id = s.id AND c.project = s.project "
        f"AND c.id NOT IN ({trust_sql.CORRECTED_IDS}) "
        "ORDER BY instr(c.stream, '/agent-') > 0, c.idx, c.rowid LIMIT 1) "
        "FROM (SELECT s.id, s.project, s.started, s.ended FROM sessions s "
        "WHERE s.self_transcript = 0" + where + f" {_NEWEST_FIRST} LIMIT ?) s {_NEWEST_FIRST}",
        (*params, limit),
    ).fetchall()
    return [
        {
            "session_id": r[0],
            "project": r[1],
            "started": r[2],
            "ended": r[3],
            "chunks": r[4],
            "opening_chunk_id": r[5],
        }
        for r in rows
    ]


def counts(conn: sqlite3.Connection, embedder: str | None) -> dict[str, int]:
    """Rows per kind: projects, sessions, self transcripts, files, messages, chunks, the chunks
    with a vector for `embedder` and the sentence vectors it holds for the person's distinct chunk
    texts (`engine.sentence_sql`; both 0 without an embedder)."""

    def one(sql: str, params: Sequence[object] = ()) -> int:
        return int(conn.execute(sql, params).fetchone()[0])

    vectors = (
        one(
            "SELECT COUNT(*) FROM chunks c JOIN vectors v ON v.embedder = ? "
            "AND v.sha256 = c.sha256",
            (embedder,),
        )
        if embedder
        else 0
    )
    return {
        "projects": one("SELECT COUNT(DISTINCT project) FROM sessions"),
        "sessions": one("SELECT COUNT(*) FROM sessions WHERE self_transcript = 0"),
        "self_transcripts": one("SELECT COUNT(*) FROM sessions WHERE self_transcript = 1"),
        "files": one("SELECT COUNT(*) FROM files"),
        "messages": one("SELECT COUNT(*) FROM messages"),
        "chunks": one("SELECT COUNT(*) FROM chunks"),
        "vectors": vectors,
        "sentence_vectors": one(
            "SELECT COALESCE(SUM(count), 0) FROM sentence_vectors WHERE embedder = ?", (embedder,)
        )
        if embedder
        else 0,
    }


# --- FTS5's own index, for the in-memory lexical index ----------------------------------------------


def fts_docsizes(conn: sqlite3.Connection, *, stem: bool = False) -> list[tuple[int, bytes]]:
    """(FTS5 rowid, docsize record) of every FTS5 row, by rowid: the row lengths bm25 reads."""
    rows = conn.execute(
        f"SELECT id, sz FROM {FTS_TABLE[bool(stem)]}_docsize ORDER BY id"
    ).fetchall()
    return [(int(r[0]), bytes(r[1])) for r in rows]


def chunk_rows(conn: sqlite3.Connection) -> list[tuple[int, str, str, str]]:
    """(rowid, id, project, text) of every chunk, by rowid (for benchmarks that rebuild an index)."""
    rows = conn.execute("SELECT rowid, id, project, text FROM chunks ORDER BY rowid").fetchall()
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def chunk_projects(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """(rowid, chunk id, project) of every chunk, by rowid."""
    rows = conn.execute("SELECT rowid, id, project FROM chunks ORDER BY rowid").fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def open_fts_vocab(conn: sqlite3.Connection, *, stem: bool = False) -> None:
    """Create (once per connection) the fts5vocab table `fts_instances` reads, in the temp schema.

    Call it outside a read transaction: the table belongs to the connection, not to a snapshot.
    """
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{VOCAB_TABLE[bool(stem)]} "
        f"USING fts5vocab(main, {FTS_TABLE[bool(stem)]}, instance)"
    )


def fts_instances(
    conn: sqlite3.Connection, *, stem: bool = False
) -> Iterator[tuple[str, int, str, str]]:
    """(term, instances, comma-separated rowids, comma-separated offsets) per term, by term.

    Read from the fts5vocab instance table over the FTS5 index that `open_fts_vocab` creates, so the
    terms (stemmed ones with `stem`) and positions are FTS5's own. Within a term the instances come by
    row, then offset; SQLite concatenates them so that Python handles one row per term, not one per
    token.
    """
    cursor = conn.execute(
        "SELECT term, count(*), group_concat(doc), group_concat(offset) "
        f"FROM temp.{VOCAB_TABLE[bool(stem)]} GROUP BY term ORDER BY term"
    )
    for term, n, docs, offsets in cursor:
        yield str(term), int(n), str(docs), str(offsets)


# --- health checks (`engine.health`) --------------------------------------------------------------


def integrity_problems(conn: sqlite3.Connection, limit: int) -> list[str]:
    """SQLite's check of every page, index and constraint: [] when sound, else up to `limit` problems."""
    rows = conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()
    found = [str(r[0]) for r in rows]
    return [] if found == ["ok"] else found


def check_fts(conn: sqlite3.Connection) -> None:
    """FTS5's integrity-check of both indexes (chunks_fts, chunks_fts_porter), against the chunks
    they index too (rank 1).

    FTS5 spells its commands as an INSERT, but this one changes nothing. Raises sqlite3.DatabaseError
    ("database disk image is malformed") when an index is damaged or disagrees with the chunks.
    """
    for table in FTS_TABLE.values():
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def recorded_files(conn: sqlite3.Connection) -> list[str]:
    """The path of every transcript file the store has imported, sorted."""
    return [str(r[0]) for r in conn.execute("SELECT path FROM files ORDER BY path")]


def chunks_of_files(conn: sqlite3.Connection, paths: Sequence[str]) -> int:
    """How many chunks the streams imported from the transcript files at `paths` hold."""
    marks = ",".join("?" * len(paths))
    sql = f"SELECT count(*) FROM chunks WHERE stream IN (SELECT stream FROM files WHERE path IN ({marks}))"
    return int(conn.execute(sql, list(paths)).fetchone()[0]) if paths else 0


def ids_starting_with(
    conn: sqlite3.Connection, kind: str, prefix: str, scope: Scope, limit: int
) -> tuple[list[str], int]:
    """Up to `limit` session or chunk ids (`kind`) in scope that start with `prefix` and are longer,
    sorted, and how many there are: what a person meant by a short id a listing showed."""
    table = {"session": "sessions", "chunk": "chunks"}[kind]
    where, params = scope_sql(scope, "project")
    sql = f"FROM {table} WHERE substr(id, 1, ?) = ? AND length(id) > ?{where}"
    args = (len(prefix), prefix, len(prefix), *params)
    count = int(conn.execute(f"SELECT COUNT(*) {sql}", args).fetchone()[0])
    rows = conn.execute(f"SELECT id {sql} ORDER BY id LIMIT ?", (*args, limit)).fetchall()
    return [str(r[0]) for r in rows], count

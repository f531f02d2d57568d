"""The engine facade: one database of imported transcripts, its write side and the scoped read API.

`Memory` composes the engine's parts and adds no logic of its own beyond checking that a vector read
has an embedder:

- `engine.ingest`: import of transcript files and embedding of stored texts;
- `engine.catalog`: the in-memory vector catalog, the per-project index partitions, nearest reads;
- `engine.lexical_reads`: lexical reads, from FTS5 or the in-memory lexical index;
- `engine.reads`: every other read (chunk records, the session graph, listings);
- `engine.trust`: typed corrections (settle, undo, the person's notes).

Every read takes a required `Scope`; scope is enforced in those parts, so no arm, tool or hook can
forget it. So is trust: a chunk an active `corrected` settle hides never comes back from `lexical`,
`nearest` or `best_in_session` (each still fills `limit` from the other chunks), while `chunks(ids)`
answers for it by id with its status.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from engine import (
    audit,
    carry_sql,
    checkout_sql,
    chunked_sql,
    file_paths,
    message_chunks_sql,
    parsed_sql,
    reads,
    redacted_sql,
    sanitized_sql,
    sentence_sql,
    session_files_sql,
    store,
    tombstone_sql,
    trust,
    trust_sql,
    vector_sql,
    window_reads,
)
from engine.api import ChunkRecord, Scored, Settlement
from engine.catalog import VectorCatalog
from engine.chunking import CHUNKING
from engine.embed import Embedder
from engine.git_repo import Checkout
from engine.lexical_index import LexicalIndex
from engine.lexical_reads import LexicalMode, LexicalReads
from engine.render import MAX_MESSAGE_BYTES
from engine.scope import Scope, require_scope
from engine.vectors import VectorIndex

if TYPE_CHECKING:
    from engine.ingest import ImportReport

# Query vectors kept by `Memory.embed_query`.
_QUERY_CACHE = 64
_NO_EMBEDDER = "this Memory was opened without an embedder; vector reads need one"


class Memory:
    """One database of imported transcripts. Every read takes a required `Scope`.

    `embedder` may be None for a memory that only imports and reads lexically; vector reads then fail
    with a clear message.

    `lexical_index` chooses how `lexical` is answered ("off", "sync" or "background"; see
    `engine.lexical_reads`); the results are identical in every mode.

    `one_shot` is for a process that reads once or twice (a `recallbench search`): nearest reads come
    straight from the on-disk index partitions while they are current (`engine.catalog_files`),
    without first reading every chunk that has a vector; the hits are the same.
    """

    def __init__(
        self,
        db_path: Path,
        embedder: Embedder | None = None,
        *,
        busy_timeout_ms: int = store.BUSY_TIMEOUT_MS,
        lexical_index: LexicalMode = "off",
        one_shot: bool = False,
    ) -> None:
        self.db_path = Path(db_path)
        self._embedder = embedder
        self._connections = store.ThreadConnections(self.db_path, busy_timeout_ms=busy_timeout_ms)
        self._lexical = LexicalReads(
            self.db_path,
            self._connections.get,
            mode=lexical_index,
            busy_timeout_ms=busy_timeout_ms,
        )
        self._vectors = (
            None
            if embedder is None
            else VectorCatalog(self.db_path, embedder, self._connections.get, one_shot=one_shot)
        )
        self._query_vectors: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._query_lock = threading.Lock()
        # Open (and migrate) the database now, so that a bad path fails here rather than mid-read.
        store.connect(self.db_path, busy_timeout_ms=busy_timeout_ms).close()

    # --- plumbing ----------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The embedder this memory was opened with (None: lexical reads only)."""
        return self._embedder

    @property
    def conn(self) -> sqlite3.Connection:
        """A connection owned by the calling thread (SQLite connections are not shared)."""
        return self._connections.get()

    def close(self) -> None:
        """Close the calling thread's connection."""
        self._connections.close()

    def _require_embedder(self) -> Embedder:
        if self._embedder is None:
            raise RuntimeError(_NO_EMBEDDER)
        return self._embedder

    def _require_vectors(self) -> VectorCatalog:
        if self._vectors is None:  # None exactly when there is no embedder
            raise RuntimeError(_NO_EMBEDDER)
        return self._vectors

    @property
    def index_path(self) -> Path:
        """The index manifest: which project partitions exist and the generation they were built for."""
        return self._require_vectors().index_path

    def partition_path(self, project: str) -> Path:
        """The hnswlib file of one project's partition (named by a hash: project paths have slashes)."""
        return self._require_vectors().partition_path(project)

    # --- write side --------------------------------------------------------------------------
    def import_paths(
        self,
        paths: Sequence[Path],
        *,
        embed: bool = True,
        progress: bool = False,
        on_file: Callable[[str], None] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        stream_root: Path | None = None,
        sentences: bool = True,
        chunking: int = CHUNKING,
    ) -> ImportReport:
        """Import transcripts under `paths` incrementally (by byte offset); idempotent.

        `stream_root` keys chunk ids by the path below that folder, and `chunking` names how a long
        message is split (`engine.chunking`; a benchmark chunks its corpus as its protocol says), as
        `engine.ingest.import_paths` describes.

        Each file is committed in its own short transaction together with its new offset, so an import
        killed half-way loses nothing already stored and the next import completes the work. With
        `embed` and an embedder, the new texts are embedded afterwards (with the person's sentences
        unless `sentences` is False: `embed_pending`). One message stores at most
        `max_message_bytes` bytes of text and a marker saying how much was cut.
        """
        from engine import ingest  # the sanitizer and its rules: only to import

        report = ingest.import_paths(
            self.conn,
            paths,
            progress=progress,
            on_file=on_file,
            max_message_bytes=max_message_bytes,
            stream_root=stream_root,
            chunking=chunking,
        )
        if embed and self._embedder is not None:
            report.vectors_added = self.embed_pending(progress=progress, sentences=sentences)
        return report

    def embed_pending(
        self, *, batch_size: int = 256, progress: bool = False, sentences: bool = True
    ) -> int:
        """Embed every stored chunk text that has no vector for this embedder yet (by content hash),
        then, with `sentences`, the sentences of the person's texts that have none yet."""
        emb = self._require_embedder()
        from engine import ingest  # the sanitizer and its rules: only to import

        return ingest.embed_pending(
            self.conn, emb, batch_size=batch_size, progress=progress, sentences=sentences
        )

    def pending_texts(self, embedder_id: str) -> list[tuple[str, str]]:
        """(content sha256, text) of every stored chunk text without a vector for `embedder_id`."""
        return store.missing_vectors(self.conn, embedder_id)

    def store_vectors(
        self, embedder_id: str, shas: Sequence[str], vectors: NDArray[np.float32]
    ) -> None:
        """Store `vectors` for the texts with content hashes `shas` in one transaction."""
        from engine import ingest  # the sanitizer and its rules: only to import

        ingest.store_vectors(self.conn, embedder_id, shas, vectors)

    def vector_matrix(
        self, embedder_id: str, dim: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """(chunk rowids, vectors) of every chunk with a vector for `embedder_id`, by rowid."""
        return store.vector_rows(self.conn, embedder_id, dim)

    def chunk_rows(self) -> list[tuple[int, str, str, str]]:
        """(rowid, id, project, text) of every chunk, by rowid (for tools that rebuild an index)."""
        return reads.chunk_rows(self.conn)

    # --- vector index ------------------------------------------------------------------------
    def ensure_index(self) -> dict[str, VectorIndex]:
        """The per-project hnswlib partitions, loaded or rebuilt from SQLite when missing or stale."""
        return self._require_vectors().ensure_index()

    def index_state(self) -> str:
        """'current', 'stale' or 'missing' for the on-disk index partitions of this embedder."""
        if self._vectors is None:
            return "no embedder"
        return self._vectors.index_state()

    # --- read API ----------------------------------------------------------------------------
    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        """FTS5 BM25 over chunk text; score = -bm25 (higher is better). User text is plain words only.

        `stem` reads the Porter-stemmed index ("running" and "runs" match "run"); the default reads
        the plain one.
        """
        return self._lexical.lexical(text, scope, limit, stem=stem)

    def warm_lexical(self, *, wait: bool = True, stem: bool = False) -> None:
        """Bring the lexical snapshot up to date now (`wait`), or start building it in the background;
        `stem`: the snapshot of the Porter-stemmed index.

        Does nothing for a memory opened with `lexical_index="off"`.
        """
        self._lexical.warm(wait=wait, stem=stem)

    def await_lexical(self, *, stem: bool = False, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: as long as it takes) for the background build that
        `warm_lexical(wait=False)` started; True when a lexical snapshot is held."""
        return self._lexical.wait(stem=stem, timeout=timeout)

    def lexical_snapshot(self, *, stem: bool = False) -> LexicalIndex | None:
        """The in-memory lexical snapshot held now (current or not; None before the first build or
        in mode "off"): a `LexicalIndex`, or a `engine.lexical_layers.LayeredIndex` after a catch-up."""
        return self._lexical.snapshot(stem=stem)

    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        """Cosine similarity (1 - cosine distance) over stored vectors; keep score >= min_score.

        Exact numpy scan when the scoped set holds at most `engine.vectors.EXACT_THRESHOLD` vectors,
        else the hnswlib partitions of the projects in scope, merged. Chunks an active `corrected`
        settle hides are left out; the catalog is asked for that many more, so `limit` still fills.
        A scope with a time window keeps the window's hits of a read asked for more, or scans the
        window's vectors exactly when too few of them are in it (`engine.window_reads`).
        """
        require_scope(scope)
        if limit < 1:
            return []
        if scope.windowed:  # the partitions hold no times (engine.window_reads)
            kept = reads.kept_in_window(
                self.conn, scope, limit, lambda whole, k: self.nearest(vector, whole, k, min_score)
            )
            if kept is not None:
                return kept
            emb = self._require_embedder()
            return window_reads.nearest_in_window(
                self.conn, emb.id, vector, scope, limit, min_score
            )
        catalog = self._require_vectors()
        hidden = trust_sql.corrected_ids(
            self.conn, None if scope.all_projects else sorted(scope.projects)
        )
        if not hidden:
            return catalog.nearest(vector, scope, limit, min_score)
        found = catalog.nearest(vector, scope, limit + len(hidden), min_score)
        return [s for s in found if s.chunk_id not in hidden][:limit]

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The query's L2-normalised float32 vector of shape (dim,).

        The last few query vectors are kept: a server answering one prompt embeds it once for the arm
        and reads it again for the relevance threshold.
        """
        emb = self._require_embedder()
        key = (emb.id, text)
        with self._query_lock:
            cached = self._query_vectors.get(key)
            if cached is not None:
                self._query_vectors.move_to_end(key)
                return cached
        vector = np.asarray(emb.embed([text])[0], dtype=np.float32)
        vector.setflags(write=False)
        with self._query_lock:
            self._query_vectors[key] = vector
            while len(self._query_vectors) > _QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        return vector

    def sentence_scores(
        self, vector: NDArray[np.float32], ids: Sequence[str], scope: Scope
    ) -> dict[str, float]:
        """Chunk id -> the best cosine between `vector` (unit length, as `embed_query` gives it) and
        the chunk's sentence vectors (`engine.sentence_sql`), for the chunks of `ids` in `scope` that
        have any; chunks without sentence vectors (not written by the person, or too short) are absent.
        """
        emb = self._require_embedder()
        where, params = reads.scope_sql(scope, "c.project", ts="c.ts_start")
        found = sentence_sql.matrices(self.conn, emb.id, ids, where, params)
        if not found:
            return {}
        ids_found = sorted(found)
        stacked = np.concatenate([found[cid] for cid in ids_found])
        cosines = stacked @ np.asarray(vector, dtype=np.float32)
        starts = np.cumsum([0] + [len(found[cid]) for cid in ids_found[:-1]])
        best = np.maximum.reduceat(cosines, starts)
        return {cid: float(b) for cid, b in zip(ids_found, best, strict=True)}

    def vector(self, chunk_id: str) -> NDArray[np.float32] | None:
        """The stored vector of a chunk for this memory's embedder, or None."""
        emb = self._require_embedder()
        blob = reads.vector_blob(self.conn, emb.id, chunk_id)
        return None if blob is None else store.blob_to_vector(blob)

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        """Records for `ids` in the order given; ids unknown or outside `scope` are omitted.

        A corrected chunk answers here too, by its id; its `settled` says what replaced it and when.
        """
        return reads.chunks(self.conn, ids, scope)

    def chunks_for_messages(
        self, session_id: str, uuids: Sequence[str], scope: Scope
    ) -> dict[str, tuple[str, ...]]:
        """Message uuid -> ids of the chunks of `session_id` in `scope` covering it (ids only)."""
        return message_chunks_sql.chunks_for_messages(self.conn, session_id, uuids, scope)

    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None:
        """Which of `uuids` the session's stored messages hold; None when the session has no stored
        chunk (`engine.reads.held_messages`)."""
        return reads.held_messages(self.conn, session_id, uuids)

    def main_transcript(self, session_id: str) -> Path | None:
        """Where the session's main transcript lay when it was last imported; None: never imported."""
        path = session_files_sql.main_transcript(self.conn, session_id)
        return None if path is None else Path(path)

    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]:
        """Files the session edited, most edits first, ties by path."""
        if reads.session_project(self.conn, session_id, scope) is None:
            return []
        return reads.files_for_session(self.conn, session_id, limit)

    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]:
        """Sessions in scope that edited `path`, or the same file in another recorded worktree of
        its folder (`engine.file_paths`), most recent start first, ties by id."""
        paths = file_paths.same_file_paths(path, checkout_sql.checkouts(self.conn))
        return reads.sessions_for_file(self.conn, paths, scope, limit, exclude)

    def previous_session(self, session_id: str, scope: Scope) -> str | None:
        """The session of the same project that started last before this one (ties by id)."""
        if reads.session_project(self.conn, session_id, scope) is None:
            return None
        return reads.previous_session(self.conn, session_id)

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None:
        """The session's chunk with the best exact cosine to `vector` (ties by chunk id)."""
        if reads.session_project(self.conn, session_id, scope) is None:
            return None
        hidden = trust_sql.corrected_ids(self.conn)
        if scope.windowed:
            hidden |= window_reads.outside_window(self.conn, session_id, scope)
        return self._require_vectors().best_in_session(vector, session_id, hidden)

    # --- trust: typed corrections (engine.trust) ----------------------------------------------
    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]:
        """Active settles in which a chunk of `ids` that lies in `scope` is old or new, oldest first."""
        return reads.settlements_of(self.conn, ids, scope)

    def settle(
        self, old: str, *, by: str, kind: str, reason: str, actor: str, now: datetime
    ) -> Settlement:
        """Record that chunk `old` is `kind` ("corrected", "changed", "open") with respect to chunk
        `by`, with an audit row ("settle"); see `engine.trust.settle`.

        Raises:
            engine.trust.TrustError: an unknown kind, actor or id, or a pair already settled.
        """
        return trust.settle(self.conn, old, by=by, kind=kind, reason=reason, actor=actor, now=now)

    def undo_settle(
        self, settlement_id: int, *, actor: str, now: datetime, reason: str = ""
    ) -> Settlement:
        """Take back an active settle, with an audit row ("undo"); an agent only its own.

        Raises:
            engine.trust.TrustError: an unknown or undone settle, or an agent undoing another's.
        """
        return trust.undo_settle(self.conn, settlement_id, actor=actor, now=now, reason=reason)

    def settled_with(self, settle: Settlement) -> list[str]:
        """The chunks `settle` applies to besides its own two (`same_text_ids` of its old chunk, and
        of its new one when it is open: both sides are in dispute), by id."""
        ids = set(self.same_text_ids(settle.old))
        if settle.kind == "open":
            ids.update(self.same_text_ids(settle.new))
        return sorted(ids - {settle.old, settle.new})

    def same_text_ids(self, chunk_id: str) -> list[str]:
        """The chunks a settle of `chunk_id` applies to with it (hidden when corrected, ranked below
        the replacement when changed, shown with the other when open): its exact copies, and the
        same text of at least `engine.api.MIN_SAME_TEXT` characters anywhere; by id."""
        return trust_sql.same_text_ids(self.conn, chunk_id)

    def settlements(self, scope: Scope, *, include_undone: bool = False) -> list[Settlement]:
        """The settles whose old or new chunk lies in `scope`, oldest first."""
        return trust.settlements(self.conn, scope, include_undone=include_undone)

    def add_note(self, project: str, text: str, *, now: datetime) -> str:
        """Store the person's short note as a memory of its own in `project` (embedded at once when
        this memory has an embedder); returns its chunk id.

        Raises:
            engine.trust.TrustError: an unknown project, or an empty or too long note.
        """
        note = trust.add_note(self.conn, project, text, now=now)
        if self._embedder is not None:
            self.embed_pending()
        return note

    def carry_trust(self, old_db: Path) -> tuple[int, int, int]:
        """Copy the person's notes and every settle from the database at `old_db` into this one (a
        rebuild), embedding the notes when this memory has an embedder; returns (notes, settles,
        settles moved to the chunk that holds their messages now: `engine.trust.carry_over`).

        Raises:
            One of engine.health.STORE_ERRORS: `old_db` cannot be opened or read.
        """
        old = store.connect(Path(old_db))
        try:
            carried = trust.carry_over(old, self.conn)
        finally:
            old.close()
        if carried[0] and self._embedder is not None:
            self.embed_pending()
        return carried

    def carry_vectors(self, old_db: Path) -> tuple[int, int]:
        """Copy this embedder's vectors from the database at `old_db` (a rebuild) for the texts this
        one holds without one, so only changed texts are embedded again; (chunk vectors, sentence
        rows) copied. Nothing is copied from a database that fails SQLite's quick_check.

        Raises:
            One of engine.health.STORE_ERRORS: `old_db` cannot be opened or read, or is damaged
                (`store.StoreError`).
        """
        emb = self._require_embedder()
        old = store.connect(Path(old_db))
        try:
            verdict = str(old.execute("PRAGMA quick_check").fetchone()[0])
        finally:
            old.close()
        if verdict != "ok":
            msg = f"{old_db} fails SQLite's quick_check ({verdict})"
            raise store.StoreError(msg)
        return vector_sql.carry(self.conn, Path(old_db), emb.id)

    def carry_files(self, old_db: Path, paths: Sequence[Path]) -> carry_sql.Carried:
        """Copy, as stored, what the database at `old_db` holds of the transcript files `paths` (a
        rebuild that keeps what gone transcripts held; `engine.carry_sql`).

        Raises:
            One of engine.health.STORE_ERRORS: `old_db` cannot be opened or read.
        """
        return carry_sql.carry_files(self.conn, Path(old_db), [str(p) for p in paths])

    def carry_checkouts(self, old_db: Path) -> int:
        """Copy the database at `old_db`'s record of where each project sat in git (a rebuild), for
        the projects this one's import found no folder for; returns how many were copied.

        Raises:
            One of engine.health.STORE_ERRORS: `old_db` cannot be opened or read.
        """
        old = store.connect(Path(old_db))
        try:
            records = checkout_sql.checkouts(old)
            stated = checkout_sql.joined(old)
        finally:
            old.close()
        with store.write(self.conn):
            return checkout_sql.put_missing(self.conn, records, stated)

    # --- listing and status ------------------------------------------------------------------
    def projects(self) -> list[str]:
        """Every project with a recorded session, sorted."""
        return reads.projects(self.conn)

    def project_checkouts(self) -> dict[str, Checkout]:
        """Where each recorded project's folder sat in git when it was imported
        (`engine.checkout_sql`); scope resolution joins worktrees with them."""
        return checkout_sql.checkouts(self.conn)

    def ids_starting_with(
        self, kind: str, prefix: str, scope: Scope, limit: int
    ) -> tuple[list[str], int]:
        """Up to `limit` session or chunk ids (`kind`) in scope that start with `prefix` and are
        longer, and how many, as `TextReads.ids_starting_with`."""
        return reads.ids_starting_with(self.conn, kind, prefix, scope, limit)

    def recent_sessions(self, scope: Scope, limit: int) -> list[dict[str, object]]:
        """Most recently started sessions in scope with their chunk counts."""
        return reads.recent_sessions(self.conn, scope, limit)

    def status(self) -> dict[str, object]:
        """What the database holds: counts per kind, the embedder's vectors, size and index state."""
        emb_id = self._embedder.id if self._embedder is not None else None
        counts = reads.counts(self.conn, emb_id)
        size = sum(
            p.stat().st_size for p in (self.db_path, Path(f"{self.db_path}-wal")) if p.exists()
        )
        skip_scrub = store.total_counts(self.conn)
        horizon = tombstone_sql.horizon(self.conn)
        return {
            "database": str(self.db_path),
            "projects": counts["projects"],
            "sessions": counts["sessions"],
            "self_transcripts": counts["self_transcripts"],
            "files": counts["files"],
            "messages": counts["messages"],
            "chunks": counts["chunks"],
            "embedder": emb_id,
            "vectors": counts["vectors"],
            "sentence_vectors": counts["sentence_vectors"],
            "db_bytes": size,
            "index": self.index_state(),
            "skipped": skip_scrub.get("skip", {}),
            "scrubbed": skip_scrub.get("scrub", {}),
            "sanitize_version": sanitized_sql.version(self.conn),
            "credentials_version": sanitized_sql.credentials_version(self.conn),
            "stale_read_notices": sanitized_sql.stale_read_notices(self.conn),
            "parser_version": parsed_sql.version(self.conn),
            "stale_parse": asdict(parsed_sql.stale_parse(self.conn)),
            "chunking_version": chunked_sql.version(self.conn),
            "cut_words": chunked_sql.cut_words(self.conn),
            "forgotten_before": None if horizon is None else audit.utc_text(horizon),
            "redacted_strings": redacted_sql.count(self.conn),
            **session_files_sql.freshness(self.conn),
        }

"""The engine facade: write side (`import_paths`, `embed_pending`) and the scoped read API used by arms.

Every read takes a required `Scope`; scope is enforced here, once, so no arm, tool or hook can forget it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from engine import reads, store
from engine.bm25 import LexicalIndex
from engine.chunking import chunk_stream
from engine.embed import Embedder
from engine.model import CleanMessage, Message
from engine.reads import ChunkRecord, Scored
from engine.scope import Scope, require_scope
from engine.transcripts import TranscriptFile
from engine.vectors import EXACT_THRESHOLD, VectorIndex, exact_search

# The vector index is partitioned by project: every read is scoped, and a project's own graph answers
# a scoped query without hnswlib's filtered search (a Python callback per visited node, slow and with a
# long tail) and with better recall than one graph over every project. `Scope.everywhere()` merges the
# partitions' answers. A project with at most EXACT_THRESHOLD vectors has no graph; it is scanned.
MANIFEST_FORMAT = 1
LexicalMode = Literal["off", "sync", "background"]
LEXICAL_MODES: tuple[LexicalMode, ...] = ("off", "sync", "background")
# Query vectors kept by `Memory.embed_query`.
_QUERY_CACHE = 64
# Scope masks kept per catalog; a server sees a handful of scopes, a benchmark a few dozen.
_MASK_CACHE = 64

# Bytes of a file's head and of the tail of the imported part that fingerprint it, so that a rewritten
# file is re-imported cleanly instead of being appended to.
_HEAD_BYTES = 1 << 20
_TAIL_BYTES = 4096


class ReadAPI(Protocol):
    """The scoped read surface that arms use; `Memory` implements it, tests may fake it."""

    def lexical(self, text: str, scope: Scope, limit: int) -> list[Scored]: ...
    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]: ...
    def embed_query(self, text: str) -> NDArray[np.float32]: ...
    def vector(self, chunk_id: str) -> NDArray[np.float32] | None: ...
    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]: ...
    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]: ...
    def previous_session(self, session_id: str, scope: Scope) -> str | None: ...
    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None: ...


@dataclass(kw_only=True)
class ImportReport:
    """What one `import_paths` call did, with every skip and scrub counted per reason."""

    files_seen: int = 0
    files_imported: int = 0
    files_unchanged: int = 0
    files_reimported: int = 0
    files_failed: dict[str, str] = field(default_factory=dict)
    messages: int = 0
    chunks_written: int = 0
    vectors_added: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    scrubbed: Counter[str] = field(default_factory=Counter)
    self_transcripts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "files_seen": self.files_seen,
            "files_imported": self.files_imported,
            "files_unchanged": self.files_unchanged,
            "files_reimported": self.files_reimported,
            "files_failed": dict(sorted(self.files_failed.items())),
            "messages": self.messages,
            "chunks_written": self.chunks_written,
            "vectors_added": self.vectors_added,
            "skipped": dict(sorted(self.skipped.items())),
            "scrubbed": dict(sorted(self.scrubbed.items())),
            "self_transcripts": sorted(self.self_transcripts),
        }


def _fingerprint(path: Path, offset: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        digest.update(fh.read(min(offset, _HEAD_BYTES)))
        tail_start = max(min(offset, _HEAD_BYTES), offset - _TAIL_BYTES)
        fh.seek(tail_start)
        digest.update(fh.read(offset - tail_start))
    digest.update(str(offset).encode())
    return digest.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _Catalog:
    """The chunks that have a vector for one embedder, at one generation, held in memory.

    Loaded from SQLite (the truth) once per generation, so that vector reads need no SQL: scope masks,
    label -> chunk id, and each session's rows for `best_in_session`. Any write that changes chunks or
    vectors bumps the generation, and the next read loads a new catalog.
    """

    def __init__(self, embedder_id: str, conn: sqlite3.Connection, dim: int) -> None:
        gen, labels, ids, projects, sessions, matrix = store.vector_catalog(conn, embedder_id, dim)
        self.key = (embedder_id, gen)
        self.labels = labels
        self.ids = ids
        self.matrix = matrix
        codes: dict[str, int] = {}
        self.projects = np.fromiter(
            (codes.setdefault(p, len(codes)) for p in projects), dtype=np.int32, count=len(projects)
        )
        self.project_codes = codes
        by_project: dict[str, list[int]] = {}
        for row, project in enumerate(projects):
            by_project.setdefault(project, []).append(row)
        self.by_project = {k: np.asarray(v, dtype=np.int64) for k, v in sorted(by_project.items())}
        by_session: dict[str, list[int]] = {}
        for row, session in enumerate(sessions):
            by_session.setdefault(session, []).append(row)
        self.sessions = {k: np.asarray(v, dtype=np.int64) for k, v in by_session.items()}
        self._masks: dict[Scope, tuple[NDArray[np.bool_], int]] = {}

    def mask(self, scope: Scope) -> tuple[NDArray[np.bool_] | None, int]:
        """(rows in scope, or None for every row; how many rows are in scope)."""
        if scope.all_projects:
            return None, len(self.labels)
        cached = self._masks.get(scope)
        if cached is None:
            codes = [self.project_codes[p] for p in scope.projects if p in self.project_codes]
            rows = np.isin(self.projects, np.asarray(codes, dtype=np.int32))
            cached = (rows, int(rows.sum()))
            if len(self._masks) >= _MASK_CACHE:
                self._masks.clear()
            self._masks[scope] = cached
        return cached

    def positions(self, labels: NDArray[np.int64]) -> NDArray[np.int64]:
        """Row of each label in this catalog, -1 for a label it does not hold."""
        if len(self.labels) == 0:
            return np.full(len(labels), -1, dtype=np.int64)
        pos = np.searchsorted(self.labels, labels)
        clipped = np.minimum(pos, len(self.labels) - 1)
        return np.where(self.labels[clipped] == labels, clipped, -1).astype(np.int64)

    def scored(
        self, labels: NDArray[np.int64], scores: NDArray[np.float32], min_score: float
    ) -> list[Scored]:
        """Labels -> `Scored` by (-score, chunk id); unknown labels and scores below the floor dropped."""
        out = [
            Scored(chunk_id=self.ids[int(p)], score=float(score))
            for p, score in zip(self.positions(labels), scores, strict=True)
            if p >= 0 and float(score) >= min_score
        ]
        out.sort(key=lambda s: (-s.score, s.chunk_id))
        return out


def _extend_partition(
    index: VectorIndex,
    labels: NDArray[np.int64],
    matrix: NDArray[np.float32],
    gen: str,
    embedder_id: str,
) -> bool:
    """Bring a partition of an earlier generation up to `gen` by adding only its new vectors.

    Imports mostly append chunks, and rebuilding a partition re-inserts every vector (about a
    millisecond each at ef_construction 800), so a store that grows by a few chunks per turn would
    otherwise rebuild its whole graph each time. The file on disk is extended only when everything it
    holds is still wanted with the same vector (a rowid that SQLite reused for other text, or a removed
    chunk, means a rebuild); False leaves the caller to rebuild.
    """
    if not index.load() or index.embedder_id != embedder_id:
        return False
    held = index.labels()
    if len(held) == 0 or len(held) > len(labels):
        return False
    pos = np.searchsorted(labels, held)
    if int(pos.max()) >= len(labels) or not np.array_equal(labels[pos], held):
        return False
    wanted = matrix[pos]
    wanted = wanted / np.maximum(np.linalg.norm(wanted, axis=1, keepdims=True), 1e-12)
    if not np.allclose(index.vectors(held), wanted, atol=1e-5):
        return False
    new = np.ones(len(labels), dtype=bool)
    new[pos] = False
    index.add(labels[new], matrix[new], gen, embedder_id=embedder_id)
    return True


class _ImportRacedError(RuntimeError):
    """Another process imported the same file between our read of it and our write."""


# Times one file's import starts over after losing such a race before it is reported as failed.
_RACE_RETRIES = 5


def _file_key(record: store.FileRecord | None) -> tuple[int, str] | None:
    return None if record is None else (record.offset, record.prefix_sha256)


class Memory:
    """One database of imported transcripts. Every read takes a required `Scope`.

    `embedder` may be None for a memory that only imports and reads lexically; vector reads then fail
    with a clear message.

    `lexical_index` chooses how `lexical` is answered; the results are identical in every mode:
    - "off": FTS5 for every query (a process that asks once, such as a hook);
    - "sync": an in-memory `engine.bm25.LexicalIndex` snapshot of FTS5, rebuilt on the next query after
      the store changed (a benchmark over a frozen corpus);
    - "background": the same snapshot, rebuilt by a background thread while FTS5 answers (a server
      whose store other processes keep writing to).
    """

    def __init__(
        self,
        db_path: Path,
        embedder: Embedder | None = None,
        *,
        busy_timeout_ms: int = store.BUSY_TIMEOUT_MS,
        lexical_index: LexicalMode = "off",
    ) -> None:
        if lexical_index not in LEXICAL_MODES:
            msg = f"lexical_index must be one of {', '.join(LEXICAL_MODES)}, got {lexical_index!r}"
            raise ValueError(msg)
        self.db_path = Path(db_path)
        self.embedder = embedder
        self._busy_timeout_ms = busy_timeout_ms
        self._lexical_mode: LexicalMode = lexical_index
        self._lexical_cache: LexicalIndex | None = None
        self._lexical_lock = threading.Lock()
        self._lexical_builder: threading.Thread | None = None
        self._query_vectors: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._query_lock = threading.Lock()
        self._local = threading.local()
        self._parts: tuple[str, dict[str, VectorIndex]] | None = None
        self._index_lock = threading.Lock()
        self._catalog_cache: _Catalog | None = None
        self._catalog_lock = threading.Lock()
        store.connect(self.db_path, busy_timeout_ms=busy_timeout_ms).close()

    # --- plumbing ----------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        """A connection owned by the calling thread (SQLite connections are not shared)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = store.connect(self.db_path, busy_timeout_ms=self._busy_timeout_ms)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _require_embedder(self) -> Embedder:
        if self.embedder is None:
            msg = "this Memory was opened without an embedder; vector reads need one"
            raise RuntimeError(msg)
        return self.embedder

    @property
    def index_path(self) -> Path:
        """The index manifest: which project partitions exist and the generation they were built for."""
        emb = self._require_embedder()
        return self.db_path.with_name(f"{self.db_path.stem}.{emb.id}.hnsw.json")

    def partition_path(self, project: str) -> Path:
        """The hnswlib file of one project's partition (named by a hash: project paths have slashes)."""
        emb = self._require_embedder()
        key = hashlib.sha256(project.encode("utf-8")).hexdigest()[:16]
        return self.db_path.with_name(f"{self.db_path.stem}.{emb.id}.{key}.hnsw")

    # --- write side --------------------------------------------------------------------------
    def import_paths(
        self,
        paths: Sequence[Path],
        *,
        embed: bool = True,
        progress: bool = False,
        on_file: Callable[[str], None] | None = None,
    ) -> ImportReport:
        """Import transcripts under `paths` incrementally (by byte offset); idempotent.

        Each file is committed in its own short transaction together with its new offset, so an import
        killed half-way loses nothing already stored and the next import completes the work.
        """
        from engine.transcripts import discover

        report = ImportReport()
        files, discover_counts = discover([Path(p) for p in paths])
        report.skipped.update(discover_counts)
        report.files_seen = len(files)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(files), desc="import", unit="file", leave=False)
        for tf in files:
            path = tf.path
            if bar is not None:
                bar.update(1)
            try:
                self._import_file(tf, report)
            except (
                OSError,
                UnicodeError,
                ValueError,
                sqlite3.DatabaseError,
                _ImportRacedError,
            ) as exc:
                report.files_failed[str(path)] = f"{type(exc).__name__}: {exc}"
            if on_file is not None:
                on_file(str(path))
        if bar is not None:
            bar.close()
        if embed and self.embedder is not None:
            report.vectors_added = self.embed_pending(progress=progress)
        return report

    def _import_file(self, tf: TranscriptFile, report: ImportReport) -> None:
        """Import what is new in one file; start over if another process imported it meanwhile."""
        for _ in range(_RACE_RETRIES):
            try:
                self._import_file_once(tf, report)
                return
            except _ImportRacedError:
                continue
        msg = f"{tf.path} kept changing under concurrent imports; the next import completes it"
        raise _ImportRacedError(msg)

    def _import_file_once(self, tf: TranscriptFile, report: ImportReport) -> None:
        from engine.sanitize import sanitize
        from engine.transcripts import StreamState, file_edits, parse_file

        path, stream, session_id = tf.path, tf.stream, tf.session_id
        key = str(path.resolve())
        size = path.stat().st_size
        record = store.get_file(self.conn, key)
        start, state, rewritten = 0, StreamState(), False
        if record is not None:
            if size >= record.offset and _fingerprint(path, record.offset) == record.prefix_sha256:
                if size == record.offset:
                    report.files_unchanged += 1
                    return
                start, state = record.offset, StreamState.from_json(record.state)
            else:
                rewritten = True
        if tf.agent_id is not None and self._session_flagged(session_id):
            # a subagent's first prompt is written by its parent, not by our marker
            state.self_transcript = True
        parsed = parse_file(path, start, state, session_id=session_id)
        scrubbed: Counter[str] = Counter()
        clean = sanitize(parsed.messages, state, scrubbed)
        api_ids = {m.uuid: m.api_message_id for m in parsed.messages}
        continuation = parsed.messages[0] if parsed.continues_previous else None
        edits = [] if state.self_transcript else file_edits(parsed.messages, state)
        project = state.cwd or parsed.cwd or "(unknown)"
        sid = parsed.session_id or session_id
        fingerprint = _fingerprint(path, parsed.end_offset)

        with store.write(self.conn) as conn:
            # The file was parsed outside the write lock; if another process stored its lines since,
            # writing ours too would duplicate its messages' file edits. Roll back and read again.
            if _file_key(store.get_file(conn, key)) != _file_key(record):
                raise _ImportRacedError(key)
            if rewritten:
                store.forget_stream(conn, key, stream)
                report.files_reimported += 1
            if continuation is not None:
                clean = self._merge_continuation(conn, stream, clean, continuation)
            store.put_messages(conn, stream, clean, api_ids)
            stamps = [m.timestamp for m in clean if m.timestamp]
            if clean or state.self_transcript:
                store.upsert_session(
                    conn,
                    sid,
                    project,
                    min(stamps) if stamps else None,
                    max(stamps) if stamps else None,
                    bool(state.self_transcript),
                )
            if clean:
                first_idx, first_ordinal = store.rechunk_start(conn, stream)
                tail = store.messages_from(conn, stream, first_ordinal)
                chunks = chunk_stream(stream, sid, tail, start_index=first_idx)
                changed = store.put_chunks(conn, project, chunks, [_sha(c.text) for c in chunks])
                changed += store.trim_chunks(conn, stream, first_idx + len(chunks))
                if changed:
                    store.bump_generation(conn)
                report.chunks_written += changed
            store.add_file_edits(conn, stream, sid, edits)
            store.add_counts(conn, key, "skip", dict(parsed.skipped))
            store.add_counts(conn, key, "scrub", dict(scrubbed))
            store.put_file(
                conn,
                store.FileRecord(
                    path=key,
                    stream=stream,
                    session_id=sid,
                    offset=parsed.end_offset,
                    prefix_sha256=fingerprint,
                    state=state.to_json(),
                ),
                _now_iso(),
            )
        report.files_imported += 1
        report.messages += len(clean)
        report.skipped.update(parsed.skipped)
        report.scrubbed.update(scrubbed)
        if state.self_transcript and sid not in report.self_transcripts:
            report.self_transcripts.append(sid)

    def _session_flagged(self, session_id: str) -> bool:
        row = self.conn.execute(
            "SELECT self_transcript FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return bool(row and row[0])

    def _merge_continuation(
        self,
        conn: sqlite3.Connection,
        stream: str,
        clean: list[CleanMessage],
        continuation: Message,
    ) -> list[CleanMessage]:
        """Fold the first message into the stored one when it continues the same API message.

        An assistant API message is written over several lines; an import that stopped between them
        stored the first part, and this import's first message carries the rest.
        """
        if not clean or clean[0].uuid != continuation.uuid:
            return clean
        stored = store.last_message(conn, stream)
        if stored is None or stored[1] != continuation.api_message_id:
            return clean
        last = stored[0]
        merged = CleanMessage(
            uuid=last.uuid,
            session_id=last.session_id,
            author=max(last.author, clean[0].author),
            text=last.text + "\n" + clean[0].text,
            timestamp=last.timestamp or clean[0].timestamp,
            ordinal=last.ordinal,
        )
        rest = [
            CleanMessage(
                uuid=m.uuid,
                session_id=m.session_id,
                author=m.author,
                text=m.text,
                timestamp=m.timestamp,
                ordinal=last.ordinal + i,
            )
            for i, m in enumerate(clean[1:], start=1)
        ]
        return [merged, *rest]

    def embed_pending(self, *, batch_size: int = 256, progress: bool = False) -> int:
        """Embed every stored chunk text that has no vector for this embedder yet (by content hash)."""
        emb = self._require_embedder()
        pending = store.missing_vectors(self.conn, emb.id)
        if not pending:
            return 0
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(pending), desc="embed", unit="chunk", leave=False)
        for start in range(0, len(pending), batch_size):
            part = pending[start : start + batch_size]
            vectors = emb.embed([text for _, text in part])
            with store.write(self.conn) as conn:
                store.put_vectors(conn, emb.id, [sha for sha, _ in part], vectors)
                store.bump_generation(conn)
            if bar is not None:
                bar.update(len(part))
        if bar is not None:
            bar.close()
        return len(pending)

    def pending_texts(self, embedder_id: str) -> list[tuple[str, str]]:
        """(content sha256, text) of every stored chunk text without a vector for `embedder_id`."""
        return store.missing_vectors(self.conn, embedder_id)

    def store_vectors(
        self, embedder_id: str, shas: Sequence[str], vectors: NDArray[np.float32]
    ) -> None:
        """Store `vectors` for the texts with content hashes `shas` in one transaction."""
        with store.write(self.conn) as conn:
            store.put_vectors(conn, embedder_id, list(shas), vectors)
            store.bump_generation(conn)

    def vector_matrix(
        self, embedder_id: str, dim: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """(chunk rowids, vectors) of every chunk with a vector for `embedder_id`, by rowid."""
        return store.vector_rows(self.conn, embedder_id, dim)

    def chunk_rows(self) -> list[tuple[int, str, str, str]]:
        """(rowid, id, project, text) of every chunk, by rowid (for tools that rebuild an index)."""
        return store.chunk_rows(self.conn)

    # --- vector index ------------------------------------------------------------------------
    def _vector_rows(
        self, where: str = "", params: Sequence[object] = ()
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        emb = self._require_embedder()
        return store.vector_rows(self.conn, emb.id, emb.dim, where, params)

    def ensure_index(self) -> dict[str, VectorIndex]:
        """The per-project hnswlib partitions, loaded or rebuilt from SQLite when missing or stale."""
        return self._partitions(self._catalog())

    def _partitions(self, catalog: _Catalog) -> dict[str, VectorIndex]:
        """Partitions for `catalog`'s generation: kept, loaded from disk, or built from the catalog."""
        emb = self._require_embedder()
        gen = f"{emb.id}:{catalog.key[1]}"
        with self._index_lock:
            # Partitions this object built or loaded for the generation stay right even if the files
            # are replaced later: the generation alone says what they must hold.
            if self._parts is not None and self._parts[0] == gen:
                return self._parts[1]
            manifest = self._read_manifest()
            listed: dict[str, object] = {}
            if manifest is not None and manifest["generation"] == gen:
                parts_field = manifest["parts"]
                if isinstance(parts_field, dict):
                    listed = parts_field
            parts: dict[str, VectorIndex] = {}
            for project, rows in catalog.by_project.items():
                if len(rows) <= EXACT_THRESHOLD:
                    continue
                path = self.partition_path(project)
                index = VectorIndex(path, emb.dim)
                fresh = listed.get(project) == path.name and index.is_current(gen) and index.load()
                if not fresh and not _extend_partition(
                    index, catalog.labels[rows], catalog.matrix[rows], gen, emb.id
                ):
                    index.build(catalog.labels[rows], catalog.matrix[rows], gen, embedder_id=emb.id)
                parts[project] = index
            self._write_manifest(gen, parts)
            self._parts = (gen, parts)
            return parts

    def _read_manifest(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        ok = (
            isinstance(data, dict)
            and data.get("format") == MANIFEST_FORMAT
            and isinstance(data.get("generation"), str)
            and isinstance(data.get("parts"), dict)
        )
        return data if ok else None

    def _write_manifest(self, gen: str, parts: dict[str, VectorIndex]) -> None:
        """Record the partitions (atomically, after they are on disk); remove files no longer listed."""
        manifest = {
            "format": MANIFEST_FORMAT,
            "generation": gen,
            "parts": {project: index.path.name for project, index in sorted(parts.items())},
        }
        path = self.index_path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(manifest, sort_keys=True, indent=2), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        keep = {index.path.name for index in parts.values()}
        prefix = f"{self.db_path.stem}.{self._require_embedder().id}."
        for other in self.db_path.parent.iterdir():
            name = other.name
            base = name.removesuffix(".meta.json")
            if base.startswith(prefix) and base.endswith(".hnsw") and base not in keep:
                other.unlink(missing_ok=True)

    def _catalog(self) -> _Catalog:
        """The in-memory catalog of vectors for the current generation (loaded on first use)."""
        emb = self._require_embedder()
        key = (emb.id, store.generation(self.conn))
        catalog = self._catalog_cache
        if catalog is not None and catalog.key == key:
            return catalog
        with self._catalog_lock:
            catalog = self._catalog_cache
            if catalog is None or catalog.key != key:
                catalog = _Catalog(emb.id, self.conn, emb.dim)
                self._catalog_cache = catalog
            return catalog

    def index_state(self) -> str:
        """'current', 'stale' or 'missing' for the on-disk index partitions of this embedder."""
        if self.embedder is None:
            return "no embedder"
        manifest = self._read_manifest()
        if manifest is None:
            return "missing"
        gen = f"{self.embedder.id}:{store.generation(self.conn)}"
        parts = manifest["parts"]
        if manifest["generation"] != gen or not isinstance(parts, dict):
            return "stale"
        for name in parts.values():
            index = VectorIndex(self.db_path.with_name(str(name)), self.embedder.dim)
            if not index.is_current(gen):
                return "stale"
        return "current"

    # --- read API ----------------------------------------------------------------------------
    def _scope_sql(self, scope: Scope, column: str) -> tuple[str, list[object]]:
        return reads.scope_sql(scope, column)

    def lexical(self, text: str, scope: Scope, limit: int) -> list[Scored]:
        """FTS5 BM25 over chunk text; score = -bm25 (higher is better). User text is plain words only.

        Answered by the in-memory snapshot of FTS5 when this memory keeps one and it is current (the
        same ids, order and scores), else by FTS5 itself.
        """
        index = self._lexical_index()
        if index is None:
            return reads.lexical(self.conn, text, scope, limit)
        require_scope(scope)
        allowed = None if scope.all_projects else frozenset(scope.projects)
        return [
            Scored(chunk_id=chunk, score=score)
            for chunk, score in index.search_query(reads.fts_query(text), allowed, limit)
        ]

    def warm_lexical(self, *, wait: bool = True) -> None:
        """Bring the lexical snapshot up to date now (`wait`), or start building it in the background.

        Does nothing for a memory opened with `lexical_index="off"`.
        """
        if self._lexical_mode == "off":
            return
        if not wait:
            self._start_lexical_build()
            return
        with self._lexical_lock:
            index = self._lexical_cache
            if index is None or not index.is_current(self.conn):
                self._lexical_cache = LexicalIndex.build(self.conn)

    def _lexical_index(self) -> LexicalIndex | None:
        """The current lexical snapshot, or None when FTS5 must answer this query."""
        if self._lexical_mode == "off":
            return None
        index = self._lexical_cache
        if index is not None and index.is_current(self.conn):
            return index
        if self._lexical_mode == "sync":
            self.warm_lexical()
            return self._lexical_cache
        self._start_lexical_build()
        return None

    def _start_lexical_build(self) -> None:
        with self._lexical_lock:
            builder = self._lexical_builder
            if builder is None or not builder.is_alive():
                builder = threading.Thread(
                    target=self._build_lexical_in_background, name="recallbench-bm25", daemon=True
                )
                self._lexical_builder = builder
                builder.start()

    def _build_lexical_in_background(self) -> None:
        conn = store.connect(self.db_path, busy_timeout_ms=self._busy_timeout_ms)
        try:
            index = LexicalIndex.build(conn)
        except Exception:  # FTS5 keeps answering; the next query starts another build
            logging.getLogger(__name__).exception("building the lexical snapshot failed")
            return
        finally:
            conn.close()
        with self._lexical_lock:
            current = self._lexical_cache
            if current is None or current.generation < index.generation:
                self._lexical_cache = index

    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        """Cosine similarity (1 - cosine distance) over stored vectors; keep score >= min_score.

        Exact numpy scan when the scoped set holds at most EXACT_THRESHOLD vectors, else the hnswlib
        partitions of the projects in scope, merged (a project at or below the threshold is scanned).
        """
        require_scope(scope)
        if limit < 1:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        catalog = self._catalog()
        rows, eligible = catalog.mask(scope)
        if eligible == 0:
            return []
        if eligible <= EXACT_THRESHOLD:
            if rows is None:
                matrix, labels = catalog.matrix, catalog.labels
            else:
                matrix, labels = catalog.matrix[rows], catalog.labels[rows]
            found, scores = exact_search(matrix, labels, query, limit, min_score)
        else:
            found, scores = self._index_search(catalog, query, min(limit, eligible), scope)
        return catalog.scored(found, scores, min_score)

    def _index_search(
        self, catalog: _Catalog, query: NDArray[np.float32], k: int, scope: Scope
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Top-k over the partitions of the projects in `scope`, merged by (-score, label)."""
        parts = self._partitions(catalog)
        unit = query / max(float(np.linalg.norm(query)), 1e-12)
        found: list[NDArray[np.int64]] = []
        scores: list[NDArray[np.float32]] = []
        for project, rows in catalog.by_project.items():
            if not scope.allows(project):
                continue
            index = parts.get(project)
            if index is None:
                labels, part_scores = exact_search(
                    catalog.matrix[rows], catalog.labels[rows], unit, k
                )
            else:
                labels, part_scores = index.query(unit, k)
            found.append(labels)
            scores.append(part_scores)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        all_labels = np.concatenate(found)
        all_scores = np.concatenate(scores)
        order = np.lexsort((all_labels, -all_scores))[:k]
        return all_labels[order], all_scores[order]

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

    def vector(self, chunk_id: str) -> NDArray[np.float32] | None:
        """The stored vector of a chunk for this memory's embedder, or None."""
        emb = self._require_embedder()
        row = self.conn.execute(
            "SELECT v.vec FROM chunks c JOIN vectors v ON v.embedder = ? AND v.sha256 = c.sha256 "
            "WHERE c.id = ?",
            (emb.id, chunk_id),
        ).fetchone()
        return None if row is None else store.blob_to_vector(row[0])

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        """Records for `ids` in the order given; ids unknown or outside `scope` are omitted."""
        return reads.chunks(self.conn, ids, scope)

    def _session_project(self, session_id: str, scope: Scope) -> str | None:
        require_scope(scope)
        row = self.conn.execute(
            "SELECT project FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None or not scope.allows(str(row[0])):
            return None
        return str(row[0])

    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]:
        """Files the session edited, most edits first, ties by path."""
        if self._session_project(session_id, scope) is None:
            return []
        rows = self.conn.execute(
            "SELECT path, SUM(n) AS total FROM file_edits WHERE session_id = ? "
            "GROUP BY path ORDER BY total DESC, path LIMIT ?",
            (session_id, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]:
        """Sessions in scope that edited `path`, most recent start first, ties by id."""
        where, params = self._scope_sql(scope, "s.project")
        rows = self.conn.execute(
            "SELECT DISTINCT s.id, s.started FROM file_edits fe JOIN sessions s "
            "ON s.id = fe.session_id WHERE fe.path = ? AND s.self_transcript = 0 "
            "AND s.id != ?" + where + " ORDER BY s.started IS NULL, s.started DESC, s.id LIMIT ?",
            (path, exclude or "", *params, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def previous_session(self, session_id: str, scope: Scope) -> str | None:
        """The session of the same project that started last before this one (ties by id)."""
        project = self._session_project(session_id, scope)
        if project is None:
            return None
        row = self.conn.execute(
            "SELECT p.id FROM sessions s JOIN sessions p ON p.project = s.project "
            "WHERE s.id = ? AND p.id != s.id AND p.self_transcript = 0 AND p.started IS NOT NULL "
            "AND s.started IS NOT NULL AND p.started < s.started "
            "ORDER BY p.started DESC, p.id LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None:
        """The session's chunk with the best exact cosine to `vector` (ties by chunk id)."""
        if self._session_project(session_id, scope) is None:
            return None
        catalog = self._catalog()
        rows = catalog.sessions.get(session_id)
        if rows is None or len(rows) == 0:
            return None
        found, scores = exact_search(
            catalog.matrix[rows], catalog.labels[rows], np.asarray(vector, dtype=np.float32), 1
        )
        best = catalog.scored(found, scores, -2.0)
        return best[0] if best else None

    # --- listing and status ------------------------------------------------------------------
    def projects(self) -> list[str]:
        return reads.projects(self.conn)

    def recent_sessions(self, scope: Scope, limit: int) -> list[dict[str, object]]:
        """Most recently started sessions in scope with their chunk counts."""
        where, params = self._scope_sql(scope, "s.project")
        rows = self.conn.execute(
            "SELECT s.id, s.project, s.started, s.ended, "
            "(SELECT COUNT(*) FROM chunks c WHERE c.session_id = s.id) FROM sessions s "
            "WHERE s.self_transcript = 0"
            + where
            + " ORDER BY s.started IS NULL, s.started DESC, s.id LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [
            {"session_id": r[0], "project": r[1], "started": r[2], "ended": r[3], "chunks": r[4]}
            for r in rows
        ]

    def status(self) -> dict[str, object]:
        conn = self.conn

        def one(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        emb_id = self.embedder.id if self.embedder is not None else None
        vectors = (
            int(
                conn.execute(
                    "SELECT COUNT(*) FROM chunks c JOIN vectors v ON v.embedder = ? "
                    "AND v.sha256 = c.sha256",
                    (emb_id,),
                ).fetchone()[0]
            )
            if emb_id
            else 0
        )
        size = sum(
            p.stat().st_size for p in (self.db_path, Path(f"{self.db_path}-wal")) if p.exists()
        )
        counts = store.total_counts(conn)
        return {
            "database": str(self.db_path),
            "projects": one("SELECT COUNT(DISTINCT project) FROM sessions"),
            "sessions": one("SELECT COUNT(*) FROM sessions WHERE self_transcript = 0"),
            "self_transcripts": one("SELECT COUNT(*) FROM sessions WHERE self_transcript = 1"),
            "files": one("SELECT COUNT(*) FROM files"),
            "messages": one("SELECT COUNT(*) FROM messages"),
            "chunks": one("SELECT COUNT(*) FROM chunks"),
            "embedder": emb_id,
            "vectors": vectors,
            "db_bytes": size,
            "index": self.index_state(),
            "skipped": counts.get("skip", {}),
            "scrubbed": counts.get("scrub", {}),
        }

"""The vector side of the engine: the in-memory vector catalog, per-project index partitions, their
manifest, and nearest-neighbour reads over them.

SQLite holds the vectors (the truth). For one embedder, `VectorCatalog` keeps:

* a `CatalogSnapshot` of the chunks that have a vector, loaded once per store generation, so that
  vector reads need no SQL: the matrix, label -> chunk id, scope masks and each session's rows;
* one hnswlib graph per project (a partition), persisted beside the database and listed in a JSON
  manifest with the generation it was built for.

The index is partitioned by project because every read is scoped: a project's own graph answers a
scoped query without hnswlib's filtered search (a Python callback per visited node, slow and with a
long tail) and with better recall than one graph over every project. `Scope.everywhere()` merges the
partitions' answers. A project with at most EXACT_THRESHOLD vectors has no graph; it is scanned.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from engine import catalog_sql, store
from engine.api import Scored
from engine.catalog_files import nearest_from_files
from engine.embed import Embedder
from engine.private_files import write_private
from engine.scope import Scope, ScopeError, require_scope
from engine.vectors import EXACT_THRESHOLD, VectorIndex, exact_search

T = TypeVar("T")

MANIFEST_FORMAT = 1
# Scope masks kept per snapshot; a server sees a handful of scopes, a benchmark a few dozen.
_MASK_CACHE = 64
# Snapshots of a few projects kept for the current generation until a whole one is loaded.
_SCOPED_CACHE = 8


class StaleCatalogError(RuntimeError):
    """A vector the snapshot lists is no longer stored (a write came between): take a new snapshot."""


class CatalogSnapshot:
    """The chunks that have a vector for one embedder, at one generation, held in memory.

    Loaded from SQLite (the truth) once per generation, so that vector reads need no SQL: scope masks,
    label -> chunk id, and each session's rows for `best_in_session`. Any write that changes chunks or
    vectors bumps the generation, and the next read loads a new snapshot.

    The vectors themselves are read when first needed, by text hash (a text's vector never changes):
    all of them for building or extending a partition (`matrix`), only a few rows for an exact scan of
    a small project or a session (`rows_matrix`). A search answered by current partitions reads none,
    which is most of a one-shot `recallbench search`'s cost at 100k chunks. A hash no longer stored
    raises `StaleCatalogError`.

    `projects` limits the snapshot to those projects' chunks (None: every project): what a one-shot
    read in a scope needs (a third of the rows of a 100k store in four projects, read in a third of the
    time). Only reads within those projects may use it; partitions are built from a whole snapshot.
    """

    def __init__(
        self,
        embedder_id: str,
        conn: Callable[[], sqlite3.Connection],
        dim: int,
        projects: frozenset[str] | None = None,
    ) -> None:
        gen, rows = catalog_sql.catalog_rows(
            conn(), embedder_id, None if projects is None else sorted(projects)
        )
        self.key = (embedder_id, gen)
        self.covers = projects
        self._conn = conn
        self._dim = dim
        self._matrix: NDArray[np.float32] | None = None
        self._matrix_lock = threading.Lock()
        self.labels = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.ids = [r[1] for r in rows]
        row_projects = [r[2] for r in rows]
        sessions = [r[3] for r in rows]
        self.shas = [r[4] for r in rows]
        codes: dict[str, int] = {}
        self.projects = np.fromiter(
            (codes.setdefault(p, len(codes)) for p in row_projects),
            dtype=np.int32,
            count=len(row_projects),
        )
        self.project_codes = codes
        self.by_project = {
            k: np.asarray(v, dtype=np.int64) for k, v in sorted(_rows_by(row_projects))
        }
        self.sessions = {k: np.asarray(v, dtype=np.int64) for k, v in _rows_by(sessions)}
        self._masks: dict[Scope, tuple[NDArray[np.bool_], int]] = {}

    @property
    def matrix(self) -> NDArray[np.float32]:
        """Every row's vector (float32, one row per label), read once on first use."""
        with self._matrix_lock:
            if self._matrix is None:
                stored = catalog_sql.all_vectors(self._conn(), self.key[0])
                self._matrix = self._stack(stored, self.shas)
            return self._matrix

    def rows_matrix(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors of `rows` only (from `matrix` when it is already read)."""
        if self._matrix is not None:
            return self._matrix[rows]
        shas = [self.shas[int(r)] for r in rows]
        return self._stack(catalog_sql.vectors_of(self._conn(), self.key[0], shas), shas)

    def _stack(self, stored: dict[str, bytes], shas: list[str]) -> NDArray[np.float32]:
        missing = [sha for sha in shas if sha not in stored]
        if missing:
            msg = f"{len(missing)} vectors of {self.key[0]} were removed since generation {self.key[1]}"
            raise StaleCatalogError(msg)
        if not shas:
            return np.zeros((0, self._dim), dtype=np.float32)
        blob = b"".join(stored[sha] for sha in shas)
        return np.frombuffer(blob, dtype="<f4").reshape(len(shas), -1).astype(np.float32)

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
        """Row of each label in this snapshot, -1 for a label it does not hold."""
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


def _rows_by(keys: list[str]) -> list[tuple[str, list[int]]]:
    """(key, rows holding it) in order of first appearance."""
    rows: dict[str, list[int]] = {}
    for row, key in enumerate(keys):
        rows.setdefault(key, []).append(row)
    return list(rows.items())


def content_digest(labels: NDArray[np.int64], shas: Sequence[str]) -> str:
    """sha256 over each (label, text sha256) pair, by label: what a partition's vectors stand for.

    A vector is a function of its text (vectors are stored by the text's sha256), so two partitions
    with the same digest hold the same vector under every label.
    """
    order = np.argsort(labels, kind="stable")
    digest = hashlib.sha256()
    for i in order.tolist():
        digest.update(f"{int(labels[i])}:{shas[i]}\n".encode())
    return digest.hexdigest()


def _extend_partition(
    index: VectorIndex,
    labels: NDArray[np.int64],
    matrix: NDArray[np.float32],
    shas: Sequence[str],
    gen: str,
    embedder_id: str,
) -> bool:
    """Bring a partition of an earlier generation up to `gen` by adding only its new vectors.

    Imports mostly append chunks, and rebuilding a partition re-inserts every vector (about a
    millisecond each at ef_construction 800), so a store that grows by a few chunks per turn would
    otherwise rebuild its whole graph each time. The file on disk is extended only when everything it
    holds is still wanted with the same vector (a rowid that SQLite reused for other text, or a removed
    chunk, means a rebuild); False leaves the caller to rebuild. When the partition recorded the
    content digest of what it holds, comparing digests replaces reading every vector back (seconds at
    100k chunks); a partition without one is checked vector by vector.
    """
    if not index.load() or index.embedder_id != embedder_id:
        return False
    held = index.labels()
    if len(held) == 0 or len(held) > len(labels):
        return False
    pos = np.searchsorted(labels, held)
    if int(pos.max()) >= len(labels) or not np.array_equal(labels[pos], held):
        return False
    recorded = index.content
    if recorded is not None:
        if recorded != content_digest(held, [shas[int(p)] for p in pos]):
            return False
    else:
        wanted = matrix[pos]
        wanted = wanted / np.maximum(np.linalg.norm(wanted, axis=1, keepdims=True), 1e-12)
        if not np.allclose(index.vectors(held), wanted, atol=1e-5):
            return False
    new = np.ones(len(labels), dtype=bool)
    new[pos] = False
    index.add(
        labels[new], matrix[new], gen, embedder_id=embedder_id, content=content_digest(labels, shas)
    )
    return True


class VectorCatalog:
    """The stored vectors of one embedder over one database: snapshot, partitions, nearest reads.

    `conn` gives the calling thread's connection. Thread-safe: the snapshot and the partitions are
    each replaced under a lock when the store's generation moves.
    """

    def __init__(
        self,
        db_path: Path,
        embedder: Embedder,
        conn: Callable[[], sqlite3.Connection],
        *,
        one_shot: bool = False,
    ) -> None:
        self.db_path = db_path
        self._one_shot = one_shot
        self.embedder = embedder
        self._conn = conn
        self._snapshot: CatalogSnapshot | None = None
        self._scoped: dict[frozenset[str], CatalogSnapshot] = {}
        self._snapshot_lock = threading.Lock()
        self._parts: tuple[str, dict[str, VectorIndex]] | None = None
        # Partitions loaded one by one for scoped reads, by generation (`_scoped_partitions`).
        self._held: tuple[str, dict[str, VectorIndex]] = ("", {})
        self._index_lock = threading.Lock()

    # --- files -------------------------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        """The index manifest: which project partitions exist and the generation they were built for."""
        return self.db_path.with_name(f"{self.db_path.stem}.{self.embedder.id}.hnsw.json")

    def partition_path(self, project: str) -> Path:
        """The hnswlib file of one project's partition (named by a hash: project paths have slashes)."""
        key = hashlib.sha256(project.encode("utf-8")).hexdigest()[:16]
        return self.db_path.with_name(f"{self.db_path.stem}.{self.embedder.id}.{key}.hnsw")

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
            write_private(tmp, json.dumps(manifest, sort_keys=True, indent=2))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        keep = {index.path.name for index in parts.values()}
        prefix = f"{self.db_path.stem}.{self.embedder.id}."
        for other in self.db_path.parent.iterdir():
            name = other.name
            base = name.removesuffix(".meta.json")
            if base.startswith(prefix) and base.endswith(".hnsw") and base not in keep:
                other.unlink(missing_ok=True)

    # --- snapshot and partitions -------------------------------------------------------------
    def snapshot(self) -> CatalogSnapshot:
        """The in-memory snapshot of vectors for the current generation (loaded on first use)."""
        emb = self.embedder
        key = (emb.id, store.generation(self._conn()))
        snapshot = self._snapshot
        if snapshot is not None and snapshot.key == key:
            return snapshot
        with self._snapshot_lock:
            snapshot = self._snapshot
            if snapshot is None or snapshot.key != key:
                snapshot = CatalogSnapshot(emb.id, self._conn, emb.dim)
                self._snapshot = snapshot
            return snapshot

    def _snapshot_for(self, scope: Scope | None) -> CatalogSnapshot:
        """The snapshot a read in `scope` uses: the whole one when it is loaded for the current
        generation or the scope is every project (or None: a read that needs every row), else one of
        the scope's projects only, so that a one-shot scoped search reads only their rows."""
        if scope is None or scope.all_projects:
            return self.snapshot()
        emb = self.embedder
        key = (emb.id, store.generation(self._conn()))
        whole = self._snapshot
        if whole is not None and whole.key == key:
            return whole
        wanted = frozenset(scope.projects)
        with self._snapshot_lock:
            cached = self._scoped.get(wanted)
            if cached is not None and cached.key == key:
                return cached
            snapshot = CatalogSnapshot(emb.id, self._conn, emb.dim, projects=wanted)
            stale = any(held.key != snapshot.key for held in self._scoped.values())
            if stale or len(self._scoped) >= _SCOPED_CACHE:
                self._scoped.clear()
            self._scoped[wanted] = snapshot
            return snapshot

    def _whole_at(self, snapshot: CatalogSnapshot) -> CatalogSnapshot:
        """The whole snapshot of `snapshot`'s generation (`StaleCatalogError` if it has moved on)."""
        if snapshot.covers is None:
            return snapshot
        whole = self.snapshot()
        if whole.key != snapshot.key:
            msg = f"the store moved on from generation {snapshot.key[1]} during a read"
            raise StaleCatalogError(msg)
        return whole

    def ensure_index(self) -> dict[str, VectorIndex]:
        """The per-project hnswlib partitions, loaded or rebuilt from SQLite when missing or stale."""
        return self._fresh(self._partitions)

    def _scoped_partitions(
        self, snapshot: CatalogSnapshot, projects: Sequence[str]
    ) -> dict[str, VectorIndex]:
        """The partitions of `projects` (those over EXACT_THRESHOLD rows) for `snapshot`'s generation.

        Loaded one by one from disk while the manifest lists them as current, so a search in one
        project loads (and checksums) only that project's graph; if one is missing or stale, every
        partition is built or loaded from the whole snapshot, as `ensure_index` does.
        """
        gen = f"{self.embedder.id}:{snapshot.key[1]}"
        big = [p for p in projects if len(snapshot.by_project[p]) > EXACT_THRESHOLD]
        with self._index_lock:
            loaded = self._listed_partitions(gen, big)
        if loaded is not None:
            return loaded
        return self._partitions(self._whole_at(snapshot))

    def _listed_partitions(
        self, gen: str, projects: Sequence[str]
    ) -> dict[str, VectorIndex] | None:
        """The partitions of `projects` for `gen`: those this object holds for it, else loaded one by
        one from disk (and kept) while the manifest lists each as current; None when one is missing,
        stale or unreadable. The caller holds `_index_lock`."""
        if self._parts is not None and self._parts[0] == gen:
            return self._parts[1]
        if self._held[0] != gen:
            self._held = (gen, {})
        held = self._held[1]
        missing = [p for p in projects if p not in held]
        listed = self._current_listing(gen) if missing else {}
        for project in missing:
            path = self.partition_path(project)
            index = VectorIndex(path, self.embedder.dim)
            if not (listed.get(project) == path.name and index.is_current(gen) and index.load()):
                return None
            held[project] = index
        return {p: held[p] for p in projects}

    def manifest_parts(self, gen: str) -> dict[str, object] | None:
        """The manifest's partition files by project when it was written for `gen` (an empty dict:
        no project is over EXACT_THRESHOLD), else None (no manifest, or one of another generation)."""
        manifest = self._read_manifest()
        if manifest is None or manifest["generation"] != gen:
            return None
        parts = manifest["parts"]
        return parts if isinstance(parts, dict) else None

    def current_partitions(
        self, gen: str, projects: Sequence[str]
    ) -> dict[str, VectorIndex] | None:
        """The partitions of `projects` for `gen`, held or loaded from disk; None when one is
        missing, stale or unreadable (nothing is built here)."""
        with self._index_lock:
            return self._listed_partitions(gen, projects)

    def _current_listing(self, gen: str) -> dict[str, object]:
        """The manifest's partition files by project when it was written for `gen`, else nothing."""
        return self.manifest_parts(gen) or {}

    def _partitions(self, snapshot: CatalogSnapshot) -> dict[str, VectorIndex]:
        """Partitions for `snapshot`'s generation: kept, loaded from disk, or built from the snapshot."""
        emb = self.embedder
        gen = f"{emb.id}:{snapshot.key[1]}"
        with self._index_lock:
            # Partitions this object built or loaded for the generation stay right even if the files
            # are replaced later: the generation alone says what they must hold.
            if self._parts is not None and self._parts[0] == gen:
                return self._parts[1]
            listed = self._current_listing(gen)
            parts: dict[str, VectorIndex] = {}
            for project, rows in snapshot.by_project.items():
                if len(rows) <= EXACT_THRESHOLD:
                    continue
                path = self.partition_path(project)
                index = VectorIndex(path, emb.dim)
                fresh = listed.get(project) == path.name and index.is_current(gen) and index.load()
                if not fresh:
                    labels, matrix = snapshot.labels[rows], snapshot.rows_matrix(rows)
                    shas = [snapshot.shas[int(r)] for r in rows]
                    if not _extend_partition(index, labels, matrix, shas, gen, emb.id):
                        content = content_digest(labels, shas)
                        index.build(labels, matrix, gen, embedder_id=emb.id, content=content)
                parts[project] = index
            self._write_manifest(gen, parts)
            self._parts = (gen, parts)
            self._held = (gen, dict(parts))
            return parts

    def index_state(self) -> str:
        """'current', 'stale' or 'missing' for the on-disk index partitions of this embedder."""
        manifest = self._read_manifest()
        if manifest is None:
            return "missing"
        gen = f"{self.embedder.id}:{store.generation(self._conn())}"
        parts = manifest["parts"]
        if manifest["generation"] != gen or not isinstance(parts, dict):
            return "stale"
        for name in parts.values():
            index = VectorIndex(self.db_path.with_name(str(name)), self.embedder.dim)
            if not index.is_current(gen):
                return "stale"
        return "current"

    # --- reads -------------------------------------------------------------------------------
    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        """Cosine similarity (1 - cosine distance) over stored vectors; keep score >= min_score.

        Exact numpy scan when the scoped set holds at most EXACT_THRESHOLD vectors, else the hnswlib
        partitions of the projects in scope, merged (a project at or below the threshold is scanned).
        A scope with a time window is refused: the catalog holds no times (`engine.window_reads`).
        """
        require_scope(scope)
        if scope.windowed:
            msg = "the vector catalog holds no times; read a windowed scope through Memory.nearest"
            raise ScopeError(msg)
        if limit < 1:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self._one_shot and self._snapshot is None:
            found = nearest_from_files(self, self._conn(), query, scope, limit, min_score)
            if found is not None:
                return found
        return self._fresh(
            lambda snapshot: self._nearest(snapshot, query, scope, limit, min_score), scope
        )

    def _fresh(self, read: Callable[[CatalogSnapshot], T], scope: Scope | None = None) -> T:
        """`read` over the current snapshot for `scope` (None: the whole one); once more over a new
        one when a vector it lists was removed in between (`StaleCatalogError`: a write moved the
        generation)."""
        try:
            return read(self._snapshot_for(scope))
        except StaleCatalogError:
            with self._snapshot_lock:
                self._snapshot = None
                self._scoped.clear()
            return read(self._snapshot_for(scope))

    def _nearest(
        self,
        snapshot: CatalogSnapshot,
        query: NDArray[np.float32],
        scope: Scope,
        limit: int,
        min_score: float,
    ) -> list[Scored]:
        rows, eligible = snapshot.mask(scope)
        if eligible == 0:
            return []
        if eligible <= EXACT_THRESHOLD:
            picked = np.arange(len(snapshot.labels)) if rows is None else np.flatnonzero(rows)
            matrix, labels = snapshot.rows_matrix(picked), snapshot.labels[picked]
            found, scores = exact_search(matrix, labels, query, limit, min_score)
        else:
            found, scores = self._index_search(snapshot, query, min(limit, eligible), scope)
        return snapshot.scored(found, scores, min_score)

    def _index_search(
        self, snapshot: CatalogSnapshot, query: NDArray[np.float32], k: int, scope: Scope
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Top-k over the partitions of the projects in `scope`, merged by (-score, label)."""
        in_scope = [p for p in snapshot.by_project if scope.allows(p)]
        parts = self._scoped_partitions(snapshot, in_scope)
        unit = query / max(float(np.linalg.norm(query)), 1e-12)
        found: list[NDArray[np.int64]] = []
        scores: list[NDArray[np.float32]] = []
        for project, rows in snapshot.by_project.items():
            if not scope.allows(project):
                continue
            index = parts.get(project)
            if index is None:
                labels, part_scores = exact_search(
                    snapshot.rows_matrix(rows), snapshot.labels[rows], unit, k
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

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, hidden: frozenset[str] = frozenset()
    ) -> Scored | None:
        """The session's chunk with the best exact cosine to `vector` (ties by chunk id), leaving
        out the chunks in `hidden`.

        The caller has checked that the session lies in the read's scope.
        """
        query = np.asarray(vector, dtype=np.float32)
        return self._fresh(
            lambda snapshot: self._best_in_session(snapshot, query, session_id, hidden)
        )

    def _best_in_session(
        self,
        snapshot: CatalogSnapshot,
        vector: NDArray[np.float32],
        session_id: str,
        hidden: frozenset[str],
    ) -> Scored | None:
        rows = snapshot.sessions.get(session_id)
        if rows is None or len(rows) == 0:
            return None
        # The walk asks this for many sessions per query: the whole matrix, read once per snapshot,
        # answers them from memory (a one-shot search that never asks reads no vector).
        found, scores = exact_search(
            snapshot.matrix[rows],
            snapshot.labels[rows],
            vector,
            1 + len(hidden),
        )
        # In exact_search's order (-score, label), as with k = 1, skipping what is hidden.
        for i in range(len(found)):
            best = snapshot.scored(found[i : i + 1], scores[i : i + 1], -2.0)
            if best and best[0].chunk_id not in hidden:
                return best[0]
        return None

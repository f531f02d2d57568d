"""Nearest-neighbour search: an hnswlib index persisted beside the database; an exact numpy scan.

The index is a cache. SQLite holds the vectors; the store rebuilds this file whenever `is_current`
says it is missing, corrupt or built from another generation of the stored vectors.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np
from numpy.typing import ArrayLike, NDArray

from engine.checks import is_int, is_number
from engine.hashing import file_key, sha256_file
from engine.private_files import private_file, write_private

# At or below this many vectors a scoped search scans exactly instead of using the index.
EXACT_THRESHOLD = 256
# Bumped whenever the sidecar or the index layout changes, so older files are rebuilt, not misread.
FORMAT_VERSION = 1
# hnswlib's level generator seed; fixed so that the same vectors build the same graph.
RANDOM_SEED = 100
# hnswlib's cosine distance is 1 - cosine, so similarity = 1 - distance; other spaces would break that.
_SPACES = ("cosine",)


class VectorIndexError(RuntimeError):
    """The index was queried before anything was built or loaded."""


@dataclass(frozen=True, kw_only=True)
class IndexParams:
    """HNSW parameters (Malkov & Yashunin 2018); stored in the sidecar, a change forces a rebuild."""

    space: str = "cosine"
    M: int = 16
    # Measured on `nox -s perf`'s 100k corpus (4 project partitions of ~25k) and its 200 questions:
    # strict recall@10 against the exact scan was 0.862 / 0.926 / 0.966 at ef 100 / 300 / 800 with
    # ef_construction 200, and 0.967 / 0.985 / 0.988 at ef 300 / 600 / 1000 with 800. M 32 or 48
    # instead of 16 at the same ef_construction moved it by at most 0.01: the graph's quality
    # (ef_construction) and the search breadth (ef) are what these queries need. The price is build
    # time: 89 s instead of 27 s for the 100k vectors on one core.
    ef_construction: int = 800
    ef_search: int = 600

    def __post_init__(self) -> None:
        if self.space not in _SPACES:
            msg = f"space must be one of {', '.join(_SPACES)}, received {self.space!r}"
            raise ValueError(msg)
        for name, value, low in (
            ("M", self.M, 2),
            ("ef_construction", self.ef_construction, 1),
            ("ef_search", self.ef_search, 1),
        ):
            if not is_int(value) or value < low:
                msg = f"{name} must be an int >= {low}, received {value!r}"
                raise ValueError(msg)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a JSON-ready dict."""
        return asdict(self)


def _as_labels(labels: ArrayLike, what: str) -> NDArray[np.int64]:
    """Validate labels: 1-d, integral and non-negative (hnswlib stores them unsigned)."""
    array = np.asarray(labels)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        msg = (
            f"{what} must be a 1-d integer array, received dtype {array.dtype} shape {array.shape}"
        )
        raise ValueError(msg)
    out = array.astype(np.int64)
    if np.any(out < 0):
        msg = f"{what} must be non-negative, received minimum {int(out.min())}"
        raise ValueError(msg)
    return out


def _as_matrix(vectors: ArrayLike, dim: int, rows: int) -> NDArray[np.float32]:
    """Validate a (rows, dim) matrix of finite floats and return it as contiguous float32."""
    array = np.asarray(vectors, dtype=np.float32)
    if rows == 0 and array.size == 0:
        return np.zeros((0, dim), dtype=np.float32)
    if array.shape != (rows, dim):
        msg = f"vectors must have shape ({rows}, {dim}) to match the labels, received {array.shape}"
        raise ValueError(msg)
    if not np.all(np.isfinite(array)):
        msg = "vectors contain NaN or infinity; re-embed those texts before indexing them"
        raise ValueError(msg)
    return np.ascontiguousarray(array)


def _as_query(vector: ArrayLike, dim: int) -> NDArray[np.float32]:
    """Validate a query of shape (dim,) or (1, dim) and return it as a flat float32 vector."""
    array = np.asarray(vector, dtype=np.float32)
    if array.shape not in ((dim,), (1, dim)):
        msg = f"query vector must have shape ({dim},), received {array.shape}"
        raise ValueError(msg)
    flat = array.reshape(dim)
    if not np.all(np.isfinite(flat)):
        msg = "query vector contains NaN or infinity"
        raise ValueError(msg)
    return flat


def _check_k(k: object) -> int:
    """Validate `k` (numpy integers included) and return it as a plain int."""
    value = int(k) if isinstance(k, np.integer) else k
    if is_int(value) and value >= 0:
        return value
    msg = f"k must be a non-negative int, received {k!r}"
    raise ValueError(msg)


def _normalised(vector: NDArray[np.float32]) -> NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        msg = "query vector is all zeros; cosine similarity is undefined for it"
        raise ValueError(msg)
    return (vector / norm).astype(np.float32)


def _check_generation(generation: str) -> None:
    if not isinstance(generation, str) or not generation:
        msg = f"generation must be a non-empty str naming the vectors' state, got {generation!r}"
        raise ValueError(msg)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """Make a rename durable; some filesystems cannot open a folder, which is harmless here."""
    with contextlib.suppress(OSError):
        _fsync_file(path)


def _ranked(
    labels: NDArray[np.int64], scores: NDArray[np.float32], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The best `k` by (-score, label): ties go to the smaller label, so runs reproduce."""
    if k < len(scores):
        # Keep everything tied with the k-th best so the label tie-break sees the whole tie.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        labels, scores = labels[keep], scores[keep]
    order = np.lexsort((labels, -scores))[:k]
    return labels[order].astype(np.int64), scores[order].astype(np.float32)


def exact_search(
    matrix: NDArray[np.float32],
    labels: NDArray[np.int64],
    vector: ArrayLike,
    k: int,
    min_score: float = -1.0,
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Exact cosine top-k over rows of `matrix` (rows and `vector` already L2-normalised).

    Returns:
        The labels and cosine similarities of the best `k` rows with `score >= min_score`,
        sorted by (-score, label).

    Raises:
        ValueError: shapes disagree, `k` is negative or `min_score` is not a finite number.
    """
    k = _check_k(k)
    score: object = min_score  # checked at run time: a caller may pass anything
    if not (is_number(score) or isinstance(score, np.floating)):
        msg = f"min_score must be a number, received {min_score!r}"
        raise ValueError(msg)
    if not math.isfinite(float(min_score)):
        msg = f"min_score must be finite, received {min_score!r}"
        raise ValueError(msg)
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim != 2:
        msg = f"matrix must be 2-d (n, dim), received shape {rows.shape}"
        raise ValueError(msg)
    ids = _as_labels(labels, "labels")
    if len(ids) != rows.shape[0]:
        msg = f"labels has {len(ids)} entries but matrix has {rows.shape[0]} rows; pass one per row"
        raise ValueError(msg)
    query = _as_query(vector, rows.shape[1])
    if k == 0 or rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores = rows @ query
    keep = scores >= np.float32(min_score)
    return _ranked(ids[keep], scores[keep], k)


class VectorIndex:
    """An hnswlib index file plus a JSON sidecar (`<path>.meta.json`) that says what it holds.

    The sidecar is removed before the index file is replaced and written after it, each by
    write-to-temp then `os.replace`, so a process killed mid-write leaves no sidecar (not current,
    rebuilt) rather than a half-written index that looks current.
    """

    def __init__(self, path: Path, dim: int, params: IndexParams = IndexParams()) -> None:
        if not is_int(dim) or dim < 1:
            msg = f"dim must be a positive int, received {dim!r}"
            raise ValueError(msg)
        self._path = Path(path)
        self._dim = dim
        self._params = params
        self._index: Any = None
        self._embedder_id: str | None = None
        self._content: str | None = None

    @property
    def path(self) -> Path:
        return self._path

    @property
    def meta_path(self) -> Path:
        return self._path.with_name(self._path.name + ".meta.json")

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def params(self) -> IndexParams:
        return self._params

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.get_current_count())

    @property
    def embedder_id(self) -> str | None:
        """The embedder whose vectors the loaded or built index holds, when it was recorded."""
        return self._embedder_id

    @property
    def content(self) -> str | None:
        """The caller's digest of what the loaded or built index holds, when it was recorded."""
        return self._content

    def labels(self) -> NDArray[np.int64]:
        """The labels the loaded or built index holds, ascending (empty when nothing is loaded)."""
        if self._index is None:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.asarray(self._index.get_ids_list(), dtype=np.int64))

    def vectors(self, labels: NDArray[np.int64]) -> NDArray[np.float32]:
        """The stored (L2-normalised) vectors of `labels`, which the index must hold."""
        if self._index is None:
            msg = f"no vector index loaded for {self._path}; call build() or load() first"
            raise VectorIndexError(msg)
        ids = _as_labels(labels, "labels")
        if len(ids) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.asarray(self._index.get_items(ids.astype(np.uint64)), dtype=np.float32)

    # --- write side ---

    def build(
        self,
        labels: NDArray[np.int64],
        vectors: NDArray[np.float32],
        generation: str,
        *,
        embedder_id: str | None = None,
        content: str | None = None,
    ) -> None:
        """Build the index from scratch from (label, vector) pairs and persist it.

        Raises:
            ValueError: shapes disagree, labels repeat or are negative, vectors are not finite.
        """
        _check_generation(generation)
        ids = _as_labels(labels, "labels")
        rows = _as_matrix(vectors, self._dim, len(ids))
        if len(np.unique(ids)) != len(ids):
            msg = "labels repeat within one build; give every vector its own label"
            raise ValueError(msg)
        index = self._new_index(max(len(ids), 1))
        self._add_items(index, ids, rows)
        self._index = index
        self._embedder_id = embedder_id
        self._content = content
        self._persist(generation)

    def add(
        self,
        labels: NDArray[np.int64],
        vectors: NDArray[np.float32],
        generation: str,
        *,
        embedder_id: str | None = None,
        content: str | None = None,
    ) -> None:
        """Add vectors to the loaded index (or the one on disk, or a new one) and persist it.

        A label already present has its vector replaced (hnswlib's update); the count is unchanged.
        `content` is the caller's digest of everything the index holds after the add (None: unknown).
        """
        _check_generation(generation)
        ids = _as_labels(labels, "labels")
        rows = _as_matrix(vectors, self._dim, len(ids))
        if self._index is None and not self.load():
            self._index = self._new_index(max(len(ids), 1))
        index = self._index
        needed = int(index.get_current_count()) + len(ids)
        if needed > int(index.get_max_elements()):
            # Doubling keeps a long run of small adds from resizing on every call.
            index.resize_index(max(needed, 2 * int(index.get_max_elements())))
        self._add_items(index, ids, rows)
        if embedder_id is not None:
            self._embedder_id = embedder_id
        self._content = content
        self._persist(generation)

    def _new_index(self, capacity: int) -> Any:
        index = hnswlib.Index(space=self._params.space, dim=self._dim)
        index.init_index(
            max_elements=capacity,
            M=self._params.M,
            ef_construction=self._params.ef_construction,
            random_seed=RANDOM_SEED,
        )
        index.set_ef(self._params.ef_search)
        return index

    @staticmethod
    def _add_items(index: Any, ids: NDArray[np.int64], rows: NDArray[np.float32]) -> None:
        if len(ids):
            # One thread: parallel insertion order changes the graph, and so the results.
            index.add_items(rows, ids.astype(np.uint64), num_threads=1)

    def _persist(self, generation: str) -> None:
        """Write index then sidecar, each atomically; the old sidecar goes first."""
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.meta_path.unlink(missing_ok=True)
        tmp_index = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        try:
            os.close(private_file(tmp_index))  # hnswlib rewrites it and the mode stays
            self._index.save_index(str(tmp_index))
            _fsync_file(tmp_index)
            os.replace(tmp_index, self._path)
        finally:
            tmp_index.unlink(missing_ok=True)
        meta = {
            "format": FORMAT_VERSION,
            "dim": self._dim,
            "count": len(self),
            "params": self._params.to_dict(),
            "generation": generation,
            "embedder_id": self._embedder_id,
            "content_sha256": self._content,
            "index_bytes": self._path.stat().st_size,
            "index_sha256": sha256_file(self._path),
            "index_stat": file_key(self._path),
        }
        tmp_meta = self.meta_path.with_name(f".{self.meta_path.name}.{os.getpid()}.tmp")
        try:
            write_private(tmp_meta, json.dumps(meta, sort_keys=True, indent=2))
            _fsync_file(tmp_meta)
            os.replace(tmp_meta, self.meta_path)
        finally:
            tmp_meta.unlink(missing_ok=True)
        _fsync_dir(self._path.parent)

    # --- read side ---

    def read_meta(self) -> dict[str, Any] | None:
        """The sidecar if it is readable and describes an index this object can use, else None."""
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict):
            return None
        usable = (
            meta.get("format") == FORMAT_VERSION
            and meta.get("dim") == self._dim
            and meta.get("params") == self._params.to_dict()
            and isinstance(meta.get("generation"), str)
            and isinstance(meta.get("count"), int)
            and isinstance(meta.get("index_bytes"), int)
            and isinstance(meta.get("index_sha256"), str)
        )
        return meta if usable else None

    def is_current(self, generation: str) -> bool:
        """True when a usable sidecar for `generation` and an index file of the recorded size exist."""
        meta = self.read_meta()
        if meta is None or meta["generation"] != generation:
            return False
        try:
            size = self._path.stat().st_size
        except OSError:
            return False
        return bool(size == meta["index_bytes"])

    def load(self, *, full_check: bool = False) -> bool:
        """Load the index from disk; False (nothing loaded) if missing, corrupt or stale-format.

        The file's sha256 is checked against the sidecar's, because hnswlib trusts the bytes it reads
        and can crash on a damaged file. The check is skipped when the file still has the size,
        mtime and inode the sidecar's writer recorded right after writing it (any write to it or
        replacement of it changes one of them; hashing a 100k-chunk index's partitions took about
        0.2 s of a one-shot search), unless `full_check` (`recallbench doctor`).
        """
        meta = self.read_meta()
        if meta is None:
            return False
        try:
            if self._path.stat().st_size != meta["index_bytes"]:
                return False
            unchanged = meta.get("index_stat") == file_key(self._path)
            if (full_check or not unchanged) and sha256_file(self._path) != meta["index_sha256"]:
                return False
            index = hnswlib.Index(space=self._params.space, dim=self._dim)
            index.load_index(str(self._path), max_elements=max(meta["count"], 1))
        except (OSError, RuntimeError, ValueError):
            return False
        if int(index.get_current_count()) != meta["count"]:
            return False
        index.set_ef(self._params.ef_search)
        self._index = index
        embedder_id = meta.get("embedder_id")
        self._embedder_id = embedder_id if isinstance(embedder_id, str) else None
        content = meta.get("content_sha256")
        self._content = content if isinstance(content, str) else None
        return True

    def query(
        self, vector: ArrayLike, k: int, allowed: Callable[[int], bool] | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Approximate top-k by cosine similarity (1 - distance), sorted by (-score, label).

        `allowed` keeps only labels it returns True for; when fewer than `k` labels are allowed,
        all of them are returned.

        Raises:
            VectorIndexError: nothing is built or loaded yet.
        """
        if self._index is None:
            msg = f"no vector index loaded for {self._path}; call build() or load() first"
            raise VectorIndexError(msg)
        k = _check_k(k)
        query = _normalised(_as_query(vector, self._dim))
        count = len(self)
        if k == 0 or count == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        k_eff = min(k, count)
        self._index.set_ef(max(self._params.ef_search, k_eff))
        try:
            found, distances = self._index.knn_query(query, k=k_eff, filter=allowed, num_threads=1)
        except RuntimeError:
            # hnswlib raises when it finds fewer than k (a selective filter); scan the eligible.
            return self._exact_over_eligible(query, k_eff, allowed)
        labels = np.asarray(found[0], dtype=np.int64)
        scores = (1.0 - np.asarray(distances[0], dtype=np.float32)).astype(np.float32)
        return _ranked(labels, scores, k_eff)

    def _exact_over_eligible(
        self, query: NDArray[np.float32], k: int, allowed: Callable[[int], bool] | None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        ids = [int(label) for label in self._index.get_ids_list()]
        eligible = np.asarray(
            [label for label in ids if allowed is None or allowed(label)], dtype=np.int64
        )
        if len(eligible) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows = np.asarray(self._index.get_items(eligible.astype(np.uint64)), dtype=np.float32)
        # hnswlib stores cosine vectors normalised already; this only guards rounding.
        rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        return exact_search(rows, eligible, query, k)

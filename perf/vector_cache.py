"""Real chunk vectors kept between perf runs, keyed by content: sha256 of the chunk text + the embedder id.

Embedding 30k chunks with MiniLM takes a quarter of an hour on two cores; the corpus is generated from a
seed, so a rerun asks for the same texts and finds their vectors here. The cache lives outside the run's
work folder (which is temporary by default): `$RECALLBENCH_PERF_CACHE`, else
`~/.cache/recallbench/perf` (`default_cache_dir`). Each embedder id has its own folder of shard files,
one per slice embedded, written atomically as each slice finishes, so an interrupted run keeps what it
embedded. A shard records the embedder id and the dimension, and a shard that disagrees is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engine.embed import Embedder
from perf.config import PerfError

CACHE_ENV = "RECALLBENCH_PERF_CACHE"
# Texts embedded per call and per shard file: a progress line and a save point every slice.
SLICE = 512
# A text's cost grows with its word pieces up to the model's 256-piece truncation (about this many
# characters), so the time left is estimated from characters up to this cap, not from text counts.
COST_CAP_CHARS = 1200


def default_cache_dir() -> Path:
    """`$RECALLBENCH_PERF_CACHE`, else `~/.cache/recallbench/perf`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "recallbench" / "perf"


def text_key(text: str) -> str:
    """The content hash a vector is cached under (the embedder id names the folder)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedder_folder(root: Path, embedder_id: str) -> Path:
    """The folder of one embedder's vectors: its id made file-safe, plus a hash of the exact id."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", embedder_id)[:60]
    digest = hashlib.sha256(embedder_id.encode("utf-8")).hexdigest()[:12]
    return root / "vectors" / f"{safe}-{digest}"


def text_cost(text: str) -> int:
    """The relative cost of embedding `text` (its characters, capped at the model's truncation)."""
    return min(len(text), COST_CAP_CHARS) + 1


@dataclass(frozen=True, kw_only=True)
class CacheStats:
    """What one `cached_embed` call found and did."""

    texts: int
    hits: int
    embedded: int
    embed_s: float
    folder: Path

    def to_dict(self) -> dict[str, Any]:
        rate = self.embedded / self.embed_s if self.embed_s > 0 else None
        return {
            "texts": self.texts,
            "cache_hits": self.hits,
            "embedded": self.embedded,
            "embed_s": self.embed_s,
            "embedded_per_s": rate,
            "cache_folder": str(self.folder),
        }


class VectorCache:
    """One embedder's cached vectors under `root` (see the module docstring)."""

    def __init__(self, root: Path, embedder_id: str, dim: int) -> None:
        self.folder = embedder_folder(root, embedder_id)
        self.embedder_id = embedder_id
        self.dim = dim
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._load()

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, key: str) -> NDArray[np.float32] | None:
        return self._vectors.get(key)

    def _load(self) -> None:
        for path in sorted(self.folder.glob("shard-*.npz")):
            with np.load(path, allow_pickle=False) as shard:
                stored_id = str(shard["embedder_id"])
                matrix = np.asarray(shard["vectors"], dtype=np.float32)
                keys = [str(k) for k in shard["keys"]]
            if stored_id != self.embedder_id or matrix.shape != (len(keys), self.dim):
                msg = (
                    f"{path} holds {matrix.shape} vectors of {stored_id!r}, not {self.dim}-d vectors "
                    f"of {self.embedder_id!r}; delete {self.folder} to re-embed"
                )
                raise PerfError(msg)
            self._vectors.update(zip(keys, matrix, strict=True))

    def add(self, keys: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Keep `vectors` under `keys`, in memory and in a new shard file (written atomically)."""
        if vectors.shape != (len(keys), self.dim):
            msg = f"expected {len(keys)} x {self.dim} vectors, got {vectors.shape}"
            raise PerfError(msg)
        if not keys:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256("".join(keys).encode("ascii")).hexdigest()[:20]
        path = self.folder / f"shard-{name}.npz"
        partial = self.folder / f".shard-{name}.{os.getpid()}.npz"
        np.savez(
            partial,
            keys=np.asarray(keys),
            vectors=np.asarray(vectors, dtype=np.float32),
            embedder_id=np.asarray(self.embedder_id),
        )
        os.replace(partial, path)
        self._vectors.update(zip(keys, np.asarray(vectors, dtype=np.float32), strict=True))


Say = Callable[[str], None]


def cached_embed(
    embedder: Embedder,
    texts: Sequence[str],
    root: Path,
    say: Say = lambda _: None,
    slice_size: int = SLICE,
) -> tuple[NDArray[np.float32], CacheStats]:
    """`embedder`'s vectors of `texts`, in order: from the cache where it has them, else embedded.

    The missing texts are embedded longest first in slices of `slice_size` (similar lengths share a
    batch, so less padding), each slice saved to the cache as it finishes and reported through `say`.
    """
    if slice_size < 1:
        msg = f"slice_size must be >= 1, got {slice_size}"
        raise PerfError(msg)
    cache = VectorCache(root, embedder.id, embedder.dim)
    keys = [text_key(text) for text in texts]
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if cache.get(key) is None:
            missing.setdefault(key, text)
    hits = sum(1 for key in keys if key not in missing)
    say(
        f"real vectors ({embedder.id}): {hits} of {len(texts)} texts from the cache at "
        f"{cache.folder}; {len(missing)} to embed"
    )
    order = sorted(missing, key=lambda k: (-text_cost(missing[k]), k))
    total_cost = sum(text_cost(missing[k]) for k in order)
    done_cost = 0
    started = time.perf_counter()
    for start in range(0, len(order), slice_size):
        part = order[start : start + slice_size]
        cache.add(part, embedder.embed([missing[k] for k in part]))
        done_cost += sum(text_cost(missing[k]) for k in part)
        elapsed = time.perf_counter() - started
        say(progress_line(start + len(part), len(order), done_cost, total_cost, elapsed))
    embed_s = time.perf_counter() - started
    matrix = np.stack([_found(cache, key) for key in keys]) if keys else np.zeros((0, cache.dim))
    stats = CacheStats(
        texts=len(texts), hits=hits, embedded=len(order), embed_s=embed_s, folder=cache.folder
    )
    return matrix.astype(np.float32), stats


def _found(cache: VectorCache, key: str) -> NDArray[np.float32]:
    vector = cache.get(key)
    if vector is None:  # every missing key was embedded and added above
        msg = f"the vector of {key} is missing from {cache.folder} after embedding"
        raise PerfError(msg)
    return vector


def progress_line(done: int, total: int, done_cost: int, total_cost: int, elapsed: float) -> str:
    """`[#####-----]  512/2000 embedded (25.6%), 30.1 texts/s, about 49 s left`.

    The share done and the time left follow `text_cost` (the texts are embedded longest first, so a
    count-based estimate would be too pessimistic early on).
    """
    share = done_cost / total_cost if total_cost else 1.0
    filled = round(20 * share)
    rate = done / elapsed if elapsed > 0 else 0.0
    left = elapsed * (1 - share) / share if share > 0 else 0.0
    return (
        f"[{'#' * filled}{'-' * (20 - filled)}] {done}/{total} embedded ({100 * share:.1f}%), "
        f"{rate:.1f} texts/s, about {_duration(left)} left"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"

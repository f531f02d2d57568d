"""Passages for drafted questions: a corpus read as the importer reads it, sampled by project and age.

The corpus is imported into a throw-away `engine.memory.Memory` (no embedder), so every passage is a chunk
exactly as a benchmark run stores it: parsed, sanitized (secrets and private spans removed), capped and
chunked by the engine's own code, with the same chunk ids, sessions and message uuids that gold refers to.

Sampling is stratified and seeded, with rules a person can check by hand:

* a chunk shorter than `MIN_PASSAGE_CHARS` is too short to ask about; it is counted and never sampled;
* **age**: the eligible chunks with a timestamp (the chunk's first, else its session's start) are sorted by
  (timestamp, passage key); the one at rank ``i`` of ``n`` is in tercile ``3 * i // n``: ``old``, ``middle``,
  ``recent``. Chunks without any timestamp form the stratum ``undated``;
* **strata** are (project, age); each gets ``N * size / eligible`` samples rounded down, and the samples
  left over go one each to the strata with the largest remainders, ties to the earlier stratum (projects
  sorted, then old, middle, recent, undated) -- Hamilton's largest-remainder rule, in integers;
* **within a stratum** chunks are ordered by ``sha256("<seed>:<passage key>")`` and the first ones taken.
  A hash, not `random`, so the picks are the same on every Python version and can be recomputed by hand.
  The passage key is ``<stream name>#<chunk index>`` (``<session id>#3``, ``<session id>/agent-<id>#0``):
  chunk ids also hash the file's location, and a sample must not change when the corpus folder moves.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from engine.memory import Memory
from engine.scope import Scope

__all__ = [
    "AGES",
    "MIN_PASSAGE_CHARS",
    "Corpus",
    "Passage",
    "Sample",
    "SampleError",
    "age_strata",
    "allocate",
    "read_corpus",
    "sample_passages",
]

MIN_PASSAGE_CHARS = 200  # about two sentences: less gives a model nothing to remember
AGES = ("old", "middle", "recent", "undated")
_AGE_ORDER = {age: i for i, age in enumerate(AGES)}


class SampleError(ValueError):
    """The corpus cannot be read or sampled."""


@dataclass(frozen=True, kw_only=True)
class Passage:
    """One stored chunk that a question may be drafted from."""

    chunk_id: str
    key: str  # where it sits, whatever folder holds the corpus: "<stream name>#<chunk index>"
    session_id: str
    project: str
    message_uuids: tuple[str, ...]
    text: str
    timestamp: str | None  # the chunk's first timestamp, else its session's start


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """Every chunk of a corpus as the importer stores it, with the import's own counts."""

    passages: tuple[Passage, ...]  # by chunk id
    files_seen: int
    files_failed: Mapping[str, str]
    skipped: Mapping[str, int]  # the importer's skip counts, per reason

    def __post_init__(self) -> None:
        object.__setattr__(self, "files_failed", MappingProxyType(dict(self.files_failed)))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))


@dataclass(frozen=True, kw_only=True)
class Sample:
    """The passages picked, in draft order, with the stratum of each and the counts behind them."""

    picked: tuple[tuple[Passage, str], ...]  # (passage, age stratum)
    too_short: int
    eligible: int
    strata: Mapping[str, tuple[int, int]]  # "project | age" -> (eligible, sampled)

    def __post_init__(self) -> None:
        object.__setattr__(self, "strata", MappingProxyType(dict(self.strata)))


def read_corpus(corpus: Path, *, progress: bool = False) -> Corpus:
    """Import `corpus` into a temporary memory and return its chunks (the memory is then deleted).

    Raises:
        SampleError: `corpus` is not a folder, or no chunk could be read from it.
    """
    corpus = Path(corpus)
    if not corpus.is_dir():
        msg = f"corpus {corpus} is not a folder; give a transcript folder (a frozen copy of your history)"
        raise SampleError(msg)
    with tempfile.TemporaryDirectory(prefix="recallbench-draft-") as tmp:
        memory = Memory(Path(tmp) / "draft.db")
        try:
            report = memory.import_paths([corpus], embed=False, progress=progress)
            ids = [row[1] for row in memory.chunk_rows()]
            records = memory.chunks(ids, Scope.everywhere())
        finally:
            memory.close()
    passages = sorted(
        (
            Passage(
                chunk_id=r.id,
                key=f"{r.stream.split('@', 1)[0]}#{r.index}",
                session_id=r.session_id,
                project=r.project,
                message_uuids=r.message_uuids,
                text=r.text,
                timestamp=r.ts_start or r.session_start,
            )
            for r in records
        ),
        key=lambda p: (p.key, p.chunk_id),
    )
    if not passages:
        msg = (
            f"no chunk could be read from {corpus} ({report.files_seen} transcript files, "
            f"{len(report.files_failed)} failed); point at a folder of Claude Code .jsonl transcripts"
        )
        raise SampleError(msg)
    return Corpus(
        passages=tuple(passages),
        files_seen=report.files_seen,
        files_failed=report.files_failed,
        skipped=dict(report.skipped),
    )


def age_strata(passages: Sequence[Passage]) -> dict[str, str]:
    """Chunk id -> age stratum: terciles of the timestamp over `passages`, or ``undated``."""
    dated = sorted((p.timestamp, p.key, p.chunk_id) for p in passages if p.timestamp)
    out = {p.chunk_id: "undated" for p in passages if not p.timestamp}
    n = len(dated)
    for i, (_, _, cid) in enumerate(dated):
        out[cid] = AGES[3 * i // n]
    return out


def allocate(sizes: Mapping[tuple[str, str], int], n: int) -> dict[tuple[str, str], int]:
    """Samples per (project, age) stratum: proportional, largest remainders first (see the module)."""
    total = sum(sizes.values())
    order = sorted(sizes, key=lambda s: (s[0], _AGE_ORDER[s[1]]))
    if n >= total:
        return {s: sizes[s] for s in order}
    # Integer arithmetic: the share of stratum s is n * size / total = floor + remainder / total.
    base = {s: n * sizes[s] // total for s in order}
    left = n - sum(base.values())
    by_remainder = sorted(order, key=lambda s: -(n * sizes[s] % total))  # stable: ties keep order
    for s in by_remainder[:left]:
        base[s] += 1
    return base


def sample_passages(passages: Iterable[Passage], n: int, seed: int) -> Sample:
    """Pick `n` passages, stratified by project and age and seeded (the rules are in the module doc).

    Raises:
        SampleError: `n` is below 1, or no passage is long enough to ask about.
    """
    if n < 1:
        msg = f"the sample size must be at least 1, got {n}"
        raise SampleError(msg)
    every = list(passages)
    eligible = [p for p in every if len(p.text.strip()) >= MIN_PASSAGE_CHARS]
    if not eligible:
        msg = (
            f"none of the {len(every)} chunks has {MIN_PASSAGE_CHARS} characters or more; "
            "the corpus is too small to draft questions from"
        )
        raise SampleError(msg)
    ages = age_strata(eligible)
    groups: dict[tuple[str, str], list[Passage]] = {}
    for p in eligible:
        groups.setdefault((p.project, ages[p.chunk_id]), []).append(p)
    quota = allocate(Counter({s: len(g) for s, g in groups.items()}), n)
    picked: list[tuple[Passage, str]] = []
    strata: dict[str, tuple[int, int]] = {}
    for stratum, k in quota.items():
        ranked = sorted(groups[stratum], key=lambda p: (_rank(seed, p.key), p.key, p.chunk_id))
        picked.extend((p, stratum[1]) for p in ranked[:k])
        strata[f"{stratum[0]} | {stratum[1]}"] = (len(ranked), k)
    return Sample(
        picked=tuple(picked),
        too_short=len(every) - len(eligible),
        eligible=len(eligible),
        strata=strata,
    )


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()

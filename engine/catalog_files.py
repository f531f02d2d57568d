"""Nearest reads answered from the on-disk partitions alone, for a process that reads once or twice.

`engine.catalog.VectorCatalog` answers a nearest read from a `CatalogSnapshot`: every chunk that has a
vector, read from SQLite once per generation. A server reads thousands of times per generation and
keeps it; a one-shot `recallbench search` over 100k chunks spent about a second reading it to answer one
query. When the index manifest and every partition in scope are current for the store's generation,
this module answers the same read from what the partitions hold and a few indexed SQL reads:

* the projects that have chunks (one index probe per project);
* the rows of the projects in scope that have no partition (at most EXACT_THRESHOLD each: they are
  scanned exactly, as the snapshot path scans them);
* the chunk ids of the labels found.

All of it inside one read transaction, so the generation the partitions were checked against is the
one whose rowids are looked up. The answer is the snapshot path's, hit for hit (tested); whenever the
files cannot give it (no current manifest, a partition missing, stale or unreadable, a project whose
size disagrees with the manifest) this returns None and the caller reads through the snapshot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

from engine import catalog_sql, store
from engine.api import Scored
from engine.embed import Embedder
from engine.scope import Scope
from engine.vectors import EXACT_THRESHOLD, exact_search

if TYPE_CHECKING:
    from engine.vectors import VectorIndex


class FilePartitions(Protocol):
    """What `engine.catalog.VectorCatalog` offers this module."""

    @property
    def embedder(self) -> Embedder: ...

    def manifest_parts(self, gen: str) -> dict[str, object] | None: ...

    def current_partitions(
        self, gen: str, projects: Sequence[str]
    ) -> dict[str, VectorIndex] | None: ...


def nearest_from_files(
    catalog: FilePartitions,
    conn: sqlite3.Connection,
    query: NDArray[np.float32],
    scope: Scope,
    limit: int,
    min_score: float,
) -> list[Scored] | None:
    """The snapshot path's nearest read (`VectorCatalog._nearest`) from current partition files and
    indexed SQL reads; None when the files cannot answer it."""
    emb = catalog.embedder
    with store.read(conn):
        gen = f"{emb.id}:{store.generation(conn)}"
        listed = catalog.manifest_parts(gen)
        if listed is None:
            return None
        projects = [p for p in catalog_sql.chunk_projects(conn) if scope.allows(p)]
        big = [p for p in projects if p in listed]
        parts = catalog.current_partitions(gen, big)
        if parts is None or any(len(parts[p]) <= EXACT_THRESHOLD for p in big):
            return None
        small = _small_rows(conn, emb, [p for p in projects if p not in listed])
        if small is None:
            return None
        eligible = sum(len(parts[p]) for p in big) + sum(len(labels) for labels, _ in small)
        if eligible == 0:
            return []
        if eligible <= EXACT_THRESHOLD:  # no partition in scope: one scan, as `_nearest` does
            labels = np.concatenate([labels for labels, _ in small])
            matrix = np.concatenate([matrix for _, matrix in small])
            order = np.argsort(labels, kind="stable")
            found, scores = exact_search(matrix[order], labels[order], query, limit, min_score)
        else:
            found, scores = _merged(parts, big, small, query, min(limit, eligible))
        ids = catalog_sql.chunk_ids(conn, found.tolist())
    if len(ids) != len(set(found.tolist())):
        return None
    out = [
        Scored(chunk_id=ids[int(label)], score=float(score))
        for label, score in zip(found, scores, strict=True)
        if float(score) >= min_score
    ]
    out.sort(key=lambda s: (-s.score, s.chunk_id))
    return out


def _small_rows(
    conn: sqlite3.Connection, emb: Embedder, projects: Sequence[str]
) -> list[tuple[NDArray[np.int64], NDArray[np.float32]]] | None:
    """(labels, vectors) of each project in `projects` that has vectors, none over EXACT_THRESHOLD
    (else None: the manifest would have listed a partition for it)."""
    if not projects:
        return []
    _, rows = catalog_sql.catalog_rows(conn, emb.id, sorted(projects))
    by_project: dict[str, list[tuple[int, str]]] = {}
    for rowid, _, project, _, sha in rows:
        by_project.setdefault(project, []).append((int(rowid), sha))
    if any(len(held) > EXACT_THRESHOLD for held in by_project.values()):
        return None
    stored = catalog_sql.vectors_of(conn, emb.id, [sha for _, _, _, _, sha in rows])
    out = []
    for held in by_project.values():
        if any(sha not in stored for _, sha in held):
            return None
        blob = b"".join(stored[sha] for _, sha in held)
        matrix = np.frombuffer(blob, dtype="<f4").reshape(len(held), -1).astype(np.float32)
        out.append((np.asarray([rowid for rowid, _ in held], dtype=np.int64), matrix))
    return out


def _merged(
    parts: dict[str, VectorIndex],
    big: Sequence[str],
    small: Sequence[tuple[NDArray[np.int64], NDArray[np.float32]]],
    query: NDArray[np.float32],
    k: int,
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Top-k over the partitions and the small projects' scans, merged by (-score, label), as
    `VectorCatalog._index_search` merges them."""
    unit = query / max(float(np.linalg.norm(query)), 1e-12)
    found: list[NDArray[np.int64]] = []
    scores: list[NDArray[np.float32]] = []
    for project in big:
        labels, part_scores = parts[project].query(unit, k)
        found.append(labels)
        scores.append(part_scores)
    for labels, matrix in small:
        got, part_scores = exact_search(matrix, labels, unit, k)
        found.append(got)
        scores.append(part_scores)
    all_labels = np.concatenate(found)
    all_scores = np.concatenate(scores)
    order = np.lexsort((all_labels, -all_scores))[:k]
    return all_labels[order], all_scores[order]

"""The SQL of `engine.held_vectors`: what each embedder's vectors take in the database, and removing them.

Chunk vectors (`vectors`) and the sentence vectors of the person's prompts (`sentence_vectors`) are
keyed by the embedder id that made them. Switching embedders (a shipped fine-tuned encoder, or
`$RECALLBENCH_EMBEDDER`) embeds the memory again under the new id and leaves the old rows in place.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

from engine import store

__all__ = ["EmbedderRows", "carry", "delete_embedder", "embedder_rows"]


@dataclass(frozen=True, kw_only=True)
class EmbedderRows:
    """One embedder's rows: chunk vectors and their bytes, sentence-vector rows (one per distinct
    prompt text), the sentence vectors they hold and their bytes."""

    embedder: str
    chunk_vectors: int
    chunk_bytes: int
    sentence_texts: int
    sentence_vectors: int
    sentence_bytes: int

    @classmethod
    def none(cls, embedder: str) -> EmbedderRows:
        """No rows of `embedder`."""
        return cls(
            embedder=embedder,
            chunk_vectors=0,
            chunk_bytes=0,
            sentence_texts=0,
            sentence_vectors=0,
            sentence_bytes=0,
        )


def embedder_rows(conn: sqlite3.Connection) -> list[EmbedderRows]:
    """Every embedder with rows in either table, by id."""
    found: dict[str, EmbedderRows] = {}
    for embedder, n, size in conn.execute(
        "SELECT embedder, COUNT(*), COALESCE(SUM(length(vec)), 0) FROM vectors GROUP BY embedder"
    ):
        found[str(embedder)] = replace(
            EmbedderRows.none(str(embedder)), chunk_vectors=int(n), chunk_bytes=int(size)
        )
    for embedder, n, count, size in conn.execute(
        "SELECT embedder, COUNT(*), COALESCE(SUM(count), 0), COALESCE(SUM(length(vecs)), 0) "
        "FROM sentence_vectors GROUP BY embedder"
    ):
        found[str(embedder)] = replace(
            found.get(str(embedder)) or EmbedderRows.none(str(embedder)),
            sentence_texts=int(n),
            sentence_vectors=int(count),
            sentence_bytes=int(size),
        )
    return [found[embedder] for embedder in sorted(found)]


def delete_embedder(conn: sqlite3.Connection, embedder: str) -> tuple[int, int]:
    """Delete every row of `embedder` from both tables (in the caller's write transaction): (chunk
    vectors, sentence-vector rows) deleted."""
    chunks = conn.execute("DELETE FROM vectors WHERE embedder = ?", (embedder,)).rowcount
    sentences = conn.execute(
        "DELETE FROM sentence_vectors WHERE embedder = ?", (embedder,)
    ).rowcount
    return int(chunks), int(sentences)


def carry(conn: sqlite3.Connection, old_db: Path, embedder: str) -> tuple[int, int]:
    """Copy `embedder`'s chunk vectors and sentence-vector rows from the database at `old_db` for
    the texts this database's chunks hold and it has none for (a rebuild: vectors are keyed by the
    text's sha256, so a text that did not change needs no new one); (chunk vectors, sentence rows).

    A row whose blob is not `dim` (times `count`) float32 values is left behind, to be embedded
    again. `conn` must be in autocommit with no transaction open (ATTACH needs it); the copy is one
    write transaction.
    """
    conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
    try:
        with store.write(conn):
            chunks = conn.execute(
                "INSERT OR IGNORE INTO main.vectors(embedder, sha256, dim, vec) "
                "SELECT embedder, sha256, dim, vec FROM old.vectors WHERE embedder = ? "
                "AND length(vec) = 4 * dim AND sha256 IN (SELECT sha256 FROM main.chunks)",
                (embedder,),
            ).rowcount
            sentences = conn.execute(
                "INSERT OR IGNORE INTO main.sentence_vectors(embedder, sha256, count, dim, vecs) "
                "SELECT embedder, sha256, count, dim, vecs FROM old.sentence_vectors "
                "WHERE embedder = ? AND length(vecs) = 4 * dim * count "
                "AND sha256 IN (SELECT sha256 FROM main.chunks)",
                (embedder,),
            ).rowcount
            if chunks or sentences:
                store.bump_generation(conn)
    finally:
        conn.execute("DETACH DATABASE old")
    return int(chunks), int(sentences)

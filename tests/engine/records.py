"""A hand-made `ChunkRecord` for tests of what reads records (the final stage, fitting, rerank)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.api import ChunkRecord
from engine.model import Author


def chunk_record(
    cid: str,
    session: str,
    uuids: Sequence[str],
    text: str = "words",
    *,
    author: Author = Author.USER,
    project: str = "/p",
    start: str | None = None,
) -> ChunkRecord:
    """Chunk `cid`, the first of `session`'s one stream, holding messages `uuids`, written at `start`
    (also its session's start; undated when None)."""
    return ChunkRecord(
        id=cid,
        session_id=session,
        stream=session,
        index=0,
        project=project,
        text=text,
        author=author,
        message_uuids=tuple(uuids),
        ts_start=start,
        ts_end=start,
        session_start=start,
        sha256="0" * 64,
    )

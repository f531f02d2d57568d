"""Clean messages -> ~900-character chunks with stable UUIDv5 ids.

A chunk packs whole consecutive messages of one stream until the next one would push it past the budget;
a message longer than the budget is split on character boundaries. The id is UUIDv5 of (stream, index),
so re-chunking a stream after it grew overwrites the same rows instead of duplicating them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from engine.model import Author, Chunk, CleanMessage

CHUNK_CHARS = 900
# Fixed namespace so chunk ids are identical across machines and versions.
CHUNK_NAMESPACE = uuid.UUID("6f1c3f5e-6a0b-5d0e-9a57-2f3b7c1e9d10")
_SEPARATOR = "\n\n"


def chunk_id(stream: str, index: int) -> str:
    """The chunk id for position `index` of `stream`."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{stream}:{index}"))


def _pieces(message: CleanMessage, budget: int) -> list[str]:
    text = message.text
    if len(text) <= budget:
        return [text]
    return [text[i : i + budget] for i in range(0, len(text), budget)]


def chunk_stream(
    stream: str,
    session_id: str,
    messages: Sequence[CleanMessage],
    budget: int = CHUNK_CHARS,
    start_index: int = 0,
) -> list[Chunk]:
    """Pack `messages` (in stream order) into chunks of at most `budget` characters of message text.

    `start_index` numbers the first chunk, for re-chunking the tail of a stream that grew.
    """
    if budget < 1:
        msg = f"chunk budget must be >= 1 character, got {budget}"
        raise ValueError(msg)
    chunks: list[Chunk] = []
    texts: list[str] = []
    size = 0
    uuids: list[str] = []
    authors: list[Author] = []
    stamps: list[str] = []

    def flush() -> None:
        nonlocal size
        if not texts:
            return
        index = start_index + len(chunks)
        chunks.append(
            Chunk(
                id=chunk_id(stream, index),
                session_id=session_id,
                stream=stream,
                index=index,
                text=_SEPARATOR.join(texts),
                author=max(authors),
                message_uuids=tuple(dict.fromkeys(uuids)),
                ts_start=min(stamps) if stamps else None,
                ts_end=max(stamps) if stamps else None,
            )
        )
        texts.clear()
        uuids.clear()
        authors.clear()
        stamps.clear()
        size = 0

    for message in messages:
        for piece in _pieces(message, budget):
            if texts and size + len(piece) > budget:
                flush()
            texts.append(piece)
            size += len(piece)
            uuids.append(message.uuid)
            authors.append(message.author)
            if message.timestamp:
                stamps.append(message.timestamp)
    flush()
    return chunks

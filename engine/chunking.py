"""Clean messages -> ~900-character chunks with stable UUIDv5 ids.

A chunk packs whole consecutive messages of one stream until the next one would push it past the budget;
a message longer than the budget is split into pieces first. The id is UUIDv5 of (stream, index), so
re-chunking a stream after it grew overwrites the same rows instead of duplicating them.

How a long message is split is versioned (`CHUNKING_VERSIONS`), because a benchmark's numbers depend on
it: a protocol names the version its corpus is chunked under (`[corpus] chunking`, 1 when absent, what
every protocol registered before version 2 ran with), and a memory imports under `CHUNKING`. A stored
stream keeps the version its chunks were made with when it is chunked again (`chunk_as_stored`).

- Version 1 cut every `budget` characters, inside a word as often as not: an identifier, a hash or a
  path cut in two is found by neither half, and one that occurs nowhere else cannot be found at all.
- Version 2 ends a piece where a word ends: at the last position in the second half of the budget that
  is not between two characters other than whitespace, and cuts at the budget only when there is none
  (a base64 blob, a minified line). No character is lost or repeated: the pieces join to the message.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from engine.model import Author, Chunk, CleanMessage

CHUNK_CHARS = 900
# What each chunking version does to a message longer than the budget (`chunk_stream`).
CHUNKING_VERSIONS: dict[int, str] = {
    1: "a long message is cut at fixed lengths, inside a word or not",
    2: "a long message is split where a word ends",
}
CHUNKING = 2  # the version imports use
BASE_CHUNKING = 1  # what a protocol that names none ran with
# Fixed namespace so chunk ids are identical across machines and versions.
CHUNK_NAMESPACE = uuid.UUID("6f1c3f5e-6a0b-5d0e-9a57-2f3b7c1e9d10")
_SEPARATOR = "\n\n"


def check_chunking(chunking: object) -> int:
    """`chunking` when it names a version; else ValueError naming the versions there are."""
    if (
        isinstance(chunking, bool)
        or not isinstance(chunking, int)
        or chunking not in CHUNKING_VERSIONS
    ):
        known = ", ".join(f"{v} ({what})" for v, what in CHUNKING_VERSIONS.items())
        msg = f"chunking version must be one of {known}; got {chunking!r}"
        raise ValueError(msg)
    return chunking


def chunk_id(stream: str, index: int) -> str:
    """The chunk id for position `index` of `stream`."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{stream}:{index}"))


def split_at(text: str, start: int, budget: int) -> int:
    """Where version 2 ends the piece of `text` that begins at `start` (more than `budget` characters
    remain): the last position in (start + budget // 2, start + budget] with whitespace on either side
    of it, else start + budget."""
    end = start + budget
    for cut in range(end, start + budget // 2, -1):
        if text[cut - 1].isspace() or text[cut].isspace():
            return cut
    return end


def _pieces(text: str, budget: int, chunking: int) -> list[str]:
    if len(text) <= budget:
        return [text]
    if chunking == 1:
        return [text[i : i + budget] for i in range(0, len(text), budget)]
    pieces: list[str] = []
    start = 0
    while len(text) - start > budget:
        cut = split_at(text, start, budget)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def chunk_stream(
    stream: str,
    session_id: str,
    messages: Sequence[CleanMessage],
    budget: int = CHUNK_CHARS,
    start_index: int = 0,
    chunking: int = CHUNKING,
) -> list[Chunk]:
    """Pack `messages` (in stream order) into chunks of at most `budget` characters of message text,
    splitting a longer message as chunking version `chunking` does.

    `start_index` numbers the first chunk, for re-chunking the tail of a stream that grew.
    """
    if budget < 1:
        msg = f"chunk budget must be >= 1 character, got {budget}"
        raise ValueError(msg)
    check_chunking(chunking)
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
        for piece in _pieces(message.text, budget, chunking):
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


def text_sha256(text: str) -> str:
    """The sha256 a chunk's text is stored under (`chunks.sha256`; vectors are keyed by it)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_as_stored(
    stream: str,
    session_id: str,
    messages: Sequence[CleanMessage],
    held: Sequence[tuple[str, str]],
    *,
    start_index: int = 0,
    prefer: int = CHUNKING,
) -> list[Chunk]:
    """Chunk `messages` again (from `start_index`) under the version that reproduces the most of the
    stream's stored chunks from there (`held`: their (id, text sha256) in index order), `prefer` on a
    tie: a stream chunked under an older version keeps the chunks a change does not reach, and with
    them their ids' text (what a settle names), while new text is chunked under `prefer` when the
    stored chunks do not decide."""
    preferred = chunk_stream(stream, session_id, messages, start_index=start_index, chunking=prefer)
    if _kept(preferred, held) == len(held):  # nothing stored (a new stream), or all of it kept
        return preferred
    others = (
        chunk_stream(stream, session_id, messages, start_index=start_index, chunking=v)
        for v in sorted(CHUNKING_VERSIONS)
        if v != prefer
    )
    return max((preferred, *others), key=lambda chunks: _kept(chunks, held))


def _kept(chunks: Sequence[Chunk], held: Sequence[tuple[str, str]]) -> int:
    """How many of `chunks`, from the first, are the stored chunk at their place (id and text)."""
    kept = 0
    for chunk, (held_id, held_sha) in zip(chunks, held, strict=False):
        if chunk.id != held_id or text_sha256(chunk.text) != held_sha:
            break
        kept += 1
    return kept

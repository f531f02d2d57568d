from __future__ import annotations

import uuid

import pytest

from engine.chunking import CHUNK_NAMESPACE, chunk_id, chunk_stream
from engine.model import Author, CleanMessage


def msg(
    i: int, text: str, author: Author = Author.ASSISTANT, ts: str | None = None
) -> CleanMessage:
    return CleanMessage(
        uuid=f"m{i}", session_id="s1", author=author, text=text, timestamp=ts, ordinal=i
    )


def test_chunk_ids_are_uuid5_of_stream_and_index_and_stable() -> None:
    assert chunk_id("s1", 0) == str(uuid.uuid5(CHUNK_NAMESPACE, "s1:0"))
    assert chunk_id("s1", 0) == chunk_id("s1", 0)
    assert chunk_id("s1", 0) != chunk_id("s1", 1)
    assert chunk_id("s1", 0) != chunk_id("s1/agent-a", 0)


def test_messages_are_packed_until_the_budget_would_be_exceeded() -> None:
    # 400 + 400 fits in 900; the third 400 would make 1,200 and starts a new chunk.
    messages = [msg(0, "a" * 400), msg(1, "b" * 400), msg(2, "c" * 400)]
    chunks = chunk_stream("s1", "s1", messages)
    assert [c.message_uuids for c in chunks] == [("m0", "m1"), ("m2",)]
    assert chunks[0].text == "a" * 400 + "\n\n" + "b" * 400
    assert [c.index for c in chunks] == [0, 1]


def test_a_long_message_is_split_on_character_boundaries() -> None:
    chunks = chunk_stream("s1", "s1", [msg(0, "x" * 2000)])
    assert [len(c.text) for c in chunks] == [900, 900, 200]
    assert all(c.message_uuids == ("m0",) for c in chunks)


def test_author_precedence_is_user_over_assistant_over_tool_result() -> None:
    messages = [
        msg(0, "result", Author.TOOL_RESULT),
        msg(1, "answer", Author.ASSISTANT),
        msg(2, "question", Author.USER),
        msg(3, "y" * 890, Author.TOOL_RESULT),
    ]
    chunks = chunk_stream("s1", "s1", messages)
    assert chunks[0].author is Author.USER
    # positive control: a chunk holding only a tool result keeps that author
    assert chunks[1].author is Author.TOOL_RESULT


def test_chunk_timestamps_span_the_messages_it_covers() -> None:
    messages = [
        msg(0, "a", ts="2026-01-02T00:00:00Z"),
        msg(1, "b", ts="2026-01-01T00:00:00Z"),
        msg(2, "c"),
    ]
    (chunk,) = chunk_stream("s1", "s1", messages)
    assert (chunk.ts_start, chunk.ts_end) == ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


def test_restarting_at_a_clean_boundary_reproduces_full_chunking() -> None:
    messages = [msg(i, chr(97 + i % 26) * (150 + 37 * i)) for i in range(12)]
    full = chunk_stream("s1", "s1", messages)
    # restart at a chunk that begins with a whole message
    k = next(
        c.index
        for c in full
        if c.index > 0 and full[c.index - 1].message_uuids[-1] != c.message_uuids[0]
    )
    first = int(full[k].message_uuids[0][1:])
    tail = chunk_stream("s1", "s1", messages[first:], start_index=k)
    assert [c.id for c in full[k:]] == [c.id for c in tail]
    assert [c.text for c in full[k:]] == [c.text for c in tail]


def test_budget_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="budget"):
        chunk_stream("s1", "s1", [msg(0, "a")], budget=0)

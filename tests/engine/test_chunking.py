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


def test_a_long_message_without_spaces_is_cut_at_the_budget() -> None:
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


# --- version 2: a long message is split where a word ends --------------------------------------------

# 125 seven-character words, each followed by a space: word i spans [8i, 8i + 7), its space is at 8i + 7,
# so 1,000 characters. Version 1 cuts at 900 = 8 * 112 + 4, inside word112; the last position at or
# before 900 with a space on either side is 896 = 8 * 112 (the space of word111 at 895 before it).
WORDS = "".join(f"word{i:03d} " for i in range(125))


def test_version_2_ends_a_piece_where_a_word_ends() -> None:
    assert len(WORDS) == 1000
    chunks = chunk_stream("s1", "s1", [msg(0, WORDS)])
    assert [len(c.text) for c in chunks] == [896, 104]
    assert chunks[0].text.endswith("word111 ")
    assert chunks[1].text.startswith("word112 ")
    assert "".join(c.text for c in chunks) == WORDS
    # control: version 1 cuts word112 in two, and neither chunk holds it
    old = chunk_stream("s1", "s1", [msg(0, WORDS)], chunking=1)
    assert [len(c.text) for c in old] == [900, 100]
    assert old[0].text.endswith(" word")
    assert old[1].text.startswith("112 ")
    assert not any("word112" in c.text for c in old)


def test_a_space_just_after_the_budget_also_ends_a_word() -> None:
    # "a" * 900 then a space: position 900 has the space on its right, so the cut stays at 900
    text = "a" * 900 + " " + "b" * 99
    chunks = chunk_stream("s1", "s1", [msg(0, text)])
    assert [c.text for c in chunks] == ["a" * 900, " " + "b" * 99]


def test_without_a_space_in_the_second_half_version_2_cuts_at_the_budget() -> None:
    # the only space is at 400, in the first half (a cut must leave more than 450 characters), so the
    # piece is cut at 900 as version 1 cuts it, not at 401
    text = "a" * 400 + " " + "b" * 599
    chunks = chunk_stream("s1", "s1", [msg(0, text)])
    assert [len(c.text) for c in chunks] == [900, 100]
    # control: with a space at 460 instead, in the second half, the piece ends after it
    moved = "a" * 460 + " " + "b" * 539
    assert [len(c.text) for c in chunk_stream("s1", "s1", [msg(0, moved)])] == [461, 539]


def test_version_2_pieces_of_a_long_message_join_to_it_and_pack_with_the_next() -> None:
    # WORDS splits 896 + 104; the 104 and the next message's 300 make 404 <= 900: one chunk
    chunks = chunk_stream("s1", "s1", [msg(0, WORDS * 3), msg(1, "c" * 300)])
    pieces = [c.text for c in chunks if c.message_uuids == ("m0",)]
    assert "".join(pieces) + chunks[-1].text.split("\n\n")[0] == WORDS * 3
    assert all(len(p) <= 900 for p in pieces)
    assert chunks[-1].message_uuids == ("m0", "m1")
    assert chunks[-1].text.endswith("\n\n" + "c" * 300)


def test_restarting_at_a_clean_boundary_reproduces_version_2_chunking() -> None:
    messages = [msg(i, WORDS[: 150 + 173 * i] if i % 3 else "x" * (97 * i + 40)) for i in range(12)]
    full = chunk_stream("s1", "s1", messages)
    starts = [
        c.index
        for c in full
        if c.index > 0 and full[c.index - 1].message_uuids[-1] != c.message_uuids[0]
    ]
    assert len(starts) >= 3
    for k in starts:
        first = int(full[k].message_uuids[0][1:])
        tail = chunk_stream("s1", "s1", messages[first:], start_index=k)
        assert [(c.id, c.text) for c in full[k:]] == [(c.id, c.text) for c in tail]


@pytest.mark.parametrize("version", [0, 3, True, "2", None])
def test_an_unknown_chunking_version_is_refused_naming_the_known_ones(version: object) -> None:
    with pytest.raises(ValueError, match=r"one of 1 \(.*\), 2 \(.*\); got"):
        chunk_stream("s1", "s1", [msg(0, "a")], chunking=version)  # type: ignore[arg-type]
    # control: the known versions are accepted
    assert chunk_stream("s1", "s1", [msg(0, "a")], chunking=1)[0].text == "a"

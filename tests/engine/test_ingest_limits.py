"""Import limits: lines that cannot be parsed or stored, and messages too large to store whole.

A bad line is counted under its reason and skipped, never the file and never the import; one message
stores at most `max_message_bytes` of text and a marker saying what was cut.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from engine import ingest
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.render import byte_size, cap_message
from engine.scope import Scope
from engine.transcripts import MAX_NESTING, parse_bytes
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    simple_session,
    tool_result_block,
    tool_use_block,
    user_line,
    write_jsonl,
)

A = "/home/dev/alpha"
S1 = "77777777-0000-4000-8000-000000000001"
S2 = "77777777-0000-4000-8000-000000000002"
DEEP = (
    '{"type":"user","uuid":"deep","message":{"role":"user","content":'
    + "[" * 1000
    + "]" * 1000
    + "}}"
)
# What Node writes for half an emoji: the escape of a high surrogate with no low one after it.
LONE = '{"type":"user","uuid":"lone","message":{"role":"user","content":"cut here \\ud83d"}}'


def open_memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "m.db", HashEmbedder(64))


def texts(memory: Memory) -> list[str]:
    return [text for _, _, _, text in memory.chunk_rows()]


# --- lines that cannot be used (item 9) -------------------------------------------------------------------


def test_a_deep_line_and_a_lone_surrogate_skip_the_line_not_the_file(tmp_path: Path) -> None:
    """Before: RecursionError aborted the whole import; the surrogate failed the file when stored."""
    root = tmp_path / "projects"
    good = simple_session("Why does alpha flake?", session_id=S1, cwd=A, answer="A wall clock.")
    write_jsonl(root / f"{S1}.jsonl", [good[0], DEEP, *good[1:3], LONE, *good[3:]])
    other = simple_session(
        "Second file question", session_id=S2, cwd=A, answer="Second.", prefix="b-"
    )
    write_jsonl(root / f"{S2}.jsonl", other)
    memory = open_memory(tmp_path)

    report = memory.import_paths([root])

    assert report.files_failed == {}
    assert report.files_imported == 2  # the second file of the same import is recorded
    assert report.skipped["nested_too_deep"] == 1
    assert report.skipped["lone_surrogate"] == 1
    stored = "\n".join(texts(memory))
    for wanted in ("Why does alpha flake?", "pytest -q", "1 failed", "A wall clock.", "Second."):
        assert wanted in stored  # every good line of both files
    assert "cut here" not in stored
    status = memory.status()
    assert status["skipped"] == {"lone_surrogate": 1, "nested_too_deep": 1}
    assert memory.import_paths([root]).files_unchanged == 2  # skipped lines are not read again


def test_surrogate_pairs_and_escaped_backslashes_are_kept_and_depth_is_a_fixed_rule() -> None:
    pair = '{"type":"user","uuid":"p","message":{"role":"user","content":"ok \\ud83d\\ude00 \\\\ud83d"}}'
    edge = "[" * MAX_NESTING + "]" * MAX_NESTING
    over = "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1)
    brackets_in_text = json.dumps(
        {"type": "user", "uuid": "b", "message": {"role": "user", "content": "[" * 5000}}
    )
    data = "\n".join([pair, edge, over, brackets_in_text, LONE]) + "\n"

    result = parse_bytes(data.encode())

    assert [m.uuid for m in result.messages] == ["p", "b"]
    assert result.messages[0].blocks[0].text == "ok \U0001f600 \\ud83d"  # type: ignore[union-attr]
    assert result.skipped == {"not_object": 1, "nested_too_deep": 1, "lone_surrogate": 1}
    assert result.end_offset == len(data)


def test_a_deep_last_line_without_a_newline_waits_like_any_unfinished_line() -> None:
    data = (LONE + "\n" + DEEP).encode()
    result = parse_bytes(data)
    assert result.skipped == {"lone_surrogate": 1, "truncated_tail": 1}
    assert result.end_offset == len(LONE) + 1  # the deep line is read once it ends
    done = parse_bytes(DEEP.encode() + b"\n", base_offset=result.end_offset)
    assert done.skipped == {"nested_too_deep": 1}


# --- one message's size (item 11) -------------------------------------------------------------------------


def one_message(root: Path, text: str) -> Path:
    return write_jsonl(root / f"{S1}.jsonl", [user_line(text, uuid="u1", session_id=S1, cwd=A)])


def test_a_200_kib_message_stores_64_kib_and_a_marker(tmp_path: Path) -> None:
    """Before: all 204,800 bytes were stored, in 228 chunks."""
    text = "abcdefghi " * 20480  # 204,800 bytes
    one_message(tmp_path / "p", text)
    memory = open_memory(tmp_path)

    report = memory.import_paths([tmp_path / "p"])

    assert report.skipped["message_cut"] == 1
    # Kept: the first 65,536 bytes, ending in "abcdef" (65,536 = 6,553 x 10 + 6). Cut: 204,800 - 65,536
    # = 139,264 bytes = 136 KiB. The marker is 53 characters (57 bytes: two 3-byte ellipses).
    marker = "[… 136 KiB cut by recallbench: message over 64 KiB …]"
    assert len(marker) == 53
    assert len(marker.encode()) == 57
    stored = "".join(texts(memory))
    assert stored == text[:65536] + "\n" + marker
    assert len(stored.encode()) == 65536 + 1 + 57  # at most 64 KiB + the marker
    assert report.chunks_written == math.ceil(65590 / 900) == 73  # 65,536 + 1 + 53 characters
    assert memory.status()["skipped"] == {"message_cut": 1}


def test_the_cap_is_set_through_the_api_and_a_message_that_fits_is_stored_whole(
    tmp_path: Path,
) -> None:
    one_message(tmp_path / "fits", "x" * 1000)
    one_message(tmp_path / "over", "y" * 1001)
    memory = open_memory(tmp_path)

    fits = ingest.import_paths(memory.conn, [tmp_path / "fits"], max_message_bytes=1000)
    over = ingest.import_paths(memory.conn, [tmp_path / "over"], max_message_bytes=1000)

    assert fits.skipped == {}
    assert over.skipped == {"message_cut": 1}
    # Each message is split into chunks of 900 characters and the rest.
    assert sorted(texts(memory)) == sorted(
        [
            "x" * 900,  # positive control: exactly the cap is stored whole
            "x" * 100,
            "y" * 900,
            "y" * 100 + "\n[… 1 B cut by recallbench: message over 1000 B …]",
        ]
    )
    with pytest.raises(ValueError, match="max_message_bytes must be a positive number of bytes"):
        ingest.import_paths(memory.conn, [tmp_path / "fits"], max_message_bytes=0)


def test_the_cut_never_splits_a_character_and_counts_bytes() -> None:
    assert cap_message("é" * 40_000, 65_536) == "é" * 32_768 + (
        "\n[… 14.1 KiB cut by recallbench: message over 64 KiB …]"  # 80,000 - 65,536 = 14,464 bytes
    )
    # 4 bytes each: 16,383 whole ones (65,532 bytes) fit in 65,535; 80,000 - 65,532 = 14,468 bytes cut.
    capped = cap_message("😀" * 20_000, 65_535)
    assert capped is not None
    assert capped.startswith("😀" * 16_383 + "\n[… 14.1 KiB cut")
    assert cap_message("short", 10) is None
    assert [byte_size(n) for n in (512, 65_536, 139_264, 52_323_942)] == [
        "512 B",
        "64 KiB",
        "136 KiB",
        "49.9 MiB",
    ]


def test_a_huge_tool_result_keeps_its_own_4000_character_cap(tmp_path: Path) -> None:
    """Tool results were already cut at 4,000 characters; the message cap does not change that."""
    env: dict[str, Any] = {"session_id": S1, "cwd": A}
    lines = [
        user_line("list it", uuid="u1", **env),
        *assistant_lines(
            [tool_use_block("t1", "Bash", {"command": "cat big"})],
            message_id="m1",
            uuids=["a1"],
            parent="u1",
            **env,
        ),
        user_line([tool_result_block("t1", "z" * 204_800)], uuid="r1", parent="a1", **env),
    ]
    write_jsonl(tmp_path / "p" / f"{S1}.jsonl", lines)
    memory = open_memory(tmp_path)
    report = memory.import_paths([tmp_path / "p"])
    assert "message_cut" not in report.skipped
    stored = "".join(texts(memory))
    assert "[Bash result: cat big]\n" + "z" * 4000 + " […]" in stored
    assert stored.count("z") == 4000
    assert memory.lexical("list", Scope.of(A), 5)  # positive control: the rest is stored

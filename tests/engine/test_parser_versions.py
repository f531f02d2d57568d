"""The parser version a corpus is read under (`engine.parser_versions.ParserScan`): the newest version
whose change acts on one of its lines, so a corpus no change acts on keeps version 1 and its manifest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from engine.parser_versions import PARSER_VERSION, ParserScan
from engine.render import render_message
from engine.transcripts import StreamState, parse_file
from harness import freeze
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    encode,
    text_block,
    tool_result_line,
    user_line,
    write_jsonl,
)


def _version(*lines: bytes) -> str:
    scan = ParserScan()
    for line in lines:
        scan.feed(line)
    return scan.version


PLAIN = encode(user_line("fix the flaky retry test\twith a tab\nand a newline", uuid="u1"))
COMPACTION: dict[str, Any] = {"sidechain": True, "agent_id": "acompact-fffbd0"}


def test_lines_no_change_acts_on_read_under_version_1() -> None:
    regex = encode(user_line(r"grep -E '\bretry\b' and C:\build\x1b", uuid="u2"))  # written text
    nested = user_line("ok", uuid="u3")
    nested["toolUseResult"] = {"timestamp": "2026-03-01T10:00:00Z"}
    summary = assistant_lines(
        [text_block("<summary>done</summary>")], message_id="m", uuids=["a"], **COMPACTION
    )[0]

    assert _version(PLAIN, regex, encode(nested), encode(summary), b"not json {") == "1"


@pytest.mark.parametrize(
    ("line", "version"),
    [
        (b"\xef\xbb\xbf" + PLAIN, "2"),
        (encode(user_line("hi", uuid="u1", timestamp="not a time")), "2"),
        (encode(user_line("hi", uuid="u1", timestamp="")), "2"),
        (encode(user_line("Your task is to create a summary", uuid="c1", **COMPACTION)), "3"),
        (encode(tool_result_line("t1", "[main 1a2b] Fix", uuid="c4", **COMPACTION)), "3"),
        (encode(user_line("\x1b[0mWaiting for lock", uuid="u1")), "4"),
        (encode(user_line("back\bspace", uuid="u1")), "4"),
        (encode(user_line("del\x7f and csi \x9b1m", uuid="u1")), "4"),
    ],
)
def test_each_change_names_the_lines_it_acts_on(line: bytes, version: str) -> None:
    assert _version(PLAIN, line) == version
    assert _version(PLAIN) == "1"  # control: the same corpus without the line


def test_a_nested_timestamp_that_is_not_a_time_leaves_version_1_and_a_top_level_one_does_not() -> (
    None
):
    nested = user_line("ok", uuid="u3")
    nested["toolUseResult"] = {"timestamp": "yesterday"}
    top = user_line("ok", uuid="u4", timestamp="yesterday")

    assert _version(encode(nested)) == "1"
    assert _version(encode(top)) == "2"


def test_the_version_is_the_newest_change_found_and_the_running_parser_is_the_newest() -> None:
    bom = b"\xef\xbb\xbf" + PLAIN
    control = encode(user_line("\x1b[31mred", uuid="u9"))

    assert _version(bom, control) == "4"
    assert _version(control, bom) == "4"
    assert PARSER_VERSION == "4"


def test_what_the_scan_flags_for_version_4_is_what_the_parser_removes(tmp_path: Path) -> None:
    line = user_line("\x1b[0mWaiting for lock\x07 done", uuid="u1")
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", [line])

    (message,) = parse_file(path, session_id=SESSION).messages
    text, _ = render_message(message, StreamState())

    assert _version(encode(line)) == "4"
    assert text == "Waiting for lock done"


def _sha(files: list[list[object]], parser_version: str) -> str:
    body = {"files": files, "parser_version": parser_version, "sanitize_version": "2"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()


def test_a_manifest_records_version_4_only_for_a_corpus_holding_a_control_sequence(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    plain = write_jsonl(corpus / "p" / "a.jsonl", [user_line("hi", uuid="u1")])
    data = plain.read_bytes()
    files: list[list[object]] = [["p/a.jsonl", len(data), hashlib.sha256(data).hexdigest()]]

    before = freeze.manifest(corpus)

    assert before.parser_version == "1"
    assert before.sha256 == _sha(files, "1")

    coloured = write_jsonl(corpus / "p" / "b.jsonl", [user_line("\x1b[0mok", uuid="u2")])
    more = coloured.read_bytes()
    files.append(["p/b.jsonl", len(more), hashlib.sha256(more).hexdigest()])
    after = freeze.manifest(corpus)

    assert after.parser_version == "4"
    assert after.to_dict()["parser_version"] == "4"
    assert after.sha256 == _sha(files, "4")

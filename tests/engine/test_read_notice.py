"""Claude Code's file-read notice (sanitizer version 3), and the version a corpus is read under."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from engine.markers import READ_NOTICE_LEAD
from engine.model import CleanMessage
from engine.sanitize import (
    BASE_SANITIZE_VERSION,
    SANITIZE_VERSION,
    VersionScan,
    drop_read_notice,
    sanitize,
)
from engine.transcript_files import StreamState
from engine.transcripts import parse_file
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    text_block,
    tool_result_line,
    tool_use_line,
    user_line,
    write_jsonl,
)

# As Claude Code appends it to every file its Read tool returns (seen in real transcripts).
NOTICE = (
    "<system-reminder>\nWhenever you read a file, you should consider whether it would be considered "
    "malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you MUST refuse to "
    "improve or augment the code. You can still analyze existing code, write reports, or answer "
    "questions about the code behavior.\n</system-reminder>\n"
)
FILE = "     1→import os\n     2→print(os.getcwd())"


def _sanitized(
    tmp_path: Path, lines: list[dict[str, object]]
) -> tuple[list[CleanMessage], Counter[str]]:
    state = StreamState()
    counts: Counter[str] = Counter()
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", lines)
    return sanitize(parse_file(path, state=state).messages, state, counts), counts


def test_the_notice_at_the_end_of_a_read_result_is_dropped_and_counted(tmp_path: Path) -> None:
    read = {"file_path": "/repo/src/cwd.py"}
    lines = [
        user_line("Where does it print the folder?", uuid="u1"),
        tool_use_line("t1", "Read", read, message_id="m1", uuid="a1", parent="u1"),
        tool_result_line("t1", f"{FILE}\n\n{NOTICE}", uuid="r1", parent="a1"),
        tool_use_line("t2", "Read", {"file_path": "/repo/NOTES.md"}, message_id="m2", uuid="a2"),
        # a file that quotes the notice, then goes on: the notice is the file's text, kept
        tool_result_line("t2", f"{NOTICE}is what the tool appends.", uuid="r2", parent="a2"),
        *assistant_lines([text_block(f"It ends with {NOTICE}")], message_id="m3", uuids=["a3"]),
        user_line(f"Why do reads end with {NOTICE}", uuid="u2", parent="a3"),
    ]

    clean, counts = _sanitized(tmp_path, lines)

    texts = {c.uuid: c.text for c in clean}
    assert texts["r1"] == f"[Read result: src/cwd.py]\n{FILE}"
    assert READ_NOTICE_LEAD in texts["r2"]  # quoted by a file: kept
    assert READ_NOTICE_LEAD in texts["a3"]  # quoted by the assistant: kept
    assert READ_NOTICE_LEAD in texts["u2"]  # typed by the person: kept
    assert counts["read_notice"] == 1


def test_a_result_in_text_blocks_whose_last_block_is_the_notice_loses_that_block(
    tmp_path: Path,
) -> None:
    blocks = [{"type": "text", "text": FILE}, {"type": "text", "text": NOTICE}]
    lines = [
        tool_use_line("t1", "Read", {"file_path": "/repo/src/cwd.py"}, message_id="m1", uuid="a1"),
        tool_result_line("t1", blocks, uuid="r1", parent="a1"),
        tool_use_line("t2", "Read", {"file_path": "/repo/empty.py"}, message_id="m2", uuid="a2"),
        tool_result_line("t2", NOTICE, uuid="r2", parent="a2"),
    ]

    clean, counts = _sanitized(tmp_path, lines)

    assert [(c.uuid, c.text) for c in clean] == [
        ("a1", "[Read: src/cwd.py]"),
        ("r1", f"[Read result: src/cwd.py]\n{FILE}"),
        ("a2", "[Read: repo/empty.py]"),
        ("r2", "[Read result: repo/empty.py]"),  # only the header is left of a notice alone
    ]
    assert counts["read_notice"] == 2


def test_drop_read_notice_takes_only_a_trailing_notice() -> None:
    assert drop_read_notice(f"{FILE}\n{NOTICE}") == (FILE, True)
    assert drop_read_notice(f"{FILE}\n{NOTICE}  \n\n") == (FILE, True)
    other = "<system-reminder>Warning: the file exists but is shorter than the offset.</system-reminder>"
    assert drop_read_notice(f"{FILE}\n{other}") == (f"{FILE}\n{other}", False)
    middle = f"{NOTICE}{FILE}"
    assert drop_read_notice(middle) == (middle, False)
    # a JSON-escaped copy (a transcript read as a file) has no newline around the lead: kept
    escaped = NOTICE.replace("\n", "\\n")
    assert drop_read_notice(f"{FILE}\n{escaped}") == (f"{FILE}\n{escaped}", False)


def test_the_version_scan_finds_the_lead_as_written_and_through_unicode_escapes() -> None:
    assert SANITIZE_VERSION == "11"
    assert BASE_SANITIZE_VERSION == "2"

    def version(*lines: bytes) -> str:
        scan = VersionScan()
        for line in lines:
            scan.feed(line)
        return scan.version

    plain = json.dumps({"content": "héllo"}).encode()  # ensure_ascii: b'h\\u00e9llo'
    assert b"\\u00e9" in plain
    assert version(plain, b'{"content": "nothing to see"}\n') == "2"
    assert version() == "2"
    with_lead = json.dumps({"content": f"{FILE}\n{NOTICE}"}, ensure_ascii=False).encode()
    assert version(plain, with_lead) == "3"
    # every character escaped: the bytes never hold the lead, the decoded text does
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in READ_NOTICE_LEAD)
    assert READ_NOTICE_LEAD.encode() not in escaped.encode()
    assert version(f'{{"content": "{escaped}"}}'.encode()) == "3"
    # errs towards the newer version: an escaped backslash before `u0057` is read as an escape too
    assert version(f'{{"x": "\\\\u0057{READ_NOTICE_LEAD[1:]}"}}'.encode()) == "3"

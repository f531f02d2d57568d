"""Parsing Claude Code transcript lines: formats, merging, leniency, incremental use."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.model import Author, TextBlock, ToolUse
from engine.render import render_message
from engine.transcripts import ParseResult, StreamState, TranscriptError, parse_bytes, parse_file
from tests.engine.fixtures_transcripts import (
    CWD,
    ENCODED_CWD,
    SESSION,
    V1,
    ai_title_line,
    append_jsonl,
    assistant_lines,
    encode,
    progress_line,
    queue_line,
    redacted_thinking_block,
    simple_session,
    snapshot_line,
    summary_line,
    system_line,
    text_block,
    thinking_block,
    tool_result_line,
    tool_use_block,
    tool_use_line,
    ts,
    user_line,
    write_jsonl,
)


def _texts(result: ParseResult, state: StreamState) -> list[str]:
    return [render_message(m, state)[0] for m in result.messages]


# --- formats ----------------------------------------------------------------------------------------------


def test_current_format_session_becomes_prompt_call_result_and_answer_in_file_order(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / ENCODED_CWD / f"{SESSION}.jsonl", simple_session())
    state = StreamState()

    result = parse_file(path, state=state)

    assert [m.uuid for m in result.messages] == ["u1", "a1", "r1", "a3"]
    assert [m.kind for m in result.messages] == ["user", "assistant", "user", "assistant"]
    assert _texts(result, state) == [
        "Why does the import test fail?",
        "Let me run it.\n[Bash: pytest -q]",
        "[Bash result: pytest -q]\n1 failed",
        "Because the offset was stale.",
    ]
    assert [render_message(m, state)[1] for m in result.messages] == [
        Author.USER,
        Author.ASSISTANT,
        Author.TOOL_RESULT,
        Author.ASSISTANT,
    ]
    assert result.end_offset == path.stat().st_size
    assert result.session_id == SESSION
    assert result.skipped == Counter()
    assert result.messages[0].timestamp == ts(0)
    assert result.messages[2].parent_uuid == "a2"
    assert [line["uuid"] for line in simple_session(prefix="s2-")] == [
        "s2-u1",
        "s2-a1",
        "s2-a2",
        "s2-r1",
        "s2-a3",
    ]


def test_older_format_with_inline_sidechain_lines_keeps_them_flagged(tmp_path: Path) -> None:
    lines = [
        user_line("Map the repo", uuid="u1", version=V1),
        tool_use_line(
            "t1", "Task", {"description": "Find types", "prompt": "List types"},
            message_id="msg_1", uuid="a1", parent="u1", version=V1,
        ),
        user_line("List types", uuid="s1", parent=None, sidechain=True, version=V1),
        *assistant_lines(
            [text_block("types/state.ts")], message_id="msg_side", uuids=["s2"], parent="s1",
            sidechain=True, version=V1,
        ),
        tool_result_line("t1", [text_block("types/state.ts")], uuid="r1", parent="a1", version=V1),
    ]  # fmt: skip
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", lines)
    state = StreamState()

    result = parse_file(path, state=state)

    assert [(m.uuid, m.is_sidechain) for m in result.messages] == [
        ("u1", False),
        ("a1", False),
        ("s1", True),
        ("s2", True),
        ("r1", False),
    ]
    assert "requestId" in json.loads(encode(lines[1]))
    # The subagent prompt was written by the parent assistant, not typed by the person.
    assert render_message(result.messages[2], state)[1] == Author.ASSISTANT
    assert render_message(result.messages[0], state)[1] == Author.USER
    assert _texts(result, state)[4] == "[Task result: Find types]\ntypes/state.ts"


def test_subagent_lines_keep_agent_id_and_sidechain_flag(tmp_path: Path) -> None:
    lines = [
        user_line("Search timeouts", uuid="g1", sidechain=True, agent_id="a0f"),
        *assistant_lines(
            [text_block("Found 3.")], message_id="msg_g", uuids=["g2"], parent="g1",
            sidechain=True, agent_id="a0f",
        ),
    ]  # fmt: skip
    path = write_jsonl(tmp_path / SESSION / "subagents" / "agent-a0f.jsonl", lines)

    result = parse_file(path, session_id=SESSION)

    assert [(m.agent_id, m.is_sidechain, m.session_id) for m in result.messages] == [
        ("a0f", True, SESSION),
        ("a0f", True, SESSION),
    ]


@pytest.mark.parametrize("agent", ["acompact-fffbd0", "a0f"])
def test_the_compaction_agents_text_input_is_skipped_and_its_summary_kept(
    tmp_path: Path, agent: str
) -> None:
    # Claude Code's compaction agent: the hook output it is handed, its instructions (a string and
    # blocks), a replayed tool result, and the summary it writes
    env: dict[str, Any] = {"sidechain": True, "agent_id": agent}
    lines = [
        user_line("<system-reminder>PostToolUse hook output</system-reminder>", uuid="c1", **env),
        user_line("Your task is to create a detailed summary of the conversation", uuid="c2", **env),
        user_line([text_block("Summarize the pending tasks too.")], uuid="c3", **env),
        tool_result_line("toolu_1", "[main 1a2b3c4] Fix the retry", uuid="c4", **env),
        *assistant_lines(
            [text_block("<summary>We fixed the retry test.</summary>")],
            message_id="msg_c", uuids=["c5"], parent="c4", **env,
        ),
    ]  # fmt: skip
    path = write_jsonl(tmp_path / SESSION / "subagents" / f"agent-{agent}.jsonl", lines)

    result = parse_file(path, session_id=SESSION)

    kept = [m.uuid for m in result.messages]
    if agent.startswith("acompact"):
        assert kept == ["c4", "c5"]
        assert result.skipped["compaction_input"] == 3
    else:  # control: an ordinary subagent's prompts are its conversation, all kept
        assert kept == ["c1", "c2", "c3", "c4", "c5"]
        assert result.skipped["compaction_input"] == 0


# --- merging ----------------------------------------------------------------------------------------------


def test_three_assistant_lines_sharing_message_id_merge_into_one_message(tmp_path: Path) -> None:
    lines = [
        user_line("Refactor the store", uuid="u1"),
        *assistant_lines(
            [
                thinking_block("private reasoning"),
                text_block("Reading it first."),
                tool_use_block("t1", "Read", {"file_path": "/home/dev/my_proj/engine/store.py"}),
            ],
            message_id="msg_A",
            uuids=["a1", "a2", "a3"],
            parent="u1",
        ),
    ]
    state = StreamState()

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines), state=state)

    assert len(result.messages) == 2
    merged = result.messages[1]
    assert merged.uuid == "a1"
    assert merged.line_uuids == ["a1", "a2", "a3"]
    assert merged.api_message_id == "msg_A"
    assert merged.blocks == [
        TextBlock(text="Reading it first."),
        ToolUse(id="t1", name="Read", input={"file_path": "/home/dev/my_proj/engine/store.py"}),
    ]
    assert render_message(merged, state)[0] == "Reading it first.\n[Read: engine/store.py]"
    assert "private reasoning" not in render_message(merged, state)[0]
    assert result.skipped == Counter({"thinking_block": 1})


def test_lines_of_one_api_message_interleaved_with_another_stream_merge_through_parent_uuid(
    tmp_path: Path,
) -> None:
    x1, x2 = assistant_lines(
        [text_block("x one"), text_block("x two")],
        message_id="msg_X",
        uuids=["x1", "x2"],
        parent="u1",
    )
    [y1] = assistant_lines([text_block("y one")], message_id="msg_Y", uuids=["y1"], parent="s1")
    lines = [user_line("go", uuid="u1"), x1, y1, x2]

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines))

    assert [(m.uuid, m.line_uuids) for m in result.messages] == [
        ("u1", ["u1"]),
        ("x1", ["x1", "x2"]),
        ("y1", ["y1"]),
    ]


def test_a_tool_result_between_lines_of_one_api_message_splits_it_in_file_order(
    tmp_path: Path,
) -> None:
    lines = [
        user_line("go", uuid="u1"),
        tool_use_line("t1", "Bash", {"command": "ls"}, message_id="msg_X", uuid="a1", parent="u1"),
        tool_result_line("t1", "README.md", uuid="r1", parent="a1"),
        tool_use_line("t2", "Bash", {"command": "pwd"}, message_id="msg_X", uuid="a2", parent="r1"),
    ]

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines))

    assert [(m.uuid, m.api_message_id) for m in result.messages] == [
        ("u1", None),
        ("a1", "msg_X"),
        ("r1", None),
        ("a2", "msg_X"),
    ]


# --- leniency ---------------------------------------------------------------------------------------------


def test_every_deliberately_skipped_line_kind_is_counted_and_yields_no_message(
    tmp_path: Path,
) -> None:
    lines: list[dict[str, object] | str] = [
        snapshot_line("u1"),
        summary_line("Earlier work", "leaf-in-another-file"),
        queue_line(),
        ai_title_line("Fix imports"),
        user_line("<command-name>/review</command-name>", uuid="c1"),
        user_line("expanded command prompt", uuid="m1", parent="c1", meta=True),
        user_line("Real question", uuid="u1", parent="m1"),
        system_line("turn_duration", uuid="sy1", parent="u1"),
        system_line(None, uuid="sy2", parent="u1"),
        progress_line(uuid="p1", parent="u1"),
        "{not json at all",
        '["a", "list"]',
        {"type": "user", "uuid": "nomsg"},
        {"type": "attachment", "uuid": "at1"},
        user_line("Summary of the conversation so far", uuid="cs1") | {"isCompactSummary": True},
        *assistant_lines(
            [redacted_thinking_block()], message_id="msg_r", uuids=["a0"], parent="u1"
        ),
        *assistant_lines([text_block("Answer")], message_id="msg_1", uuids=["a1"], parent="a0"),
    ]

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines))

    assert [m.uuid for m in result.messages] == ["c1", "u1", "a1"]
    assert result.skipped == Counter(
        {
            "file-history-snapshot": 1,
            "summary": 1,
            "queue-operation": 1,
            "ai-title": 1,
            "is_meta": 1,
            "system": 2,
            "progress": 1,
            "malformed_json": 1,
            "not_object": 1,
            "no_envelope": 1,
            "unknown_type": 1,
            "compact_summary": 1,
            "redacted_thinking_block": 1,
            "empty_message": 1,
        }
    )


def test_dangling_parents_several_roots_and_out_of_order_timestamps_keep_file_order(
    tmp_path: Path,
) -> None:
    lines = [
        user_line("first root", uuid="u1", parent=None, timestamp=ts(30)),
        user_line("child of a line not in this file", uuid="u2", parent="gone", timestamp=ts(5)),
        user_line("second root", uuid="u3", parent=None, timestamp=ts(10)),
        user_line("no timestamp", uuid="u4", parent="u3") | {"timestamp": None},
    ]

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines))

    assert [(m.uuid, m.parent_uuid, m.timestamp) for m in result.messages] == [
        ("u1", None, ts(30)),
        ("u2", "gone", ts(5)),
        ("u3", None, ts(10)),
        ("u4", "u3", None),
    ]


def test_a_timestamp_that_is_not_a_time_leaves_its_message_undated(tmp_path: Path) -> None:
    lines = [
        user_line("dated", uuid="u1", timestamp=ts(0)),
        user_line("garbage", uuid="u2", parent="u1") | {"timestamp": "not a time"},
        user_line("a number", uuid="u3", parent="u2") | {"timestamp": 1767225600},
        user_line("offset", uuid="u4", parent="u3") | {"timestamp": "2026-01-01T09:00:00.5+02:00"},
    ]
    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines))
    # every message is kept; only the two stamps that are not ISO-8601 times are dropped
    assert [(m.uuid, m.timestamp) for m in result.messages] == [
        ("u1", ts(0)),
        ("u2", None),
        ("u3", None),
        ("u4", "2026-01-01T09:00:00.5+02:00"),
    ]
    assert result.skipped == Counter()


def test_a_byte_order_mark_before_the_first_line_is_not_a_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + encode(user_line("after the mark", uuid="u1"))
        + b"\n"
        + encode(user_line("second", uuid="u2", parent="u1"))
        + b"\n"
    )
    result = parse_file(path)
    assert [m.uuid for m in result.messages] == ["u1", "u2"]
    assert result.skipped == Counter()
    # control: a line that is not JSON after the mark is still counted as malformed
    path.write_bytes(b"\xef\xbb\xbf{not json\n" + encode(user_line("second", uuid="u2")) + b"\n")
    result = parse_file(path)
    assert [m.uuid for m in result.messages] == ["u2"]
    assert result.skipped == Counter({"malformed_json": 1})


def test_cwd_comes_from_the_lines_not_from_the_lossy_folder_name(tmp_path: Path) -> None:
    lines = [
        snapshot_line("u1"),
        user_line("start", uuid="u1", cwd=CWD),
        user_line("after cd", uuid="u2", parent="u1", cwd=CWD + "/engine"),
    ]
    path = write_jsonl(tmp_path / ENCODED_CWD / f"{SESSION}.jsonl", lines)
    state = StreamState()

    result = parse_file(path, state=state)

    assert result.cwd == "/home/dev/my_proj"
    assert state.cwd == "/home/dev/my_proj"
    assert [m.cwd for m in result.messages] == ["/home/dev/my_proj", "/home/dev/my_proj/engine"]


def test_invalid_utf8_is_decoded_with_replacement_counted_and_kept(tmp_path: Path) -> None:
    bad = encode(user_line("caf\u00e9 PLACEHOLDER", uuid="u1")).replace(b"PLACEHOLDER", b"\xff\xfe")
    path = write_jsonl(tmp_path / "s.jsonl", [bad, user_line("fine", uuid="u2", parent="u1")])

    result = parse_file(path)

    assert [render_message(m, StreamState())[0] for m in result.messages] == [
        "caf\u00e9 \ufffd\ufffd",
        "fine",
    ]
    assert result.skipped == Counter({"invalid_utf8": 1})


def test_truncated_last_line_is_left_unconsumed_and_read_once_completed(tmp_path: Path) -> None:
    first = encode(user_line("complete", uuid="u1")) + b"\n"
    second = encode(user_line("being written", uuid="u2", parent="u1"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(first + second[:25])

    partial = parse_file(path)

    assert [m.uuid for m in partial.messages] == ["u1"]
    assert partial.end_offset == len(first)
    assert partial.skipped == Counter({"truncated_tail": 1})

    path.write_bytes(first + second + b"\n")
    resumed = parse_file(path, start=partial.end_offset)

    assert [m.uuid for m in resumed.messages] == ["u2"]
    assert resumed.end_offset == len(first) + len(second) + 1
    assert resumed.skipped == Counter()


def test_valid_last_line_without_newline_is_consumed(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", simple_session(), final_newline=False)

    result = parse_file(path)

    assert [m.uuid for m in result.messages] == ["u1", "a1", "r1", "a3"]
    assert result.end_offset == path.stat().st_size
    assert result.skipped == Counter()


def test_offset_past_the_end_of_a_shrunk_file_is_reported_not_parsed(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [user_line("short", uuid="u1")])
    size = path.stat().st_size

    past = parse_file(path, start=size + 10)
    at_end = parse_file(path, start=size)

    assert past.messages == []
    assert past.skipped == Counter({"offset_past_end": 1})
    assert past.end_offset == size + 10
    assert at_end.skipped == Counter()
    assert at_end.end_offset == size
    with pytest.raises(TranscriptError, match="must be >= 0"):
        parse_file(path, start=-1)


# --- incremental ------------------------------------------------------------------------------------------


def test_incremental_parse_continues_a_merge_and_tool_pairing_through_json_state(
    tmp_path: Path,
) -> None:
    a1, a2, a3 = assistant_lines(
        [
            text_block("Running both."),
            tool_use_block("t1", "Bash", {"command": "git log -1"}),
            tool_use_block("t2", "Edit", {"file_path": "/p/engine/store.py"}),
        ],
        message_id="msg_A",
        uuids=["a1", "a2", "a3"],
        parent="u1",
    )
    path = write_jsonl(tmp_path / "s.jsonl", [user_line("commit it", uuid="u1"), a1, a2])
    state = StreamState()
    first = parse_file(path, state=state)
    saved = state.to_json()

    append_jsonl(path, [a3, tool_result_line("t1", "commit 3f2a", uuid="r1", parent="a3")])
    restored = StreamState.from_json(saved)
    second = parse_file(path, start=first.end_offset, state=restored)

    assert [m.uuid for m in first.messages] == ["u1", "a1"]
    assert first.messages[1].line_uuids == ["a1", "a2"]
    assert first.continues_previous is False
    assert second.continues_previous is True
    assert [(m.uuid, m.api_message_id, m.line_uuids) for m in second.messages] == [
        ("a3", "msg_A", ["a3"]),
        ("r1", None, ["r1"]),
    ]
    assert _texts(second, restored) == [
        "[Edit: engine/store.py]",
        "[Bash result: git log -1]\ncommit 3f2a",
    ]
    assert restored.last_api_message_id is None  # the last message is a tool result
    assert second.state is restored


def test_a_new_api_message_after_an_import_boundary_does_not_continue_the_previous(
    tmp_path: Path,
) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        assistant_lines([text_block("one")], message_id="msg_A", uuids=["a1"]),
    )
    state = StreamState()
    first = parse_file(path, state=state)
    append_jsonl(path, assistant_lines([text_block("two")], message_id="msg_B", uuids=["b1"]))

    second = parse_file(path, start=first.end_offset, state=state)

    assert state.last_api_message_id == "msg_B"
    assert second.continues_previous is False
    assert [m.uuid for m in second.messages] == ["b1"]


def test_parse_bytes_reports_offsets_relative_to_its_base() -> None:
    data = encode(user_line("hi", uuid="u1")) + b"\n"

    result = parse_bytes(data, base_offset=100, default_session_id="fallback")

    assert result.end_offset == 100 + len(data)
    assert result.messages[0].session_id == SESSION

"""Parsing and discovery of Claude Code transcripts, on fixtures written by the tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.model import Author, Message, TextBlock, ToolResult, ToolUse
from engine.transcripts import (
    TOOL_RESULT_CAP,
    ParseResult,
    StreamState,
    TranscriptError,
    TranscriptFile,
    compact,
    discover,
    file_edits,
    parse_bytes,
    parse_file,
    render_message,
    stream_key,
)
from tests.engine.fixtures_transcripts import (
    CWD,
    ENCODED_CWD,
    OTHER_SESSION,
    SESSION,
    V1,
    ai_title_line,
    append_jsonl,
    assistant_lines,
    encode,
    image_block,
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


# --- tool pairing and rendering ---------------------------------------------------------------------------


def test_parallel_tool_results_written_out_of_order_pair_with_their_calls_by_id(
    tmp_path: Path,
) -> None:
    lines = [
        user_line("check both", uuid="u1"),
        *assistant_lines(
            [
                tool_use_block("t_grep", "Grep", {"pattern": "def parse_file"}),
                tool_use_block("t_glob", "Glob", {"pattern": "**/*.jsonl"}),
            ],
            message_id="msg_1",
            uuids=["a1", "a2"],
            parent="u1",
        ),
        tool_result_line("t_glob", "a.jsonl", uuid="r2", parent="a2"),
        tool_result_line("t_grep", "engine/transcripts.py:1", uuid="r1", parent="a1"),
    ]
    state = StreamState()

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines), state=state)

    assert _texts(result, state) == [
        "check both",
        "[Grep: def parse_file]\n[Glob: **/*.jsonl]",
        "[Glob result: **/*.jsonl]\na.jsonl",
        "[Grep result: def parse_file]\nengine/transcripts.py:1",
    ]
    assert state.tool_names == {"t_grep": "Grep", "t_glob": "Glob"}
    assert state.tool_commands == {"t_grep": "def parse_file", "t_glob": "**/*.jsonl"}


def test_tool_result_text_comes_from_the_block_whether_string_or_list_and_errors_are_marked(
    tmp_path: Path,
) -> None:
    lines = [
        *assistant_lines(
            [
                tool_use_block("t1", "Bash", {"command": "make"}),
                tool_use_block("t2", "Read", {"file_path": "/r/src/app.py"}),
            ],
            message_id="msg_1",
            uuids=["a1", "a2"],
        ),
        # On errors `toolUseResult` is a string; the text still comes from the tool_result block.
        tool_result_line(
            "t1", "make: *** no rule", uuid="r1", is_error=True, tool_use_result="Error: exit 2"
        ),
        tool_result_line(
            "t2",
            [text_block("line one"), image_block(), text_block("line two")],
            uuid="r2",
            tool_use_result={"file": {"filePath": "/r/src/app.py"}},
        ),
        tool_result_line("t_unknown", "orphan output", uuid="r3"),
    ]
    state = StreamState()

    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines), state=state)

    assert result.messages[1].blocks == [
        ToolResult(tool_use_id="t1", content="make: *** no rule", is_error=True)
    ]
    assert _texts(result, state)[1:] == [
        "[Bash error: make]\nmake: *** no rule",
        "[Read result: src/app.py]\nline one\nline two",
        "[tool result]\norphan output",
    ]
    assert result.skipped == Counter({"image_block": 1})


def test_tool_markers_show_command_path_or_pattern_and_name_other_tools() -> None:
    long_command = "git commit -m " + "x" * 200
    msg = Message(
        uuid="a1",
        session_id=SESSION,
        parent_uuid=None,
        kind="assistant",
        blocks=[
            ToolUse(id="1", name="Bash", input={"command": 'git commit -m "fix x"'}),
            ToolUse(id="2", name="Edit", input={"file_path": "/home/dev/p/src/store.py"}),
            ToolUse(id="3", name="Grep", input={"pattern": "TODO\\(.*\\)"}),
            ToolUse(id="4", name="Read", input={"file_path": "a/b.py"}),
            ToolUse(id="5", name="Write", input={"file_path": "/x/y/z/notes.md"}),
            ToolUse(id="6", name="MultiEdit", input={"file_path": "C:\\repo\\pkg\\mod.py"}),
            ToolUse(id="7", name="TodoWrite", input={"todos": []}),
            ToolUse(id="8", name="mcp__github__create_issue", input={"title": "t"}),
            ToolUse(id="9", name="Bash", input={"command": long_command}),
        ],
        timestamp=None,
    )

    text, author = render_message(msg, StreamState())

    assert text.split("\n") == [
        '[Bash: git commit -m "fix x"]',
        "[Edit: src/store.py]",
        "[Grep: TODO\\(.*\\)]",
        "[Read: a/b.py]",
        "[Write: z/notes.md]",
        "[MultiEdit: pkg/mod.py]",
        "[Tool: TodoWrite]",
        "[Tool: mcp__github__create_issue]",
        # The 200 x's are one word starting at character 15; cutting it would print half a token.
        "[Bash: git commit -m…]",
    ]
    assert author == Author.ASSISTANT
    assert compact("a  b\n c") == "a b c"
    assert compact("word " * 30) == ("word " * 24).strip() + "…"


def test_tool_result_body_is_capped_at_4000_characters() -> None:
    body = "y" * (TOOL_RESULT_CAP + 500)
    msg = Message(
        uuid="r1",
        session_id=SESSION,
        parent_uuid=None,
        kind="user",
        blocks=[ToolResult(tool_use_id="t1", content=body)],
        timestamp=None,
    )

    text, author = render_message(msg, StreamState(tool_names={"t1": "Bash"}))

    assert text == "[Bash result]\n" + "y" * 4000 + " […]"
    assert author == Author.TOOL_RESULT


def test_file_edits_lists_edited_paths_in_order_with_repeats_and_not_reads(tmp_path: Path) -> None:
    lines = [
        *assistant_lines(
            [
                tool_use_block("t1", "Edit", {"file_path": "/p/src/a.py", "old_string": "x"}),
                tool_use_block("t2", "Read", {"file_path": "/p/src/b.py"}),
                tool_use_block("t3", "Write", {"file_path": "/p/README.md", "content": ""}),
            ],
            message_id="msg_1",
            uuids=["a1", "a2", "a3"],
        ),
        *assistant_lines(
            [
                tool_use_block("t4", "MultiEdit", {"file_path": "/p/src/a.py", "edits": []}),
                tool_use_block("t5", "NotebookEdit", {"notebook_path": "/p/nb.ipynb"}),
            ],
            message_id="msg_2",
            uuids=["a4", "a5"],
            parent="a3",
        ),
    ]
    state = StreamState()
    result = parse_file(write_jsonl(tmp_path / "s.jsonl", lines), state=state)

    assert file_edits(result.messages, state) == [
        "/p/src/a.py",
        "/p/README.md",
        "/p/src/a.py",
        "/p/nb.ipynb",
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


def test_stream_state_round_trips_through_json_and_rejects_bad_shapes() -> None:
    state = StreamState(
        next_ordinal=7,
        tool_names={"t1": "Bash"},
        tool_commands={"t1": "ls"},
        suppressed_tool_ids={"t9", "t3"},
        last_api_message_id="msg_A",
        self_transcript=False,
        cwd="/p",
    )

    text = state.to_json()

    assert StreamState.from_json(text) == state
    assert json.loads(text)["suppressed_tool_ids"] == ["t3", "t9"]
    assert StreamState.from_json(StreamState().to_json()) == StreamState()
    with pytest.raises(TranscriptError, match="next_ordinal"):
        StreamState.from_json('{"next_ordinal": "7"}')
    with pytest.raises(TranscriptError, match="expected JSON"):
        StreamState.from_json("{oops")


def test_parse_bytes_reports_offsets_relative_to_its_base() -> None:
    data = encode(user_line("hi", uuid="u1")) + b"\n"

    result = parse_bytes(data, base_offset=100, default_session_id="fallback")

    assert result.end_offset == 100 + len(data)
    assert result.messages[0].session_id == SESSION


# --- discovery --------------------------------------------------------------------------------------------


def test_discover_finds_2x_sessions_and_their_subagents_and_skips_tool_results_and_other_files(
    tmp_path: Path,
) -> None:
    project = tmp_path / "projects" / ENCODED_CWD
    write_jsonl(project / f"{SESSION}.jsonl", simple_session())
    write_jsonl(project / SESSION / "subagents" / "agent-b2.jsonl", [user_line("x", uuid="g")])
    write_jsonl(project / SESSION / "subagents" / "agent-a1.jsonl", [user_line("x", uuid="g")])
    write_jsonl(project / SESSION / "tool-results" / "big.jsonl", [user_line("x", uuid="g")])
    (project / SESSION / "tool-results" / "out.txt").write_text("output")
    (project / SESSION / "subagents" / "agent-a1.meta.json").write_text("{}")
    write_jsonl(project / f"{OTHER_SESSION}.jsonl", simple_session(session_id=OTHER_SESSION))

    files, skipped = discover([tmp_path / "projects"])

    assert [(f.session_id, f.agent_id, f.stream) for f in files] == [
        (SESSION, None, SESSION),
        (SESSION, "a1", f"{SESSION}/agent-a1"),
        (SESSION, "b2", f"{SESSION}/agent-b2"),
        (OTHER_SESSION, None, OTHER_SESSION),
    ]
    assert skipped == Counter({"tool_results": 2, "not_jsonl": 1})


def test_discover_reads_the_parent_session_of_older_agent_files_beside_sessions(
    tmp_path: Path,
) -> None:
    write_jsonl(tmp_path / f"{SESSION}.jsonl", simple_session())
    write_jsonl(
        tmp_path / "agent-old1.jsonl",
        [snapshot_line("m"), user_line("side", uuid="g1", sidechain=True, session_id=SESSION)],
    )
    write_jsonl(tmp_path / "agent-empty.jsonl", [snapshot_line("m")])

    files, skipped = discover([tmp_path])

    assert [(f.path.name, f.session_id, f.stream) for f in files] == [
        (f"{SESSION}.jsonl", SESSION, SESSION),
        ("agent-old1.jsonl", SESSION, f"{SESSION}/agent-old1"),
    ]
    assert skipped == Counter({"agent_without_session": 1})


def test_discover_handles_a_flat_folder_and_explicit_files_deterministically(
    tmp_path: Path,
) -> None:
    flat = tmp_path / "flat"
    b = write_jsonl(flat / "bbbb.jsonl", [user_line("b", uuid="b1", session_id="bbbb")])
    write_jsonl(flat / "aaaa.jsonl", [user_line("a", uuid="a1", session_id="aaaa")])
    write_jsonl(flat / "bbbb" / "subagents" / "agent-z.jsonl", [user_line("z", uuid="z1")])
    # An agent whose main file is absent still gets a group of its own.
    write_jsonl(flat / "cccc" / "subagents" / "agent-y.jsonl", [user_line("y", uuid="y1")])
    (flat / "notes.txt").write_text("not a transcript")

    files, skipped = discover([flat, b])

    assert [f.stream for f in files] == ["aaaa", "bbbb", "bbbb/agent-z", "cccc/agent-y"]
    assert skipped == Counter({"not_jsonl": 1, "duplicate": 1})
    assert discover([flat])[0] == discover([flat])[0]
    with pytest.raises(TranscriptError, match="does not exist"):
        discover([tmp_path / "missing"])


def test_transcript_file_rejects_a_stream_that_does_not_match_its_ids(tmp_path: Path) -> None:
    ok = TranscriptFile(path=tmp_path, session_id="s", agent_id="x", stream=stream_key("s", "x"))

    assert ok.stream == "s/agent-x"
    with pytest.raises(TranscriptError, match="stream_key"):
        TranscriptFile(path=tmp_path, session_id="s", agent_id="x", stream="s")
    with pytest.raises(TranscriptError, match="non-empty session_id"):
        TranscriptFile(path=tmp_path, session_id="", agent_id=None, stream="")

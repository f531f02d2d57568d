"""Tool calls and their results as text: pairing, markers, capped bodies, edited files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from engine.model import Author, Message, TextBlock, ToolResult, ToolUse
from engine.render import TOOL_RESULT_CAP, compact, render_message
from engine.transcripts import ParseResult, StreamState, file_edits, parse_file
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    image_block,
    text_block,
    tool_result_line,
    tool_use_block,
    user_line,
    write_jsonl,
)


def _texts(result: ParseResult, state: StreamState) -> list[str]:
    return [render_message(m, state)[0] for m in result.messages]


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


def test_terminal_control_sequences_are_left_out_of_text_and_tool_results() -> None:
    colored = "\x1b[0mWaiting for lock\x1b[32m passed\x1b[39m \x1b]0;title\x07done\x00"
    msg = Message(
        uuid="r1",
        session_id=SESSION,
        parent_uuid=None,
        kind="user",
        blocks=[
            ToolResult(tool_use_id="t1", content=colored),
            TextBlock(text="see \x1b[1mbold\x1b[22m, and [2m without its ESC\r\n\tindented"),
        ],
        timestamp=None,
    )

    text, _ = render_message(msg, StreamState(tool_names={"t1": "Bash"}))

    # control: "[2m" without its ESC is text, and newlines and tabs stay
    assert text == (
        "[Bash result]\nWaiting for lock passed done\nsee bold, and [2m without its ESC\r\n\tindented"
    )


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

"""Finding transcript files and the stream state they carry between imports."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.transcript_files import (
    StreamState,
    TranscriptError,
    TranscriptFile,
    discover,
    stream_key,
)
from tests.engine.fixtures_transcripts import (
    ENCODED_CWD,
    OTHER_SESSION,
    SESSION,
    simple_session,
    snapshot_line,
    user_line,
    write_jsonl,
)


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


def test_the_transcripts_module_offers_what_the_harness_reads_transcripts_with() -> None:
    from engine import parser_versions, transcript_files, transcripts

    assert transcripts.PARSER_VERSION is parser_versions.PARSER_VERSION
    for name in ("StreamState", "TranscriptFile", "TranscriptError", "discover"):
        assert getattr(transcripts, name) is getattr(transcript_files, name)
    assert callable(transcripts.parse_file)

"""`recallbench rebuild --keep-missing`: rebuild from the transcripts still on disk and carry over, as
stored, what the gone ones held (engine.carry_sql), so a memory older than Claude Code's
cleanupPeriodDays can be rebuilt without losing it.

The memory is imported as a parser before version 4 did (colour codes kept, no version recorded):
session A (one file) and session B (its main transcript and a subagent's), one chunk per file. Then
Claude Code deletes B's main transcript.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine import parsed_sql, render
from engine.markers import SELF_PROMPT_MARKER
from recallbench.cli import main
from tests.engine.fixtures_transcripts import (
    OTHER_SESSION,
    SESSION,
    assistant_lines,
    text_block,
    user_line,
    write_jsonl,
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _chunks(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT id, text FROM chunks"))


def _found(word: str) -> list[str]:
    result = invoke("search", "--all-projects", "--arm", "fts", "--json", word)
    assert result.exit_code == 0, result.output
    return [hit["chunk_id"] for hit in json.loads(result.stdout)["hits"]]


@pytest.fixture
def gone(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "projects"
    write_jsonl(
        root / "a" / f"{SESSION}.jsonl",
        [
            user_line("\x1b[0mWaiting for lock on the build folder", uuid="a1"),
            *assistant_lines([text_block("Another cargo build holds it.")], message_id="ma",
                             uuids=["a2"], parent="a1"),
        ],
    )  # fmt: skip
    main_file = write_jsonl(
        root / "b" / f"{OTHER_SESSION}.jsonl",
        [
            user_line("\x1b[1mzebra\x1b[0m deploy notes for the gateway", uuid="b1",
                      session_id=OTHER_SESSION),
            *assistant_lines([text_block("The zebra deploy needs the gateway first.")],
                             message_id="mb", uuids=["b2"], parent="b1", session_id=OTHER_SESSION),
        ],
    )  # fmt: skip
    write_jsonl(
        root / "b" / OTHER_SESSION / "subagents" / "agent-a1b2.jsonl",
        [
            user_line("List the gateway's open ports.", uuid="s1", session_id=OTHER_SESSION,
                      sidechain=True, agent_id="a1b2"),
            *assistant_lines([text_block("Ports 443 and 8443 are open.")], message_id="ms",
                             uuids=["s2"], parent="s1", session_id=OTHER_SESSION, sidechain=True,
                             agent_id="a1b2"),
        ],
    )  # fmt: skip
    with monkeypatch.context() as old:  # as a parser before version 4 imported it
        old.setattr(render, "strip_terminal_control", lambda text: text)
        old.setattr(parsed_sql, "record_version", lambda conn: None)
        assert invoke("import", str(root)).exit_code == 0
    main_file.unlink()
    return home / "memory.db"


def test_keep_missing_carries_what_the_gone_transcript_held_as_stored(gone: Path) -> None:
    files = next(line for line in invoke("status").stdout.splitlines() if line.startswith("files:"))
    assert files == (
        "files: 3 (1 no longer on disk: this memory holds the only copy of what it said; back it "
        "up, and rebuild with --keep-missing)"
    )
    assert json.loads(invoke("status", "--json").stdout)["files_gone"] == 1
    before = _chunks(gone)
    zebra = _found("zebra")
    assert len(before) == 3
    assert len(zebra) == 1
    assert json.loads(invoke("status", "--json").stdout)["stale_parse"]["control"] == 2

    refused = invoke("rebuild")
    assert refused.exit_code == 1
    assert "`recallbench rebuild --keep-missing` rebuilds from the rest" in refused.stderr

    kept = invoke("rebuild", "--keep-missing")

    assert kept.exit_code == 0, kept.output
    assert (
        "carried over from the old database, as stored: 1 transcript file no longer on disk, "
        "1 session, 1 chunk (`recallbench status` names what older code left in them)"
    ) in kept.stdout
    after = _chunks(gone)
    assert after[zebra[0]] == before[zebra[0]]  # the same id and the text as stored, ESC and all
    assert "\x1b" in after[zebra[0]]
    assert _found("zebra") == zebra
    assert len(after) == 3  # A's and the subagent's read again, B's main transcript carried
    status = json.loads(invoke("status", "--json").stdout)
    assert (status["sessions"], status["chunks"]) == (2, 3)
    assert (status["files"], status["files_gone"]) == (3, 1)  # still recorded, still gone
    # A was read again by the running parser (its colour code gone); B's carried chunk keeps its
    # own, and the memory keeps saying it holds text an older parser read
    assert status["stale_parse"]["control"] == 1
    assert status["parser_version"] is None
    waiting = [text for text in after.values() if "Waiting for lock" in text]
    assert waiting == ["Waiting for lock on the build folder\n\nAnother cargo build holds it."]


def test_without_either_flag_nothing_moves_and_the_two_flags_exclude_each_other(
    gone: Path,
) -> None:
    kept = gone.read_bytes()
    both = invoke("rebuild", "--keep-missing", "--drop-missing")
    assert both.exit_code == 2
    assert "give --drop-missing or --keep-missing, not both" in both.output
    assert gone.read_bytes() == kept
    dropped = invoke("rebuild", "--drop-missing")  # control: the other choice loses the chunk
    assert dropped.exit_code == 0, dropped.output
    assert _found("zebra") == []
    assert len(_chunks(gone)) == 2


def test_a_subagent_of_our_own_gone_session_stays_out(tmp_path: Path, home: Path) -> None:
    # A session this project's own hook started (its first prompt carries the marker): stored as a
    # flagged session without text, and so is its subagent's transcript.
    root = tmp_path / "projects"
    own: dict[str, Any] = {"session_id": OTHER_SESSION}
    main_file = write_jsonl(
        root / "b" / f"{OTHER_SESSION}.jsonl",
        [user_line(f"{SELF_PROMPT_MARKER}\nExtract decisions from: ...", uuid="o1", **own)],
    )
    write_jsonl(
        root / "b" / OTHER_SESSION / "subagents" / "agent-c3d4.jsonl",
        [
            user_line(
                "Summarise the zebra notes.", uuid="o2", sidechain=True, agent_id="c3d4", **own
            )
        ],
    )
    write_jsonl(
        root / "a" / f"{SESSION}.jsonl", [user_line("The gateway zebra header.", uuid="a1")]
    )
    assert invoke("import", str(root)).exit_code == 0
    assert len(_found("zebra")) == 1  # control: the person's session answers; ours holds nothing
    counts = ("sessions", "self_transcripts", "chunks")
    before = json.loads(invoke("status", "--json").stdout)
    assert tuple(before[k] for k in counts) == (1, 1, 1)  # `sessions` counts the person's
    lines = invoke("status").stdout.splitlines()
    assert "files: 3" in lines  # control: every transcript on disk, nothing added to the line
    main_file.unlink()

    assert invoke("rebuild", "--keep-missing").exit_code == 0

    # The session is carried before the subagent is read, so the subagent is known to be ours and
    # stays out (read first, its prompt would be a second chunk holding "zebra").
    after = json.loads(invoke("status", "--json").stdout)
    assert tuple(after[k] for k in counts) == (1, 1, 1)
    assert len(_found("zebra")) == 1

"""`status` names what an import by an older parser left in the memory (`engine.parsed_sql`), until a
rebuild imports it again under the running parser (docs/transcripts.md, "Versions")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine import parsed_sql, render, transcripts
from engine.parser_versions import COMPACTION_INSTRUCTIONS_LEAD
from recallbench.cli import main
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)

COMPACTION: dict[str, Any] = {"sidechain": True, "agent_id": "acompact-fffbd0"}
NOTE = "imported by a parser before version 4 (this one is version 4), which left "


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _transcripts(root: Path) -> None:
    write_jsonl(
        root / f"{SESSION}.jsonl",
        [
            user_line("\x1b[0mWaiting for lock on the build folder", uuid="u1", timestamp=ts(0)),
            *assistant_lines(
                [text_block("It waits for the other cargo build.")],
                message_id="m1", uuids=["a1"], parent="u1", timestamp="not a time",
            ),
            # a time Python reads and SQLite does not (the basic ISO form): no count
            user_line("Then stop that build.", uuid="u2", parent="a1", timestamp="20260301T100500"),
        ],
    )  # fmt: skip
    # The compaction agent: 2,000 characters of instructions (900 + 900 + 200 in three chunks), then
    # a 794-character summary (25 x 31 + 19) that does not fit beside the last 200 (its own chunk).
    instructions = (COMPACTION_INSTRUCTIONS_LEAD + " and the pending tasks. " * 100)[:2000]
    write_jsonl(
        root / SESSION / "subagents" / "agent-acompact-fffbd0.jsonl",
        [
            user_line(instructions, uuid="c1", timestamp=ts(5), **COMPACTION),
            *assistant_lines(
                [text_block("<summary>" + "We waited for the cargo build. " * 25 + "</summary>")],
                message_id="m2", uuids=["c2"], parent="c1", timestamp=ts(6), **COMPACTION,
            ),
        ],
    )  # fmt: skip


def _status() -> tuple[dict[str, object], list[str]]:
    shown = invoke("status")
    assert shown.exit_code == 0, shown.output
    return json.loads(invoke("status", "--json").stdout), shown.stdout.splitlines()


def test_an_older_parsers_import_is_named_until_a_rebuild_reads_it_again(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    _transcripts(root)
    # The memory as an import before version 2 left it: control characters, the compaction agent's
    # instructions and a timestamp that is not a time all kept, no parser version recorded.
    with monkeypatch.context() as old:
        old.setattr(render, "strip_terminal_control", lambda text: text)
        old.setattr(transcripts, "_compaction_input", lambda obj, message: False)
        old.setattr(transcripts, "iso_timestamp", lambda v: v if isinstance(v, str) else None)
        old.setattr(parsed_sql, "record_version", lambda conn: None)
        assert invoke("import", "--no-embed", str(root)).exit_code == 0

    info, lines = _status()

    assert info["parser_version"] is None
    assert info["chunks"] == 5  # the main session's one, three of instructions, the summary's
    assert info["stale_parse"] == {"undated": 1, "compaction": 3, "compactions": 1, "control": 1}
    assert (
        NOTE + "1 chunk holding terminal control sequences, 3 chunks of the instructions Claude "
        "Code hands its compaction agent (from 1 compaction), 1 message stamped with a timestamp "
        "that is not a time: `recallbench rebuild` imports every transcript again without them; "
        "the instructions also go in place, transcripts or not, with `recallbench forget --match "
        '"Your task is to create a detailed summary of the conversation so far"`'
    ) in lines

    # that forget removes exactly the three chunks of the instructions, and no other count moves
    dry = invoke("forget", "--match", COMPACTION_INSTRUCTIONS_LEAD, "--dry-run").stdout
    assert f"part of session {SESSION}: 3 chunks, 1 message" in dry
    lead = COMPACTION_INSTRUCTIONS_LEAD
    assert invoke("forget", "--match", lead, "--confirm", lead).exit_code == 0
    info, _ = _status()
    assert info["stale_parse"] == {"undated": 1, "compaction": 0, "compactions": 0, "control": 1}
    assert info["chunks"] == 2

    assert invoke("rebuild").exit_code == 0
    info, lines = _status()

    assert info["parser_version"] == "4"
    assert info["stale_parse"] == {"undated": 0, "compaction": 0, "compactions": 0, "control": 0}
    assert not any(line.startswith("imported by") for line in lines)
    assert info["chunks"] == 2  # the instructions' three are gone

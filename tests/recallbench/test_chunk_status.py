"""`status` counts the chunks an import before chunking version 2 began inside a word
(`engine.chunked_sql`), and names the fix, `rebuild`, which splits long messages where a word ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine import chunked_sql, chunking
from recallbench.cli import main
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)

# 445 two-character words make 890 characters; the identifier then spans [890, 906), across the 900th.
PROMPT = "a " * 445 + "deadbeefcafe1234" + " was the container the deploy ran in" * 3
NOTE = (
    "1 chunk begins inside a word that the chunker before version 2 cut in two, and a search for "
    "that word finds neither half: `recallbench rebuild` imports every transcript again and splits "
    "long messages where a word ends"
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _status() -> tuple[int, list[str]]:
    shown = invoke("status")
    assert shown.exit_code == 0, shown.output
    return int(
        json.loads(invoke("status", "--json").stdout)["cut_words"]
    ), shown.stdout.splitlines()


def _hits(word: str) -> int:
    found = invoke("search", word, "--all-projects", "--arm", "fts", "--json")
    return len(json.loads(found.stdout)["hits"])


def test_chunks_an_older_chunker_cut_inside_a_word_are_counted_until_a_rebuild(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    write_jsonl(
        root / f"{SESSION}.jsonl",
        [
            user_line(PROMPT, uuid="u1", timestamp=ts(0)),
            *assistant_lines([text_block("Noted.")], message_id="m1", uuids=["a1"], parent="u1"),
            # 1,000 characters without a space: both versions cut it at 900, so it is no count
            user_line("x" * 1000, uuid="u2", parent="a1", timestamp=ts(1)),
        ],
    )
    pieces = chunking._pieces
    with monkeypatch.context() as old:  # the memory as an import before version 2 left it
        old.setattr(chunking, "_pieces", lambda text, budget, _: pieces(text, budget, 1))
        old.setattr(chunked_sql, "record_version", lambda conn, version: None)
        assert invoke("import", "--no-embed", str(root)).exit_code == 0

    count, lines = _status()
    assert count == 1  # PROMPT's cut; not the one inside the 1,000 x's
    assert NOTE in lines
    assert _hits("deadbeefcafe1234") == 0
    assert _hits("container") == 1  # control: the rest of the prompt is found

    assert invoke("rebuild").exit_code == 0
    count, lines = _status()
    assert count == 0
    assert json.loads(invoke("status", "--json").stdout)["chunking_version"] == 2
    assert not any("inside a word" in line for line in lines)
    assert _hits("deadbeefcafe1234") == 1

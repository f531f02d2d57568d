"""An import chunks under the version it is given (`engine.chunking`): a word at a chunk boundary
stays findable under version 2, the default, and is lost under version 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import chunked_sql
from engine.chunking import CHUNKING
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    CWD,
    OTHER_SESSION,
    SESSION,
    ts,
    user_line,
    write_jsonl,
)

# 445 two-character words make 890 characters; the identifier then spans [890, 906), across the 900th.
PROMPT = "a " * 445 + "deadbeefcafe1234" + " and then the rest of the prompt" * 3


def _import(tmp_path: Path, name: str, chunking: int = CHUNKING) -> Memory:
    folder = tmp_path / name
    write_jsonl(
        folder / f"{SESSION}.jsonl",
        [user_line(PROMPT, uuid="u1", timestamp=ts(0), session_id=SESSION, cwd=CWD)],
    )
    memory = Memory(tmp_path / f"{name}.db")
    memory.import_paths([folder], embed=False, chunking=chunking)
    return memory


def test_a_word_at_the_900th_character_is_found_under_the_default_chunking(tmp_path: Path) -> None:
    memory = _import(tmp_path, "v2")
    (text,) = memory.conn.execute("SELECT text FROM messages").fetchone()
    assert text == PROMPT  # the message is stored as written, so the positions above hold
    lengths = [n for (n,) in memory.conn.execute("SELECT length(text) FROM chunks ORDER BY idx")]
    assert lengths == [890, len(PROMPT) - 890]
    hits = memory.lexical("deadbeefcafe1234", Scope.everywhere(), 10)
    assert len(hits) == 1
    # control: under version 1 the chunk boundary falls inside it, and neither half is found
    old = _import(tmp_path, "v1", chunking=1)
    lengths = [n for (n,) in old.conn.execute("SELECT length(text) FROM chunks ORDER BY idx")]
    assert lengths == [900, len(PROMPT) - 900]
    assert old.lexical("deadbeefcafe1234", Scope.everywhere(), 10) == []
    assert len(old.lexical("rest", Scope.everywhere(), 10)) == 1


def test_an_import_under_an_unknown_chunking_version_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="chunking version must be one of"):
        _import(tmp_path, "v9", chunking=9)


def test_the_first_imports_chunking_is_recorded_and_only_a_version_1_memory_is_scanned(
    tmp_path: Path,
) -> None:
    fresh = _import(tmp_path, "v2")
    assert chunked_sql.version(fresh.conn) == 2
    old = _import(tmp_path, "v1", chunking=1)  # a benchmark's corpus under version 1
    assert chunked_sql.version(old.conn) == 1
    assert chunked_sql.cut_words(old.conn) == 1  # the identifier's cut at 900
    assert old.status()["cut_words"] == 1
    # a version-1 cut in a memory whose first import was version 2 is not looked for
    fresh.conn.execute("UPDATE meta SET value = '1' WHERE key = 'chunking'")
    assert chunked_sql.cut_words(fresh.conn) == 0  # control: a scan finds none in its chunks
    write_jsonl(
        tmp_path / "more" / f"{OTHER_SESSION}.jsonl",
        [user_line(PROMPT, uuid="u9", timestamp=ts(1), session_id=OTHER_SESSION, cwd=CWD)],
    )
    fresh.conn.execute("UPDATE meta SET value = '2' WHERE key = 'chunking'")
    fresh.import_paths([tmp_path / "more"], embed=False, chunking=1)
    assert chunked_sql.version(fresh.conn) == 2  # the row names the first import's version
    assert chunked_sql.cut_words(fresh.conn) == 0

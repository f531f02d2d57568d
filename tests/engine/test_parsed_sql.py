"""A memory records the parser version its text was first imported under (`engine.parsed_sql`): a new
memory the running one, a memory that already holds text nothing, so an older one keeps saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import parsed_sql
from engine.parser_versions import PARSER_VERSION
from tests.engine.fixtures_transcripts import OTHER_SESSION, SESSION, user_line, write_jsonl
from tests.engine.test_memory import open_memory


def test_a_new_memory_records_the_running_version_and_an_older_one_is_not_relabelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(tmp_path / "a" / f"{SESSION}.jsonl", [user_line("\x1b[1mfirst", uuid="u1")])
    write_jsonl(tmp_path / "b" / f"{OTHER_SESSION}.jsonl", [user_line("second", uuid="u2")])

    fresh = open_memory(tmp_path / "fresh")
    fresh.import_paths([tmp_path / "a"])
    assert parsed_sql.version(fresh.conn) == PARSER_VERSION == "4"
    assert not parsed_sql.stale_parse(fresh.conn).control  # the running parser stored no ESC

    older = open_memory(tmp_path / "older")
    with monkeypatch.context() as old:  # an import before version 4 recorded nothing
        old.setattr(parsed_sql, "record_version", lambda conn: None)
        older.import_paths([tmp_path / "b"])
    older.import_paths([tmp_path / "a"])  # the running version imports more into it

    assert parsed_sql.version(older.conn) is None
    assert older.status()["parser_version"] is None
    assert fresh.status()["parser_version"] == "4"

"""`engine.carry_sql.carry_files`: a rebuild copies, as stored, what a gone transcript held, merging
its session with what the transcripts still on disk brought."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import carry_sql, chunked_sql, parsed_sql, sanitized_sql
from engine.sanitize import SANITIZE_VERSION
from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.engine.test_memory import open_memory

SUB: dict[str, Any] = {"sidechain": True, "agent_id": "a9"}


def _write(root: Path) -> tuple[Path, Path]:
    main = write_jsonl(
        root / f"{SESSION}.jsonl",
        [
            user_line("Why does the gateway drop the zebra header?", uuid="m1", timestamp=ts(0)),
            *assistant_lines([text_block("The proxy strips it.")], message_id="mm",
                             uuids=["m2"], parent="m1", timestamp=ts(1)),
        ],
    )  # fmt: skip
    sub = write_jsonl(
        root / SESSION / "subagents" / "agent-a9.jsonl",
        [
            user_line("Find the proxy config.", uuid="s1", timestamp=ts(5), **SUB),
            *assistant_lines([text_block("It is in deploy/proxy.conf.")], message_id="ms",
                             uuids=["s2"], parent="s1", timestamp=ts(6), **SUB),
        ],
    )  # fmt: skip
    return main, sub


def test_a_gone_main_transcript_is_carried_and_its_session_spans_both_files(tmp_path: Path) -> None:
    main, sub = _write(tmp_path / "t")
    old = open_memory(tmp_path, "old.db")
    old.import_paths([tmp_path / "t"])
    old.conn.execute("DELETE FROM meta WHERE key = 'parser_version'")  # as before version 4
    old.conn.execute("DELETE FROM meta WHERE key = 'chunking'")  # as before chunking version 2
    old.conn.execute("UPDATE meta SET value = '4' WHERE key = 'sanitize_version'")
    sanitized_sql.record_credentials(
        old.conn
    )  # a `forget --credentials` redacted it under the running one
    old_rows = old.conn.execute("SELECT id, text FROM chunks ORDER BY id").fetchall()
    old.close()
    new = open_memory(tmp_path, "new.db")
    new.import_paths([sub])  # the transcripts still on disk: the subagent's alone
    assert new.conn.execute("SELECT started, ended FROM sessions").fetchall() == [
        (ts(5), ts(6))
    ]  # control: before the carry, the session is the subagent's minutes
    assert parsed_sql.version(new.conn) == "4"
    assert chunked_sql.version(new.conn) == 2
    assert sanitized_sql.meta_value(new.conn, sanitized_sql.CREDENTIALS_KEY) is None

    carried = new.carry_files(tmp_path / "old.db", [main.resolve()])

    assert carried == carry_sql.Carried(files=1, sessions=1, messages=2, chunks=1)
    assert new.conn.execute("SELECT id, text FROM chunks ORDER BY id").fetchall() == old_rows
    assert new.conn.execute("SELECT started, ended FROM sessions").fetchall() == [(ts(0), ts(6))]
    assert new.conn.execute("SELECT count(*) FROM files").fetchone() == (2,)
    assert parsed_sql.version(new.conn) is None  # the old memory's: its text is in here now
    assert chunked_sql.version(new.conn) is None
    assert sanitized_sql.version(new.conn) == "4"
    assert sanitized_sql.credentials_version(new.conn) == SANITIZE_VERSION == "11"
    hits = new.conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'zebra'"
    ).fetchone()
    assert hits == (1,)  # the FTS5 index holds the carried chunk

    again = new.carry_files(tmp_path / "old.db", [main.resolve(), sub.resolve()])
    assert again == carry_sql.Carried()  # both recorded here now: nothing is copied twice
    assert new.carry_files(tmp_path / "old.db", []) == carry_sql.Carried()

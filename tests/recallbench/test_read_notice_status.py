"""`status` names the chunks an older import left holding Claude Code's file-read notice, until a
rebuild imports them again under sanitizer version 3 (docs/transcripts.md, "Versions")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine import sanitize, sanitized_sql
from engine.markers import READ_NOTICE_LEAD
from recallbench.cli import main
from tests.engine.fixtures_transcripts import (
    SESSION,
    tool_result_line,
    tool_use_line,
    user_line,
    write_jsonl,
)
from tests.engine.test_read_notice import FILE, NOTICE

LINE = "Claude Code's file-read notice, imported before sanitizer version 3 removed it"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _transcript(root: Path, name: str, words: str) -> Path:
    return write_jsonl(
        root / f"{name}.jsonl",
        [
            user_line(f"Where does {words} print the folder?", uuid=f"{name}-u1"),
            tool_use_line(
                f"{name}-t1",
                "Read",
                {"file_path": "/repo/src/cwd.py"},
                message_id=f"{name}-m1",
                uuid=f"{name}-a1",
                parent=f"{name}-u1",
            ),
            tool_result_line(
                f"{name}-t1", f"{FILE}\n\n{NOTICE}", uuid=f"{name}-r1", parent=f"{name}-a1"
            ),
        ],
    )


def _status() -> tuple[dict[str, object], list[str]]:
    shown = invoke("status")
    assert shown.exit_code == 0, shown.output
    return json.loads(invoke("status", "--json").stdout), shown.stdout.splitlines()


def _chunk_texts(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT text FROM chunks ORDER BY rowid")]


def test_an_older_import_is_named_until_a_rebuild_removes_the_notice(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    _transcript(root, SESSION, "cwd.py")
    db = home / "memory.db"
    # The memory as an import before version 3 left it: the notice kept, no version recorded.
    with monkeypatch.context() as old:
        old.setattr(sanitize, "drop_read_notice", lambda text: (text, False))
        old.setattr(sanitized_sql, "record_version", lambda conn: None)
        assert invoke("import", "--no-embed", str(root)).exit_code == 0
    assert sum(READ_NOTICE_LEAD in t for t in _chunk_texts(db)) == 1

    info, lines = _status()

    assert info["sanitize_version"] is None
    assert info["stale_read_notices"] == 1
    assert (
        f"{LINE}: in 1 chunk; `recallbench rebuild` imports every transcript again without it"
        in (lines)
    )
    assert any(
        line.startswith(
            "imported under a sanitizer before version 3, before versions 4, 5, 6, 7, 8, 9, 10 and 11 "
            "began to redact 178 more credential formats"
        )
        for line in lines
    )

    # A later import into that memory records no version: its old text is still there.
    _transcript(root, "b0c1d2e3-0000-4000-8000-000000000002", "main.py")
    assert invoke("import", "--no-embed", str(root)).exit_code == 0
    info, _ = _status()
    assert info["sanitize_version"] is None
    assert info["stale_read_notices"] == 1  # the new file's notice was dropped, the old one's kept
    assert info["scrubbed"] == {"read_notice": 1}

    assert invoke("rebuild", "--no-embed").exit_code == 0
    info, lines = _status()

    assert info["sanitize_version"] == "11"
    assert info["stale_read_notices"] == 0
    assert info["scrubbed"] == {"read_notice": 2}
    assert not any(line.startswith(LINE) for line in lines)
    texts = _chunk_texts(db)
    assert not any(READ_NOTICE_LEAD in t for t in texts)
    assert sum(FILE in t for t in texts) == 2  # the files' own text is kept


def test_a_new_memory_records_its_version_and_a_quote_of_the_notice_is_not_counted(
    home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    path = _transcript(root, SESSION, "cwd.py")
    quoted = user_line(f"Why do reads end with {NOTICE}", uuid="u2", parent=f"{SESSION}-r1")
    write_jsonl(path, [*map(json.loads, path.read_text().splitlines()), quoted])
    assert invoke("import", "--no-embed", str(root)).exit_code == 0

    info, lines = _status()

    assert info["sanitize_version"] == "11"
    assert info["stale_read_notices"] == 0
    assert sum(READ_NOTICE_LEAD in t for t in _chunk_texts(home / "memory.db")) == 1  # the quote
    assert not any(line.startswith(LINE) for line in lines)

"""Importing as an older sanitizer version did: without the credential rules later versions added,
recording that version (or, with `version=None`, recording nothing, as an import before version 3 did).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine import sanitized_sql, secrets
from engine.secret_formats import kinds_after
from recallbench.cli import main
from tests.engine.fixtures_transcripts import SESSION, two_calls, write_jsonl


def import_as_before(
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    version: str | None = "3",
    rules: Mapping[str, Callable[[str], Iterable[tuple[int, int]]]] | None = None,
) -> Result:
    """`recallbench import ARGS` under `version`'s rules (version 3's for None), with `rules` standing
    for the running ones of their kinds (a rule a later version changed, as it was); the memory records
    `version` (if any)."""
    later = set(kinds_after(int(version or sanitized_sql.READ_NOTICE_VERSION)))
    was = rules or {}
    older = tuple((k, was.get(k, f)) for k, f in secrets._DETECTORS if k not in later)
    with monkeypatch.context() as old:
        old.setattr(secrets, "_DETECTORS", older)
        old.setattr(
            sanitized_sql,
            "record_version",
            lambda conn: (
                None
                if version is None
                else conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('sanitize_version', ?)", (version,)
                )
            ),
        )
        return CliRunner().invoke(main, ["import", *args], catch_exceptions=False)


def stored_messages(db: Path) -> list[str]:
    """The text of every message `db` stores, in stream order."""
    with sqlite3.connect(db) as conn:
        return [str(r[0]) for r in conn.execute("SELECT text FROM messages ORDER BY ordinal")]


def invoke(*args: str) -> Result:
    """`recallbench ARGS`, in this process."""
    return CliRunner().invoke(main, list(args))


def write_two_calls(
    root: Path, prompt: str, first: tuple[str, str], second: tuple[str, str]
) -> None:
    """`root/<SESSION>.jsonl`: `prompt`, then two Bash calls, each a (command, output)
    (`tests.engine.fixtures_transcripts.two_calls`)."""
    write_jsonl(root / f"{SESSION}.jsonl", two_calls(prompt, first, second))

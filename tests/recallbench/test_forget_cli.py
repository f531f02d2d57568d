"""`recallbench forget`: the proof that a forgotten string leaves every file and every read path.

Run `pytest -s tests/recallbench/test_forget_cli.py -k byte_scan` to see the byte scan's table.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arms.base import Query
from arms.ltr import hand_model
from arms.registry import build, entry, names
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench import forget_cli
from recallbench.cli import main
from recallbench.hooks import HookLog
from recallbench.mcp_server import build_server
from tests.engine.fixtures_transcripts import append_jsonl, assistant_lines, text_block, ts
from tests.engine.forget_corpus import (
    KEPT,
    KEPT_ELSEWHERE,
    KEPT_ELSEWHERE_QUERY,
    KEPT_QUERY,
    PLANTED,
    PLANTED_QUERY,
    SID_P,
    TERM,
    byte_counts,
    scan_table,
    write_forget_corpus,
)
from tests.recallbench.corpus import ALPHA, BETA, SID_A1, SID_B1
from tests.recallbench.prompt_hook import inject
from tests.recallbench.serving import start_serve, stop
from tests.recallbench.test_mcp_server import call

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CURRENT = "c0ffee00-0000-4000-8000-00000000c0de"  # the session the hook runs in


def cli(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


def hook(prompt: str) -> str:
    """What the prompt hook injects for `prompt` in project alpha."""
    transcript = f"/home/dev/.claude/projects/-home-dev-alpha/{CURRENT}.jsonl"
    return inject(prompt, session=CURRENT, cwd=ALPHA, transcript=transcript)


@pytest.fixture
def root(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "projects"
    write_forget_corpus(folder)
    imported = cli("import", str(folder))
    assert imported.exit_code == 0, imported.output
    return folder


def search_rows(query: str) -> list[dict[str, Any]]:
    result = cli("search", "--all-projects", "--json", "--limit", "20", query)
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)["hits"]
    return rows


def arm_texts(memory: Memory, arm_name: str, text: str) -> list[str]:
    """The texts an arm (defaults; a fitted one with a hand-set model) returns for `text`."""
    model = hand_model({"vec_cosine": 1.0, "term_share": 1.0}) if entry(arm_name).fitted else None
    arm = build(arm_name, memory, model)
    hits = arm.search(Query(text=text, scope=Scope.everywhere(), now=NOW, k=10))
    return [r.text for r in memory.chunks([h.chunk_id for h in hits], Scope.everywhere())]


def plant_log_lines(home: Path) -> None:
    """Lines quoting the string in hooks.log and its rotated copy (as an error message could)."""
    HookLog(home / "hooks.log", "UserPromptSubmit").error(f"could not parse {PLANTED!r} as JSON")
    rotated = home / "hooks.log.1"
    rotated.write_text(f"old line\nold error quoting {PLANTED}\n", encoding="utf-8")
    rotated.chmod(0o600)


@pytest.fixture
def server(root: Path, home: Path) -> Iterator[None]:
    proc, _ = start_serve(home)
    try:
        yield
    finally:
        stop(proc, signal.SIGTERM)


def test_byte_scan_finds_the_forgotten_string_nowhere_and_no_read_path_returns_it(
    root: Path, home: Path, server: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # positive controls first: every path returns the planted string before the forget
    planted_rows = [r for r in search_rows(PLANTED_QUERY) if PLANTED in r["text"]]
    assert planted_rows
    planted_chunk = planted_rows[0]["chunk_id"]
    assert PLANTED in hook(PLANTED_QUERY)  # injected by the running server
    assert KEPT in hook(KEPT_QUERY)
    plant_log_lines(home)
    needles = (PLANTED.encode(), TERM)
    before = {n: byte_counts(home, n) for n in needles}
    assert before[PLANTED.encode()]["hooks.log"] == 1
    assert before[PLANTED.encode()]["hooks.log.1"] == 1
    in_db = sum(v for k, v in before[TERM].items() if k.startswith("memory.db"))
    assert in_db > 0

    result = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert result.exit_code == 0, result.output
    assert "part of session" in result.stdout
    assert SID_P in result.stdout
    assert "2 lines of hooks.log that quote it" in result.stdout
    assert "forget: vacuum done" in result.stderr

    after = {n: byte_counts(home, n) for n in needles}
    with capsys.disabled():
        for n in needles:
            print("\n" + scan_table(before[n], after[n], n))
    for n in needles:
        assert sum(after[n].values()) == 0, scan_table(before[n], after[n], n)
    assert "old line" in (home / "hooks.log.1").read_text(encoding="utf-8")  # control: kept

    # the running server answers the hook without it, and still with another session's memory
    served = (home / "hooks.log").read_text(encoding="utf-8").count("answered by the server")
    assert PLANTED not in hook(PLANTED_QUERY)
    assert KEPT_ELSEWHERE in hook(KEPT_ELSEWHERE_QUERY)
    log = (home / "hooks.log").read_text(encoding="utf-8")
    assert log.count("answered by the server") == served + 2  # not the lexical fallback

    # a re-import of the same transcripts keeps it gone (and embeds the rewritten chunk)
    assert cli("import", str(root)).exit_code == 0
    assert PLANTED not in hook(PLANTED_QUERY)
    assert KEPT in hook(KEPT_QUERY)  # the rewritten chunk, once it has its vector
    assert sum(byte_counts(home, PLANTED.encode()).values()) == 0
    assert [r for r in search_rows(PLANTED_QUERY) if PLANTED in r["text"]] == []
    assert any(KEPT in r["text"] for r in search_rows(KEPT_QUERY))

    memory = Memory(home / "memory.db", HashEmbedder())
    for arm_name in names():
        assert not any(PLANTED in t for t in arm_texts(memory, arm_name, PLANTED_QUERY)), arm_name
        if arm_name != "none":  # the baseline that never returns anything has no control
            assert any(KEPT in t for t in arm_texts(memory, arm_name, KEPT_QUERY)), arm_name

    mcp = build_server(memory, "rrf", project_dir=Path(ALPHA))
    found, kept, by_id = call(
        mcp,
        "legacy",
        ("search_memory", {"query": PLANTED_QUERY, "limit": 20}),
        ("search_memory", {"query": KEPT_QUERY, "limit": 20}),
        ("get_memory", {"chunk_id": planted_chunk}),
    )
    assert not any(PLANTED in hit["text"] for hit in found["hits"])
    assert any(KEPT in hit["text"] for hit in kept["hits"])
    # the chunk id now holds what its session kept, and nothing forgotten
    assert PLANTED not in json.dumps(by_id)
    assert KEPT in json.dumps(by_id)


def test_without_a_server_the_hook_and_search_return_nothing_forgotten_and_new_lines_import(
    root: Path, home: Path
) -> None:
    assert PLANTED in hook(PLANTED_QUERY)  # control: the lexical hook path finds it
    assert cli("forget", "--match", PLANTED, "--confirm", PLANTED).exit_code == 0
    assert PLANTED not in hook(PLANTED_QUERY)
    assert KEPT in hook(KEPT_QUERY)
    append_jsonl(
        root / "-home-dev-alpha" / f"{SID_P}.jsonl",
        assistant_lines(
            [text_block("Later: the qlmarigold rotation runs weekly.")],
            message_id="p-msg_9",
            uuids=["p-a9"],
            parent="p-a4",
            timestamp=ts(46),
            session_id=SID_P,
            cwd=ALPHA,
        ),
    )
    assert cli("import", str(root)).exit_code == 0
    assert any("qlmarigold" in r["text"] for r in search_rows("qlmarigold rotation"))
    assert [r for r in search_rows(PLANTED_QUERY) if PLANTED in r["text"]] == []


# --- confirmation -----------------------------------------------------------------------------------


def test_without_a_terminal_forget_refuses_unless_confirm_repeats_the_target(root: Path) -> None:
    refused = cli("forget", "--match", PLANTED)
    assert refused.exit_code == 1
    assert "stdin is not one" in refused.output
    assert "--confirm" in refused.output
    wrong = cli("forget", "--match", PLANTED, "--confirm", PLANTED.upper())
    assert wrong.exit_code == 2
    assert "--confirm must repeat the --match value exactly" in wrong.output
    assert any(PLANTED in r["text"] for r in search_rows(PLANTED_QUERY))  # nothing was removed
    done = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert done.exit_code == 0
    assert not any(PLANTED in r["text"] for r in search_rows(PLANTED_QUERY))


def test_on_a_terminal_the_person_types_the_target_back(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forget_cli, "_interactive", lambda: True)
    mistyped = cli("forget", "--session", SID_A1, stdin="aaaaaaaa\n")
    assert mistyped.exit_code == 1
    assert "what was typed is not the session given; nothing was removed" in mistyped.output
    assert any(r["session_id"] == SID_A1 for r in search_rows("retry decorator timeout"))
    typed = cli("forget", "--session", SID_A1, stdin=f"{SID_A1}\n")
    assert typed.exit_code == 0, typed.output
    assert not any(r["session_id"] == SID_A1 for r in search_rows("retry decorator timeout"))


def test_a_short_id_that_starts_stored_ones_is_refused_and_leaves_no_tombstone(
    root: Path, home: Path
) -> None:
    short = SID_A1[:8]  # as the SessionStart brief and the prompt hook show a session
    refused = cli("forget", "--session", short, "--confirm", short)
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert f"no session {short} is stored, but " in said
    assert SID_A1 in said
    assert "give the whole id (`recallbench sessions` lists them). Nothing was removed." in said
    assert any(r["session_id"] == SID_A1 for r in search_rows("retry decorator timeout"))
    chunk = search_rows("retry decorator timeout")[0]["chunk_id"]
    half = cli("forget", "--chunk", chunk[:13], "--dry-run")
    assert half.exit_code == 2
    assert f"1 chunk id starts with it: {chunk};" in " ".join(half.output.split())
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tombstones").fetchone()[0] == 0
    # positive control: the whole id forgets the session
    assert cli("forget", "--session", SID_A1, "--confirm", SID_A1).exit_code == 0
    assert not any(r["session_id"] == SID_A1 for r in search_rows("retry decorator timeout"))


def test_dry_run_shows_counts_per_project_and_session_and_removes_nothing(root: Path) -> None:
    shown = cli("forget", "--project", ALPHA, "--dry-run")
    assert shown.exit_code == 0
    lines = [line.strip() for line in shown.stdout.splitlines()]
    assert f"{ALPHA}  whole session {SID_A1}: 1 chunk, 4 messages" in lines
    assert f"{ALPHA}  whole session {SID_P}: 1 chunk, 6 messages" in lines
    assert "Lines these sessions add later will not be imported either." in lines
    assert any(r["session_id"] == SID_A1 for r in search_rows("retry decorator timeout"))


def test_forget_project_and_chunk_through_the_command(root: Path) -> None:
    assert cli("forget", "--project", BETA, "--confirm", BETA).exit_code == 0
    rows = search_rows("retry")
    assert rows
    assert not any(r["session_id"] == SID_B1 for r in rows)
    chunk = next(r["chunk_id"] for r in search_rows(PLANTED_QUERY) if PLANTED in r["text"])
    assert cli("forget", "--chunk", chunk, "--confirm", chunk).exit_code == 0
    assert not any(PLANTED in r["text"] or KEPT in r["text"] for r in search_rows(PLANTED_QUERY))


def test_exactly_one_target_is_required(root: Path) -> None:
    none = cli("forget")
    assert none.exit_code == 2
    assert "give exactly one of" in none.output
    two = cli("forget", "--session", SID_A1, "--chunk", "x")
    assert two.exit_code == 2
    assert "(got --session, --chunk)" in two.output
    short = cli("forget", "--match", "abc", "--confirm", "abc")
    assert short.exit_code == 2
    assert "at least 4 characters" in short.output


# --- failure and resume; the logs; the audit -----------------------------------------------------------


def test_a_failed_stage_exits_1_naming_what_is_left_and_the_same_command_finishes(
    root: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plant_log_lines(home)

    def broken(home_dir: Path, test: forget_cli.LineTest) -> str:
        raise OSError(28, "No space left on device")

    scrub = forget_cli.scrub_logs
    monkeypatch.setattr(forget_cli, "scrub_logs", broken)
    failed = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert failed.exit_code == 1
    assert "forget stopped at stage 'logs'" in failed.output
    assert "Done: rows, fts, index, backups; left: logs, vacuum." in failed.output
    assert "Run the same `recallbench forget --match ...` again to finish" in failed.output
    assert byte_counts(home, PLANTED.encode())["hooks.log"] == 1  # the log still quotes it
    monkeypatch.setattr(forget_cli, "scrub_logs", scrub)
    again = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert again.exit_code == 0, again.output
    assert "nothing in the database" in again.stdout
    assert "2 lines of hooks.log that quote it" in again.stdout
    assert sum(byte_counts(home, PLANTED.encode()).values()) == 0


def test_the_logs_are_rewritten_0600_without_the_quoting_lines_and_a_symlink_is_refused(
    root: Path, home: Path, tmp_path: Path
) -> None:
    plant_log_lines(home)
    assert forget_cli.scrub_logs(home, forget_cli.quoting(PLANTED)) == "2 log lines"
    log = home / "hooks.log"
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert (home / "hooks.log.1").read_text(encoding="utf-8") == "old line\n"
    assert forget_cli.scrub_logs(home, forget_cli.quoting(PLANTED)) == "0 log lines"  # idempotent
    elsewhere = tmp_path / "elsewhere.log"
    elsewhere.write_text(f"{PLANTED}\n", encoding="utf-8")
    log.unlink()
    log.symlink_to(elsewhere)
    refused = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert refused.exit_code == 1
    assert "is a symbolic link" in refused.output
    assert elsewhere.read_text(encoding="utf-8") == f"{PLANTED}\n"  # never written through


def test_recallbench_audit_lists_the_stages_with_ids_and_never_the_text(root: Path) -> None:
    assert cli("forget", "--match", PLANTED, "--confirm", PLANTED).exit_code == 0
    listed = cli("audit", "--json")
    entries = json.loads(listed.stdout)
    assert [e["action"] for e in entries] == ["forget.stage"] * 7
    assert [e["reason"].split(":")[0] for e in entries] == [
        "begin",
        "done rows",
        "done fts",
        "done index",
        "done backups",
        "done logs",
        "done vacuum",
    ]
    assert entries[0]["targets"][0] == "match:(text not recorded)"
    assert entries[0]["targets"][1].startswith("chunk:")
    assert {e["actor"] for e in entries} == {"person"}
    assert PLANTED not in listed.stdout
    assert "zqvortex" not in listed.stdout


# --- rebuild and its backups ----------------------------------------------------------------------------


def test_a_rebuild_keeps_forgotten_text_out_and_a_kept_backup_is_forgotten_in_too(
    root: Path, home: Path
) -> None:
    first = cli("rebuild")  # keeps the database as it was (with the string) as memory.db.bak-<time>
    assert first.exit_code == 0, first.output
    (backup,) = [
        p for p in home.iterdir() if ".bak-" in p.name and not p.name.endswith(("-wal", "-shm"))
    ]
    counts = byte_counts(home, PLANTED.encode())
    held = sum(n for name, n in counts.items() if name.startswith(backup.name))
    assert held > 0  # control: the backup (with its write-ahead log) holds the string
    forgot = cli("forget", "--match", PLANTED, "--confirm", PLANTED)
    assert forgot.exit_code == 0, forgot.output
    assert f"and the same in 1 backups `recallbench rebuild` kept: {backup.name}" in forgot.stdout
    assert sum(byte_counts(home, PLANTED.encode()).values()) == 0
    assert sum(byte_counts(home, TERM).values()) == 0
    again = cli("rebuild")  # imports the recorded transcripts again, into a new file
    assert again.exit_code == 0, again.output
    assert [r for r in search_rows(PLANTED_QUERY) if PLANTED in r["text"]] == []
    assert any(KEPT in r["text"] for r in search_rows(KEPT_QUERY))  # control: the rest is back
    assert sum(byte_counts(home, PLANTED.encode()).values()) == 0

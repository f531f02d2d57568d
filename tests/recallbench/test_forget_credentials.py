"""`recallbench forget --credentials`: the credentials an import under an older sanitizer stored are
redacted in place, in every file of the home and in the backups; the messages and sessions stay."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine.forget_credentials import _fix, _redacted_state
from engine.forget_parts import Target
from recallbench.cli import main
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.recallbench.older_import import import_as_before

GROQ = "gsk_Pl4ntGr0qK3yQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qa"
DOPPLER = "dp.st.dev.Pl4ntD0pp1erQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1"
LEAKY = "5e551011-0000-4000-8000-0000000000aa"
CLEAN = "5e551011-0000-4000-8000-0000000000bb"
CREDENTIAL_FIX = _fix(Target(kind="credentials", value="credentials"))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def raw_bytes(home: Path, needle: str) -> int:
    """How many times `needle` stands in the bytes of every file under `home`."""
    return sum(p.read_bytes().count(needle.encode()) for p in home.rglob("*") if p.is_file())


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def older(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A memory imported under sanitizer version 3: LEAKY's prompt holds a Groq key and its answer a
    Doppler token, as stored; CLEAN holds none."""
    root = tmp_path / "t"
    write_jsonl(
        root / f"{LEAKY}.jsonl",
        simple_session(
            f"Why does the deploy fail with GROQ_KEY {GROQ}?",
            session_id=LEAKY,
            answer=f"The doppler token {DOPPLER} expired.",
            prefix="l-",
        ),
    )
    write_jsonl(
        root / f"{CLEAN}.jsonl",
        simple_session("Why does the deploy fail on Mondays?", session_id=CLEAN, prefix="c-"),
    )
    done = import_as_before(monkeypatch, str(root))  # with vectors (the hash embedder)
    assert "2 imported" in done.output, done.output
    return root


def test_the_credentials_are_redacted_in_every_file_and_the_sessions_stay(
    older: Path, home: Path
) -> None:
    db = home / "memory.db"
    # a backup `rebuild` kept holds them too
    backup = home / "memory.db.bak-20260101T000000Z"
    with closing(sqlite3.connect(db)) as source, closing(sqlite3.connect(backup)) as copy:
        source.backup(copy)
    backup.chmod(0o600)
    clean_before = rows(db, f"SELECT id, text, sha256 FROM chunks WHERE session_id = '{CLEAN}'")
    vectors_before = int(str(rows(db, "SELECT count(*) FROM vectors")[0][0]))
    messages_before = rows(db, "SELECT count(*) FROM messages")[0][0]
    assert raw_bytes(home, GROQ) >= 2  # positive control: in the database and its backup
    assert raw_bytes(home, DOPPLER) >= 2

    dry = invoke("forget", "--credentials", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines()[:2] == [
        f"forget --credentials in {db} redacts, in place (the messages stay):",
        f"  /home/dev/my_proj  session {LEAKY}: 2 messages rewritten, 1 chunk chunked again",
    ]
    assert GROQ not in dry.output  # never shown
    unasked = invoke("forget", "--credentials")
    assert unasked.exit_code == 1
    assert "add --confirm with the same value as --credentials" in unasked.output
    assert raw_bytes(home, GROQ) >= 2  # the dry run and the refusal changed nothing

    done = invoke("forget", "--credentials", "--confirm", "credentials")

    assert done.exit_code == 0, done.output
    assert "redacted: 0 whole sessions, 1 chunks, 2 messages" in done.output
    assert raw_bytes(home, GROQ) == 0
    assert raw_bytes(home, DOPPLER) == 0
    texts = " ".join(str(r[0]) for r in rows(db, "SELECT text FROM chunks"))
    assert "[redacted:groq_key]" in texts
    assert "[redacted:doppler_token]" in texts
    assert "Why does the deploy fail with GROQ_KEY" in texts  # the rest of the message stays
    assert rows(db, "SELECT count(*) FROM messages")[0][0] == messages_before == 8
    assert rows(db, "SELECT count(*) FROM sessions")[0][0] == 2
    # the clean session is untouched; the leaky chunk's old vector went with its text
    assert rows(db, f"SELECT id, text, sha256 FROM chunks WHERE session_id = '{CLEAN}'") == (
        clean_before
    )
    assert rows(db, "SELECT count(*) FROM vectors")[0][0] == vectors_before - 1
    with closing(sqlite3.connect(backup)) as conn:
        assert "[redacted:groq_key]" in " ".join(
            str(r[0]) for r in conn.execute("SELECT text FROM chunks")
        )
    assert invoke("doctor").stdout.splitlines()[-1].startswith("OK       credentials: ")
    audit = invoke("audit").output
    assert "forget.stage" in audit
    assert "credentials:credentials" in audit
    assert GROQ not in audit

    again = invoke("forget", "--credentials", "--dry-run")
    assert "  nothing: no stored text holds a credential" in again.output


def test_a_memory_imported_under_the_running_version_has_nothing_to_redact(
    home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    write_jsonl(root / f"{LEAKY}.jsonl", simple_session(f"Why {GROQ}?", session_id=LEAKY))
    assert invoke("import", "--no-embed", str(root)).exit_code == 0
    dry = invoke("forget", "--credentials", "--dry-run")
    assert dry.output.splitlines()[1] == (
        "  nothing: no stored text holds a credential the running sanitizer redacts"
    )
    assert raw_bytes(home, GROQ) == 0  # the import redacted it


def test_only_one_target_and_the_stream_state_is_redacted_string_by_string() -> None:
    both = invoke("forget", "--credentials", "--match", "abcd")
    assert both.exit_code == 2
    assert (
        "give exactly one of --session, --project, --chunk, --match, --before, --credentials"
        in (both.output)
    )
    state = json.dumps({"tool_commands": {"t1": f"echo {GROQ}", "t2": "ls -la"}, "n": 3})
    redacted = json.loads(str(_redacted_state(state, CREDENTIAL_FIX)))
    assert redacted == {
        "tool_commands": {"t1": "echo [redacted:groq_key]", "t2": "ls -la"},
        "n": 3,
    }
    assert (
        _redacted_state(json.dumps({"tool_commands": {"t2": "ls -la"}}), CREDENTIAL_FIX) is None
    )  # control

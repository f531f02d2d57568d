"""A memory imported before sanitizer version 4, 5, 6, 7, 8 or 9 may hold a credential in a format a later version
redacts: `status` says so, `doctor` counts the chunks, a rebuild or `forget --credentials` redacts them
(docs/transcripts.md, "Versions")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import sanitized_sql
from recallbench.status_notes import stale_credentials_note
from tests.engine.fixtures_transcripts import SESSION, simple_session, write_jsonl
from tests.recallbench.older_import import import_as_before, invoke

GROQ = "gsk_Pl4ntGr0qK3yQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qa"
DOPPLER = "dp.st.dev.Pl4ntD0pp1erQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1"
GITHUB = "ghp_Pl4ntGhpT0k3nA1b2C3d4E5f6G7h8I9j0K1l2"  # redacted by every version
RUBYGEMS = "rubygems_c0ffee9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c"  # redacted from version 5
NETLIFY = "nfp_Pl4ntN3tl1fyQw8Er6Ty4Ui2Op0As9Df7Gh5Jk"  # redacted from version 6
CARGO = "cargo login cioPl4nt7CargoTok3n0a1b2c3d4e5f6a7b8"  # redacted from version 7
MYSQLADMIN = "mysqladmin -u root password Pl4nt8MyAdm1nPw"  # redacted from version 8
LINE = (
    "imported under sanitizer version 3, before versions 4, 5, 6, 7, 8, 9, 10 and 11 began to redact 178 "
    "more credential formats"
)
LINE_4 = (
    "imported under sanitizer version 4, before versions 5, 6, 7, 8, 9, 10 and 11 began to redact 153 more "
    "credential formats"
)
LINE_5 = (
    "imported under sanitizer version 5, before versions 6, 7, 8, 9, 10 and 11 began to redact 119 more "
    "credential formats"
)
LINE_6 = (
    "imported under sanitizer version 6, before versions 7, 8, 9, 10 and 11 began to redact 94 more "
    "credential formats"
)
LINE_7 = (
    "imported under sanitizer version 7, before versions 8, 9, 10 and 11 began to redact 62 more credential "
    "formats"
)
LINE_8 = "imported under sanitizer version 8, before versions 9, 10 and 11 began to redact 6 more credential formats"


def _status() -> tuple[dict[str, object], list[str]]:
    shown = invoke("status")
    assert shown.exit_code == 0, shown.output
    return json.loads(invoke("status", "--json").stdout), shown.stdout.splitlines()


def _texts(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return "\n".join(row[0] for row in conn.execute("SELECT text FROM chunks"))


def test_an_older_import_is_named_until_a_rebuild_redacts_the_credentials(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    write_jsonl(
        root / f"{SESSION}.jsonl",
        simple_session(
            f"Why does the deploy fail with GROQ_KEY {GROQ} and the token {GITHUB}?",
            answer=f"The doppler token {DOPPLER} expired; secret_key_base is unrelated.",
        ),
    )
    db = home / "memory.db"
    # The memory as an import under version 3 left it: no version 4 rule, version 3 recorded.
    assert import_as_before(monkeypatch, "--no-embed", str(root)).exit_code == 0
    text = _texts(db)
    assert GROQ in text
    assert DOPPLER in text
    assert GITHUB not in text  # control: a format version 3 knew was redacted then

    info, lines = _status()

    assert info["sanitize_version"] == "3"
    assert info["chunks"] == 1
    assert any(
        line.startswith(f"{LINE} (Groq, xAI, Docker, Sentry, Doppler, RubyGems,") for line in lines
    )
    assert "`recallbench doctor` checks whether any is in the memory" in "\n".join(lines)
    with sqlite3.connect(db) as conn:
        # the session's one chunk holds both; the GitHub token was redacted by version 3
        assert sanitized_sql.stale_credentials(conn) == sanitized_sql.StaleCredentials(
            chunks=1, kinds={"doppler_token": 1, "groq_key": 1}, sessions=(SESSION,)
        )

    doctor = invoke("doctor")
    assert doctor.exit_code == 1
    assert doctor.stdout.splitlines()[-1] == (
        "PROBLEM  credentials: credentials in formats version 11 redacts (doppler_token ×1, "
        "groq_key ×1), in 1 chunk of 1 session (5e551011) imported under sanitizer version 3"
    )
    assert "`recallbench forget --credentials` redacts them in place" in doctor.stderr
    assert "`recallbench rebuild` imports every transcript again" in doctor.stderr

    assert invoke("rebuild", "--no-embed").exit_code == 0
    info, lines = _status()
    doctor = invoke("doctor")
    assert doctor.exit_code == 0, doctor.output
    assert doctor.stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts"
    )

    assert info["sanitize_version"] == "11"
    assert not any("began to redact" in line for line in lines)
    with sqlite3.connect(db) as conn:
        assert sanitized_sql.stale_credentials(conn) == sanitized_sql.StaleCredentials()
    text = _texts(db)
    assert GROQ not in text
    assert DOPPLER not in text
    assert "[redacted:groq_key]" in text
    assert "[redacted:doppler_token]" in text
    assert "secret_key_base" in text  # a trigger text that is no credential is kept


@pytest.mark.parametrize(
    ("version", "own", "later", "kind", "line"),
    [
        ("4", GROQ, RUBYGEMS, "rubygems_key", f"{LINE_4} (RubyGems, Dynatrace, Square, Okta,"),
        ("5", RUBYGEMS, NETLIFY, "netlify_token", f"{LINE_5} (SQL's `PASSWORD '…'`,"),
        ("6", NETLIFY, CARGO, "cargo_token", f"{LINE_6} (`cqlsh -p`, `twine upload -p`,"),
        (
            "7",
            CARGO,
            MYSQLADMIN,
            "mysqladmin_password",
            f"{LINE_7} (`mysqladmin password`, `isql -P`,",
        ),
    ],
)
def test_a_memory_imported_under_an_older_version_counts_only_what_later_ones_added(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    own: str,
    later: str,
    kind: str,
    line: str,
) -> None:
    root = tmp_path / "t"
    write_jsonl(
        root / f"{SESSION}.jsonl",
        simple_session(f"Why does {own} fail?", answer=f"Deploy with {later} instead."),
    )
    db = home / "memory.db"
    assert import_as_before(monkeypatch, "--no-embed", str(root), version=version).exit_code == 0
    assert later in _texts(db)
    assert own not in _texts(db)  # control: the older version redacted its own format

    info, lines = _status()

    assert info["sanitize_version"] == info["credentials_version"] == version
    assert any(shown.startswith(line) for shown in lines)
    with sqlite3.connect(db) as conn:
        assert sanitized_sql.stale_credentials(conn) == sanitized_sql.StaleCredentials(
            chunks=1, kinds={kind: 1}, sessions=(SESSION,)
        )
    assert invoke("doctor").stdout.splitlines()[-1] == (
        f"PROBLEM  credentials: credentials in formats version 11 redacts ({kind} ×1), in 1 "
        f"chunk of 1 session (5e551011) imported under sanitizer version {version}"
    )

    done = invoke("forget", "--credentials", "--confirm", "credentials")

    assert done.exit_code == 0, done.output
    assert "redacted: 0 whole sessions, 1 chunks, 1 messages" in done.output
    assert later not in _texts(db)
    # the credential alone is replaced (a command's password keeps its command)
    shown = later.replace(later.rsplit(maxsplit=1)[-1], f"[redacted:{kind}]")
    assert f"Deploy with {shown} instead." in _texts(db)
    assert invoke("doctor").stdout.splitlines()[-1].startswith("OK       credentials: ")
    # the memory says what it was redacted under, and status stops asking for the fix it had
    info, lines = _status()
    assert info["sanitize_version"] == version
    assert info["credentials_version"] == "11"
    assert not any("began to redact" in shown for shown in lines)
    again = invoke("forget", "--credentials", "--dry-run")
    assert "  nothing: no stored text holds a credential" in again.output


def test_the_note_names_a_redaction_in_place_under_an_older_version() -> None:
    assert stale_credentials_note("3", "4") == (
        "redacted in place under sanitizer version 4 (`forget --credentials`), before versions 5, "
        "6, 7, 8, 9, 10 and 11 began to redact 153 more credential formats (RubyGems, Dynatrace, Square, Okta, "
        "`aws configure set`, `os.environ[…] = …`, `<password>`, SQL's `PASSWORD '…'`, `mongosh -p`, "
        "`sqlcmd -P`, `zip -P`, `requirepass`, Netlify, Render, `cqlsh -p`, `twine upload -p`, "
        "`cargo login`, `poetry config http-basic`, `http -a`, `ipmitool -P`, `mysqladmin password`, "
        "`isql -P`, `crane auth login -p`, `jarsigner -storepass`, `net user`, `printf '%s' … |`, "
        "what `op read`, `vault kv get`, `aws secretsmanager get-secret-value`, `sops -d`, "
        "`cat ~/.netrc` print, what `op signin --raw`, `bw unlock`, `heroku auth:token`, "
        "`fly auth token` print, what `echo $GITHUB_TOKEN` prints, …): "
        "`recallbench doctor` checks whether any is in the memory, `recallbench forget "
        "--credentials` redacts them in place"
    )
    assert str(stale_credentials_note("4", "4")).startswith(f"{LINE_4} (RubyGems,")  # no redaction
    assert str(stale_credentials_note("5", "5")).startswith(f"{LINE_5} (SQL's `PASSWORD")
    assert str(stale_credentials_note("6", "6")).startswith(f"{LINE_6} (`cqlsh -p`")
    assert str(stale_credentials_note("7", "7")).startswith(f"{LINE_7} (`mysqladmin password`")
    assert str(stale_credentials_note("8", "8")).startswith(f"{LINE_8} (what `op read`")
    assert str(stale_credentials_note("9", "9")).startswith(
        "imported under sanitizer version 9, before versions 10 and 11 began to redact 2 more "
        "credential formats (what `op signin --raw`"
    )
    assert str(stale_credentials_note("10", "10")).startswith(
        "imported under sanitizer version 10, before version 11 began to redact 1 more credential "
        "format (what `echo $GITHUB_TOKEN` prints, …)"
    )
    assert stale_credentials_note(None, "11") is None
    assert stale_credentials_note("4", "11") is None
    # control: a redaction under version 9 is not the latest any more
    assert str(stale_credentials_note("4", "9")).startswith(
        "redacted in place under sanitizer version 9 (`forget --credentials`), before versions 10 "
        "and 11 began to redact 2 more credential formats ("
    )
    assert str(stale_credentials_note(None, None)).startswith(
        "imported under a sanitizer before version 3, before versions 4, 5, 6, 7, 8, 9, 10 and 11 "
        "began to redact 178 "
    )


def test_a_clean_check_names_what_ends_the_note(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    write_jsonl(root / f"{SESSION}.jsonl", simple_session("Why does the deploy fail?"))
    assert import_as_before(monkeypatch, "--no-embed", str(root), version="5").exit_code == 0
    _, lines = _status()
    assert any(line.startswith(LINE_5) for line in lines)  # the note doctor's check answers

    assert invoke("doctor").stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts; "
        "`recallbench forget --credentials` records that, and `status` stops naming this check"
    )
    done = invoke("forget", "--credentials", "--confirm", "credentials")

    assert done.exit_code == 0, done.output
    assert "  nothing: no stored text holds a credential" in done.output
    _, lines = _status()
    assert not any("began to redact" in line for line in lines)
    # control: once recorded, the check says no more than its verdict
    assert invoke("doctor").stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts"
    )


def test_a_memory_imported_under_version_9_counts_none(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "t"
    write_jsonl(
        root / f"{SESSION}.jsonl",
        simple_session(
            f"Why do {GROQ}, {RUBYGEMS} and {NETLIFY} fail?",
            answer=f"Run {CARGO} now, then {MYSQLADMIN} and retry.",
        ),
    )
    assert invoke("import", "--no-embed", str(root)).exit_code == 0
    info, lines = _status()
    assert info["sanitize_version"] == "11"
    assert not any("began to redact" in line for line in lines)
    with sqlite3.connect(home / "memory.db") as conn:
        assert sanitized_sql.stale_credentials(conn) == sanitized_sql.StaleCredentials()
    assert GROQ not in _texts(home / "memory.db")
    assert RUBYGEMS not in _texts(home / "memory.db")
    assert NETLIFY not in _texts(home / "memory.db")
    assert "[redacted:rubygems_key]" in _texts(home / "memory.db")  # control: it was there
    assert "[redacted:netlify_token]" in _texts(home / "memory.db")
    assert (
        "Run cargo login [redacted:cargo_token] now, then mysqladmin -u root password "
        "[redacted:mysqladmin_password] and retry." in _texts(home / "memory.db")
    )
    assert invoke("doctor").stdout.splitlines()[-1].startswith("OK       credentials: ")


def test_doctor_names_three_sessions_and_counts_the_rest(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    sids = [f"aaaa000{i}-0000-4000-8000-00000000000{i}" for i in range(1, 6)]
    for i, sid in enumerate(sids):
        key = DOPPLER if i % 2 else GROQ
        write_jsonl(
            root / f"{sid}.jsonl",
            simple_session(f"Deploy {i} with {key}?", session_id=sid, prefix=f"s{i}-"),
        )
    # one session holds no credential: control, not counted
    clean = "bbbb0000-0000-4000-8000-000000000000"
    write_jsonl(root / f"{clean}.jsonl", simple_session("Deploy with $KEY?", session_id=clean))
    assert import_as_before(monkeypatch, "--no-embed", str(root), version=None).exit_code == 0

    doctor = invoke("doctor")

    assert doctor.exit_code == 1
    assert doctor.stdout.splitlines()[-1] == (
        "PROBLEM  credentials: credentials in formats version 11 redacts (doppler_token ×2, "
        "groq_key ×3), in 5 chunks of 5 sessions (aaaa0001, aaaa0002, aaaa0003 and 2 more) "
        "imported under a sanitizer before version 3"
    )

"""A memory imported under sanitizer version 5 holds `vault login TOKEN` as a command: in the call's
marker and in its result's header, where version 6's form (the token where a command starts) has to
find it on stored text. `doctor` counts both, `forget --credentials` redacts them in place as a fresh
import would, the markers keeping their closing `]` (docs/transcripts.md)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.engine.fixtures_transcripts import (
    SESSION,
    assistant_lines,
    text_block,
    user_line,
    write_jsonl,
)
from tests.recallbench.older_import import (
    import_as_before,
    invoke,
    stored_messages,
    write_two_calls,
)

TOKEN = "s.Hq8vLm3xKt7pNc2wRz5b"
LOGIN = f"vault login {TOKEN}"
CURL = "curl -u deploy:Wb4nQx8kLm2v https://ci.internal/api"  # redacted since version 3


def _write(root: Path) -> None:
    write_two_calls(
        root,
        "Log in to Vault and call the CI API",
        (LOGIN, "Success! You are now authenticated."),
        (CURL, '{"ok": true}'),
    )


def test_a_token_in_a_commands_marker_is_counted_and_redacted_in_place(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "t")
    done = import_as_before(monkeypatch, "--no-embed", str(tmp_path / "t"), version="5")
    assert done.exit_code == 0, done.output
    db = home / "memory.db"
    before = stored_messages(db)
    assert f"[Bash: {LOGIN}]" in before[1]
    assert f"[Bash result: {LOGIN}]\nSuccess! You are now authenticated." in before
    # control: the curl password, a format version 5 knew, was redacted then
    assert "[Bash: curl -u deploy:[redacted:user_password] https://ci.internal/api]" in before[1]

    doctor = invoke("doctor")
    assert doctor.exit_code == 1
    assert doctor.stdout.splitlines()[-1] == (
        "PROBLEM  credentials: credentials in formats version 11 redacts (vault_login_token ×2), "
        "in 1 chunk of 1 session (5e551011) imported under sanitizer version 5"
    )

    done = invoke("forget", "--credentials", "--confirm", "credentials")

    assert done.exit_code == 0, done.output
    after = stored_messages(db)
    assert TOKEN not in "\n".join(after)
    assert "[Bash: vault login [redacted:vault_login_token]]" in after[1]
    assert (
        "[Bash result: vault login [redacted:vault_login_token]]\n"
        "Success! You are now authenticated."
    ) in after
    assert after[1].endswith(
        "[Bash: curl -u deploy:[redacted:user_password] https://ci.internal/api]"
    )
    assert invoke("doctor").stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts"
    )

    # a fresh import of the same transcript stores the same messages
    fresh = tmp_path / "fresh.db"
    assert invoke("--db", str(fresh), "import", "--no-embed", str(tmp_path / "t")).exit_code == 0
    assert stored_messages(fresh) == after


def test_a_token_that_a_chunks_cut_splits_is_counted_from_the_whole_message(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an answer of 980 characters: chunked at a space within 900, here the one after `vault login`
    said = ("The deploy failed again because the token expired. " * 20)[:887] + " "
    answer = f"{said}{LOGIN} and then rerun the deploy job to check that it works now."
    write_jsonl(
        tmp_path / "t" / f"{SESSION}.jsonl",
        [
            user_line("Why does the deploy fail?", uuid="u1"),
            *assistant_lines([text_block(answer)], message_id="m1", uuids=["a1"], parent="u1"),
        ],
    )
    done = import_as_before(monkeypatch, "--no-embed", str(tmp_path / "t"), version="5")
    assert done.exit_code == 0, done.output
    with sqlite3.connect(home / "memory.db") as conn:
        texts = [str(r[0]) for r in conn.execute("SELECT text FROM chunks ORDER BY rowid")]
    # control: the cut falls between the command and its token, so neither chunk holds both
    assert texts[1].endswith(" vault login ")
    assert texts[2].startswith(f"{TOKEN} and then")

    doctor = invoke("doctor")

    assert doctor.exit_code == 1
    assert doctor.stdout.splitlines()[-1] == (
        "PROBLEM  credentials: credentials in formats version 11 redacts (vault_login_token ×1), "
        "in 2 chunks of 1 session (5e551011) imported under sanitizer version 5"
    )
    assert invoke("forget", "--credentials", "--confirm", "credentials").exit_code == 0
    assert TOKEN not in "\n".join(stored_messages(home / "memory.db"))
    assert invoke("doctor").exit_code == 0

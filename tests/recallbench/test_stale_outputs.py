"""A memory imported under sanitizer version 8 holds what `op read` printed, and the password of an
`htpasswd -b -c` that version 5's form missed: `status` names version 9, `doctor` counts both, and
`forget --credentials` redacts them in place as a fresh import would (docs/transcripts.md). The same
for what a tool printed of its own token (version 10) and what `echo "$DEPLOY_TOKEN"` printed (11)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine import secrets
from engine.secret_form_parts import VALUE
from tests.recallbench.older_import import (
    import_as_before,
    invoke,
    stored_messages,
    write_two_calls,
)

READ = "op read op://ops/orders/password"
SECRET = "Qm7xK2pLw9Rt4vNz8bHc"
HTPASSWD = "htpasswd -b -c /etc/nginx/.htpasswd admin Hx8nLc3vBq6s"
# Version 5's form as it was before version 9: the options in one group only.
_V5_HTPASSWD = secrets._TokenRule(
    patterns=(
        re.compile(
            r"(?<![A-Za-z0-9_\-])htpasswd[ \t]+-(?=[a-mo-zA-Z]*b)[a-mo-zA-Z]+[ \t]+\S+[ \t]+\S+[ \t]+"
            + VALUE
        ),
    ),
    chars="",
)
LINE_8 = (
    "imported under sanitizer version 8, before versions 9, 10 and 11 began to redact 6 more credential formats"
    " (what `op read`, `vault kv get`,"
)


def _write(root: Path) -> None:
    write_two_calls(
        root,
        "Why does the orders deploy fail?",
        (READ, SECRET),
        (HTPASSWD, "Adding password for user admin"),
    )


def test_a_version_8_memory_is_named_counted_and_redacted_in_place(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "t")
    old = {"htpasswd_password": _V5_HTPASSWD.spans}
    done = import_as_before(monkeypatch, "--no-embed", str(tmp_path / "t"), version="8", rules=old)
    assert done.exit_code == 0, done.output
    db = home / "memory.db"
    before = stored_messages(db)
    # what version 8 stored: the output whole, and the user redacted in the password's place (in the
    # call's marker and in its result's header: doctor counts both)
    assert f"[Bash result: {READ}]\n{SECRET}" in before
    assert (
        "[Bash: htpasswd -b -c /etc/nginx/.htpasswd [redacted:htpasswd_password] Hx8nLc3vBq6s]"
        in ("\n".join(before))
    )

    status = invoke("status")
    assert any(line.startswith(LINE_8) for line in status.stdout.splitlines())
    doctor = invoke("doctor")
    assert doctor.exit_code == 1
    assert doctor.stdout.splitlines()[-1] == (
        "PROBLEM  credentials: credentials in formats version 11 redacts (htpasswd_password ×2, "
        "secret_store_output ×1), in 1 chunk of 1 session (5e551011) imported under sanitizer "
        "version 8"
    )

    done = invoke("forget", "--credentials", "--confirm", "credentials")

    assert done.exit_code == 0, done.output
    assert "redacted: 0 whole sessions, 1 chunks, 3 messages, 1 stream states" in done.output
    after = stored_messages(db)
    assert SECRET not in "\n".join(after)
    assert "Hx8nLc3vBq6s" not in "\n".join(after)
    assert f"[Bash result: {READ}]\n[redacted:secret_store_output]" in after
    # the marker and the header keep the `]` that closes them, as a fresh import's do (read to the
    # next space, the password took it before)
    calls = "\n".join(after)
    assert "/.htpasswd [redacted:htpasswd_password] [redacted:htpasswd_password]]\n" in calls
    assert (
        "[Bash result: htpasswd -b -c /etc/nginx/.htpasswd [redacted:htpasswd_password] "
        "[redacted:htpasswd_password]]\nAdding password for user admin"
    ) in after
    # control: the other result, the prompt and the calls stay as they were
    assert [m.split("\n")[-1] for m in after if m.startswith("[Bash result: htpasswd")] == [
        "Adding password for user admin"
    ]
    assert after[0] == before[0] == "Why does the orders deploy fail?"
    assert invoke("doctor").stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts"
    )
    assert json.loads(invoke("status", "--json").stdout)["credentials_version"] == "11"


def test_a_fresh_import_stores_what_forget_leaves(home: Path, tmp_path: Path) -> None:
    _write(tmp_path / "t")
    assert invoke("import", "--no-embed", str(tmp_path / "t")).exit_code == 0
    texts = stored_messages(home / "memory.db")
    assert f"[Bash result: {READ}]\n[redacted:secret_store_output]" in texts
    # the running rule keeps the user and redacts the password
    assert (
        "[Bash: htpasswd -b -c /etc/nginx/.htpasswd admin [redacted:htpasswd_password]]"
        in "\n".join(texts)
    )
    assert SECRET not in "\n".join(texts)
    assert invoke("doctor").stdout.splitlines()[-1] == (
        "OK       credentials: none in a format the running sanitizer (version 11) redacts"
    )


@pytest.mark.parametrize(
    ("version", "call", "kept", "kind", "status"),
    [
        (
            "9",
            ("heroku auth:token", "f4b3c2d1-8e7a-4b6c-9d0e-1a2b3c4d5e6f"),
            ("bw unlock --check", "Vault is unlocked!"),
            "auth_token_output",
            "imported under sanitizer version 9, before versions 10 and 11 began to redact 2 more "
            "credential formats (what `op signin --raw`, `bw unlock`, `heroku auth:token`,",
        ),
        (
            "10",
            ('echo "$DEPLOY_TOKEN"', "Wq8vLm3xKt7pNc2wRz5bHs9dJf4gYk6e"),
            ("echo $HOME", "/home/dev"),
            "secret_variable_output",
            "imported under sanitizer version 10, before version 11 began to redact 1 more "
            "credential format (what `echo $GITHUB_TOKEN` prints, …): `recallbench doctor`",
        ),
    ],
    ids=["own-token-v9", "echoed-variable-v10"],
)
def test_an_older_memory_holds_a_printed_secret_until_forget_redacts_it(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    call: tuple[str, str],
    kept: tuple[str, str],
    kind: str,
    status: str,
) -> None:
    (command, token), (other, printed) = call, kept
    write_two_calls(tmp_path / "t", "Is the deploy token set?", call, kept)
    done = import_as_before(monkeypatch, "--no-embed", str(tmp_path / "t"), version=version)
    assert done.exit_code == 0, done.output
    db = home / "memory.db"
    assert f"[Bash result: {command}]\n{token}" in stored_messages(db)

    assert any(line.startswith(status) for line in invoke("status").stdout.splitlines())
    assert invoke("doctor").stdout.splitlines()[-1] == (
        f"PROBLEM  credentials: credentials in formats version 11 redacts ({kind} ×1), "
        f"in 1 chunk of 1 session (5e551011) imported under sanitizer version {version}"
    )
    assert invoke("forget", "--credentials", "--confirm", "credentials").exit_code == 0

    after = stored_messages(db)
    assert f"[Bash result: {command}]\n[redacted:{kind}]" in after
    assert token not in "\n".join(after)
    assert f"[Bash result: {other}]\n{printed}" in after  # control: kept
    fresh = tmp_path / "fresh.db"
    assert invoke("--db", str(fresh), "import", "--no-embed", str(tmp_path / "t")).exit_code == 0
    assert stored_messages(fresh) == after

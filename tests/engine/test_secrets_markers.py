"""Stored text holds each tool call's command in a marker and a result header (`[Bash: cmd]`,
`[Bash result: cmd]`), where `doctor` and `forget --credentials` look for what a fresh import redacts.
The detectors see a marker's argument on a line of its own, as the import saw the command: a value read
to the next space leaves the marker's `]`, a command's form matches at the argument's start, and a cut's
`…` ends the value. Redacting twice is redacting once."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import secrets
from engine.render import opened_markers
from engine.sanitize import redact
from tests.engine.test_secrets_corpus import PLANTED
from tests.engine.test_secrets_v9 import sanitized

PASSWORD = "Qm7xK2pLw9"
VAULT = "vault login s.Pl4ntV4ultL3gacyT0ken01"
PIPED = "echo -n 'Pl4nt7GcloudSecret' | gcloud secrets versions add db-password --data-file=-"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"[Bash: curl -u admin:{PASSWORD}]",
            "[Bash: curl -u admin:[redacted:user_password]]",
        ),
        (
            f"[Bash result: mysql -u root -p{PASSWORD}]\nok",
            "[Bash result: mysql -u root -p[redacted:command_password]]\nok",
        ),
        (
            f"[Bash error: mysql -u root -p{PASSWORD}]\nAccess denied",
            "[Bash error: mysql -u root -p[redacted:command_password]]\nAccess denied",
        ),
        (
            f"done\n[Bash: htpasswd -b -c /etc/nginx/.htpasswd admin {PASSWORD}]\n[Bash: ls]",
            "done\n[Bash: htpasswd -b -c /etc/nginx/.htpasswd admin [redacted:htpasswd_password]]"
            "\n[Bash: ls]",
        ),
        # a password ending in `]`: the redaction takes it, the marker keeps its own
        ("[Bash: mysql -pab]]", "[Bash: mysql -p[redacted:command_password]]"),
        # forms that match where a command starts: the argument's start is one
        (f"[Bash: {VAULT}]", "[Bash: vault login [redacted:vault_login_token]]"),
        (
            f"[Bash result: {PIPED}]\nCreated version [2]",
            "[Bash result: echo -n '[redacted:piped_secret]' | gcloud secrets versions add"
            " db-password --data-file=-]\nCreated version [2]",
        ),
        # an argument cut after the value (`engine.render.compact`)
        (
            "[Bash: dotnet nuget add source https://nuget.pkg.github.com/acme/index.json -n github"
            " -u me -p Pl4nt7NugetPw…]",
            "[Bash: dotnet nuget add source https://nuget.pkg.github.com/acme/index.json -n github"
            " -u me -p [redacted:nuget_password]…]",
        ),
    ],
)
def test_a_markers_argument_reads_as_the_command_did(text: str, expected: str) -> None:
    redacted, counts = redact(text)
    assert redacted == expected
    assert sum(counts.values()) == 1


def test_outside_a_marker_the_text_reads_as_before() -> None:
    # a bracket after a value in prose, or in a line that only looks like a marker, is read with it
    for text in (f"run curl -u admin:{PASSWORD}]", f"[Bash curl -u admin:{PASSWORD}]"):
        assert redact(text)[0] == text.replace(f"{PASSWORD}]", "[redacted:user_password]")
    # a marker inside a line is no marker's line: its `]` blocks the token's end
    assert redact(f"see [Bash: {VAULT}]")[0] == f"see [Bash: {VAULT}]"
    # controls: the same token in prose and in a marker's line is redacted
    assert redact(f"we ran {VAULT} today")[0] == (
        "we ran vault login [redacted:vault_login_token] today"
    )
    assert (
        redact(f"see\n[Bash: {VAULT}]")[0]
        == "see\n[Bash: vault login [redacted:vault_login_token]]"
    )


def test_opened_markers_puts_each_argument_on_a_line_of_its_own() -> None:
    text = "[Bash: ls -a]\n[Read result: src/a.py]\nx = [1]\n[tool result]\n[Bash: cut…]\n[Bash: x"
    # by hand: the space after each head's colon and each closing `]` become line ends, a cut's `…` a
    # space; `x = [1]`, `[tool result]` (no argument) and the unclosed last line stay as they are
    assert opened_markers(text, text) == (
        "[Bash:\nls -a\n\n[Read result:\nsrc/a.py\n\nx = [1]\n[tool result]\n[Bash:\ncut \n\n[Bash: x"
    )
    assert opened_markers("no marker", "NO MARKER") == "NO MARKER"


def test_redacting_twice_is_redacting_once() -> None:
    # `[redacted:lftp_password]` reads as `user:password` to the `-u` form of curl and the like; a
    # result's header is the redacted marker redacted again, so the import stored a broken one
    line = "lftp -u deploy,Pl4nt7LftpPw sftp://files.internal"
    once = redact(f"[Bash result: {line}]")[0]
    assert once == "[Bash result: lftp -u deploy,[redacted:lftp_password] sftp://files.internal]"
    assert redact(once) == (once, Counter())
    for planted in PLANTED:
        assert redact(redact(planted.text)[0])[0] == redact(planted.text)[0], planted.label


def _imported(command: str) -> list[str]:
    """The stored texts of one Bash call of `command` and its result, through the import's steps."""
    return sanitized(command, "ok", prompt=None)[0]


ONE_LINE = [p for p in PLANTED if "\n" not in p.text and "\\n" not in p.text and len(p.text) <= 120]


def test_every_one_line_credential_in_a_command_is_redacted_in_place_as_on_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each planted credential of one line, the whole command of a Bash call: its marker and its
    # result's header as a fresh import stores them, and as a memory whose import knew no rule stores
    # them, redacted in place (what `forget --credentials` does)
    assert len(ONE_LINE) == 201
    fresh = {p.label: _imported(p.text) for p in ONE_LINE}
    with monkeypatch.context() as none:
        none.setattr(secrets, "_DETECTORS", ())
        raw = {p.label: _imported(p.text) for p in ONE_LINE}
    assert raw["vault-login"][0] == f"[Bash: {VAULT}]"  # control: stored whole without rules
    differ = [p.label for p in ONE_LINE if [redact(t)[0] for t in raw[p.label]] != fresh[p.label]]
    assert differ == []
    assert fresh["vault-login"] == [
        "[Bash: vault login [redacted:vault_login_token]]",
        "[Bash result: vault login [redacted:vault_login_token]]\nok",
    ]

"""Sanitizer version 10: what a command-line tool printed when asked for its own session or API token
(`op signin --raw`, `bw unlock`, `heroku auth:token`, `fly auth token`); its trigger texts keep a
corpus without any of them under version 9. And for every tool output form: a result with no output is
no body, so the next result's header is never taken for one."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, redact, redact_output
from engine.secret_formats import (
    LATEST_VERSION,
    RULE_KINDS,
    VERSION_10_TRIGGERS,
    kinds_after,
    kinds_found_after,
    triggers,
)
from engine.secret_formats_v9 import OUTPUT_KINDS
from engine.secret_formats_v10 import VERSION_10_FORMS
from engine.secret_formats_v11 import TOOL_OUTPUT_KINDS
from tests.engine.planted import READ_LATER, Planted
from tests.engine.planted_v10 import PLANTED_V10
from tests.engine.test_secrets_corpus import PLANTED
from tests.engine.test_secrets_v4 import assert_prefixed, assert_reads_under, version
from tests.engine.test_secrets_v9 import TAVILY, bash_result

TOKEN = "Qm7xK2pLw9Rt4vNz8bHcXy3Wd5Fg7Hj9Kl1Mn3Bv5Cx"


def test_every_version_10_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert (
        sorted({p.kind for p in PLANTED_V10}) == sorted(VERSION_10_FORMS) == ["auth_token_output"]
    )
    assert (*OUTPUT_KINDS, "auth_token_output", "secret_variable_output") == TOOL_OUTPUT_KINDS
    assert VERSION_10_TRIGGERS == (
        "op signin",
        "bw unlock",
        "bw login",
        "heroku auth:token",
        "heroku authorizations:create",
        "fly auth token",
        "flyctl auth token",
    )
    assert kinds_after(9) == kinds_found_after(9) == ("auth_token_output", *kinds_after(10))
    assert 10 not in RULE_KINDS
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "10"] == list(VERSION_10_TRIGGERS)
    assert_prefixed(VERSION_10_FORMS, VERSION_10_TRIGGERS)


def test_the_triggers_an_older_version_shares_are_those_its_planted_texts_name() -> None:
    older = {t for v in range(4, 10) for t in triggers(v)}
    # Bitwarden's `bw unlock PASS` and `bw login EMAIL PASS` are version 7's: the same texts
    assert sorted(t for t in VERSION_10_TRIGGERS for o in older if t in o or o in t) == [
        "bw login",
        "bw unlock",
    ]
    # so exactly the older planted text holding one reads under version 10 (`READ_LATER`)
    held = {p.label for p in PLANTED if p.kind not in VERSION_10_FORMS and version(p.text) == "10"}
    assert held == {label for label, later in READ_LATER.items() if later == "10"} == {"bitwarden"}


@pytest.mark.parametrize("planted", PLANTED_V10, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_10_credential_reads_under_version_10(planted: Planted) -> None:
    assert redact(TAVILY)[0] == "[redacted:tavily_key]"
    assert_reads_under(planted, VERSION_10_FORMS, TAVILY, ("8", "10"))


@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("op signin --raw", TOKEN),
        ("eval $(op signin --account acme) && op signin --raw", TOKEN),
        ("op signin", f'export OP_SESSION_acme="{TOKEN}"\n# This command is meant to be used'),
        ("bw unlock --raw", f"{TOKEN}=="),
        ("bw login me@example.com --raw", f"{TOKEN}=="),
        ("bw unlock", f'Your vault is now unlocked!\n$ export BW_SESSION="{TOKEN}=="'),
        ("heroku auth:token", "f4b3c2d1-8e7a-4b6c-9d0e-1a2b3c4d5e6f"),
        ("heroku authorizations:create -d ci", "Token:       f4b3c2d1-8e7a-4b6c-9d0e-1a2b3c4d5e6f"),
        ("fly auth token", f"fo1_{TOKEN}"),
        ("cd app && flyctl auth token", f"fo1_{TOKEN}"),
    ],
)
def test_a_tools_own_token_printed_is_redacted_whole(command: str, body: str) -> None:
    expected = bash_result(command, "[redacted:auth_token_output]")
    assert redact(bash_result(command, body)) == (
        expected,
        Counter({"redacted:auth_token_output": 1}),
    )
    assert redact_output(bash_result(command, body))[0] == expected
    # control: under a command that prints no token, no older rule takes the token, but the keyed
    # rule's `Token: …` (an authorization's fields)
    core = TOKEN[:12] if TOKEN in body else "f4b3c2d1-8e7a"
    assert core in body
    assert (core in redact(bash_result("cat notes.txt", body))[0]) is not body.startswith("Token:")


@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("bw unlock --check", "Vault is unlocked!"),
        ("bw login --check", "You are logged in!"),
        ("op signin --help", "Sign in to a 1Password account."),
        ("heroku authorizations", "ID                                    Description"),
        ("grep -rn 'heroku auth:token' .github/", "ci.yml:12: run: heroku auth:token"),
        ("echo 'run bw unlock first'", "run bw unlock first"),
        ("git log --oneline -1", "abc123 document fly auth token"),
    ],
)
def test_a_check_or_a_name_in_an_argument_keeps_its_output(command: str, body: str) -> None:
    assert redact(bash_result(command, body)) == (bash_result(command, body), Counter())
    # control: the token reading call beside it is redacted
    assert redact(bash_result("bw unlock --raw", body))[0] == bash_result(
        "bw unlock --raw", "[redacted:auth_token_output]"
    )


@pytest.mark.parametrize(
    "text",
    [
        # a call whose output was empty, then another result
        "[Bash result: op read op://ops/db/password]\n\n[Bash result: ls]\nREADME.md",
        "[Bash result: export BW_SESSION=$(bw unlock --raw)]\n",
        "[Bash result: heroku auth:token]\n  \n\t\n[Bash result: git status]\nclean",
        "[Read result: home/.netrc]\n\n",
    ],
)
def test_a_result_with_no_output_has_no_body_to_redact(text: str) -> None:
    # version 9 took the header itself when the body was empty (`[redacted:…]` in its place)
    assert redact(text) == (text, Counter())
    # control: with a line of output below the header, the output goes
    header = text.split("\n", 1)[0]
    redacted = redact(f"{header}\n{TOKEN}\n{text.split(chr(10), 1)[1]}")[0]
    assert redacted.startswith(f"{header}\n[redacted:")
    assert TOKEN not in redacted

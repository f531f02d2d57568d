"""Sanitizer version 11: what `echo` printed of a variable named for a secret (`echo $GITHUB_TOKEN`,
`echo "$API_KEY"`, `echo -n ${DB_PASSWORD}`); its trigger texts keep a corpus without any of them under
version 10, and the version scan reads a JSON line's `\\"` as the quote of `echo "$`."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, VersionScan, redact, redact_output
from engine.secret_formats import (
    LATEST_VERSION,
    RULE_KINDS,
    VERSION_11_TRIGGERS,
    kinds_after,
    kinds_found_after,
    triggers,
)
from engine.secret_formats_v11 import VERSION_11_FORMS
from tests.engine.fixtures_transcripts import assistant_lines, encode, tool_use_block
from tests.engine.planted import Planted
from tests.engine.planted_v11 import PLANTED_V11
from tests.engine.test_secrets_corpus import PLANTED
from tests.engine.test_secrets_v4 import assert_prefixed, assert_reads_under, version
from tests.engine.test_secrets_v9 import TAVILY, bash_result, sanitized
from tests.engine.test_secrets_v10 import TOKEN


def test_every_version_11_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert (
        sorted({p.kind for p in PLANTED_V11})
        == sorted(VERSION_11_FORMS)
        == ["secret_variable_output"]
    )
    assert VERSION_11_TRIGGERS == (
        "echo $",
        'echo "$',
        "echo -n $",
        'echo -n "$',
        "echo -e $",
        'echo -e "$',
        "print(os.environ[",
        "print(os.environ.get(",
        "print(os.getenv(",
        "console.log(process.env.",
    )
    assert kinds_after(10) == kinds_found_after(10) == ("secret_variable_output",)
    assert 11 not in RULE_KINDS
    assert kinds_found_after(11) == ()
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "11"] == list(VERSION_11_TRIGGERS)
    assert_prefixed(VERSION_11_FORMS, VERSION_11_TRIGGERS)


def test_no_older_planted_text_holds_a_version_11_trigger() -> None:
    older = {t for v in range(4, 11) for t in triggers(v)}
    # version 5's `environ[` (a secret set into the environment) is inside one: a corpus holding
    # `print(os.environ[` read under 5 at least, and now under 11
    assert [(t, o) for t in VERSION_11_TRIGGERS for o in older if t in o or o in t] == [
        ("print(os.environ[", "environ[")
    ]
    held = {p.label for p in PLANTED if p.kind not in VERSION_11_FORMS and version(p.text) == "11"}
    assert held == set()
    # control: each version 11 text reads under 11
    assert {p.label for p in PLANTED_V11 if version(p.text) == "11"} == {
        p.label for p in PLANTED_V11
    }


@pytest.mark.parametrize("planted", PLANTED_V11, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_11_credential_reads_under_version_11(planted: Planted) -> None:
    assert redact(TAVILY)[0] == "[redacted:tavily_key]"
    assert_reads_under(planted, VERSION_11_FORMS, TAVILY, ("8", "11"))


def _scan(*lines: bytes) -> str:
    scan = VersionScan()
    for line in lines:
        scan.feed(line)
    return scan.version


def test_the_version_scan_reads_a_json_lines_escaped_quote() -> None:
    call = tool_use_block("t1", "Bash", {"command": 'echo "$ACME_API_KEY"'})
    line = encode(assistant_lines([call], message_id="m1", uuids=["a1"])[0])
    # the tool call's line spells the quote `\"`: the bytes never hold `echo "$`
    assert b'echo \\"$ACME_API_KEY' in line
    assert b'echo "$' not in line
    assert _scan(line) == "11"
    # as a `\u0022` escape, and beside another `\u` escape
    assert _scan(b'{"command": "echo \\u0022$ACME_API_KEY\\u0022"}') == "11"
    assert _scan(b'{"command": "caf\\u00e9 && echo \\"$ACME_API_KEY\\""}') == "11"
    # controls: a quote the command itself escapes (`echo \"$X` prints `"$X`), a single-quoted
    # variable (printed as written) and no echo at all read under the base version
    assert _scan(json.dumps({"command": 'echo \\"$ACME_API_KEY'}).encode()) == "2"
    assert _scan(json.dumps({"command": "echo '$ACME_API_KEY'"}).encode()) == "2"
    assert _scan(json.dumps({"command": "printf '%s' x"}).encode()) == "8"


@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("echo $GITHUB_TOKEN", TOKEN),
        ('echo "$OPENAI_API_KEY"', TOKEN),
        ("echo ${NPM_TOKEN}", TOKEN),
        ('echo -n "${DB_PASSWORD}"', "hunter2x"),
        ("echo -e $STRIPE_SECRET_KEY", TOKEN),
        ('echo "$API_KEY" | head -c 12', TOKEN[:12]),
        ("cd app && echo $SECRET_KEY_BASE", TOKEN),
        ("sudo echo $password", "hunter2x"),
        ("echo $AWS_SECRET_ACCESS_KEY $AWS_REGION", f"{TOKEN} eu-west-1"),
        # the rest of the argument the variable starts prints the value all the same
        ("echo ${API_TOKEN:-}", TOKEN),
        ('echo "$API_TOKEN is set"', f"{TOKEN} is set"),
        ("echo $TOKEN:$USER", f"{TOKEN}:dev"),
    ],
)
def test_an_echoed_secret_variable_is_redacted_whole(command: str, body: str) -> None:
    expected = bash_result(command, "[redacted:secret_variable_output]")
    assert redact(bash_result(command, body)) == (
        expected,
        Counter({"redacted:secret_variable_output": 1}),
    )
    assert redact_output(bash_result(command, body))[0] == expected
    # control: under a command that names no secret's variable no rule takes the value
    assert redact(bash_result("echo $HOME", body)) == (bash_result("echo $HOME", body), Counter())


@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("echo $HOME", "/root"),
        ('SESSION_ID="$(echo "$INPUT" | jq -r .session_id)"', TOKEN),
        ("echo '$GITHUB_TOKEN'", "$GITHUB_TOKEN"),
        ("echo $SSH_AUTH_SOCK", "/tmp/ssh-Xq3/agent.4021"),
        ('echo "$GOOGLE_APPLICATION_CREDENTIALS"', "~/keys/ci.json\n"),
        ("echo $TOKEN_FILE", TOKEN),
        ("grep -n 'echo $API_KEY' README.md", f"12:echo $API_KEY  # prints {TOKEN}"),
        ("echo $GITHUB_TOKENS_SEEN", "3"),
        ("echo ${#GITHUB_TOKEN}", "40"),
        ("echo $HOME/.config", "/root/.config"),
    ],
)
def test_a_variable_that_names_no_secret_or_a_path_keeps_its_output(
    command: str, body: str
) -> None:
    assert redact(bash_result(command, body)) == (bash_result(command, body), Counter())
    # control: a secret's variable echoed beside it is redacted
    assert redact(bash_result("echo $API_TOKEN", TOKEN))[0] == bash_result(
        "echo $API_TOKEN", "[redacted:secret_variable_output]"
    )


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import os; print(os.environ['OPENAI_API_KEY'])\"",
        """python -c 'import os; print(os.environ.get("API_KEY"))'""",
        "uv run python -c \"import os; print(os.getenv('HF_TOKEN', ''))\"",
        "cd /srv && python3.12 -X utf8 -c \"import os;print(os.environ['DB_PASSWORD'])\"",
        "python -c \"import os; print(os.getenv('API_KEY')); print(1)\"",
        'node -e "console.log(process.env.GITHUB_TOKEN)"',
    ],
)
def test_a_program_that_prints_a_secret_variable_is_redacted_whole(command: str) -> None:
    expected = bash_result(command, "[redacted:secret_variable_output]")
    assert redact(bash_result(command, TOKEN)) == (
        expected,
        Counter({"redacted:secret_variable_output": 1}),
    )
    assert redact_output(bash_result(command, TOKEN))[0] == expected
    # control: the same program printing a variable that names no secret keeps its output
    for name in ("OPENAI_API_KEY", "API_KEY", "HF_TOKEN", "DB_PASSWORD", "GITHUB_TOKEN"):
        command = command.replace(name, "HOME")
    assert redact(bash_result(command, TOKEN)) == (bash_result(command, TOKEN), Counter())


@pytest.mark.parametrize(
    "command",
    [
        """grep -rn -e "print(os.getenv('API_KEY'))" src""",
        "git log -S \"print(os.environ['API_KEY'])\"",
        "cat scripts/show_env.py",
    ],
)
def test_a_program_that_is_not_run_keeps_the_output(command: str) -> None:
    body = f"scripts/show_env.py:3: print(os.getenv('API_KEY'))  # {TOKEN}"
    assert redact(bash_result(command, body)) == (bash_result(command, body), Counter())
    # control: run by Python, the same line's output goes
    ran = "python -c \"import os; print(os.getenv('API_KEY'))\""
    assert redact(bash_result(ran, body))[0] == bash_result(
        ran, "[redacted:secret_variable_output]"
    )


def test_an_import_redacts_what_echo_printed() -> None:
    texts, counts = sanitized('echo "$ACME_API_KEY"', TOKEN, prompt=None)
    assert texts == [
        '[Bash: echo "$ACME_API_KEY"]',
        '[Bash result: echo "$ACME_API_KEY"]\n[redacted:secret_variable_output]',
    ]
    assert counts == Counter({"redacted:secret_variable_output": 1})
    # control: the same output of `echo $HOME` is stored as it is
    texts, counts = sanitized("echo $HOME", TOKEN, prompt=None)
    assert texts == ["[Bash: echo $HOME]", f"[Bash result: echo $HOME]\n{TOKEN}"]
    assert counts == Counter()

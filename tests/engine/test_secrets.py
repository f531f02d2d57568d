"""The credential rules (`engine.secrets`, `engine.secret_keys`): what they must catch and must leave."""

from __future__ import annotations

from collections import Counter

import pytest
import requests
from detect_secrets.__version__ import VERSION as DETECT_SECRETS_INSTALLED

from engine.sanitize import redact, redact_paths
from engine.secrets import DETECT_SECRETS_VERSION, Finding, find_secrets
from tests.engine.test_secrets_corpus import PLANTED

GIT_HASH = "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"

LOOK_ALIKES = "\n".join(
    (
        f"commit {GIT_HASH} (short 3f2a9c1) fixed the flaky retry",
        "session 5e551011-0000-4000-8000-000000000001 and request 8c1e4f2a-5b7d-4e9f-a1c3-9d2b6e8f0a47",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 content hash",
        "Reset your password in settings; the password reset flow mails a link.",
        "edited /home/dev/my_proj/src/auth/token_store.py and src/secrets/password.py:12: x = 1",
        "Claude Code 2.1.74, engine v1.0.108, python 3.11.9",
        "MAX_TOKENS=4096 TOKENIZERS_PARALLELISM=false token_type: bearer max_tokens: 4096",
        "PWD=/home/dev/my_proj OLDPWD=/tmp",
        "def login(password: str, token: Optional[str] = None) -> Session:",
        '    password = getpass(); api_key = os.environ["API_KEY"]; secret = settings.SECRET',
        "    const token = await resolveToken(task, opts);",
        "pub fn check(token: &str, strict: bool) -> anyhow::Result<Token> {",
        "API_KEY=$OPENAI_API_KEY TOKEN=${GITHUB_TOKEN} password: <your-password>",
        "ssh -i ~/.ssh/id_rsa --private-key ~/.ssh/deploy.pem host",
        "the Bearer authentication scheme; Basic authentication",
        "https://example.com:8080/path?a=b@c and git@github.com:org/repo.git",
        "a task-runner-configuration-file-name and the sk-learn docs",
    )
)


def test_commit_hashes_uuids_digests_prose_paths_versions_and_code_survive() -> None:
    text, counts = redact(LOOK_ALIKES)

    assert text == LOOK_ALIKES
    assert counts == Counter()
    # Positive control: the same text with one real credential in it loses exactly that credential.
    leaked, leak_counts = redact(LOOK_ALIKES + "\nDB_PASSWORD=Tr0ub4dor&3")
    assert leaked == LOOK_ALIKES + "\nDB_PASSWORD=[redacted:env_secret]"
    assert leak_counts == Counter({"redacted:env_secret": 1})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password: x", "password: [redacted:env_secret]"),
        ('{"password": "x"}', '{"password": "[redacted:env_secret]"}'),
        (
            "//registry.npmjs.org/:_authToken=abc123",
            "//registry.npmjs.org/:_authToken=[redacted:env_secret]",
        ),
        ("db?user=bob&password=pa/ss&x=1", "db?user=bob&password=[redacted:env_secret]&x=1"),
        ("redis://:pa/ss@w0rd@cache:6379/0", "redis://:[redacted:url_password]@cache:6379/0"),
        ("mysqldump -uroot -p'pa ss' app", "mysqldump -uroot -p'[redacted:command_password]' app"),
        (
            '{\\"password\\": \\"hunter2\\"}',
            '{\\"password\\": \\"[redacted:env_secret]\\"}',
        ),
        ('"out": "A=1\\nPGPASSWORD=pw9\\n"', '"out": "A=1\\nPGPASSWORD=[redacted:env_secret]\\n"'),
        (
            "docker login --password Hunt3r2 ghcr.io",
            "docker login --password [redacted:env_secret] ghcr.io",
        ),
        ("auth: true and auth: Zq8Wv4Tx2Ry6", "auth: true and auth: [redacted:env_secret]"),
    ],
)
def test_issue_shapes_are_redacted_and_keep_their_surroundings(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


def test_a_token_is_redacted_whole_even_where_the_rule_reads_only_its_head() -> None:
    # detect-secrets' Stripe rule reads 24 characters; real keys are longer.
    key = "sk_live_" + "A1b2C3d4E5f6G7h8I9j0K1l2" + "TailThatMustGo99"

    assert redact(f"key {key} end") == (
        "key [redacted:stripe_key] end",
        Counter({"redacted:stripe_key": 1}),
    )


def test_overlapping_rules_give_one_span_named_by_the_earliest_longest_rule() -> None:
    text = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc123"

    assert find_secrets(text) == [Finding(start=22, end=len(text), kind="bearer")]
    assert redact(text)[1] == Counter({"redacted:bearer": 1})


def test_scanning_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(str(args[1:3]))
        msg = "the sanitizer must not make network requests"
        raise AssertionError(msg)

    monkeypatch.setattr(requests.sessions.Session, "request", refuse)

    redacted = [redact(p.text)[1].total() for p in PLANTED]

    assert calls == []
    assert min(redacted) >= 1  # positive control: every text was scanned and redacted


def test_the_installed_detect_secrets_is_the_pinned_version() -> None:
    assert DETECT_SECRETS_INSTALLED == DETECT_SECRETS_VERSION == "1.5.0"


def test_edit_paths_are_redacted_and_counted() -> None:
    counts: Counter[str] = Counter()

    paths = redact_paths(
        ["/repo/src/app.py", "/tmp/ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789.txt"], counts
    )

    assert paths == ["/repo/src/app.py", "/tmp/[redacted:github_token].txt"]
    assert counts == Counter({"redacted:github_token": 1})


def test_a_finding_needs_a_non_empty_span() -> None:
    with pytest.raises(ValueError, match="start=5 end=5"):
        Finding(start=5, end=5, kind="x")

"""Rules that read a run of characters after a short head (detect-secrets' JWT and OpenAI patterns after
`eyJ` and `sk-`, our URL password after `scheme://user:`) find what `finditer` finds in linear time
(`engine.secrets._matches`): a run holding thousands of heads and no match was read once per head."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from engine import secrets
from engine.sanitize import redact
from tests.engine.test_secret_runs import _Counting, matches_as_finditer

Rule = tuple[str, re.Pattern[str], re.Pattern[str], str | re.Pattern[str]]
RULES: list[Rule] = [
    *(
        (kind, pattern, head, rule.stops)
        for kind in ("jwt", "openai_key")
        for rule in [secrets._PLUGIN_TOKENS[kind]]
        for pattern, head in zip(rule.patterns, rule.heads, strict=True)
    ),
    ("url_password", secrets._URL_PASSWORD, secrets._URL_HEAD, secrets._NOT_PASSWORD_RUN),
]
ALNUM20 = "Ab1Cd2Ef3Gh4Ij5Kl6Mn"
PIECES = [
    "eyJ", "eyJhbGciOiJIUzI1NiJ9", ".", ".", "=", "-", "_", "sk-", "sk-proj-", "T3BlbkFJ", ALNUM20,
    ALNUM20, "http://", "ftp://", "a+b://", "u", "user", ":", "pw9", "@", "host.example", ":8080",
    "/", "?", "#", "<", ">", "'", '"', " ", "\n", "\u00a0", ",", "x", f"sk-{ALNUM20}T3BlbkFJ",
    "http://u:", "pw9@host.example", "@host.example/",
]  # fmt: skip


def _texts() -> Iterator[str]:
    rng = random.Random(20261205)
    for _ in range(1500):
        yield "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))


def test_the_token_run_rules_are_jwt_openai_and_url_passwords() -> None:
    assert [(kind, head.pattern) for kind, _, head, _ in RULES] == [
        ("jwt", "eyJ"),
        ("openai_key", "sk\\-"),
        ("url_password", secrets._URL_HEAD.pattern),
    ]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r[0])
def test_runs_find_what_finditer_finds(rule: Rule) -> None:
    _, pattern, head, stops = rule
    # control: the texts hold matches of every rule, not only misses
    assert matches_as_finditer(pattern, head, stops, _texts()) > 20


def test_a_head_that_ends_past_the_stop_is_still_tried() -> None:
    # `ftp://a:` reads `b-http://c` and meets `<` with no `@`; `b-http://c<d:` starts inside that run
    # but its password (`e`) is after the `<`: only a head that ends inside the run fails with it
    text = "ftp://a:b-http://c<d:e@host.com/x"
    found = secrets._matches(
        secrets._URL_PASSWORD, text, secrets._URL_HEAD, secrets._NOT_PASSWORD_RUN
    )
    assert [(m.span(), m.group("pw")) for m in found] == [((8, 31), "e")]
    assert [(m.span(), m.group("pw")) for m in secrets._URL_PASSWORD.finditer(text)] == [
        ((8, 31), "e")
    ]


@pytest.mark.parametrize(
    ("kind", "text", "calls"),
    [
        ("openai_key", "sk-" * 300 + f" sk-{ALNUM20}T3BlbkFJ{ALNUM20}", 2),
        ("openai_key", "sk- " * 300, 300),  # control: 300 runs, each head tried
        ("jwt", "eyJ" * 300, 1),
        ("jwt", "eyJ " * 300, 300),  # control
        ("url_password", "http://a:b" * 300, 1),
        ("url_password", "http://a:b " * 300, 300),  # control
    ],
)
def test_a_run_of_heads_is_read_once(kind: str, text: str, calls: int) -> None:
    _, pattern, head, stops = next(rule for rule in RULES if rule[0] == kind)
    counting = _Counting(pattern)
    list(secrets._matches(counting, text, head, stops))  # type: ignore[arg-type]
    assert counting.calls == calls


def test_a_credential_after_a_run_of_heads_is_still_redacted() -> None:
    text = "http://a:b" * 300 + " http://deploy:Pl4ntUrlPw@git.example.com/repo"
    kept, counts = redact(text)
    assert (
        kept == "http://a:b" * 300 + " http://deploy:[redacted:url_password]@git.example.com/repo"
    )
    assert counts == {"redacted:url_password": 1}


@pytest.mark.parametrize(("separator", "widened"), [("", 2), (" ", 600)])
def test_a_run_of_keys_is_widened_once(
    monkeypatch: pytest.MonkeyPatch, separator: str, widened: int
) -> None:
    # 300 GitHub tokens: our rule's `(?<![\w-])ghp_…` matches the run once, detect-secrets' `ghp_…{36}`
    # 300 times, each widening over the whole run before
    key = "ghp_" + "Pl4ntGhpT0k3nA1b2C3d4E5f6G7h8I9j0K1l2"
    calls = []

    def counting(view: str, start: int, end: int, chars: str) -> tuple[int, int]:
        calls.append(start)
        return widen(view, start, end, chars)

    widen = secrets._widen
    monkeypatch.setattr(secrets, "_widen", counting)
    text = separator.join([key] * 300)
    kept, counts = redact(text)
    assert len(calls) == widened  # control (separated): each key is its own run, widened per rule
    assert kept == separator.join(["[redacted:github_token]"] * (300 if separator else 1))
    assert counts == {"redacted:github_token": 300 if separator else 1}


def _private_keys_read_per_header(view: str) -> Iterator[tuple[int, int]]:
    """`engine.secrets._private_keys` as it was: every header looks for its END line."""
    for headers, end_marker in (
        (secrets._KEY_HEADERS, secrets._KEY_END),
        ((secrets._PUTTY,), secrets._PUTTY_END),
    ):
        for header in headers:
            for match in header.finditer(view):
                end = end_marker.search(view, match.end())
                yield match.start(), len(view) if end is None else end.end()


def _union(spans: Iterator[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def test_headers_inside_a_key_block_are_not_read_again() -> None:
    pieces = [
        "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
        "-----END PRIVATE KEY-----", "PuTTY-User-Key-File-3: ssh-ed25519", "Private-MAC: 9a8b", "MIIab",
        "\n", " ", "-----", "BEGIN", "BEGIN RSA PRIVATE KEY-----", "END RSA PRIVATE KEY-----", "x",
    ]  # fmt: skip
    rng = random.Random(20261205)
    blocks = 0
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        expected = _union(_private_keys_read_per_header(text))
        assert _union(secrets._private_keys(text)) == expected, text
        blocks += len(expected)
    assert blocks > 500  # control: most texts hold a block
    # hand-worked: three headers, one END line: one block, from the first header to the END line
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIab\n" * 3 + "-----END RSA PRIVATE KEY-----\nafter"
    assert _union(secrets._private_keys(text)) == [(0, len(text) - len("\nafter"))]
    assert redact(text) == ("[redacted:private_key]\nafter", {"redacted:private_key": 1})

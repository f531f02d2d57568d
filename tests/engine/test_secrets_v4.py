"""Sanitizer version 4: credential formats with a literal prefix, and the trigger texts that keep a
corpus without any of them under its older version (so its manifest and every lock on it hold)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from engine.sanitize import VERSION_TRIGGERS, VersionScan, redact
from engine.secret_form_parts import Form
from engine.secret_formats import (
    FORMS_BY_VERSION,
    VERSION_4_FORMS,
    VERSION_4_TRIGGERS,
    triggers,
)
from engine.secrets import _FORM_TOKENS, find_secrets
from tests.engine.test_secrets_corpus import PLANTED, Planted

V4 = [p for p in PLANTED if p.kind in VERSION_4_FORMS]


def version(*texts: str) -> str:
    scan = VersionScan()
    for text in texts:
        scan.feed(json.dumps({"content": text}).encode())
    return scan.version


def test_every_version_4_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in V4}) == sorted(VERSION_4_FORMS)
    assert len(VERSION_4_FORMS) == 25
    assert [t for v, t in VERSION_TRIGGERS if v == "4"] == list(VERSION_4_TRIGGERS)
    assert_prefixed(VERSION_4_FORMS, VERSION_4_TRIGGERS)


def assert_reads_under(
    planted: Planted, forms_of: dict[str, tuple[Form, ...]], older: str, versions: tuple[str, str]
) -> None:
    """A corpus holding `planted` reads under the newer of `versions`, one holding only `older` (a
    credential of the version before) under the older, one holding neither under the base; the rule
    finds the credential once, and the line it is on (or the header line above it) holds a prefix of
    its form."""
    text = planted.text
    assert version("nothing to see", text) == versions[1]
    assert version("nothing to see", older) == versions[0]  # control: the older format only
    assert version("nothing to see") == "2"  # control: no trigger, the base version
    found = [f for f in find_secrets(text) if f.kind == planted.kind]
    assert len(found) == 1
    # the line it starts on, or the line above for a block whose body follows its header line
    line_start = text.rfind("\n", 0, max(text.rfind("\n", 0, found[0].start), 0)) + 1
    line_end = text.find("\n", found[0].end) % (len(text) + 1)
    prefixes = [prefix for _, prefix, _ in forms_of[planted.kind]]
    assert any(prefix in text[line_start:line_end] for prefix in prefixes)


def assert_kept_beside(text: str, key: str, kind: str) -> None:
    """`text` is kept whole; beside it, `key` (a real-format credential of `kind`) alone is redacted."""
    assert redact(text) == (text, {})
    # positive control: the same surroundings with a real-format key are redacted
    kept, counts = redact(f"{text} {key}")
    assert kept == f"{text} [redacted:{kind}]"
    assert counts == {f"redacted:{kind}": 1}


def assert_prefixed(forms_of: dict[str, tuple[Form, ...]], triggers: tuple[str, ...]) -> None:
    """Each form's rule is built from it, and its prefix is a trigger and a literal of its pattern,
    outside any group or alternation (so no match lacks it)."""
    for kind, forms in forms_of.items():
        rule = _FORM_TOKENS[kind]
        assert len(forms) == len(rule.patterns) == len(rule.needles), kind
        for (_, prefix, _), pattern, needle in zip(forms, rule.patterns, rule.needles, strict=True):
            assert needle == prefix
            assert prefix in triggers
            # JSON writes `\` escaped, which the version scan does not read (`/` as `\/` and `"` as
            # `\"` it does)
            assert "\\" not in prefix
            literal = re.escape(prefix)
            assert literal in pattern.pattern, kind
            before, after = pattern.pattern.split(literal, 1)
            assert _depth(before) == 0, kind  # every group the head opens is closed before it
            assert "|" not in _top_level(before) + _top_level(after), kind  # no way around it


def _top_level(pattern: str) -> str:
    """The characters of `pattern` outside any group (escapes and character classes read as such)."""
    return _scan(pattern)[0]


def _depth(pattern: str) -> int:
    """How many groups `pattern` leaves open."""
    return _scan(pattern)[1]


def _scan(pattern: str) -> tuple[str, int]:
    """(the characters outside any group, the groups left open) of a regular expression's text."""
    out, depth, i, in_class = [], 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out), depth


def test_the_sanitizer_names_its_triggers_without_importing_detect_secrets() -> None:
    code = (
        "import sys, engine.sanitize as s; "
        "print(len(s.VERSION_TRIGGERS), 'detect_secrets' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(1 + sum(len(triggers(v)) for v in FORMS_BY_VERSION)), "False"]
    # control: the rules themselves do import it
    code = "import sys, engine.secrets; print('detect_secrets' in sys.modules)"
    assert subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split() == ["True"]


@pytest.mark.parametrize("planted", V4, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_4_credential_reads_under_version_4(planted: Planted) -> None:
    text = planted.text
    assert version("nothing to see", text) == "4"
    assert version("nothing to see") == "2"  # control: no trigger, the base version
    # the trigger is in the credential itself: what the rule redacts never lacks its prefix
    found = [f for f in find_secrets(text) if f.kind == planted.kind]
    assert len(found) == 1
    prefixes = [prefix for _, prefix, _ in VERSION_4_FORMS[planted.kind]]
    start = max(0, found[0].start - len("discordapp.com/api/webhooks/") - 30)
    assert any(prefix in text[start : found[0].end] for prefix in prefixes)


def test_a_trigger_spelled_with_unicode_escapes_still_counts() -> None:
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in "gsk_")
    line = f'{{"content": "{escaped}Pl4ntGr0qK3yQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qa"}}'
    assert b"gsk_" not in line.encode()
    scan = VersionScan()
    scan.feed(line.encode())
    assert scan.version == "4"


@pytest.mark.parametrize(
    "text",
    [
        "call fw_update_firmware_version() then fw_init",  # fw_ and words, no 24-character key
        "SECRET_KEY_BASE, secret_key_base and secret_santa_list_for_the_whole_team_2024",
        "self.dp.state = dp.st.copy()",
        "register r8_ holds the return address",
        "see https://discord.com/channels/123456/789012 or discord.gg/abc",
        "the ATBB macro and ATATT3 prefix are documented",
        "tskey-auth is the kind of key to create",
        "docker login -u me -p $REGISTRY_PASSWORD ghcr.io && docker run -p 8080:80 app",
        "git rev 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_text_that_only_looks_like_a_version_4_credential_is_kept(text: str) -> None:
    assert redact(text) == (text, {})
    # positive control: the same surroundings with a real-format key are redacted
    key = "gsk_Pl4ntGr0qK3yQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qa"
    kept, counts = redact(f"{text} {key}")
    assert kept == f"{text} [redacted:groq_key]"
    assert counts["redacted:groq_key"] == 1

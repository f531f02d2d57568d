"""What a value a credential rule found must be to count: a literal, not a variable or a placeholder;
for the command-line forms of later versions, not how documentation writes a password's place either;
and the check each format of `engine.secret_formats` applies (`FORM_VALID`). Standard library only."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.function_words import FUNCTION_WORDS
from engine.secret_formats import COMMAND_PASSWORDS, KIND_VERSION
from engine.secret_formats_v8 import VERSION_8_TOKENS
from engine.secret_formats_v11 import TOOL_OUTPUT_KINDS


def has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def has_letter_and_digit(token: str) -> bool:
    return has_digit(token) and any(c.isalpha() for c in token)


def literal(value: str) -> bool:
    """A value written out, not a variable (`$PW`, `${PW}`) or a placeholder (`<token>`)."""
    bare = value.strip("\"'")
    return bool(bare) and not bare.startswith(("$", "<", "{", "[redacted:", "%"))


def written_out(value: str) -> bool:
    """A literal that is not how documentation writes a password's place either: `…`, a name in
    capitals (`PASS`, `DB_PASSWORD`), code quotes or punctuation around either."""
    bare = value.strip(_AROUND)
    return literal(bare) and not _PLACEHOLDER.match(bare)


def not_a_word(value: str) -> bool:
    """Written out, and not a plain word (`first`, `Create`; `*`, which asks for the password)."""
    bare = value.strip(_AROUND)
    plain = bare.isalpha() and (bare.islower() or bare.istitle())
    return written_out(bare) and not plain and bare != "*"


def not_prose(value: str) -> bool:
    """Written out, and no function word of English (`for`, `the`, `to`: the words around an option
    a sentence names)."""
    bare = value.strip(_AROUND)
    return written_out(bare) and bare.lower() not in _PROSE_WORDS


_AROUND = "\"'`.,;:()…"  # quotes and punctuation around a documented password's place


def spelled(check: Callable[[str], bool]) -> Callable[[str], bool]:
    """`check`, a letter or a digit in the value (not `***`, a masked one, nor `&&`), and no `…` (a
    value documentation elides: `pypi-…`)."""
    return lambda value: (
        check(value) and "…" not in value and any(ch.isalnum() for ch in value.strip(_AROUND))
    )


# Version 7's values that are no plain word either: those a command takes by its place (`cargo login
# TOKEN`), and an SNMP community (`-c public` is the default, not a secret).
_NOT_A_WORD_7 = (
    "neo4j_initial_password",
    "nuget_api_key",
    "cargo_token",
    "http_basic_password",
    "pypi_token_setting",
    "mosquitto_passwd",
    "redis_auth",
    "consul_token",
    "bitwarden_password",
    "ngrok_token",
    "snmp_community",
)

# Version 8's that a command takes by its place (`mysqladmin password NEW`, `net user NAME PASS`,
# `rclone obscure PASS`), or that a name names (`set -x API_TOKEN VALUE`).
_NOT_A_WORD_8 = (
    "mysqladmin_password",
    "db2_password",
    "cloudflared_token",
    "b2_application_key",
    "rclone_obscured_password",
    "minio_user_password",
    "drush_password",
    "shell_set_secret",
    "windows_user_password",
    "piped_devops_token",
)

# The function words (`engine.function_words`, three letters or more) and the two-letter ones.
_PROSE_WORDS = FUNCTION_WORDS | frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "if",
        "in",
        "is",
        "it",
        "no",
        "of",
        "on",
        "or",
        "so",
        "to",
        "up",
        "we",
    ]
)

_PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")
# A body whose first line is one redaction marker: an output redacted whole, or a secret a token rule
# found (`op read` of a GitHub token).
_REDACTED_LINE = re.compile(r"\[redacted:[a-z0-9_]+\](?:\n|\Z)")
# A body that is one path alone: what `echo $SSH_AUTH_SOCK` prints (a weak name's value that is a file).
_LONE_PATH = re.compile(r"[ \t]*(?:~|\.{1,2})?/\S*\s*\Z")


def not_redacted(body: str) -> bool:
    """A tool output not already redacted (its first line is no marker)."""
    return _REDACTED_LINE.match(body) is None


FORM_VALID: dict[str, Callable[[str], bool]] = {
    "replicate_token": has_letter_and_digit,
    "fireworks_key": has_letter_and_digit,
    "bitbucket_token": has_letter_and_digit,
    "notion_token": has_digit,
    "easypost_key": has_letter_and_digit,
    "prefect_key": has_letter_and_digit,
    "typeform_token": has_letter_and_digit,
    "alibaba_key": has_letter_and_digit,
    "adobe_client_secret": has_letter_and_digit,
    "netlify_token": has_letter_and_digit,
    "render_key": has_letter_and_digit,
    "posthog_personal_key": has_letter_and_digit,
    "env_var_secret": literal,
    "auth_tuple_password": literal,
    "odbc_password": lambda value: literal(value) and value[:1] not in "/~.",
    "xml_secret": literal,
    **dict.fromkeys(COMMAND_PASSWORDS, literal),
    # version 6's and later: no placeholder either (docs/transcripts.md)
    **{kind: written_out for kind in COMMAND_PASSWORDS if KIND_VERSION[kind] >= 6},
    # version 7's: a letter or a digit too (`-A ***` is a masked one)
    **{kind: spelled(written_out) for kind in COMMAND_PASSWORDS if KIND_VERSION[kind] == 7},
    # version 8's: and no function word either (prose that names the option: "isql takes -P for the
    # password")
    **{kind: spelled(not_prose) for kind in COMMAND_PASSWORDS if KIND_VERSION[kind] >= 8},
    # a value a command takes by its place, not after an option: not a plain word (prose that names
    # the command: "rabbitmqctl add_user to create one")
    **dict.fromkeys(
        (
            "minio_secret",
            "rabbitmq_password",
            "wifi_password",
            "windows_password",
            "vault_login_token",
        ),
        not_a_word,
    ),
    **{kind: spelled(not_a_word) for kind in (*_NOT_A_WORD_7, *_NOT_A_WORD_8)},
    # version 8's provider tokens
    **dict.fromkeys(VERSION_8_TOKENS, has_letter_and_digit),
    # versions 9 to 11's tool outputs: not one that already is a redaction (its first line one marker)
    **dict.fromkeys(TOOL_OUTPUT_KINDS, not_redacted),
    # version 11's echoed variable: not a path alone either
    "secret_variable_output": lambda body: not_redacted(body) and _LONE_PATH.match(body) is None,
}

"""Secrets by the name they are assigned to: `key=value`, `"key": "value"`, `key: value`, `--key value`.

A token format rule (`engine.secrets`) cannot see `password: hunter2` or `"SecretAccessKey": "wJal…"`;
the name in front of the value can. Names are split into lower-case words (`_authToken` -> `auth_token`,
`SecretAccessKey` -> `secret_access_key`, `X-Api-Key` -> `x_api_key`) and sorted in two classes:

- a **strong** name (password, passwd, pwd, passphrase, secret, private_key, private_key_id, api_key,
  access_key, account_key, token, auth_token, … — detect-secrets' own keyword list plus ours)
  holds a secret whatever its value looks like, so `password: x` is redacted;
- a **weak** name (auth, credential, a `…key`, sig) often holds ordinary values (`auth: true`,
  `sort_key: name`), so its value is redacted only when it looks random: at least 8 characters, letters
  and digits, and a Shannon entropy of at least `WEAK_ENTROPY` bits per character (measured with
  detect-secrets' base64 charset).

A name whose last word only describes the secret (`password_min_length`, `secret_name`, `token_file`)
is not one (`token_type: bearer`, `token_count: 12`). A value that refers to a secret instead of holding one is left alone: empty, `$VAR`,
`${VAR}`, `<placeholder>`, `{{ template }}`, a call or subscript (`os.environ["X"]`, `getpass()`), a
dotted name (`settings.PASSWORD`), a type (`str`), a mask (`****`), `null`/`true`, or another name that
itself names a secret (`password=db_password`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache

from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.keyword import DENYLIST as KEYWORD_DENYLIST

# Bits per character a weak name's value needs (a 20-character random base62 token has ~4.2).
WEAK_ENTROPY = 3.0
WEAK_MIN_LENGTH = 8

# Words a strong name contains besides detect-secrets' keyword list (`api_?key`, `password`, `secret`…).
_STRONG_EXTRA = (
    r"[a-z0-9]*password",  # pgpassword, dbpassword
    r"[a-z0-9]*passwd",
    r"[a-z0-9]*secret",  # clientsecret, appsecret
    r"passphrase",
    r"pgpass",
    r"access_?key",
    r"secret_?key",
    r"signing_?key",
    r"encryption_?key",
    r"master_?key",
    r"shared_?(?:access_?)?key",
    # last word only: token, auth_token, _authToken, GITHUB_TOKEN; not max_tokens or TOKEN_CHARS
    r"[a-z0-9]*token(?:_\d+)?$",
    r"credentials?_?key",
)
# `pass` is a weak word: `pass = "the walk wins"` is a verdict, `DB_PASS` is caught by the keyword list.
_WEAK_WORDS = (r"auth", r"pass", r"credentials?", r"[a-z0-9]*key", r"sig")
# A last word that says something about a secret rather than being one.
_DESCRIPTORS = frozenset(
    " ".join(
        (
            "length len min max policy file files path dir url uri hint hints reset prompt label",
            "type required changed enabled disabled expiry expires expiration ttl rotation count",
            "field name names env var regex pattern validator strength mode format stdin ref refs",
            "arn store manager backend provider source version header param set exists endpoint",
            "limit usage budget lifetime audience issuer scope scopes kind chars charset alphabet",
            "prefix suffix re rx",
        )
    ).split()
)
# File extensions: `password.py:12:` in grep output is a path and a line number.
_FILE_EXTENSIONS = frozenset(
    " ".join(
        (
            "py pyi js jsx ts tsx go rb rs java kt c h cc cpp cs php md txt json yaml yml toml ini",
            "cfg sh html css sql lock log",
        )
    ).split()
)
# Values that name a type, a keyword or nothing: `password: str`, `const token = await f()`.
_PLACEHOLDER_WORDS = frozenset(
    " ".join(
        (
            "none null nil true false undefined str string bytes int optional secretstr required",
            "redacted hidden masked await new yield async function lambda typeof require return",
            "number boolean any unknown bigint float bool dict list char byte uint8array",
        )
    ).split()
)

_LONGEST_PLACEHOLDER = max(map(len, _PLACEHOLDER_WORDS))

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[-.\s]+")
_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*\s*[\[(<]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# A capitalised name without digits after `:` in code is a type (`token: Buffer,`), not a password.
_TYPE_NAME = re.compile(r"^[A-Z][A-Za-z]*$")
_PATH = re.compile(r"^(?:~|\.{1,2})?/[\w.\-/~]*$|^[\w.\-/~]+\.(?:pem|key|json|p12|pfx|txt)$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_OPERATORS = frozenset("/+*%|&?.=([<>-")
_MASK = re.compile(r"^(?:[*•#_\-]+|\.{3,}|….*|x{3,}|X{3,})$")
_TEMPLATE = re.compile(r"^(?:\$|%\(|%s$|\{\{|<[^>\s]*>?$|\{[^}]*\}$|\[redacted:|\[private\])")

# A name (key) then `=`, `:`, `:=` or `=>`, then a quoted or bare value. The key may be quoted, also with
# escaped quotes (`\"password\": \"x\"` in JSON printed inside JSON). It never starts after a path
# separator, so `src/password.py:12:` is not an assignment.
_KEY_OP = (
    r"""(?<![A-Za-z0-9_/\\])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?:\\*["'])?[ \t]*"""
    r"""(?P<op>:=|=>|=(?!=)|:(?![:/]))[ \t]*"""
)
_HEAD = re.compile(_KEY_OP)
# The bare value is matched by its first character only; `_Next` finds its end. Read by the
# regex, a line of `a=b,c=d,…` without a space read the rest of the run once per `=`.
_ASSIGNMENT = re.compile(
    _KEY_OP
    + r"""(?:(?P<quote>\\*["'])(?P<quoted>(?:\\.|[^\\\n])*?)(?P=quote)|(?P<bare>[^\s"'`]))"""
)
_BARE_STOP = re.compile(r"""[\s"'`]""")
_QUERY_STOP = re.compile(r"[&#]")
# `--password hunter2`, `--api-key abc` (the `=` form is an assignment).
_FLAG = re.compile(r"(?<!\S)--?(?P<key>[A-Za-z][A-Za-z0-9_\-]{1,60})[ \t]+(?P<bare>[^\s\-][^\s]*)")
_TRAILING = ")]}>,;."


def assignments(view: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every value assigned to a name that names a secret, in `view`."""
    pos = 0
    runs, queries, suffixes = _Next(view, _BARE_STOP), _Next(view, _QUERY_STOP), _Suffixes(view)
    while (head := _HEAD.search(view, pos)) is not None:
        if _key_class(head.group("key")) is None:
            pos = head.end("op")  # no value of a name that is no secret's is read
            continue
        match = _ASSIGNMENT.match(view, head.start())
        if match is None:
            pos = head.start() + 1
            continue
        query = match.start() > 0 and view[match.start() - 1] in "?&;"
        bare_end = None if match.group("bare") is None else runs.at(match.start("bare"))
        span = _value_span(
            match, view, query=query, bare_end=bare_end, suffixes=suffixes, queries=queries
        )
        # A name that is no secret's must not swallow what follows: `user=bob&password=x`.
        pos = match.end("op") if span is None else span[1]
        if span is not None:
            yield span
    for match in _FLAG.finditer(view):
        span = _value_span(match, view, query=False)
        if span is not None:
            yield span


def names_secret(key: str) -> bool:
    """True when `key` names a secret (strong or weak); see the module docstring."""
    return _key_class(key) is not None


class _Next:
    """Where the next match of `pattern` at or after a position starts (the text's end: none), each
    found once for positions read from left to right: where a bare value ends (the next space or
    quote), where a URL query's value does (the next `&` or `#`)."""

    def __init__(self, view: str, pattern: re.Pattern[str]) -> None:
        self._view, self._pattern = view, pattern
        self._start = self._at = -1

    def at(self, start: int) -> int:
        if not self._start <= start <= self._at:
            found = self._pattern.search(self._view, start)
            self._start, self._at = start, len(self._view) if found is None else found.start()
        return self._at


class _Suffixes:
    """`looks_random` of the values that end where the last one ended and start further right (the
    suffixes of one run: `auth=x1,auth=x1,…`), from character counts kept as the start moves: a run
    is counted once, not once per name in it. The same answers as `looks_random` (tested)."""

    def __init__(self, view: str) -> None:
        self._view = view
        self._start = self._end = -1
        self._counts: Counter[str] = Counter()

    def looks_random(self, start: int, end: int) -> bool:
        if end != self._end or start < self._start:
            self._counts = Counter(self._view[start:end])
        elif start > self._start:
            self._counts.subtract(self._view[self._start : start])
        self._start, self._end = start, end
        return _random_counts(self._counts, end - start)


def _value_span(
    match: re.Match[str],
    view: str,
    *,
    query: bool,
    bare_end: int | None = None,
    suffixes: _Suffixes | None = None,
    queries: _Next | None = None,
) -> tuple[int, int] | None:
    """The span of the value `match` assigns, when it holds a secret; `bare_end`: where a bare value
    ends, when the pattern matched only its start; `suffixes`: the run's counts, for a weak name;
    `queries`: where the next `&` or `#` is."""
    strength = _key_class(match.group("key"))
    if strength is None:
        return None
    if match.groupdict().get("quoted") is not None:
        start, end = match.span("quoted")
        value = match.group("quoted")
        if not _holds_secret(value, strength, bare=False):
            return None
        return (start, end) if value else None
    start, end = match.span("bare")
    if bare_end is not None:
        end = bare_end
    if query:
        # In a URL query the value ends at the next parameter or fragment.
        if queries is None:
            cut = _QUERY_STOP.search(view, start, end)
            end = end if cut is None else cut.start()
        else:
            end = min(end, queries.at(start))
    value = view[start:end]
    stripped = value.rstrip(_TRAILING)
    value = stripped or value
    end = start + len(value)
    after = view[end : end + 80].lstrip(" \t")[:2]
    op = match.groupdict().get("op") or ""
    looks = looks_random if suffixes is None else lambda _: suffixes.looks_random(start, end)
    if not _holds_secret(value, strength, bare=True, after=after, op=op, looks=looks):
        return None
    return start, end


def _holds_secret(
    value: str,
    strength: str,
    *,
    bare: bool,
    after: str = "",
    op: str = "=",
    looks: Callable[[str], bool] | None = None,
) -> bool:
    """False for values that refer to a secret, describe one or are too plain for a weak name
    (`looks`: `looks_random`, or the same answer from counts)."""
    if not value.strip() or value[0] in "{[(&":  # a structure, or a reference (`token: &str`)
        return False
    if _template(value, bare=bare) or _MASK.match(value) or _placeholder_word(value):
        return False
    if bare and (
        _REFERENCE.match(value + after[:1]) or _REFERENCE.match(value) or _PATH.match(value)
    ):
        return False
    if bare and _IDENTIFIER.match(value) and after[:1] in _OPERATORS and after[1:] in (" ", "\t"):
        return False  # `key = base / "name"`, `a = b = 0`: an expression in code
    if bare and _IDENTIFIER.match(value) and _key_class(value) is not None:
        return False  # `password=db_password`: a variable, not its value
    if (
        bare
        and op == ":"
        and _TYPE_NAME.match(value)
        and after[:1] in (",", ")", ";", "|", ">", "=")
    ):
        return False
    if strength == "strong":
        return True
    # a bare value holds no space (`_ASSIGNMENT` reads it to one; `\s` is `str.isspace`)
    return (bare or not any(c.isspace() for c in value)) and (looks or looks_random)(value)


def _template(value: str, *, bare: bool) -> bool:
    """`_TEMPLATE.match(value)`; a bare value (no space in it) that starts with `<` is one when no
    `>` is in it but at its end, which `in` finds without the regex's pass over it."""
    if bare and value[:1] == "<":
        return ">" not in value[1:-1]
    return _TEMPLATE.match(value) is not None


def _placeholder_word(value: str) -> bool:
    return len(value) <= _LONGEST_PLACEHOLDER and value.lower() in _PLACEHOLDER_WORDS


def looks_random(value: str) -> bool:
    """At least `WEAK_MIN_LENGTH` characters, letters and digits, entropy >= `WEAK_ENTROPY`."""
    if len(value) < WEAK_MIN_LENGTH:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    return float(_ENTROPY.calculate_shannon_entropy(value)) >= WEAK_ENTROPY


def _random_counts(counts: Counter[str], length: int) -> bool:
    """`looks_random` of a text of `length` characters from its character counts: detect-secrets'
    Shannon entropy computed as it computes it, charset in its order."""
    if length < WEAK_MIN_LENGTH:
        return False
    present = [c for c, n in counts.items() if n > 0]
    if not (any(c.isdigit() for c in present) and any(c.isalpha() for c in present)):
        return False
    entropy = 0.0
    for x in _ENTROPY.charset:
        p_x = float(counts[x]) / length
        if p_x > 0:
            entropy += -p_x * math.log(p_x, 2)
    return entropy >= WEAK_ENTROPY


@lru_cache(maxsize=4096)
def _key_class(key: str) -> str | None:
    """'strong', 'weak' or None for a key as written (`DB_PASSWORD`, `_authToken`, `x-api-key`)."""
    words = _words(key)
    if words in (["pwd"], ["oldpwd"]):
        return None  # the shell's working directory, not a password
    if not words or words[-1] in _DESCRIPTORS or (len(words) > 1 and words[-1] in _FILE_EXTENSIONS):
        return None
    name = "_".join(words)
    if _STRONG.search(name):
        return "strong"
    if _WEAK.search(name):
        return "weak"
    return None


def _words(key: str) -> list[str]:
    spaced = _CAMEL.sub("_", _SEPARATORS.sub("_", key.strip("\"'\\")))
    return [w for w in spaced.lower().split("_") if w]


def _alternation(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"(?:^|_)(?:{'|'.join(words)})(?:_|$)")


_STRONG = _alternation((*KEYWORD_DENYLIST, *_STRONG_EXTRA))
_WEAK = _alternation(_WEAK_WORDS)
_ENTROPY = Base64HighEntropyString()

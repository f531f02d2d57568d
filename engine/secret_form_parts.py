"""The pieces every credential form of `engine.secret_formats` is built from: a form's shape, a value as
a shell command gives it, the run of arguments before an option, an echoed value. Standard library only."""

from __future__ import annotations

ALNUM = "[A-Za-z0-9]"
# A form: (head, prefix, tail): a regex, a literal, a regex.
Form = tuple[str, str, str]


def forms(*prefixes: str, tail: str, head: str = "") -> tuple[Form, ...]:
    """One form per literal prefix, each with the same head and tail."""
    return tuple((head, prefix, tail) for prefix in prefixes)


def value(first: str) -> str:
    """A value as a shell command gives it: quoted (the quotes kept out), or bare, starting with a
    character of the class `first`."""
    return rf"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)"|(?P<t>{first}\S*))"""


VALUE = value(r"""[^\s'"]""")
# What may stand between a command's name and the option that takes the password.
ARGS = r"[^\n|;&]*?[ \t]"


def echoed(longest: int | None = None) -> str:
    """`echo VALUE` or `printf VALUE` (with options), the value quoted or bare: what a pipe then feeds.
    With `longest`, a quoted value may hold line ends, up to that many characters (`echo -e
    'PASS\\nPASS'`: the scanned text ends a line at each `\\n`)."""
    times = "+" if longest is None else f"{{1,{longest}}}"
    ends = r"\n" if longest is None else ""
    single, double = f"[^'{ends}]{times}", f'[^"{ends}]{times}'
    return (
        r"(?:echo|printf)[ \t]+(?:-[a-zA-Z]+[ \t]+)?"
        rf"""(?:'(?P<q>{single})'|"(?P<d>{double})"|(?P<t>[^\s'"|]+))"""
    )


ECHOED = echoed()
# A quoted literal, the quotes kept out; and a password in SQL, closed by `'`, without a `"` (a Python
# string holding SQL, `"PASSWORD '", "…"`, is code, not a password).
QUOTED = r"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)")"""
SQL_QUOTED = r"""(?P<t>[^'"\n]+)'"""
# A value given to a command, as version 6's (never starting with `-`), but not a shell operator or a
# redirection (`cargo login && cargo publish`, `bw unlock 2>/dev/null`: the tool asks): what may not
# stand before it, and its first character when bare (versions 7 and later).
NOT_REDIRECTION = r"(?!\d*[<>])"
ARG_FIRST = r"""[^\s'"\-&|;()<>]"""
ARG_VALUE = NOT_REDIRECTION + value(ARG_FIRST)
# `twine upload -u __token__ -p PASS`: a command's `-p`, as `mongo_password` reads it.
DASH_P = r"\b" + ARGS + r"-p[ \t]+" + ARG_VALUE

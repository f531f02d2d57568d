"""The credential formats sanitizer version 11 added (`engine.secret_formats` holds every version's and
their triggers): what `echo` printed of a variable named for a secret. `echo $GITHUB_TOKEN` (or
`echo "$API_KEY"`, `echo -n ${DB_PASSWORD}`) prints the value alone, with nothing a token rule or a
keyed rule could key on; version 9 redacts what `printenv API_TOKEN` prints, and this is its shell's
spelling. So does a one-line Python or Node program that prints it (`python3 -c "import os;
print(os.environ['API_KEY'])"`, `node -e "console.log(process.env.API_KEY)"`). As for versions 9 and
10, a tool result's text starts with the header naming its call (`[Bash result: echo $GITHUB_TOKEN]`),
and the body below it is the value.

Each echo form is the header (at a line's start), `echo` where a command starts in it, with `-n` or
`-e`, the variable that starts its first argument (`$NAME`, `${NAME}`, `${NAME:-}`, either in double
quotes, `"$NAME is set"` too) and the rest of that argument, and the body up to the next tool result's
header or the text's end (the group). The variable's name must name a secret
(`engine.secret_keys.names_secret`: `echo $HOME`, `echo "$INPUT" | jq` keep their output), and a body
that is one path alone is kept (`echo $SSH_AUTH_SOCK`, `echo $GOOGLE_APPLICATION_CREDENTIALS`: weak
names whose values are files). The trigger texts are the commands as written, `echo $` and `echo "$`
with their options, and the programs' calls (`print(os.environ[`, `print(os.getenv(`, …): a corpus
without any reads as under version 10. A JSON line spells the quote `\\"`, which the version scan reads
as `"` (`engine.sanitize.VersionScan`). Standard library only.
"""

from __future__ import annotations

from engine.secret_form_parts import Form, forms
from engine.secret_formats_v9 import COMMAND_AT, OUTPUT_KINDS, WORD, output
from engine.secret_formats_v10 import VERSION_10_FORMS

# `echo`'s spellings before the variable's name: its options, then `$` or `"$`.
_ECHOES = tuple(f"echo {option}{quote}$" for option in ("", "-n ", "-e ") for quote in ("", '"'))
# The variable's name (braced or not, the whole name), then the rest of the argument it starts (`}`,
# `${TOKEN:-}`, `$TOKEN:$USER`, `$TOKEN/x`: the value is printed all the same), a quote that closes
# it, then what `output` reads as the end of a command's name (a space, the header's `]`, the next
# command). `${#TOKEN}` (its length) starts no name.
_VARIABLE = r'\{?(?P<key>[A-Za-z_]\w*)(?!\w)[^\s"]*"?'

# A one-line program that prints the environment's value itself, given to Python's `-c` or Node's
# `-e` where a command starts in the header's command line (`python3 -c "import os;
# print(os.environ['API_KEY'])"`, `uv run python -c …`, `node -e "console.log(process.env.API_KEY)"`;
# not `grep -e "print(os.getenv(…))"`, nor the program's text echoed): the program's start, then,
# after the prefix, the quoted name (`.get` and `getenv` with a default too), the call's end and the
# program's quote. Each part is bounded, so a header of repeated names costs its length.
_PROGRAM = (
    COMMAND_AT
    + rf"(?:(?:uv|poetry|pipenv)[ \t]+run[ \t]+)?{WORD}*(?:python[\d.]*|node)[ \t][^\n]{{0,80}}?"
    + r"""-[ce][ \t]+['"][^\n]{0,200}?"""
)
_QUOTED_NAME = r"""['"](?P<key>[A-Za-z_]\w*)['"]"""
_DEFAULT = r"(?:[ \t]*,[^)\n]{0,80})?"
_PROGRAM_END = r"""\)['"]?"""

VERSION_11_FORMS: dict[str, tuple[Form, ...]] = {
    "secret_variable_output": (
        *forms(*_ECHOES, head=COMMAND_AT, tail=_VARIABLE + output()),
        *forms(
            "print(os.environ[",
            head=_PROGRAM,
            tail=_QUOTED_NAME + r"\]" + _PROGRAM_END + output(),
        ),
        *forms(
            "print(os.environ.get(",
            "print(os.getenv(",
            head=_PROGRAM,
            tail=_QUOTED_NAME + _DEFAULT + _PROGRAM_END + output(),
        ),
        *forms(
            "console.log(process.env.",
            head=_PROGRAM,
            tail=r"(?P<key>[A-Za-z_]\w*)" + _PROGRAM_END + output(),
        ),
    ),
}

# Every version's kinds whose secret is a tool result's whole body (`engine.sanitize` applies them to
# each result as rendered, header and body).
TOOL_OUTPUT_KINDS = (*OUTPUT_KINDS, *VERSION_10_FORMS, *VERSION_11_FORMS)

"""The credential formats sanitizer version 10 added (`engine.secret_formats` holds every version's and
their triggers): what a command-line tool printed when asked for its own session or API token. As for
version 9's (`engine.secret_formats_v9`), a tool result's text starts with the header naming its call
(`[Bash result: heroku auth:token]`), and the body below it is the token: `op signin --raw` and
`bw unlock --raw` print a random session key alone, `heroku auth:token` a UUID, which no token rule
can tell from an id; `bw unlock` without `--raw` prints it inside an `export BW_SESSION="…"` line
whose name no keyed rule knows. Standard library only.

Each form is the header (at a line's start), the command where a command starts in it, and the body up
to the next tool result's header or the text's end (the group). The trigger texts are the commands'
names, in the tool call's line of the transcript: a corpus without any reads as under version 9.
"""

from __future__ import annotations

from engine.secret_form_parts import Form, forms
from engine.secret_formats_v9 import COMMAND_AT, output

# What only checks or explains, and prints no token.
_NO_TOKEN = r"--check\b|--help\b|-h\b"

VERSION_10_FORMS: dict[str, tuple[Form, ...]] = {
    "auth_token_output": (
        # 1Password's `op signin` (`--raw`: the session token alone; else an `export OP_SESSION_…`
        # line); Bitwarden's `bw unlock` and `bw login` (`--raw`: the session key alone; else the key
        # in an `export BW_SESSION="…"` line), not `--check`
        *forms(
            "op signin", "bw unlock", "bw login", head=COMMAND_AT, tail=output(unless=_NO_TOKEN)
        ),
        # Heroku's API token (`heroku auth:token`) or a new authorization's (`Token:` among its fields)
        *forms(
            "heroku auth:token",
            "heroku authorizations:create",
            head=COMMAND_AT,
            tail=output(unless=_NO_TOKEN),
        ),
        # Fly.io's `fly auth token` (its older tokens, `fo1_…`, have no rule of their own)
        *forms(
            "fly auth token", "flyctl auth token", head=COMMAND_AT, tail=output(unless=_NO_TOKEN)
        ),
    ),
}

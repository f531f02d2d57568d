"""Scaffolding episodes: what the importer's sanitizer must strip, keep or skip.

Own and foreign MCP calls, quoted sentinels, credentials, echoed roster questions and self-transcripts.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from harness.synthetic.config import SyntheticError
from harness.synthetic.episode_kit import pick
from harness.synthetic.lines import Act, Prompt, Step
from harness.synthetic.tools import Ctx, bash_call, edit_call, mcp_call, read_call
from harness.synthetic.vocab import OTHERMEM_NOTES, Component


def ep_own_mcp(rng: random.Random, ctx: Ctx, tool: str, snippets: list[str]) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    if tool.endswith("search_memory"):
        args: dict[str, object] = {"query": f"{comp.name} recent changes", "limit": 5}
    else:
        args = {"chunk_id": f"{rng.getrandbits(128):032x}"}
    lines = snippets or [f"(no earlier notes about the {comp.name})"]
    text = f"Found {len(lines)} result(s):\n" + "\n".join(
        f"{i}. {s}" for i, s in enumerate(lines, 1)
    )
    return [
        Prompt(text=f"Before we start on the {comp.name}: what do we already know about it?"),
        Act(text="Let me check memory first.", calls=(mcp_call(tool, dict(args), text),)),
        Act(
            text=(
                f"There are earlier sessions touching the {comp.name}, nothing that blocks us. "
                "Where do you want to start?"
            )
        ),
    ]


def ep_other_mcp(rng: random.Random, ctx: Ctx) -> list[Step]:
    notes = rng.sample(OTHERMEM_NOTES, 2)
    text = "othermem: 2 notes\n" + "\n".join(f"- user {n}" for n in notes)
    return [
        Prompt(text="Do you remember how I like pull requests put together?"),
        Act(
            text="Checking your notes.",
            calls=(
                mcp_call(
                    "mcp__othermem__search_memory", {"query": "pull request preferences"}, text
                ),
            ),
        ),
        Act(text=f"From your notes: you {notes[0]}, and you {notes[1]}."),
    ]


def ep_sentinel_quote(rng: random.Random, ctx: Ctx, open_tag: str, close_tag: str) -> list[Step]:
    return [
        Prompt(
            text="Why do some of my prompts in old transcripts start with a block of recalled notes?"
        ),
        Act(
            text=(
                "Those blocks come from the recallbench UserPromptSubmit hook. It wraps what it recalls in "
                f"`{open_tag}` … `{close_tag}` so the importer can strip exactly that from your messages "
                "and nothing else; prose like this answer is left alone."
            )
        ),
    ]


def _anthropic_key_episode(
    rng: random.Random, ctx: Ctx, comp: Component, secret: str
) -> list[Step]:
    """An API key pasted into a prompt; the assistant declines to write it to a file."""
    return [
        Prompt(text=f"Use this key for the eval smoke test, it's the staging one: {secret}"),
        Act(
            text="I'd rather not paste it into files; I'll read it from the environment.",
            calls=(
                bash_call(ctx, "env | grep -c ANTHROPIC_API_KEY", "0", "Check the variable is set"),
            ),
        ),
        Act(text="It isn't exported in this shell. Add it to your shell profile and I'll rerun."),
    ]


def _aws_access_key_episode(
    rng: random.Random, ctx: Ctx, comp: Component, secret: str
) -> list[Step]:
    """An access key id quoted in a prompt about a failing CI push."""
    return [
        Prompt(
            text=f"CI can't push to the artifacts bucket. The access key id it uses is {secret}; is that the rotated one?"
        ),
        Act(
            text=(
                "I can't check rotation from here. The id format is valid; compare it with the one "
                "in the CI settings page, and if they differ, the runner is still on the old key."
            )
        ),
    ]


def _github_token_episode(rng: random.Random, ctx: Ctx, comp: Component, secret: str) -> list[Step]:
    """A bot token quoted in a prompt; the runbook edit leaves it out."""
    return [
        Prompt(
            text=f"The release bot token is {secret} and it expires Friday. Note the expiry in the runbook?"
        ),
        Act(
            text="Adding a reminder without the token itself.",
            calls=(
                edit_call(
                    ctx,
                    "README.md",
                    "## Release",
                    "## Release\n\nThe bot token expires on Friday; rotate it before then.",
                ),
            ),
        ),
        Act(text="Done; the runbook mentions the expiry but not the token."),
    ]


def _url_password_episode(rng: random.Random, ctx: Ctx, comp: Component, secret: str) -> list[Step]:
    """A database URL with its password, passed on a psql command line."""
    return [
        Prompt(text=f"How many rows does the staging table behind the {comp.name} have?"),
        Act(
            text="Counting on staging.",
            calls=(
                bash_call(
                    ctx,
                    f'psql "{secret}" -c "select count(*) from jobs"',
                    f"  count\n-------\n  {rng.randint(1000, 90000)}\n(1 row)",
                    "Count rows on staging",
                ),
            ),
        ),
        Act(text="That's in line with production, so the backlog is not a staging artefact."),
    ]


def _env_secret_episode(rng: random.Random, ctx: Ctx, comp: Component, secret: str) -> list[Step]:
    """A `.env` secret, pasted into the prompt or read back from the file."""
    env = ["DEBUG=false", "PORT=8080", secret, "LOG_LEVEL=info", "FEATURE_BULK=1"]
    if rng.random() < 0.5:
        return [
            Prompt(
                text="My local .env is below; why does the app boot with the wrong settings?\n```\n"
                + "\n".join(env)
                + "\n```"
            ),
            Act(text="`DEBUG=false` overrides the default; drop it from `.env` for local work."),
        ]
    return [
        Prompt(text="Why does the app boot with the wrong settings locally?"),
        Act(text="Checking the local env file.", calls=(read_call(ctx, ".env", env),)),
        Act(text="`DEBUG=false` overrides the default; drop it from `.env` for local work."),
    ]


def _private_key_episode(rng: random.Random, ctx: Ctx, comp: Component, secret: str) -> list[Step]:
    """A private key, pasted into the prompt or read back from the key file."""
    if rng.random() < 0.5:
        return [
            Prompt(
                text=f"Deploy fails with 'invalid format' for this key, what is wrong with it?\n\n{secret}"
            ),
            Act(
                text=(
                    "The key itself is well-formed. The error usually means CRLF line endings from a "
                    "Windows checkout; normalise them in the deploy job, and rotate this key since it "
                    "has now been pasted into a transcript."
                )
            ),
        ]
    return [
        Prompt(
            text="Deploy fails with 'invalid format' for the key. Check deploy/keys/staging_deploy.pem?"
        ),
        Act(calls=(read_call(ctx, "deploy/keys/staging_deploy.pem", secret.splitlines()),)),
        Act(
            text=(
                "The key file itself is well-formed. The error usually means CRLF line endings from a "
                "Windows checkout; normalise them in the deploy job."
            )
        ),
    ]


_CREDENTIAL_EPISODES: dict[str, Callable[[random.Random, Ctx, Component, str], list[Step]]] = {
    "anthropic_key": _anthropic_key_episode,
    "aws_access_key": _aws_access_key_episode,
    "github_token": _github_token_episode,
    "url_password": _url_password_episode,
    "env_secret": _env_secret_episode,
    "private_key": _private_key_episode,
}


def ep_credential(rng: random.Random, ctx: Ctx, kind: str, secret: str) -> list[Step]:
    """A dialogue that carries `secret` (a credential of `kind`) where the sanitizer must find it."""
    # The component is drawn for every kind, used or not, so the draws that follow never shift.
    comp = rng.choice(ctx.profile.components)
    make = _CREDENTIAL_EPISODES.get(kind)
    if make is None:
        msg = f"unknown credential kind {kind!r}; choose one of {sorted(_CREDENTIAL_EPISODES)}"
        raise SyntheticError(msg)
    return make(rng, ctx, comp, secret)


def ep_echo(rng: random.Random, ctx: Ctx, questions: list[str]) -> list[Step]:
    steps: list[Step] = []
    for i, q in enumerate(questions):
        steps.append(
            Prompt(
                text=(
                    "I'm drafting questions for the recall benchmark roster. Is this one fair: "
                    f'"{q}"'
                    if i == 0
                    else f'Another draft question: "{q}"'
                ),
                slot="fixed",
            )
        )
        steps.append(
            Act(
                text=pick(
                    rng,
                    "It's answerable from the transcripts, but it leaks wording from the session; "
                    "paraphrase it before sealing.",
                    "Fair, though make sure the wording doesn't come from the session it points to.",
                )
            )
        )
    return steps


def ep_self(rng: random.Random, ctx: Ctx, marker: str, excerpt: str) -> list[Step]:
    facts = []
    for line in excerpt.splitlines():
        body = line.removeprefix("assistant: ").replace('"', "'")
        kind = "commit" if body.startswith("committed ") else "decision"
        facts.append('{"kind":"' + kind + '","text":"' + body[:160] + '"}')
    facts.append('{"kind":"file","path":"' + rng.choice(ctx.profile.components).path + '"}')
    return [
        Prompt(
            text=(
                f"{marker} Extract durable facts (decisions, commits, file changes) from this transcript "
                f"excerpt. Reply with one JSON object per line.\n\n<transcript>\n{excerpt}\n</transcript>"
            ),
            slot="fixed",
        ),
        Act(text="\n".join(facts)),
    ]

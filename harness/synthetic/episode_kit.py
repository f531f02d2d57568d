"""Building blocks shared by every episode: phrasing picks, code edits, listings and test runs.

Each helper draws only from the generator it is given, in a fixed order, so the episodes built on them
stay pure functions of (seed, context, fact).
"""

from __future__ import annotations

import random

from harness.synthetic.lines import Call
from harness.synthetic.text import (
    code_listing,
    func_name,
    function_lines,
    random_func,
    runner_output,
)
from harness.synthetic.tools import Ctx, bash_call
from harness.synthetic.vocab import CODE_NOUNS, CODE_VERBS

DECISIONS_FILE = "docs/decisions.md"


def pick(rng: random.Random, *options: str) -> str:
    """One of the phrasings, drawn from `rng`."""
    return rng.choice(options)


def upper_first(text: str) -> str:
    """`text` with its first character upper-cased (unlike `str.capitalize`, the rest is kept)."""
    return text[:1].upper() + text[1:]


def maybe_think(rng: random.Random, text: str) -> str | None:
    """A short private reasoning block on about half of the modern messages."""
    return text if rng.random() < 0.5 else None


def edit_pair(rng: random.Random, ctx: Ctx) -> tuple[str, str]:
    """An (old, new) code fragment for an Edit call."""
    lang = ctx.profile.language
    body = function_lines(rng, lang, random_func(rng, lang))
    core = [line for line in body if line.strip()][1:5]
    old = "\n".join(core)
    indent = "    " if lang in ("python", "rust") else ("\t" if lang == "go" else "  ")
    extra = {
        "python": f'{indent}log.info("{rng.choice(CODE_VERBS)} {rng.choice(CODE_NOUNS)}")',
        "typescript": f'{indent}logger.info("{rng.choice(CODE_VERBS)} {rng.choice(CODE_NOUNS)}");',
        "rust": f'{indent}debug!("{rng.choice(CODE_VERBS)} {rng.choice(CODE_NOUNS)}");',
        "go": f'{indent}logger.Info("{rng.choice(CODE_VERBS)} {rng.choice(CODE_NOUNS)}")',
    }[lang]
    return old, f"{old}\n{extra}"


def file_listing(rng: random.Random, ctx: Ctx, rel: str) -> list[str]:
    """Source lines of a plausible file of three to six functions."""
    return code_listing(rng, ctx.profile, rel, rng.randint(3, 6))


def suite_run(
    rng: random.Random, ctx: Ctx, *, failed: int = 0, label: str = "", detail: str = ""
) -> Call:
    """A run of the project's test suite with `failed` failures."""
    return bash_call(
        ctx,
        ctx.profile.test_command,
        runner_output(rng, ctx.profile, failed=failed, label=label, detail=detail),
        "Run the test suite",
        error=failed > 0,
    )


def failing_test_name(rng: random.Random, ctx: Ctx) -> str:
    """A test function name in the project's language."""
    return func_name(
        ctx.profile.language,
        "test",
        rng.choice(CODE_VERBS),
        rng.choice(CODE_NOUNS),
        rng.choice(CODE_NOUNS),
    )

"""Planted-fact episodes: commits, citations, decisions, temporal chains, multi-hop pairs, incidents.

These hold the gold answers of the rosters. Every function returns `Step`s and draws only from the
generator it is given, so an episode is a pure function of (seed, context, fact).
"""

from __future__ import annotations

import random

from harness.synthetic.episode_kit import (
    DECISIONS_FILE,
    edit_pair,
    file_listing,
    maybe_think,
    pick,
    suite_run,
    upper_first,
)
from harness.synthetic.facts import (
    ChainFact,
    CitationFact,
    CommitFact,
    DecisionFact,
    HopFact,
    IncidentFact,
)
from harness.synthetic.lines import Act, Prompt, Step
from harness.synthetic.text import const_line, log_excerpt, runner_output, short_path
from harness.synthetic.tools import (
    Ctx,
    bash_call,
    edit_call,
    grep_call,
    multiedit_call,
    read_call,
    write_call,
)
from harness.synthetic.vocab import BUG_CAUSES, FIX_PHRASES


def _commit_command(commit: CommitFact) -> str:
    files = " ".join(sorted({commit.component.path}))
    if commit.heredoc:
        return (
            f"git add {files} && git commit -m \"$(cat <<'EOF'\n{commit.message}\n\n"
            "🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\n"
            'Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)"'
        )
    return f'git add {files} && git commit -m "{commit.message}"'


def _commit_work(rng: random.Random, ctx: Ctx, commit: CommitFact) -> list[Step]:
    comp = commit.component
    listing = file_listing(rng, ctx, comp.path)
    old, new = edit_pair(rng, ctx)
    verb = commit.verb[0]
    return [
        Prompt(
            text=pick(
                rng,
                f"In the {comp.name}: {verb} the {commit.obj} {commit.qual}. Commit when it's green.",
                f"Next up for the {comp.name}, {verb} the {commit.obj} {commit.qual}, then commit.",
                f"Please {verb} the {commit.obj} {commit.qual} ({short_path(comp.path)}) and commit it.",
            ),
            slot="gold",
        ),
        Act(
            thinking=maybe_think(rng, f"Look at {comp.path} before changing the {commit.obj}."),
            text=f"Reading `{short_path(comp.path)}` first.",
            calls=(read_call(ctx, comp.path, listing),),
        ),
        Act(
            text=f"Making the change to the {commit.obj}.",
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[6:20], start=7),),
        ),
        Act(calls=(suite_run(rng, ctx),)),
    ]


def ep_commit(rng: random.Random, ctx: Ctx, commit: CommitFact) -> list[Step]:
    steps = _commit_work(rng, ctx, commit)
    changed = rng.randint(1, 3)
    result = (
        f"[{ctx.branch} {commit.short}] {commit.message}\n {changed} file{'s' if changed > 1 else ''} "
        f"changed, {rng.randint(3, 120)} insertions(+), {rng.randint(0, 40)} deletions(-)"
    )
    if rng.random() < 0.5:
        check = bash_call(
            ctx,
            "git log -1 --format='%H %s'",
            f"{commit.full_hash} {commit.message}",
            "Show the new commit",
        )
    else:
        check = bash_call(ctx, "git rev-parse HEAD", commit.full_hash, "Print the commit hash")
    steps += [
        Act(
            text="Tests pass. Committing.",
            calls=(bash_call(ctx, _commit_command(commit), result, "Commit the change"),),
        ),
        Act(calls=(check,)),
        Act(
            text=pick(
                rng,
                f"Committed as `{commit.short}` on `{ctx.branch}`.",
                f"Done. The commit is `{commit.short}`.",
                f"Committed (`{commit.short}`); not pushed yet.",
            )
        ),
    ]
    return steps


def ep_commit_attempt(rng: random.Random, ctx: Ctx, commit: CommitFact) -> list[Step]:
    """The near-duplicate's attempt: same work, but the pre-commit hook rejects the commit."""
    steps = _commit_work(rng, ctx, commit)
    hook, rule = {
        "python": ("ruff", "F841 Local variable `result` is assigned to but never used"),
        "typescript": (
            "eslint",
            "error  'result' is assigned a value but never used  no-unused-vars",
        ),
        "rust": ("clippy", "warning: unused variable: `result` (denied by -D warnings)"),
        "go": ("golangci-lint", "ineffectual assignment to result (ineffassign)"),
    }[ctx.profile.language]
    failure = (
        f"check yaml...............................................................Passed\n"
        f"{hook:.<73}Failed\n"
        f"- hook id: {hook}\n- exit code: 1\n\n{commit.component.path}:{rng.randint(10, 99)}:5: {rule}\n"
        "Found 1 error."
    )
    steps += [
        Act(
            text="Tests pass. Committing.",
            calls=(
                bash_call(ctx, _commit_command(commit), failure, "Commit the change", error=True),
            ),
        ),
        Act(
            text="The pre-commit hook rejected the commit. Want me to fix the lint error and retry?"
        ),
        Prompt(text="No, leave it. I'll redo this in a fresh session later.", slot="fixed"),
        Act(text="OK, leaving the working tree as it is."),
    ]
    return steps


def ep_citation(rng: random.Random, ctx: Ctx, cite: CitationFact) -> list[Step]:
    commit = cite.commit
    comp = commit.component
    listing = file_listing(rng, ctx, comp.path)
    return [
        Prompt(
            text=pick(
                rng,
                f"Something in the {comp.name} regressed. Could it be {commit.short} from the other day "
                f"(the {commit.obj} change)?",
                f"Is the slowdown in the {comp.name} related to {commit.short}? That touched the {commit.obj}.",
            ),
            slot="gold",
        ),
        Act(
            text="Let me read the current code rather than guess.",
            calls=(read_call(ctx, comp.path, listing),),
        ),
        Act(
            text=(
                f"I don't think {commit.short} is the culprit: it only changed how we handle the "
                f"{commit.obj}, and the regression shows up in a different path. More likely "
                f"{rng.choice(BUG_CAUSES)}."
            )
        ),
    ]


def ep_decision(rng: random.Random, ctx: Ctx, d: DecisionFact) -> list[Step]:
    comp = d.component
    return [
        Prompt(
            text=pick(
                rng,
                f"We need to pick an approach for the {comp.name}: {d.choice[0]} or {d.alternative}? "
                "I'd like to settle it today.",
                f"For the {comp.name}, should we go with {d.choice[0]} or {d.alternative}?",
            ),
            slot="gold",
        ),
        Act(
            thinking=maybe_think(rng, "Weigh operational cost against flexibility."),
            text=(
                f"Both work. {upper_first(d.choice[0])} is simpler to operate and fits what we already run; "
                f"{d.alternative} gives more control but adds moving parts. Given the current pain in the "
                f"{comp.name}, I lean towards {d.choice[0]}."
            ),
        ),
        Prompt(text=f"Agreed, {d.choice[0]} it is.", slot="gold"),
        Act(
            text=f"{d.text} I'll record it in `{DECISIONS_FILE}`.",
            calls=(
                edit_call(
                    ctx,
                    DECISIONS_FILE,
                    "## Open questions",
                    f"## {comp.name}\n\n{d.text}\n\n## Open questions",
                ),
            ),
        ),
        Act(text="Recorded."),
    ]


def ep_chain_step(rng: random.Random, ctx: Ctx, chain: ChainFact, k: int) -> list[Step]:
    comp = chain.component
    option = chain.options[k]
    if k == 0:
        alternatives = [o for o in chain.options if o != option][:1]
        alt = alternatives[0] if alternatives else "something else"
        return [
            Prompt(text=f"What should the {chain.aspect} be for the {comp.name}?", slot="gold"),
            Act(
                text=(
                    f"Two realistic options: {option}, or {alt}. The first is easier to reason about "
                    "for now; we can revisit once we have data."
                )
            ),
            Prompt(text=f"Go with {option}.", slot="gold"),
            Act(
                text=f"Decision on the {chain.aspect} for the {comp.name}: {option}. Noted in `{DECISIONS_FILE}`.",
                calls=(
                    edit_call(
                        ctx,
                        DECISIONS_FILE,
                        "## Open questions",
                        f"## {comp.name}: {chain.aspect}\n\n{option}\n\n## Open questions",
                    ),
                ),
            ),
        ]
    previous = chain.options[k - 1]
    reason = chain.reasons[k - 1]
    return [
        Prompt(
            text=(
                f"I want to revisit the {chain.aspect} for the {comp.name}: {previous} is not working "
                f"out, {reason}."
            ),
            slot="gold",
        ),
        Act(
            text=(
                f"Agreed. Reversing the earlier call on the {chain.aspect} for the {comp.name}: we now "
                f"use {option} instead of {previous}."
            ),
            calls=(
                edit_call(
                    ctx,
                    DECISIONS_FILE,
                    f"## {comp.name}: {chain.aspect}\n\n{previous}",
                    f"## {comp.name}: {chain.aspect}\n\n{option} (replaces {previous})",
                ),
            ),
        ),
        Act(text=f"Updated `{DECISIONS_FILE}`; the old entry is marked as replaced."),
    ]


def _hop_file_lines(ctx: Ctx, hop: HopFact) -> list[str]:
    lang = ctx.profile.language
    const = hop.param[1]
    header = {
        "python": ["from __future__ import annotations", "", const_line(lang, const, hop.old), ""],
        "typescript": [const_line(lang, const, hop.old), ""],
        "rust": [const_line(lang, const, hop.old), ""],
        "go": ["package " + hop.file.rsplit("/", 2)[-2], "", const_line(lang, const, hop.old), ""],
    }[lang]
    body = {
        "python": [
            f"def {hop.ident}(items: list[dict[str, object]]) -> list[dict[str, object]]:",
            "    return items[:" + const + "]",
        ],
        "typescript": [
            f"export function {hop.ident}(items: unknown[]): unknown[] {{",
            f"  return items.slice(0, {const});",
            "}",
        ],
        "rust": [
            f"pub fn {hop.ident}(items: &mut Vec<u64>) {{",
            f"    items.truncate({const} as usize);",
            "}",
        ],
        "go": [f"func {hop.ident}(items []string) []string {{", f"\treturn items[:{const}]", "}"],
    }[lang]
    return header + body


def ep_hop_a(rng: random.Random, ctx: Ctx, hop: HopFact, extra_edits: int) -> list[Step]:
    comp = hop.component
    lines = _hop_file_lines(ctx, hop)
    lang = ctx.profile.language
    comment = "#" if lang == "python" else "//"
    last = lines[-2] if lang != "python" else lines[-1]
    tidy = [
        edit_call(ctx, hop.file, last, f"{last}  {comment} bounded, pass {n + 2}")
        for n in range(extra_edits)
    ]
    notes = [f"{comment} Helpers for the {comp.name}.", f"{comment} Keep this module free of I/O."]
    return [
        Prompt(
            text=pick(
                rng,
                f"The {comp.name} needs a helper that {hop.purpose}. Put it in its own module.",
                f"Add a small helper for the {comp.name} that {hop.purpose}.",
            ),
            slot="gold",
        ),
        Act(
            text=f"I'll put it in a new module, `{hop.file}`.",
            calls=(write_call(ctx, hop.file, lines),),
        ),
        Act(
            text=f"Wiring `{hop.ident}` up and documenting the module.",
            calls=(
                multiedit_call(
                    ctx,
                    hop.file,
                    [(lines[0], f"{notes[0]}\n{lines[0]}"), (last, f"{last}  {comment} bounded")],
                ),
                *tidy,
            ),
        ),
        Act(
            calls=(
                bash_call(
                    ctx,
                    f"{ctx.profile.test_command} -k {hop.ident}"
                    if lang == "python"
                    else f"{ctx.profile.test_command} {hop.ident}",
                    runner_output(rng, ctx.profile),
                    "Run the new helper's tests",
                ),
            )
        ),
        Act(
            text=(
                f"Added `{hop.ident}()` in `{hop.file}`; it {hop.purpose}. The {comp.name} calls it "
                f"once per cycle. {upper_first(notes[1][len(comment) + 1 :])} Tests pass."
            )
        ),
    ]


def ep_hop_b(rng: random.Random, ctx: Ctx, hop: HopFact) -> list[Step]:
    name, const, _, unit = hop.param
    lang = ctx.profile.language
    direction = "low" if hop.new > hop.old else "high"
    line_old = const_line(lang, const, hop.old)
    line_new = const_line(lang, const, hop.new)
    why = pick(
        rng,
        "for bursty traffic",
        "for the slow upstream",
        "for large tenants",
        "under the nightly load",
    )
    return [
        Prompt(
            text=(
                f"The {name} in `{hop.file}` is too {direction}; we keep tripping over it "
                f"{why}. Change it to {hop.new}{unit}."
            ),
            slot="gold",
        ),
        Act(calls=(grep_call(const, f"{hop.file}:3:{line_old}", path=ctx.abs(hop.file)),)),
        Act(
            text=f"Changing `{const}` from {hop.old} to {hop.new}.",
            calls=(
                edit_call(ctx, hop.file, line_old, line_new, snippet=["", line_new, ""], start=2),
            ),
        ),
        Act(calls=(suite_run(rng, ctx),)),
        Act(
            text=(
                f"Set `{const}` to {hop.new}{unit} in `{hop.file}` (was {hop.old}). The {name} was too "
                f"{direction} {why}; tests pass."
            )
        ),
    ]


def ep_incident(rng: random.Random, ctx: Ctx, inc: IncidentFact) -> list[Step]:
    comp = inc.component
    listing = file_listing(rng, ctx, comp.path)
    old, new = edit_pair(rng, ctx)
    cause_i = rng.randrange(len(BUG_CAUSES))
    return [
        Prompt(
            text=(
                f"The {comp.name} crashed with `{inc.error}` right after {inc.trigger}. Logs:\n```\n"
                f"{log_excerpt(rng, comp.name, inc.error, ctx.day)}\n```\nWhat happened?"
            ),
            slot="gold",
        ),
        Act(
            text=f"Reading `{short_path(comp.path)}` to see what runs at that point.",
            calls=(read_call(ctx, comp.path, listing),),
        ),
        Act(
            text=(
                f"Root cause: {inc.trigger} exposed a path where {BUG_CAUSES[cause_i]}; under that load the "
                f"{comp.name} surfaced it as `{inc.error}`. Fix: {FIX_PHRASES[cause_i]}."
            ),
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[3:15], start=4),),
        ),
        Act(calls=(suite_run(rng, ctx),)),
        Act(text=f"Patched. I'd also add an alert so we see `{inc.error}` before users do."),
    ]

"""Dialogue episodes: filler work (debugging, features, reviews...) and the planted facts.

Every function returns `Step`s and draws only from the generator it is given, so an episode is a pure
function of (seed, context, fact) and can be copied verbatim into a near-duplicate session.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from harness.synthetic.facts import (
    ChainFact,
    CitationFact,
    CommitFact,
    DecisionFact,
    HopFact,
    IncidentFact,
)
from harness.synthetic.lines import Act, Call, Command, Prompt, Step, SubAgent
from harness.synthetic.text import (
    _FUNCS,
    code_listing,
    const_line,
    diff_output,
    func_name,
    git_status,
    grep_output,
    install_output,
    log_excerpt,
    random_func,
    runner_output,
    short_path,
)
from harness.synthetic.tools import (
    Ctx,
    bash_call,
    edit_call,
    glob_call,
    grep_call,
    mcp_call,
    multiedit_call,
    read_call,
    todo_call,
    write_call,
)
from harness.synthetic.vocab import (
    BUG_CAUSES,
    CODE_NOUNS,
    CODE_VERBS,
    CONCERNS,
    FEATURES,
    FIX_PHRASES,
    LANG_ERRORS,
    OTHERMEM_NOTES,
    PARAMS,
    SITUATIONS,
)

DECISIONS_FILE = "docs/decisions.md"


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _think(rng: random.Random, text: str) -> str | None:
    """A short private reasoning block on about half of the modern messages."""
    return text if rng.random() < 0.5 else None


def _edit_pair(rng: random.Random, ctx: Ctx) -> tuple[str, str]:
    """An (old, new) code fragment for an Edit call."""
    lang = ctx.profile.language
    body = _FUNCS[lang](rng, random_func(rng, lang))
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


def _listing(rng: random.Random, ctx: Ctx, rel: str) -> list[str]:
    return code_listing(rng, ctx.profile, rel, rng.randint(3, 6))


def _tests(
    rng: random.Random, ctx: Ctx, *, failed: int = 0, label: str = "", detail: str = ""
) -> Call:
    return bash_call(
        ctx,
        ctx.profile.test_command,
        runner_output(rng, ctx.profile, failed=failed, label=label, detail=detail),
        "Run the test suite",
        error=failed > 0,
    )


def _test_name(rng: random.Random, ctx: Ctx) -> str:
    return func_name(
        ctx.profile.language,
        "test",
        rng.choice(CODE_VERBS),
        rng.choice(CODE_NOUNS),
        rng.choice(CODE_NOUNS),
    )


# ---------------------------------------------------------------------------------------------
# Filler


def ep_debug(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    err = rng.choice(LANG_ERRORS[ctx.profile.language])
    sit = rng.choice(SITUATIONS)
    fn = random_func(rng, ctx.profile.language)
    cause_i = rng.randrange(len(BUG_CAUSES))
    prompt = _pick(
        rng,
        f"The {comp.name} is throwing `{err}` when {sit}. Can you figure out why?",
        f"Getting `{err}` from {short_path(comp.path)} in CI, only when {sit}. Take a look?",
        f"{comp.name[:1].upper()}{comp.name[1:]} started failing after yesterday's deploy:\n```\n"
        f"{log_excerpt(rng, comp.name, err, ctx.day)}\n```\nLooks like it happens when {sit}.",
        f"Something is off in the {comp.name}: `{err}`. Repro is flaky but seems tied to when {sit}.",
    )
    listing = _listing(rng, ctx, comp.path)
    old, new = _edit_pair(rng, ctx)
    others = [c.path for c in rng.sample(ctx.profile.components, 2)]
    return [
        Prompt(text=prompt),
        Act(
            thinking=_think(rng, f"Need to see how {fn} is called before touching {comp.path}."),
            text=_pick(
                rng,
                f"I'll start by reading `{comp.path}` and then look for callers of `{fn}`.",
                f"Let me look at `{short_path(comp.path)}` first.",
                "Let me check the code path involved.",
            ),
            calls=(read_call(ctx, comp.path, listing),),
        ),
        Act(calls=(grep_call(fn, grep_output(rng, ctx.profile, fn, [comp.path, *others])),)),
        Act(
            text=(
                f"Found it. In `{fn}` ({short_path(comp.path)}) {BUG_CAUSES[cause_i]}, so when {sit} "
                f"we end up raising `{err.split(':')[0]}`. The fix is to {FIX_PHRASES[cause_i]}. "
                f"{_pick(rng, 'I will keep the change minimal.', 'This also covers the retry path.', 'No API change is needed.')}"
            ),
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[8:22], start=9),),
        ),
        Act(text="Now the tests.", calls=(_tests(rng, ctx),)),
        Act(
            text=_pick(
                rng,
                f"Fixed. The {comp.name} now handles the case where {sit}; all tests pass. "
                "I did not add a regression test yet; want one?",
                f"All green. Summary:\n\n- **Cause**: {BUG_CAUSES[cause_i]}\n- **Fix**: {FIX_PHRASES[cause_i]}\n"
                f"- **File**: `{comp.path}`",
                f"Done: `{err.split(':')[0]}` no longer occurs when {sit}. The suite passes locally.",
            )
        ),
    ]


def ep_feature(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    feature = rng.choice(FEATURES)
    fn = random_func(rng, ctx.profile.language)
    items = [f"Read the {comp.name}", f"Add {feature}", "Write tests", "Run the suite"]
    listing = _listing(rng, ctx, comp.path)
    old, new = _edit_pair(rng, ctx)
    test_files = [f for f in ctx.profile.extra_files if "test" in f]
    test_rel = rng.choice(test_files) if test_files else comp.path
    old2, new2 = _edit_pair(rng, ctx)
    return [
        Prompt(
            text=_pick(
                rng,
                f"Add {feature} to the {comp.name}.",
                f"Can we get {feature} in the {comp.name}? Keep it small.",
                f"I'd like {feature} for the {comp.name}, with tests please.",
            )
        ),
        Act(
            text=f"I'll plan this out: {feature} in `{short_path(comp.path)}`, plus tests.",
            calls=(todo_call(items, 0),),
        ),
        Act(calls=(read_call(ctx, comp.path, listing),)),
        Act(
            thinking=_think(rng, f"{fn} is the natural place to hook in {feature}."),
            text=f"`{fn}` is the natural place for this. Adding it there.",
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[4:18], start=5),),
        ),
        Act(
            text="And a test for the new behaviour.",
            calls=(edit_call(ctx, test_rel, old2, new2),),
        ),
        Act(calls=(_tests(rng, ctx), todo_call(items, 4))),
        Act(
            text=(
                f"Added {feature} to the {comp.name}:\n\n"
                f"- `{comp.path}`: new branch in `{fn}`\n- `{test_rel}`: covers the new path\n\n"
                f"{_pick(rng, 'Tests pass.', 'Suite is green.', 'All tests pass locally.')}"
            )
        ),
    ]


def ep_explain(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    concern = rng.choice(CONCERNS)
    f1, f2, f3 = (random_func(rng, ctx.profile.language) for _ in range(3))
    listing = _listing(rng, ctx, comp.path)
    other = rng.choice([c for c in ctx.profile.components if c != comp])
    return [
        Prompt(
            text=_pick(
                rng,
                f"How does the {comp.name} handle {concern}?",
                f"Walk me through {concern} in the {comp.name}.",
                f"I'm new to this part of the code. What does the {comp.name} do about {concern}?",
            )
        ),
        Act(
            text="Let me read the relevant code.",
            calls=(
                grep_call(f1, grep_output(rng, ctx.profile, f1, [comp.path, other.path])),
                read_call(ctx, comp.path, listing),
            ),
        ),
        Act(
            text=(
                f"## {concern.capitalize()} in the {comp.name}\n\n"
                f"1. **Entry point**: `{f1}` in `{comp.path}` receives the {rng.choice(CODE_NOUNS)} and "
                f"validates it before anything else runs.\n"
                f"2. **Core path**: `{f2}` does the work; on failure it "
                f"{_pick(rng, 'logs and re-raises', 'wraps the error with context', 'returns a typed error')} "
                f"so callers can decide.\n"
                f"3. **Hand-off**: results go to the {other.name} through `{f3}`.\n\n"
                f"### Edge cases\n\n- When {rng.choice(SITUATIONS)}, nothing special happens today; that "
                f"is probably worth a test.\n- {concern.capitalize()} is configured in one place "
                f"(`{rng.choice(ctx.profile.extra_files)}`), so changes stay local.\n\n"
                f"### Gaps\n\n- {_pick(rng, 'There is no metric for this path.', 'The timeout is not configurable.', 'Errors lose their original stack.')}\n"
                f"- {_pick(rng, 'Two callers duplicate the same check.', 'The docstring is out of date.', 'Nothing covers the empty case.')}"
            )
        ),
    ]


def ep_tweak(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    name, const, values, unit = rng.choice(PARAMS)
    old, new = rng.sample(values, 2)
    direction = "low" if new > old else "high"
    line = const_line(ctx.profile.language, const, old)
    line_new = const_line(ctx.profile.language, const, new)
    listing = _listing(rng, ctx, comp.path)
    return [
        Prompt(
            text=_pick(
                rng,
                f"The {name} in the {comp.name} feels too {direction}. {rng.choice(SITUATIONS).capitalize()} makes it obvious.",
                f"Can you adjust the {name} for the {comp.name}? It's too {direction} right now.",
                f"Let's tune the {name} in `{short_path(comp.path)}`; {old}{unit} is too {direction}.",
            )
        ),
        Act(calls=(grep_call(const, f"{comp.path}:{rng.randint(9, 14)}:{line}"),)),
        Act(
            text=f"Changing `{const}` from {old} to {new}.",
            calls=(edit_call(ctx, comp.path, line, line_new, snippet=listing[:14]),),
        ),
        Act(calls=(_tests(rng, ctx),)),
        Act(
            text=(
                f"Set `{const}` to {new}{unit} in `{comp.path}` (was {old}). The {name} was too {direction} "
                f"{_pick(rng, 'for bursty traffic', 'for the slow upstream', 'for large tenants', 'for CI')}; tests pass."
            )
        ),
    ]


def ep_testfix(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    label = _test_name(rng, ctx)
    detail = _pick(
        rng,
        f"AssertionError: expected {rng.randint(2, 9)} items, got {rng.randint(0, 1)}",
        "AssertionError: assert None == 'ok'",
        f"expected status 200, received {rng.choice((400, 409, 500))}",
    )
    test_files = [f for f in ctx.profile.extra_files if "test" in f] or [comp.path]
    test_rel = rng.choice(test_files)
    listing = _listing(rng, ctx, test_rel)
    old, new = _edit_pair(rng, ctx)
    return [
        Prompt(
            text=_pick(
                rng,
                f"`{label}` is failing on main. Fix it?",
                "CI is red again, can you look?",
                f"Tests broke after the last merge, something around the {comp.name}.",
            )
        ),
        Act(
            text="Reproducing locally.",
            calls=(_tests(rng, ctx, failed=1, label=label, detail=detail),),
        ),
        Act(calls=(read_call(ctx, test_rel, listing),)),
        Act(
            text=(
                f"The test asserts on behaviour the {comp.name} changed last week; the fixture still builds "
                f"the old shape. Updating the fixture rather than the code, since the new behaviour is intended."
            ),
            calls=(edit_call(ctx, test_rel, old, new),),
        ),
        Act(calls=(_tests(rng, ctx),)),
        Act(text=f"`{label}` passes again and nothing else regressed."),
    ]


def ep_deps(rng: random.Random, ctx: Ctx) -> list[Step]:
    lib, version = rng.choice(ctx.profile.libraries)
    prev = version.rsplit(".", 1)[0] + ".0"
    manifest = ctx.profile.manifest
    lines = [f'"{lib}" = "{prev}"', f'"{rng.choice(ctx.profile.libraries)[0]}" = "x"']
    return [
        Prompt(
            text=_pick(
                rng,
                f"Bump {lib} to {version}.",
                f"Renovate wants {lib} {version}; can you do it by hand and check nothing breaks?",
                f"Upgrade {lib} ({prev} -> {version}) please.",
            )
        ),
        Act(calls=(read_call(ctx, manifest, lines),)),
        Act(
            text=f"Updating `{manifest}`.",
            calls=(edit_call(ctx, manifest, f"{lib} {prev}", f"{lib} {version}"),),
        ),
        Act(
            calls=(
                bash_call(
                    ctx,
                    {
                        "python": "uv sync",
                        "typescript": "pnpm install",
                        "rust": f"cargo update -p {lib}",
                        "go": f"go get {lib}@{version}",
                    }[ctx.profile.language],
                    install_output(rng, ctx.profile, lib, version),
                    "Install the new version",
                ),
            )
        ),
        Act(calls=(_tests(rng, ctx),)),
        Act(
            text=_pick(
                rng,
                f"{lib} is now {version}. The changelog mentions no breaking changes for what we use; tests pass.",
                f"Bumped {lib} to {version}. One deprecation warning shows up in the test output but nothing fails.",
            )
        ),
    ]


def ep_review(rng: random.Random, ctx: Ctx) -> list[Step]:
    comps = rng.sample(ctx.profile.components, 2)
    files = [c.path for c in comps]
    body = _FUNCS[ctx.profile.language](rng, random_func(rng, ctx.profile.language))
    diff = diff_output(files[0], body[1:4], body[1:3] + body[4:7], rng.randint(10, 120))
    return [
        Prompt(
            text=_pick(
                rng,
                "Review my uncommitted changes before I push.",
                "Can you sanity-check the diff?",
                "Quick review of what I have locally?",
            )
        ),
        Act(
            calls=(
                bash_call(
                    ctx,
                    "git status",
                    git_status(rng, ctx.branch, files),
                    "Show working tree status",
                ),
                bash_call(ctx, "git diff", diff, "Show unstaged changes"),
            )
        ),
        Act(
            text=(
                f"Review of the change to `{short_path(files[0])}`:\n\n"
                f"- The new early return is right, but {_pick(rng, 'it skips the metric', 'it swallows the error', 'the log line lost its context')}.\n"
                f"- {_pick(rng, 'Naming is consistent with the rest of the module.', 'Consider a constant for the magic number.', 'The comment above still describes the old flow.')}\n"
                f"- `{short_path(files[1])}` shows as modified but the diff is whitespace only; "
                f"{_pick(rng, 'drop it from the commit', 'probably the formatter', 'safe to keep')}.\n\n"
                f"Overall {_pick(rng, 'good to push after the first point', 'fine', 'LGTM with one nit')}."
            )
        ),
    ]


def ep_explore(rng: random.Random, ctx: Ctx) -> list[Step]:
    """Delegates an exploration to a subagent (a sidechain file)."""
    comp = rng.choice(ctx.profile.components)
    concern = rng.choice(CONCERNS)
    listing = _listing(rng, ctx, comp.path)
    f1 = random_func(rng, ctx.profile.language)
    rels = [c.path for c in ctx.profile.components]
    sub_prompt = (
        f"Explore how the {comp.name} deals with {concern}. Read {comp.path} and anything it calls. "
        "Report entry points, failure handling and any gaps, with file:line references."
    )
    report = (
        f"## {concern.capitalize()} in the {comp.name}\n\n"
        f"- Entry: `{f1}` ({comp.path}:{rng.randint(10, 80)})\n"
        f"- Failures are {_pick(rng, 'logged and re-raised', 'wrapped with context', 'retried once')}\n"
        f"- Gap: {_pick(rng, 'no test for the empty case', 'timeout is hard-coded', 'errors lose the request id')}\n"
    )
    sub_steps: tuple[Step, ...] = (
        Act(
            text=f"I'll map out {concern} in the {comp.name}.",
            calls=(glob_call(ctx, "**/*", rels[:5], rng),),
        ),
        Act(calls=(read_call(ctx, comp.path, listing),)),
        Act(calls=(grep_call(f1, grep_output(rng, ctx.profile, f1, rels[:3])),)),
        Act(text=report),
    )
    return [
        Prompt(
            text=f"Before we change anything, get me an overview of {concern} in the {comp.name}."
        ),
        Act(
            text="I'll have an agent explore that in parallel.",
            calls=(
                Call(
                    name=ctx.fmt.agent_tool,
                    input={
                        "description": f"Explore {concern} in {comp.name}",
                        "prompt": sub_prompt,
                        "subagent_type": "Explore" if ctx.fmt.modern else "general-purpose",
                    },
                    result=report,
                    tur=None,
                    subagent=SubAgent(prompt=sub_prompt, steps=sub_steps),
                ),
            ),
        ),
        Act(text=f"Summary from the exploration:\n\n{report}\nWant me to address the gap first?"),
    ]


def ep_slash(rng: random.Random, ctx: Ctx) -> list[Step]:
    """A slash command with its expansion (isMeta line), then a short answer."""
    comp = rng.choice(ctx.profile.components)
    return [
        Command(
            name="review",
            args=f"focus on the {comp.name}",
            expansion=(
                "You are an expert code reviewer. Follow these steps:\n\n1. Run `git diff` to get the "
                "changes\n2. Analyze them for correctness, style and risk\n3. Keep the review concise."
            ),
        ),
        Act(
            calls=(
                bash_call(
                    ctx,
                    "git diff --stat",
                    f" {comp.path} | {rng.randint(2, 40)} +++---\n 1 file changed",
                    "Diff summary",
                ),
            )
        ),
        Act(
            text=(
                f"The only change is in `{short_path(comp.path)}`. "
                f"{_pick(rng, 'Looks correct; consider a test for the new branch.', 'The rename is incomplete: one caller still uses the old name.', 'Fine to merge.')}"
            )
        ),
    ]


FILLERS: tuple[tuple[str, Callable[[random.Random, Ctx], list[Step]], int], ...] = (
    ("debug", ep_debug, 5),
    ("feature", ep_feature, 5),
    ("explain", ep_explain, 3),
    ("tweak", ep_tweak, 3),
    ("testfix", ep_testfix, 3),
    ("deps", ep_deps, 2),
    ("review", ep_review, 2),
    ("slash", ep_slash, 1),
)


# ---------------------------------------------------------------------------------------------
# Planted: commits, citations, decisions, temporal chains, multi-hop pairs, incidents


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
    listing = _listing(rng, ctx, comp.path)
    old, new = _edit_pair(rng, ctx)
    verb = commit.verb[0]
    return [
        Prompt(
            text=_pick(
                rng,
                f"In the {comp.name}: {verb} the {commit.obj} {commit.qual}. Commit when it's green.",
                f"Next up for the {comp.name}, {verb} the {commit.obj} {commit.qual}, then commit.",
                f"Please {verb} the {commit.obj} {commit.qual} ({short_path(comp.path)}) and commit it.",
            ),
            slot="gold",
        ),
        Act(
            thinking=_think(rng, f"Look at {comp.path} before changing the {commit.obj}."),
            text=f"Reading `{short_path(comp.path)}` first.",
            calls=(read_call(ctx, comp.path, listing),),
        ),
        Act(
            text=f"Making the change to the {commit.obj}.",
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[6:20], start=7),),
        ),
        Act(calls=(_tests(rng, ctx),)),
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
            text=_pick(
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
    listing = _listing(rng, ctx, comp.path)
    return [
        Prompt(
            text=_pick(
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
            text=_pick(
                rng,
                f"We need to pick an approach for the {comp.name}: {d.choice[0]} or {d.alternative}? "
                "I'd like to settle it today.",
                f"For the {comp.name}, should we go with {d.choice[0]} or {d.alternative}?",
            ),
            slot="gold",
        ),
        Act(
            thinking=_think(rng, "Weigh operational cost against flexibility."),
            text=(
                f"Both work. {_cap(d.choice[0])} is simpler to operate and fits what we already run; "
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
            text=_pick(
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
                f"once per cycle. {_cap(notes[1][len(comment) + 1 :])} Tests pass."
            )
        ),
    ]


def ep_hop_b(rng: random.Random, ctx: Ctx, hop: HopFact) -> list[Step]:
    name, const, _, unit = hop.param
    lang = ctx.profile.language
    direction = "low" if hop.new > hop.old else "high"
    line_old = const_line(lang, const, hop.old)
    line_new = const_line(lang, const, hop.new)
    why = _pick(
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
        Act(calls=(_tests(rng, ctx),)),
        Act(
            text=(
                f"Set `{const}` to {hop.new}{unit} in `{hop.file}` (was {hop.old}). The {name} was too "
                f"{direction} {why}; tests pass."
            )
        ),
    ]


def ep_incident(rng: random.Random, ctx: Ctx, inc: IncidentFact) -> list[Step]:
    comp = inc.component
    listing = _listing(rng, ctx, comp.path)
    old, new = _edit_pair(rng, ctx)
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
        Act(calls=(_tests(rng, ctx),)),
        Act(text=f"Patched. I'd also add an alert so we see `{inc.error}` before users do."),
    ]


# ---------------------------------------------------------------------------------------------
# Scaffolding the sanitizer must handle


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


def ep_credential(rng: random.Random, ctx: Ctx, kind: str, secret: str) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    if kind == "anthropic_key":
        return [
            Prompt(text=f"Use this key for the eval smoke test, it's the staging one: {secret}"),
            Act(
                text="I'd rather not paste it into files; I'll read it from the environment.",
                calls=(
                    bash_call(
                        ctx, "env | grep -c ANTHROPIC_API_KEY", "0", "Check the variable is set"
                    ),
                ),
            ),
            Act(
                text="It isn't exported in this shell. Add it to your shell profile and I'll rerun."
            ),
        ]
    if kind == "aws_access_key":
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
    if kind == "github_token":
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
    if kind == "url_password":
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
    if kind == "env_secret":
        env = ["DEBUG=false", "PORT=8080", secret, "LOG_LEVEL=info", "FEATURE_BULK=1"]
        if rng.random() < 0.5:
            return [
                Prompt(
                    text="My local .env is below; why does the app boot with the wrong settings?\n```\n"
                    + "\n".join(env)
                    + "\n```"
                ),
                Act(
                    text="`DEBUG=false` overrides the default; drop it from `.env` for local work."
                ),
            ]
        return [
            Prompt(text="Why does the app boot with the wrong settings locally?"),
            Act(text="Checking the local env file.", calls=(read_call(ctx, ".env", env),)),
            Act(text="`DEBUG=false` overrides the default; drop it from `.env` for local work."),
        ]
    # private_key
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
                text=_pick(
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

"""Filler episodes: the ordinary work (debugging, features, reviews...) that surrounds planted facts.

`FILLERS` is the weighted table the session assembler draws from; `ep_explore` (a subagent run) is drawn
separately, once per session that has a subagent. Every function returns `Step`s and draws only from
the generator it is given, so a near-duplicate session can redraw the same episode in its own format.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from harness.synthetic.episode_kit import (
    edit_pair,
    failing_test_name,
    file_listing,
    maybe_think,
    pick,
    suite_run,
)
from harness.synthetic.lines import Act, Call, Command, Prompt, Step, SubAgent
from harness.synthetic.text import (
    const_line,
    diff_output,
    function_lines,
    git_status,
    grep_output,
    install_output,
    log_excerpt,
    random_func,
    short_path,
)
from harness.synthetic.tools import (
    Ctx,
    bash_call,
    edit_call,
    glob_call,
    grep_call,
    read_call,
    todo_call,
)
from harness.synthetic.vocab import (
    BUG_CAUSES,
    CODE_NOUNS,
    CONCERNS,
    FEATURES,
    FIX_PHRASES,
    LANG_ERRORS,
    PARAMS,
    SITUATIONS,
)


def ep_debug(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    err = rng.choice(LANG_ERRORS[ctx.profile.language])
    sit = rng.choice(SITUATIONS)
    fn = random_func(rng, ctx.profile.language)
    cause_i = rng.randrange(len(BUG_CAUSES))
    prompt = pick(
        rng,
        f"The {comp.name} is throwing `{err}` when {sit}. Can you figure out why?",
        f"Getting `{err}` from {short_path(comp.path)} in CI, only when {sit}. Take a look?",
        f"{comp.name[:1].upper()}{comp.name[1:]} started failing after yesterday's deploy:\n```\n"
        f"{log_excerpt(rng, comp.name, err, ctx.day)}\n```\nLooks like it happens when {sit}.",
        f"Something is off in the {comp.name}: `{err}`. Repro is flaky but seems tied to when {sit}.",
    )
    listing = file_listing(rng, ctx, comp.path)
    old, new = edit_pair(rng, ctx)
    others = [c.path for c in rng.sample(ctx.profile.components, 2)]
    return [
        Prompt(text=prompt),
        Act(
            thinking=maybe_think(
                rng, f"Need to see how {fn} is called before touching {comp.path}."
            ),
            text=pick(
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
                f"{pick(rng, 'I will keep the change minimal.', 'This also covers the retry path.', 'No API change is needed.')}"
            ),
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[8:22], start=9),),
        ),
        Act(text="Now the tests.", calls=(suite_run(rng, ctx),)),
        Act(
            text=pick(
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
    listing = file_listing(rng, ctx, comp.path)
    old, new = edit_pair(rng, ctx)
    test_files = [f for f in ctx.profile.extra_files if "test" in f]
    test_rel = rng.choice(test_files) if test_files else comp.path
    old2, new2 = edit_pair(rng, ctx)
    return [
        Prompt(
            text=pick(
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
            thinking=maybe_think(rng, f"{fn} is the natural place to hook in {feature}."),
            text=f"`{fn}` is the natural place for this. Adding it there.",
            calls=(edit_call(ctx, comp.path, old, new, snippet=listing[4:18], start=5),),
        ),
        Act(
            text="And a test for the new behaviour.",
            calls=(edit_call(ctx, test_rel, old2, new2),),
        ),
        Act(calls=(suite_run(rng, ctx), todo_call(items, 4))),
        Act(
            text=(
                f"Added {feature} to the {comp.name}:\n\n"
                f"- `{comp.path}`: new branch in `{fn}`\n- `{test_rel}`: covers the new path\n\n"
                f"{pick(rng, 'Tests pass.', 'Suite is green.', 'All tests pass locally.')}"
            )
        ),
    ]


def ep_explain(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    concern = rng.choice(CONCERNS)
    f1, f2, f3 = (random_func(rng, ctx.profile.language) for _ in range(3))
    listing = file_listing(rng, ctx, comp.path)
    other = rng.choice([c for c in ctx.profile.components if c != comp])
    return [
        Prompt(
            text=pick(
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
                f"{pick(rng, 'logs and re-raises', 'wraps the error with context', 'returns a typed error')} "
                f"so callers can decide.\n"
                f"3. **Hand-off**: results go to the {other.name} through `{f3}`.\n\n"
                f"### Edge cases\n\n- When {rng.choice(SITUATIONS)}, nothing special happens today; that "
                f"is probably worth a test.\n- {concern.capitalize()} is configured in one place "
                f"(`{rng.choice(ctx.profile.extra_files)}`), so changes stay local.\n\n"
                f"### Gaps\n\n- {pick(rng, 'There is no metric for this path.', 'The timeout is not configurable.', 'Errors lose their original stack.')}\n"
                f"- {pick(rng, 'Two callers duplicate the same check.', 'The docstring is out of date.', 'Nothing covers the empty case.')}"
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
    listing = file_listing(rng, ctx, comp.path)
    return [
        Prompt(
            text=pick(
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
        Act(calls=(suite_run(rng, ctx),)),
        Act(
            text=(
                f"Set `{const}` to {new}{unit} in `{comp.path}` (was {old}). The {name} was too {direction} "
                f"{pick(rng, 'for bursty traffic', 'for the slow upstream', 'for large tenants', 'for CI')}; tests pass."
            )
        ),
    ]


def ep_testfix(rng: random.Random, ctx: Ctx) -> list[Step]:
    comp = rng.choice(ctx.profile.components)
    label = failing_test_name(rng, ctx)
    detail = pick(
        rng,
        f"AssertionError: expected {rng.randint(2, 9)} items, got {rng.randint(0, 1)}",
        "AssertionError: assert None == 'ok'",
        f"expected status 200, received {rng.choice((400, 409, 500))}",
    )
    test_files = [f for f in ctx.profile.extra_files if "test" in f] or [comp.path]
    test_rel = rng.choice(test_files)
    listing = file_listing(rng, ctx, test_rel)
    old, new = edit_pair(rng, ctx)
    return [
        Prompt(
            text=pick(
                rng,
                f"`{label}` is failing on main. Fix it?",
                "CI is red again, can you look?",
                f"Tests broke after the last merge, something around the {comp.name}.",
            )
        ),
        Act(
            text="Reproducing locally.",
            calls=(suite_run(rng, ctx, failed=1, label=label, detail=detail),),
        ),
        Act(calls=(read_call(ctx, test_rel, listing),)),
        Act(
            text=(
                f"The test asserts on behaviour the {comp.name} changed last week; the fixture still builds "
                f"the old shape. Updating the fixture rather than the code, since the new behaviour is intended."
            ),
            calls=(edit_call(ctx, test_rel, old, new),),
        ),
        Act(calls=(suite_run(rng, ctx),)),
        Act(text=f"`{label}` passes again and nothing else regressed."),
    ]


def ep_deps(rng: random.Random, ctx: Ctx) -> list[Step]:
    lib, version = rng.choice(ctx.profile.libraries)
    prev = version.rsplit(".", 1)[0] + ".0"
    manifest = ctx.profile.manifest
    lines = [f'"{lib}" = "{prev}"', f'"{rng.choice(ctx.profile.libraries)[0]}" = "x"']
    return [
        Prompt(
            text=pick(
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
        Act(calls=(suite_run(rng, ctx),)),
        Act(
            text=pick(
                rng,
                f"{lib} is now {version}. The changelog mentions no breaking changes for what we use; tests pass.",
                f"Bumped {lib} to {version}. One deprecation warning shows up in the test output but nothing fails.",
            )
        ),
    ]


def ep_review(rng: random.Random, ctx: Ctx) -> list[Step]:
    comps = rng.sample(ctx.profile.components, 2)
    files = [c.path for c in comps]
    body = function_lines(rng, ctx.profile.language, random_func(rng, ctx.profile.language))
    diff = diff_output(files[0], body[1:4], body[1:3] + body[4:7], rng.randint(10, 120))
    return [
        Prompt(
            text=pick(
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
                f"- The new early return is right, but {pick(rng, 'it skips the metric', 'it swallows the error', 'the log line lost its context')}.\n"
                f"- {pick(rng, 'Naming is consistent with the rest of the module.', 'Consider a constant for the magic number.', 'The comment above still describes the old flow.')}\n"
                f"- `{short_path(files[1])}` shows as modified but the diff is whitespace only; "
                f"{pick(rng, 'drop it from the commit', 'probably the formatter', 'safe to keep')}.\n\n"
                f"Overall {pick(rng, 'good to push after the first point', 'fine', 'LGTM with one nit')}."
            )
        ),
    ]


def ep_explore(rng: random.Random, ctx: Ctx) -> list[Step]:
    """Delegates an exploration to a subagent (a sidechain file)."""
    comp = rng.choice(ctx.profile.components)
    concern = rng.choice(CONCERNS)
    listing = file_listing(rng, ctx, comp.path)
    f1 = random_func(rng, ctx.profile.language)
    rels = [c.path for c in ctx.profile.components]
    sub_prompt = (
        f"Explore how the {comp.name} deals with {concern}. Read {comp.path} and anything it calls. "
        "Report entry points, failure handling and any gaps, with file:line references."
    )
    report = (
        f"## {concern.capitalize()} in the {comp.name}\n\n"
        f"- Entry: `{f1}` ({comp.path}:{rng.randint(10, 80)})\n"
        f"- Failures are {pick(rng, 'logged and re-raised', 'wrapped with context', 'retried once')}\n"
        f"- Gap: {pick(rng, 'no test for the empty case', 'timeout is hard-coded', 'errors lose the request id')}\n"
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
                f"{pick(rng, 'Looks correct; consider a test for the new branch.', 'The rename is incomplete: one caller still uses the old name.', 'Fine to merge.')}"
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

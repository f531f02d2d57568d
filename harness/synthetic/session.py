"""Assembling one session: planted episodes, filler up to the size target, then scaffolding attached."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from harness.synthetic import fact_episodes as facts
from harness.synthetic import filler_episodes as filler
from harness.synthetic import scaffold_episodes as scaffold
from harness.synthetic.config import derive_rng
from harness.synthetic.corrections import ep_setting
from harness.synthetic.lines import Act, Command, Prompt, Step, StreamFile, StreamWriter, iso
from harness.synthetic.plan import Plan, SessionPlan, snippets_before
from harness.synthetic.tools import Ctx
from harness.synthetic.vocab import PRIVATE_NOTES

RESULT_CAP = 4000  # the importer keeps at most this many characters of a tool result
_MARKER_ARG = 120


@dataclass(kw_only=True)
class Episode:
    """A run of steps about one thing (a fix, a decision, a commit...)."""

    kind: str
    steps: list[Step]
    filler: bool = False
    fact: int | None = None  # commit index for commit episodes
    source: tuple[str, int] | None = None  # (session id, filler number) the filler was drawn for


@dataclass(kw_only=True)
class Built:
    """A written session: its files' lines and the size figures."""

    main: StreamFile
    subfiles: list[StreamFile]
    rendered_chars: int
    chunks: int
    raw: list[Episode] = field(default_factory=list)


def _result_text(result: str | list[dict[str, object]]) -> str:
    if isinstance(result, str):
        return result
    return "\n".join(str(b.get("text", "")) for b in result)


def message_sizes(steps: list[Step]) -> tuple[list[int], list[list[int]]]:
    """Rendered sizes of the messages the importer would keep, for the main stream and subagents."""
    main: list[int] = []
    subs: list[list[int]] = []
    for step in steps:
        if isinstance(step, Prompt):
            text = step.text
            if CONTEXT_OPEN in text:
                text = text[text.index(CONTEXT_CLOSE) + len(CONTEXT_CLOSE) :]
            main.append(len(text.strip()))
        elif isinstance(step, Command):
            main.append(len(step.args) + 40)
        else:
            kept = [c for c in step.calls if not c.name.startswith(OWN_TOOL_PREFIX)]
            size = len(step.text or "") + sum(
                len(c.name) + 4 + min(_MARKER_ARG, len(str(next(iter(c.input.values()), ""))))
                for c in kept
            )
            if size:
                main.append(size)
            for call in kept:
                main.append(min(RESULT_CAP, len(_result_text(call.result))))
                if call.subagent is not None:
                    inner, _ = message_sizes(
                        [Prompt(text=call.subagent.prompt), *call.subagent.steps]
                    )
                    subs.append(inner)
    return main, subs


def pack(sizes: list[int], budget: int = 900) -> int:
    """How many chunks the engine's packer makes of messages with these sizes."""
    chunks = 0
    size = 0
    open_chunk = False
    for n in sizes:
        pieces = (
            [budget] * (n // budget) + ([n % budget] if n % budget else []) if n > budget else [n]
        )
        for piece in pieces:
            if open_chunk and size + piece > budget:
                chunks += 1
                size = 0
                open_chunk = False
            size += piece
            open_chunk = True
    return chunks + (1 if open_chunk else 0)


def _size(episodes: list[Episode]) -> int:
    main, subs = message_sizes([s for e in episodes for s in e.steps])
    return sum(main) + sum(sum(x) for x in subs)


def _ctx(plan: Plan, s: SessionPlan) -> Ctx:
    day = iso(s.start_ms, plan.config.epoch_datetime())[:10]
    return Ctx(profile=plan.profiles[s.project], fmt=s.fmt, branch=s.branch, day=day)


def _planted(plan: Plan, s: SessionPlan, ctx: Ctx) -> list[Episode]:
    seed = plan.config.seed
    out: list[Episode] = []
    for i in s.commits:
        steps = facts.ep_commit(derive_rng(seed, "ep-commit", i), ctx, plan.commits[i])
        out.append(Episode(kind="commit", steps=steps, fact=i))
    for i in s.citations:
        out.append(
            Episode(
                kind="citation",
                steps=facts.ep_citation(derive_rng(seed, "ep-cite", i), ctx, plan.citations[i]),
            )
        )
    for i in s.decisions:
        out.append(
            Episode(
                kind="decision",
                steps=facts.ep_decision(derive_rng(seed, "ep-decision", i), ctx, plan.decisions[i]),
            )
        )
    for i, k in s.chain_steps:
        out.append(
            Episode(
                kind="chain",
                steps=facts.ep_chain_step(
                    derive_rng(seed, "ep-chain", i, k), ctx, plan.chains[i], k
                ),
            )
        )
    for i in s.hop_b:
        out.append(
            Episode(
                kind="hop_b",
                steps=facts.ep_hop_b(derive_rng(seed, "ep-hop-b", i), ctx, plan.hops[i]),
            )
        )
    for i in s.incidents:
        out.append(
            Episode(
                kind="incident",
                steps=facts.ep_incident(derive_rng(seed, "ep-incident", i), ctx, plan.incidents[i]),
            )
        )
    for i, k in s.settings:
        steps = ep_setting(derive_rng(seed, "corrections", "ep", i, k), plan.settings[i], k)
        out.append(Episode(kind="setting", steps=steps))
    for j, tool in enumerate(s.own_mcp):
        rng = derive_rng(seed, "ep-own-mcp", s.sid, j)
        steps = scaffold.ep_own_mcp(
            rng, ctx, OWN_TOOL_PREFIX + tool, snippets_before(plan, s.index, 3, rng)
        )
        out.append(Episode(kind="own_mcp", steps=steps))
    for j in range(s.other_mcp):
        out.append(
            Episode(
                kind="other_mcp",
                steps=scaffold.ep_other_mcp(derive_rng(seed, "ep-other-mcp", s.sid, j), ctx),
            )
        )
    for j in range(s.sentinel):
        steps = scaffold.ep_sentinel_quote(
            derive_rng(seed, "ep-sentinel", s.sid, j), ctx, CONTEXT_OPEN, CONTEXT_CLOSE
        )
        out.append(Episode(kind="sentinel", steps=[_fixed(x) for x in steps]))
    for j, (kind, secret) in enumerate(s.credentials):
        steps = scaffold.ep_credential(
            derive_rng(seed, "ep-credential", s.sid, j), ctx, kind, secret
        )
        out.append(Episode(kind="credential", steps=[_fixed(x) for x in steps]))
    return out


def _fixed(step: Step) -> Step:
    """Marks a prompt as one the scaffolding pass must leave alone."""
    return replace(step, slot="fixed") if isinstance(step, Prompt) else step


def _filler(plan: Plan, s: SessionPlan, ctx: Ctx, j: int, rng: random.Random) -> Episode:
    kinds = filler.FILLERS
    kind = rng.choices([k[0] for k in kinds], weights=[k[2] for k in kinds])[0]
    make = next(k[1] for k in kinds if k[0] == kind)
    steps = make(derive_rng(plan.config.seed, "filler", s.sid, j), ctx)
    return Episode(kind=kind, steps=steps, filler=True, source=(s.sid, j))


def _refill(plan: Plan, e: Episode, ctx: Ctx) -> Episode:
    """The same filler episode redrawn for another session's format and branch (near-duplicates)."""
    if e.source is None:
        msg = f"filler episode {e.kind!r} has no recorded source; it cannot be redrawn"
        raise RuntimeError(msg)
    sid, j = e.source
    make = (
        filler.ep_explore
        if e.kind == "explore"
        else next(k[1] for k in filler.FILLERS if k[0] == e.kind)
    )
    steps = make(derive_rng(plan.config.seed, "filler", sid, j), ctx)
    return Episode(kind=e.kind, steps=steps, filler=True, source=e.source)


def _filler_prompts(episodes: list[Episode]) -> list[tuple[int, int]]:
    return [
        (ei, si)
        for ei, e in enumerate(episodes)
        for si, st in enumerate(e.steps)
        if isinstance(st, Prompt) and st.slot == "filler"
    ]


def _edit_counts(episodes: list[Episode]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in episodes:
        for step in e.steps:
            if isinstance(step, Act):
                for call in step.calls:
                    if call.name in ("Edit", "Write", "MultiEdit"):
                        path = str(call.input["file_path"])
                        counts[path] = counts.get(path, 0) + 1
    return counts


def _attach(plan: Plan, s: SessionPlan, episodes: list[Episode], rng: random.Random) -> None:
    """Injected context blocks and `<private>` spans go onto ordinary (filler) prompts."""
    spots = _filler_prompts(episodes)
    rng.shuffle(spots)
    wanted = (
        ["context"] * s.context_blocks
        + ["closed"] * s.private_closed
        + ["unclosed"] * s.private_unclosed
    )
    for what, (ei, si) in zip(wanted, spots, strict=False):
        step = episodes[ei].steps[si]
        if not isinstance(step, Prompt):  # spots are prompts by construction; narrows the type
            continue
        if what == "context":
            lines = snippets_before(plan, s.index, 2, rng)
            block = CONTEXT_OPEN + "\nRecalled from earlier sessions in this project:\n"
            block += "\n".join(f"- {x}" for x in lines) + "\n" + CONTEXT_CLOSE
            new = replace(
                step, text=f"{block}\n\n{step.text}", blocks=rng.random() < 0.35, slot="fixed"
            )
        elif what == "closed":
            note = rng.choice(PRIVATE_NOTES)
            new = replace(step, text=f"{step.text} <private>{note}</private>", slot="fixed")
        else:
            note = rng.choice(PRIVATE_NOTES)
            new = replace(step, text=f"{step.text}\n\n<private>{note}", slot="fixed")
        episodes[ei].steps[si] = new


def assemble(plan: Plan, s: SessionPlan, original: list[Episode] | None) -> list[Episode]:
    """The episodes of session `s` in order; `original` is the raw episode list of its near-twin."""
    seed = plan.config.seed
    ctx = _ctx(plan, s)
    if s.role == "self":
        rng = derive_rng(seed, "ep-self", s.sid)
        return [
            Episode(
                kind="self", steps=scaffold.ep_self(rng, ctx, SELF_PROMPT_MARKER, s.self_excerpt)
            )
        ]
    if s.role == "attempt":
        if original is None or s.attempt_commit is None:
            msg = f"near-duplicate session {s.sid} was assembled before its original"
            raise RuntimeError(msg)
        out: list[Episode] = []
        for e in original:
            if e.filler:
                out.append(_refill(plan, e, ctx))
            elif e.kind == "commit" and e.fact == s.attempt_commit:
                rng = derive_rng(seed, "ep-commit", s.attempt_commit)
                steps = facts.ep_commit_attempt(rng, ctx, plan.commits[s.attempt_commit])
                out.append(Episode(kind="attempt", steps=steps))
        return out

    episodes = _planted(plan, s, ctx)
    pick = derive_rng(seed, "filler-kinds", s.sid)
    j = 0
    if s.subagent:
        steps = filler.ep_explore(derive_rng(seed, "filler", s.sid, j), ctx)
        episodes.append(Episode(kind="explore", steps=steps, filler=True, source=(s.sid, j)))
        j += 1
    need_prompts = s.context_blocks + s.private_closed + s.private_unclosed
    hop_reserve = 1500 if s.hop_a is not None else 0
    while (
        j == 0
        or _size(episodes) + hop_reserve < s.target
        or len(_filler_prompts(episodes)) < need_prompts
    ):
        episodes.append(_filler(plan, s, ctx, j, pick))
        j += 1
    order = derive_rng(seed, "order", s.sid)
    order.shuffle(episodes)
    if s.hop_a is not None:
        hop = plan.hops[s.hop_a]
        counts = _edit_counts(episodes)
        extra = max(0, max(counts.values(), default=0) - 1)
        steps = facts.ep_hop_a(derive_rng(seed, "ep-hop-a", s.hop_a), ctx, hop, extra)
        episodes.insert(order.randrange(len(episodes) + 1), Episode(kind="hop_a", steps=steps))
    if s.echo:
        steps = scaffold.ep_echo(
            derive_rng(seed, "ep-echo", s.sid), ctx, [text for _, text in s.echo]
        )
        episodes.append(Episode(kind="echo", steps=steps))
    return episodes


def write_session(plan: Plan, s: SessionPlan, episodes: list[Episode]) -> Built:
    """Scaffolding attached, then every step written through a `StreamWriter`."""
    seed = plan.config.seed
    raw = [
        Episode(kind=e.kind, steps=list(e.steps), filler=e.filler, fact=e.fact, source=e.source)
        for e in episodes
    ]
    _attach(plan, s, episodes, derive_rng(seed, "attach", s.sid))
    rng = derive_rng(seed, "lines", s.sid)
    writer = StreamWriter(
        fmt=s.fmt,
        session_id=s.sid,
        cwd=plan.cwd(s.project),
        branch=s.branch,
        start_ms=s.start_ms,
        epoch=plan.config.epoch_datetime(),
        rng=rng,
        slug=s.slug if s.fmt.modern else None,
    )
    if s.clear_first and s.role != "self":
        writer.write(Command(name="clear"))
    for e in episodes:
        for step in e.steps:
            writer.write(step)
        if rng.random() < 0.6:
            writer.turn_duration()
    if not s.fmt.modern:
        first = next((e.kind for e in episodes), "session")
        writer.summary(f"{plan.profiles[s.project].slug}: {first} work")
    steps = [x for e in episodes for x in e.steps]
    main, subs = message_sizes(steps)
    rendered = sum(main) + sum(sum(x) for x in subs)
    chunks = 0 if s.role == "self" else pack(main) + sum(pack(x) for x in subs)
    return Built(
        main=writer.file, subfiles=writer.subfiles, rendered_chars=rendered, chunks=chunks, raw=raw
    )

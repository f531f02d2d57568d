"""`build_plan`: the timeline and roles of the sessions, then every planner in a fixed order.

Each planner draws from its own generator (`derive_rng(seed, label)`), so its draws never depend on
another's; the order matters only where a planner reads what an earlier one placed.
"""

from __future__ import annotations

from harness.synthetic.config import SyntheticConfig, SyntheticError, derive_rng
from harness.synthetic.corrections import plan_corrections
from harness.synthetic.fact_plan import (
    plan_chains,
    plan_citations,
    plan_commits,
    plan_decisions,
    plan_hops,
    plan_incidents,
)
from harness.synthetic.lines import MODERN, OLDER, new_uuid
from harness.synthetic.plan import Plan, SessionPlan, later_work, split, work_sessions
from harness.synthetic.rosters import build_rosters
from harness.synthetic.scaffold_plan import plan_echoes, plan_scaffolding, plan_self
from harness.synthetic.vocab import PROFILES, Profile

# Projects differ in size the way real ones do.
_PROJECT_WEIGHTS = (1.25, 1.0, 0.9, 0.85, 0.8, 0.75)
_SLUG_WORDS = (
    ("compressed", "gentle", "quiet", "brisk", "modular", "lucid", "patient", "vivid"),
    ("tumbling", "petting", "sailing", "drifting", "humming", "weaving", "folding", "wandering"),
    ("hopcroft", "thompson", "lovelace", "knuth", "hamming", "liskov", "ritchie", "hopper"),
)


def _sessions(config: SyntheticConfig, profiles: list[Profile]) -> list[SessionPlan]:
    """The timeline: every session's project, start, format, branch, slug and size target."""
    rng = derive_rng(config.seed, "timeline")
    counts = split(config.sessions, list(_PROJECT_WEIGHTS[: config.projects]))
    order = [p for p, n in enumerate(counts) for _ in range(n)]
    rng.shuffle(order)
    older = round(config.older_share * config.sessions)
    clock = 0
    out: list[SessionPlan] = []
    for i, project in enumerate(order):
        if i:
            clock += rng.randint(config.min_gap_minutes, config.max_gap_minutes) * 60_000
        clock += rng.randint(0, 59_999)
        ids = derive_rng(config.seed, "session-id", i)
        profile = profiles[project]
        out.append(
            SessionPlan(
                index=i,
                project=project,
                sid=new_uuid(ids),
                start_ms=clock,
                fmt=OLDER if i < older else MODERN,
                branch=rng.choice(profile.branches),
                slug="-".join(rng.choice(words) for words in _SLUG_WORDS),
                role="work",
                target=rng.randint(config.min_chars, config.max_chars),
                clear_first=rng.random() < 0.08,
            )
        )
    return out


def _assign_roles(plan: Plan) -> None:
    """Echo sessions last, then self-transcripts, then the failed-attempt halves of near-duplicates."""
    config = plan.config
    rng = derive_rng(config.seed, "roles")
    n = len(plan.sessions)
    for s in plan.sessions[n - config.echo_sessions :]:
        s.role = "echo"
    free = [s.index for s in plan.sessions if s.role == "work" and s.index >= n // 10]
    for i in sorted(rng.sample(free, config.self_transcripts)):
        plan.sessions[i].role = "self"
    for _ in range(config.near_duplicates):
        candidates = [
            s.index
            for s in plan.sessions
            if s.role == "work" and later_work(plan, s.index) is not None
        ]
        if not candidates:
            msg = "not enough sessions to place a near-duplicate pair; raise sessions"
            raise SyntheticError(msg)
        plan.sessions[rng.choice(candidates)].role = "attempt"
    for p in range(config.projects):
        if len(work_sessions(plan, p)) < 2:
            msg = (
                f"project {plan.cwd(p)} got fewer than 2 work sessions; raise sessions or lower the "
                "dedicated sessions (self_transcripts, echo_sessions, near_duplicates)"
            )
            raise SyntheticError(msg)


def build_plan(config: SyntheticConfig) -> Plan:
    """Decide every session, fact and gold answer for `config`."""
    profiles = list(PROFILES[: config.projects])
    plan = Plan(config=config, profiles=profiles, sessions=_sessions(config, profiles))
    _assign_roles(plan)
    plan_commits(plan)
    plan_citations(plan)
    plan_decisions(plan)
    plan_chains(plan)
    plan_hops(plan)
    plan_incidents(plan)
    plan_scaffolding(plan)
    plan_self(plan)
    build_rosters(plan)
    plan_echoes(plan)
    # Last, so that the sessions it adds change nothing planned above (off by default).
    plan_corrections(plan)
    return plan

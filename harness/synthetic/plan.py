"""The plan: which session holds which planted fact, decided before a single line is written.

`Plan` and `SessionPlan` are filled in by `planner.build_plan` (sessions and roles), `fact_plan` (planted
facts), `scaffold_plan` (what the sanitizer must handle) and `rosters` (the gold that follows from the
facts), so the rosters are a function of the plan alone and the writer cannot drift from them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from harness.synthetic.config import SyntheticConfig
from harness.synthetic.facts import (
    ChainFact,
    CitationFact,
    CommitFact,
    DecisionFact,
    HopFact,
    IncidentFact,
    SettingFact,
)
from harness.synthetic.lines import Format
from harness.synthetic.vocab import Profile


@dataclass(kw_only=True)
class SessionPlan:
    """One top-level session and everything planted in it."""

    index: int
    project: int
    sid: str
    start_ms: int
    fmt: Format
    branch: str
    slug: str
    role: str  # work | self | echo | attempt
    subagent: bool = False
    target: int = 0
    commits: list[int] = field(default_factory=list)  # indices into Plan.commits
    attempt_commit: int | None = None
    citations: list[int] = field(default_factory=list)
    decisions: list[int] = field(default_factory=list)
    chain_steps: list[tuple[int, int]] = field(default_factory=list)  # (chain index, step)
    hop_a: int | None = None
    hop_b: list[int] = field(default_factory=list)
    incidents: list[int] = field(default_factory=list)
    own_mcp: list[str] = field(default_factory=list)
    other_mcp: int = 0
    context_blocks: int = 0
    sentinel: int = 0
    private_closed: int = 0
    private_unclosed: int = 0
    credentials: list[tuple[str, str]] = field(default_factory=list)
    echo: list[tuple[str, str]] = field(default_factory=list)  # (qid, text)
    self_excerpt: str = ""
    clear_first: bool = False
    settings: list[tuple[int, int]] = field(default_factory=list)  # (setting fact index, step)


@dataclass(kw_only=True)
class Plan:
    """Every session and planted fact, the rosters built from them, and the overlap figures."""

    config: SyntheticConfig
    profiles: list[Profile]
    sessions: list[SessionPlan]
    commits: list[CommitFact] = field(default_factory=list)
    citations: list[CitationFact] = field(default_factory=list)
    decisions: list[DecisionFact] = field(default_factory=list)
    chains: list[ChainFact] = field(default_factory=list)
    hops: list[HopFact] = field(default_factory=list)
    incidents: list[IncidentFact] = field(default_factory=list)
    settings: list[SettingFact] = field(default_factory=list)
    rosters: dict[str, dict[str, Any]] = field(default_factory=dict)
    decision_overlap: float = 0.0
    decision_overlap_max: float = 0.0
    chain_qids: dict[int, str] = field(default_factory=dict)
    hop_qids: dict[int, str] = field(default_factory=dict)

    def cwd(self, project: int) -> str:
        """The working directory of project `project`."""
        return self.profiles[project].cwd

    def sid(self, index: int) -> str:
        """The session id of session `index`."""
        return self.sessions[index].sid


def split(total: int, weights: list[float]) -> list[int]:
    """Largest-remainder apportionment of `total` by `weights` (ties to the lower index)."""
    scale = sum(weights)
    raw = [total * w / scale for w in weights]
    out = [int(x) for x in raw]
    order = sorted(range(len(weights)), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def work_sessions(plan: Plan, project: int) -> list[int]:
    """Indices of the ordinary work sessions of `project`, in time order."""
    return [s.index for s in plan.sessions if s.project == project and s.role == "work"]


def later_work(plan: Plan, index: int) -> int | None:
    """The next work session of the same project after session `index`, if any."""
    project = plan.sessions[index].project
    for s in plan.sessions[index + 1 :]:
        if s.project == project and s.role == "work":
            return s.index
    return None


def snippets_before(plan: Plan, index: int, limit: int, rng: random.Random) -> list[str]:
    """Memory-style lines about facts planted earlier in the same project (for injected context)."""
    project = plan.sessions[index].project
    pool: list[str] = []
    for c in plan.commits:
        if c.project == project and c.session < index:
            pool.append(f"committed {c.short}: {c.message}")
    for d in plan.decisions:
        if d.project == project and d.session < index:
            pool.append(d.text)
    if not pool:
        comp = rng.choice(plan.profiles[project].components)
        return [f"{comp.name}: edited in an earlier session ({comp.path})"]
    return rng.sample(pool, min(limit, len(pool)))

"""Planning: which session holds which planted fact, and the gold rosters that follow from it.

Everything is decided here before a single line is written, so the rosters are a function of the plan
alone and the writer cannot drift from them.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from typing import Any

from engine.markers import SELF_PROMPT_MARKER
from harness.synthetic.config import CREDENTIAL_KINDS, SyntheticConfig, SyntheticError, derive_rng
from harness.synthetic.facts import (
    ChainFact,
    CitationFact,
    CommitFact,
    DecisionFact,
    HopFact,
    IncidentFact,
)
from harness.synthetic.lines import MODERN, OLDER, Format, new_uuid, token
from harness.synthetic.text import func_name
from harness.synthetic.vocab import (
    COMMIT_QUALIFIERS,
    COMMIT_VERBS,
    DECISION_CHOICES,
    DECISION_QUESTION_TEMPLATES,
    DECISION_REASONS,
    DECISION_VERBS,
    HOP_ADJECTIVES,
    HOP_FILE_HEADS,
    HOP_FILE_TAILS,
    HOP_NOUNS,
    HOP_PURPOSES,
    HOP_QUESTION_TEMPLATES,
    HOP_VERBS,
    INCIDENT_ERRORS,
    INCIDENT_QUESTION_TEMPLATES,
    INCIDENT_TRIGGERS,
    PARAMS,
    PROFILES,
    RECEIPT_QUESTION_TEMPLATES,
    STOPWORDS,
    TEMPORAL_ASPECTS,
    TEMPORAL_QUESTION_TEMPLATES,
    TEMPORAL_REASONS,
    Profile,
)

# Projects differ in size the way real ones do.
_PROJECT_WEIGHTS = (1.25, 1.0, 0.9, 0.85, 0.8, 0.75)
_SLUG_WORDS = (
    ("compressed", "gentle", "quiet", "brisk", "modular", "lucid", "patient", "vivid"),
    ("tumbling", "petting", "sailing", "drifting", "humming", "weaving", "folding", "wandering"),
    ("hopcroft", "thompson", "lovelace", "knuth", "hamming", "liskov", "ritchie", "hopper"),
)


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


@dataclass(kw_only=True)
class Plan:
    config: SyntheticConfig
    profiles: list[Profile]
    sessions: list[SessionPlan]
    commits: list[CommitFact] = field(default_factory=list)
    citations: list[CitationFact] = field(default_factory=list)
    decisions: list[DecisionFact] = field(default_factory=list)
    chains: list[ChainFact] = field(default_factory=list)
    hops: list[HopFact] = field(default_factory=list)
    incidents: list[IncidentFact] = field(default_factory=list)
    rosters: dict[str, dict[str, Any]] = field(default_factory=dict)
    decision_overlap: float = 0.0
    decision_overlap_max: float = 0.0
    chain_qids: dict[int, str] = field(default_factory=dict)
    hop_qids: dict[int, str] = field(default_factory=dict)

    def cwd(self, project: int) -> str:
        return self.profiles[project].cwd

    def sid(self, index: int) -> str:
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


def content_words(text: str) -> set[str]:
    """Lower-cased alphanumeric tokens minus stopwords (for the paraphrase overlap figure)."""
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS}


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the content words of two texts (0 when both are empty)."""
    wa, wb = content_words(a), content_words(b)
    union = wa | wb
    return len(wa & wb) / len(union) if union else 0.0


# ---------------------------------------------------------------------------------------------
# Sessions and roles


def _sessions(config: SyntheticConfig, profiles: list[Profile]) -> list[SessionPlan]:
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
            if s.role == "work" and _later_work(plan, s.index) is not None
        ]
        if not candidates:
            msg = "not enough sessions to place a near-duplicate pair; raise sessions"
            raise SyntheticError(msg)
        plan.sessions[rng.choice(candidates)].role = "attempt"
    for p in range(config.projects):
        if len(_work(plan, p)) < 2:
            msg = (
                f"project {plan.cwd(p)} got fewer than 2 work sessions; raise sessions or lower the "
                "dedicated sessions (self_transcripts, echo_sessions, near_duplicates)"
            )
            raise SyntheticError(msg)


def _work(plan: Plan, project: int) -> list[int]:
    return [s.index for s in plan.sessions if s.project == project and s.role == "work"]


def _later_work(plan: Plan, index: int) -> int | None:
    project = plan.sessions[index].project
    for s in plan.sessions[index + 1 :]:
        if s.project == project and s.role == "work":
            return s.index
    return None


# ---------------------------------------------------------------------------------------------
# Facts


def _commit_message(
    verb: tuple[str, str, str, str], obj: str, qual: str, scope: str, conventional: bool
) -> str:
    if conventional:
        return f"{verb[3]}({scope}): {verb[0]} {obj} {qual}"
    text = f"{verb[0]} {obj} {qual}"
    return text[:1].upper() + text[1:]


def _plan_commits(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "commits")
    shorts: set[str] = set()
    # Near-duplicate pairs first: the successful half of each pair is the next work session.
    pair_of: dict[int, list[int]] = {}
    for s in plan.sessions:
        if s.role == "attempt":
            if _later_work(plan, s.index) is None:
                msg = f"near-duplicate session {s.sid} has no later work session in its project"
                raise SyntheticError(msg)
            pair_of.setdefault(s.project, []).append(s.index)
    work_counts = [float(len(_work(plan, p))) for p in range(config.projects)]
    per_project = split(config.commits - config.near_duplicates, work_counts)
    per_project = [n + len(pair_of.get(p, [])) for p, n in enumerate(per_project)]
    for p in range(config.projects):
        profile = plan.profiles[p]
        used: set[tuple[int, int, int]] = set()
        hosts: list[int] = []
        for attempt in pair_of.get(p, []):
            original = _later_work(plan, attempt)
            if original is not None:
                hosts.append(original)
        work = _work(plan, p)
        load = dict.fromkeys(work, 0)
        for h in hosts:
            load[h] += 1
        while len(hosts) < per_project[p]:
            open_ = [i for i in work if load[i] < 3]
            if not open_:
                msg = f"project {profile.cwd} cannot hold {per_project[p]} commits (3 per session max)"
                raise SyntheticError(msg)
            pick = rng.choice(open_)
            load[pick] += 1
            hosts.append(pick)
        attempts = pair_of.get(p, [])
        for k, host in enumerate(hosts):
            while True:
                key = (
                    rng.randrange(len(COMMIT_VERBS)),
                    rng.randrange(len(profile.commit_objects)),
                    rng.randrange(len(COMMIT_QUALIFIERS)),
                )
                if key not in used:
                    used.add(key)
                    break
            verb = COMMIT_VERBS[key[0]]
            obj = profile.commit_objects[key[1]]
            qual = COMMIT_QUALIFIERS[key[2]]
            component = rng.choice(profile.components)
            scope = component.path.rsplit("/", 2)[-2] if component.path.count("/") >= 2 else "core"
            while True:
                full = f"{rng.getrandbits(160):040x}"
                if full[:7] not in shorts:
                    shorts.add(full[:7])
                    break
            fact = CommitFact(
                project=p,
                session=host,
                component=component,
                verb=verb,
                obj=obj,
                qual=qual,
                message=_commit_message(verb, obj, qual, scope, rng.random() < 0.5),
                full_hash=full,
                heredoc=plan.sessions[host].fmt.modern and rng.random() < 0.5,
                attempt_session=attempts[k] if k < len(attempts) else None,
            )
            index = len(plan.commits)
            plan.commits.append(fact)
            plan.sessions[host].commits.append(index)
            if fact.attempt_session is not None:
                plan.sessions[fact.attempt_session].attempt_commit = index


def _plan_citations(plan: Plan) -> None:
    rng = derive_rng(plan.config.seed, "citations")
    candidates = [i for i, c in enumerate(plan.commits) if c.attempt_session is None]
    rng.shuffle(candidates)
    for i in candidates:
        if len(plan.citations) == plan.config.citations:
            break
        commit = plan.commits[i]
        later = [j for j in _work(plan, commit.project) if j > commit.session]
        if not later:
            continue
        cite = CitationFact(commit=commit, session=rng.choice(later))
        plan.sessions[cite.session].citations.append(len(plan.citations))
        plan.citations.append(cite)
    if len(plan.citations) < plan.config.citations:
        msg = f"could place only {len(plan.citations)} of {plan.config.citations} citations; lower citations"
        raise SyntheticError(msg)


def _plan_decisions(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "decisions")
    per_project = split(
        config.decisions, [float(len(_work(plan, p))) for p in range(config.projects)]
    )
    for p in range(config.projects):
        profile = plan.profiles[p]
        picks = rng.sample(range(len(DECISION_CHOICES)), per_project[p])
        work = _work(plan, p)
        load = dict.fromkeys(work, 0)
        for c in picks:
            open_ = [i for i in work if load[i] < 2] or work
            host = rng.choice(open_)
            load[host] += 1
            alternative = DECISION_CHOICES[
                rng.choice([i for i in range(len(DECISION_CHOICES)) if i != c])
            ][0]
            fact = DecisionFact(
                project=p,
                session=host,
                component=rng.choice(profile.components),
                choice=DECISION_CHOICES[c],
                alternative=alternative,
                reason=rng.choice(DECISION_REASONS),
                verb=rng.choice(DECISION_VERBS),
            )
            plan.sessions[host].decisions.append(len(plan.decisions))
            plan.decisions.append(fact)


def _plan_chains(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "chains")
    per_project = split(
        config.temporal_topics, [float(len(_work(plan, p))) for p in range(config.projects)]
    )
    for p in range(config.projects):
        profile = plan.profiles[p]
        combos = [
            (a, c) for a in range(len(TEMPORAL_ASPECTS)) for c in range(len(profile.components))
        ]
        rng.shuffle(combos)
        aspect_use: dict[int, int] = {}
        chosen: list[tuple[int, int]] = []
        for a, c in combos:
            if len(chosen) == per_project[p]:
                break
            if aspect_use.get(a, 0) >= 2:
                continue
            aspect_use[a] = aspect_use.get(a, 0) + 1
            chosen.append((a, c))
        work = _work(plan, p)
        for a, c in chosen:
            length = 3 if rng.random() < 0.4 and len(work) >= 3 else 2
            sessions = tuple(sorted(rng.sample(work, length)))
            aspect, options = TEMPORAL_ASPECTS[a]
            fact = ChainFact(
                project=p,
                aspect=aspect,
                component=profile.components[c],
                options=tuple(rng.sample(options, length)),
                sessions=sessions,
                reasons=tuple(rng.sample(TEMPORAL_REASONS, length - 1)),
            )
            for k, s in enumerate(sessions):
                plan.sessions[s].chain_steps.append((len(plan.chains), k))
            plan.chains.append(fact)


def _hop_file(profile: Profile, component_path: str, head: str, tail: str) -> str:
    folder = component_path.rsplit("/", 1)[0]
    if profile.language == "typescript":
        return f"{folder}/{head}{tail[:1].upper()}{tail[1:]}.ts"
    ext = {"python": "py", "rust": "rs", "go": "go"}[profile.language]
    return f"{folder}/{head}_{tail}.{ext}"


def _plan_hops(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "hops")
    per_project = split(
        config.multihop_pairs, [float(len(_work(plan, p))) for p in range(config.projects)]
    )
    idents: set[tuple[int, int, int]] = set()
    files: set[str] = set()
    for p in range(config.projects):
        profile = plan.profiles[p]
        work = _work(plan, p)
        for _ in range(per_project[p]):
            candidates = [
                i for i in work if plan.sessions[i].hop_a is None and any(j > i for j in work)
            ]
            if not candidates:
                msg = f"project {profile.cwd} has too few sessions for its multi-hop pairs; lower multihop_pairs"
                raise SyntheticError(msg)
            a = rng.choice(candidates)
            b = rng.choice([j for j in work if j > a])
            while True:
                key = (
                    rng.randrange(len(HOP_VERBS)),
                    rng.randrange(len(HOP_ADJECTIVES)),
                    rng.randrange(len(HOP_NOUNS)),
                )
                if key not in idents:
                    idents.add(key)
                    break
            ident = func_name(
                profile.language, HOP_VERBS[key[0]], HOP_ADJECTIVES[key[1]], HOP_NOUNS[key[2]]
            )
            component = rng.choice(profile.components)
            while True:
                path = _hop_file(
                    profile, component.path, rng.choice(HOP_FILE_HEADS), rng.choice(HOP_FILE_TAILS)
                )
                if path not in files:
                    files.add(path)
                    break
            param = rng.choice(PARAMS)
            old, new = rng.sample(param[2], 2)
            fact = HopFact(
                project=p,
                ident=ident,
                file=path,
                component=component,
                purpose=rng.choice(HOP_PURPOSES),
                param=param,
                old=old,
                new=new,
                a_session=a,
                b_session=b,
            )
            plan.sessions[a].hop_a = len(plan.hops)
            plan.sessions[b].hop_b.append(len(plan.hops))
            plan.hops.append(fact)


def _plan_incidents(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "incidents")
    triggers = rng.sample(range(len(INCIDENT_TRIGGERS)), config.negatives)
    errors = list(range(len(INCIDENT_ERRORS)))
    rng.shuffle(errors)
    for n in range(config.negatives):
        p = n % config.projects
        scope = (p + 1 + rng.randrange(config.projects - 1)) % config.projects
        host = rng.choice(_work(plan, p))
        fact = IncidentFact(
            project=p,
            scope_project=scope,
            session=host,
            component=rng.choice(plan.profiles[p].components),
            error=INCIDENT_ERRORS[errors[n % len(errors)]],
            trigger=INCIDENT_TRIGGERS[triggers[n]],
        )
        plan.sessions[host].incidents.append(len(plan.incidents))
        plan.incidents.append(fact)


# ---------------------------------------------------------------------------------------------
# Scaffolding: own MCP calls, other servers, injected context, private spans, credentials


def credential(kind: str, rng: random.Random) -> str:
    """A fake but format-valid credential of `kind`."""
    if kind == "anthropic_key":
        return "sk-ant-api03-" + token(rng, 93, string.ascii_letters + string.digits + "-_") + "AA"
    if kind == "aws_access_key":
        return "AKIA" + token(rng, 16, string.ascii_uppercase + "234567")
    if kind == "github_token":
        return "ghp_" + token(rng, 36)
    if kind == "url_password":
        return (
            f"postgres://{rng.choice(('app_rw', 'svc_jobs', 'reporting'))}:{token(rng, 18)}@"
            f"{rng.choice(('db.staging.internal', '10.0.4.12', 'pg-staging.acme.dev'))}:5432/"
            f"{rng.choice(('jobs', 'ledger', 'app'))}"
        )
    if kind == "env_secret":
        return "SECRET_KEY=" + token(rng, 48, "0123456789abcdef")
    if kind == "private_key":
        label = rng.choice(("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY"))
        body = [token(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(6)]
        body.append(token(rng, 24, string.ascii_letters + string.digits + "+/") + "==")
        return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])
    msg = f"unknown credential kind {kind!r}; choose one of {list(CREDENTIAL_KINDS)}"
    raise SyntheticError(msg)


def _plan_scaffolding(plan: Plan) -> None:
    config = plan.config
    rng = derive_rng(config.seed, "scaffolding")
    work = [s.index for s in plan.sessions if s.role == "work"]
    for _ in range(config.own_mcp_calls):
        tool = "search_memory" if rng.random() < 0.75 else "get_chunk"
        plan.sessions[rng.choice(work)].own_mcp.append(tool)
    for _ in range(config.other_mcp_calls):
        plan.sessions[rng.choice(work)].other_mcp += 1
    for _ in range(config.context_blocks):
        open_ = [i for i in work if plan.sessions[i].context_blocks < 2] or work
        plan.sessions[rng.choice(open_)].context_blocks += 1
    for _ in range(config.sentinel_quotes):
        plan.sessions[rng.choice(work)].sentinel += 1
    for _ in range(config.private_closed):
        plan.sessions[rng.choice(work)].private_closed += 1
    for _ in range(config.private_unclosed):
        plan.sessions[rng.choice(work)].private_unclosed += 1
    for kind in CREDENTIAL_KINDS:
        for _ in range(config.credentials_per_kind):
            plan.sessions[rng.choice(work)].credentials.append((kind, credential(kind, rng)))
    formats = {MODERN.version: False, OLDER.version: False}
    for i in work:
        s = plan.sessions[i]
        if rng.random() < config.subagent_share:
            s.subagent = True
            formats[s.fmt.version] = True
    if config.subagent_share > 0:
        for version, seen in sorted(formats.items()):
            if not seen:
                first = next((i for i in work if plan.sessions[i].fmt.version == version), None)
                if first is not None:
                    plan.sessions[first].subagent = True


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


def _plan_self(plan: Plan) -> None:
    rng = derive_rng(plan.config.seed, "self")
    for s in plan.sessions:
        if s.role != "self":
            continue
        lines = snippets_before(plan, s.index, 3, rng)
        s.self_excerpt = "\n".join(f"assistant: {x}" for x in lines)


# ---------------------------------------------------------------------------------------------
# Rosters


def _item(
    qid: str,
    text: str,
    scope: list[str],
    category: str,
    tags: dict[str, str],
    relevant: dict[str, int],
    forbidden: list[str] | None = None,
    control: str | None = None,
) -> dict[str, Any]:
    return {
        "qid": qid,
        "text": text,
        "scope": scope,
        "category": category,
        "tags": tags,
        "gold": {"relevant": relevant, "forbidden": forbidden or [], "control": control},
    }


def _build_rosters(plan: Plan) -> None:
    rng = derive_rng(plan.config.seed, "rosters")
    cited = {id(c.commit) for c in plan.citations}
    receipts = []
    for n, i in enumerate(
        sorted(range(len(plan.commits)), key=lambda i: (plan.commits[i].session, i)), 1
    ):
        c = plan.commits[i]
        text = rng.choice(RECEIPT_QUESTION_TEMPLATES).format(
            past=c.verb[1], gerund=c.verb[2], obj=c.obj, qual=c.qual
        )
        distractor = (
            "near_duplicate"
            if c.attempt_session is not None
            else ("citation" if id(c) in cited else "none")
        )
        receipts.append(
            _item(
                f"receipt-{n:04d}",
                text,
                [plan.cwd(c.project)],
                "receipt",
                {
                    "hop": "single",
                    "distractor": distractor,
                    "format": plan.sessions[c.session].fmt.version,
                },
                {plan.sid(c.session): 1},
            )
        )
    decisions = []
    overlaps = []
    for n, d in enumerate(sorted(plan.decisions, key=lambda d: (d.session, d.choice[0])), 1):
        text = rng.choice(DECISION_QUESTION_TEMPLATES).format(
            choice=d.choice[1], component=d.component.paraphrase, reason=d.reason[1]
        )
        overlaps.append(jaccard(text, d.text))
        decisions.append(
            _item(
                f"decision-{n:04d}",
                text,
                [plan.cwd(d.project)],
                "decision",
                {"hop": "single", "paraphrase": "yes"},
                {plan.sid(d.session): 1},
            )
        )
    plan.decision_overlap = sum(overlaps) / len(overlaps) if overlaps else 0.0
    plan.decision_overlap_max = max(overlaps, default=0.0)
    multihop = []
    for n, hi in enumerate(
        sorted(range(len(plan.hops)), key=lambda i: (plan.hops[i].b_session, plan.hops[i].ident)), 1
    ):
        h = plan.hops[hi]
        plan.hop_qids[hi] = f"multihop-{n:04d}"
        text = rng.choice(HOP_QUESTION_TEMPLATES).format(param=h.param[0], ident=h.ident)
        multihop.append(
            _item(
                f"multihop-{n:04d}",
                text,
                [plan.cwd(h.project)],
                "multihop",
                {"hop": "multi", "bridge": "file"},
                {plan.sid(h.b_session): 1},
            )
        )
    temporal = []
    for n, ci in enumerate(
        sorted(
            range(len(plan.chains)),
            key=lambda i: (plan.chains[i].sessions[-1], plan.chains[i].aspect),
        ),
        1,
    ):
        ch = plan.chains[ci]
        plan.chain_qids[ci] = f"temporal-{n:04d}"
        text = rng.choice(TEMPORAL_QUESTION_TEMPLATES).format(
            aspect=ch.aspect, component=ch.component.name
        )
        temporal.append(
            _item(
                f"temporal-{n:04d}",
                text,
                [plan.cwd(ch.project)],
                "temporal",
                {"hop": "single", "revisions": str(len(ch.sessions) - 1)},
                {plan.sid(ch.sessions[-1]): 1},
            )
        )
    negatives = []
    for n, inc in enumerate(plan.incidents, 1):
        text = rng.choice(INCIDENT_QUESTION_TEMPLATES).format(
            component=inc.component.name, error=inc.error, trigger=inc.trigger
        )
        neg, ctl = f"negative-{n:04d}", f"negative-control-{n:04d}"
        negatives.append(
            _item(
                neg,
                text,
                [plan.cwd(inc.scope_project)],
                "negative",
                {"hop": "single", "kind": "negative"},
                {},
                [plan.sid(inc.session)],
                ctl,
            )
        )
        negatives.append(
            _item(
                ctl,
                text,
                [plan.cwd(inc.project)],
                "control",
                {"hop": "single", "kind": "control"},
                {plan.sid(inc.session): 1},
            )
        )
    overlap = f"{plan.decision_overlap:.3f}"
    plan.rosters = {
        "receipts": {
            "name": "receipts",
            "unit": "session",
            "description": (
                "Receipt look-up: a commit recalled in the user's words (never verbatim) -> the session "
                "whose git tool result holds its hash. Distractors: near-duplicate sessions whose commit "
                "attempt failed, and later sessions citing the short hash in prose."
            ),
            "questions": receipts,
        },
        "decisions": {
            "name": "decisions",
            "unit": "session",
            "description": (
                "Decision recall by paraphrase: the question rewords the choice, the component and the "
                "reason with synonym tables. Mean content-word Jaccard overlap between question and "
                f"the gold decision sentence: {overlap}."
            ),
            "questions": decisions,
        },
        "multihop": {
            "name": "multihop",
            "unit": "session",
            "description": (
                "Two hops tied by a shared file: the question names an identifier that only session A "
                "defines, in a file that only A and B edit; the gold is B, which holds the parameter "
                "value asked for and never mentions the identifier."
            ),
            "questions": multihop,
        },
        "temporal": {
            "name": "temporal",
            "unit": "session",
            "description": (
                "The latest decision wins: each topic was decided and later reversed (once or twice); "
                "the gold is the session holding the last reversal, never the superseded ones."
            ),
            "questions": temporal,
        },
        "negatives": {
            "name": "negatives",
            "unit": "session",
            "description": (
                "Cross-project negatives: the query matches an incident session of project B but is "
                "scoped to project A (that session is forbidden); each has a positive control with "
                "the same text scoped to B."
            ),
            "questions": negatives,
        },
    }


def _plan_echoes(plan: Plan) -> None:
    rng = derive_rng(plan.config.seed, "echoes")
    for s in plan.sessions:
        if s.role != "echo":
            continue
        cwd = plan.cwd(s.project)
        pool = [
            (q["qid"], q["text"])
            for name in ("receipts", "decisions", "multihop", "temporal")
            for q in plan.rosters[name]["questions"]
            if q["scope"] == [cwd]
        ]
        s.echo = rng.sample(pool, min(plan.config.echo_questions, len(pool)))


def build_plan(config: SyntheticConfig) -> Plan:
    """Decide every session, fact and gold answer for `config`."""
    profiles = list(PROFILES[: config.projects])
    plan = Plan(config=config, profiles=profiles, sessions=_sessions(config, profiles))
    _assign_roles(plan)
    _plan_commits(plan)
    _plan_citations(plan)
    _plan_decisions(plan)
    _plan_chains(plan)
    _plan_hops(plan)
    _plan_incidents(plan)
    _plan_scaffolding(plan)
    _plan_self(plan)
    _build_rosters(plan)
    _plan_echoes(plan)
    return plan


__all__ = [
    "SELF_PROMPT_MARKER",
    "Plan",
    "SessionPlan",
    "build_plan",
    "content_words",
    "jaccard",
    "split",
]

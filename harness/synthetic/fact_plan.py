"""Placing the planted facts: commits, citations, decisions, temporal chains, multi-hop pairs, incidents.

Each planner appends its facts to the `Plan` and records their indices on the sessions that hold them.
"""

from __future__ import annotations

from harness.synthetic.config import SyntheticError, derive_rng
from harness.synthetic.facts import (
    ChainFact,
    CitationFact,
    CommitFact,
    DecisionFact,
    HopFact,
    IncidentFact,
)
from harness.synthetic.plan import Plan, later_work, split, work_sessions
from harness.synthetic.text import func_name
from harness.synthetic.vocab import (
    COMMIT_QUALIFIERS,
    COMMIT_VERBS,
    DECISION_CHOICES,
    DECISION_REASONS,
    DECISION_VERBS,
    HOP_ADJECTIVES,
    HOP_FILE_HEADS,
    HOP_FILE_TAILS,
    HOP_NOUNS,
    HOP_PURPOSES,
    HOP_VERBS,
    INCIDENT_ERRORS,
    INCIDENT_TRIGGERS,
    PARAMS,
    TEMPORAL_ASPECTS,
    TEMPORAL_REASONS,
    Profile,
)


def _commit_message(
    verb: tuple[str, str, str, str], obj: str, qual: str, scope: str, conventional: bool
) -> str:
    if conventional:
        return f"{verb[3]}({scope}): {verb[0]} {obj} {qual}"
    text = f"{verb[0]} {obj} {qual}"
    return text[:1].upper() + text[1:]


def plan_commits(plan: Plan) -> None:
    """Commits, at most three per session; near-duplicate originals get theirs first."""
    config = plan.config
    rng = derive_rng(config.seed, "commits")
    shorts: set[str] = set()
    # Near-duplicate pairs first: the successful half of each pair is the next work session.
    pair_of: dict[int, list[int]] = {}
    for s in plan.sessions:
        if s.role == "attempt":
            if later_work(plan, s.index) is None:
                msg = f"near-duplicate session {s.sid} has no later work session in its project"
                raise SyntheticError(msg)
            pair_of.setdefault(s.project, []).append(s.index)
    work_counts = [float(len(work_sessions(plan, p))) for p in range(config.projects)]
    per_project = split(config.commits - config.near_duplicates, work_counts)
    per_project = [n + len(pair_of.get(p, [])) for p, n in enumerate(per_project)]
    for p in range(config.projects):
        profile = plan.profiles[p]
        used: set[tuple[int, int, int]] = set()
        hosts: list[int] = []
        for attempt in pair_of.get(p, []):
            original = later_work(plan, attempt)
            if original is not None:
                hosts.append(original)
        work = work_sessions(plan, p)
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


def plan_citations(plan: Plan) -> None:
    """Later sessions of the same project that cite a commit's short hash in prose."""
    rng = derive_rng(plan.config.seed, "citations")
    candidates = [i for i, c in enumerate(plan.commits) if c.attempt_session is None]
    rng.shuffle(candidates)
    for i in candidates:
        if len(plan.citations) == plan.config.citations:
            break
        commit = plan.commits[i]
        later = [j for j in work_sessions(plan, commit.project) if j > commit.session]
        if not later:
            continue
        cite = CitationFact(commit=commit, session=rng.choice(later))
        plan.sessions[cite.session].citations.append(len(plan.citations))
        plan.citations.append(cite)
    if len(plan.citations) < plan.config.citations:
        msg = f"could place only {len(plan.citations)} of {plan.config.citations} citations; lower citations"
        raise SyntheticError(msg)


def plan_decisions(plan: Plan) -> None:
    """Decisions, each choice used once per project, at most two per session where room allows."""
    config = plan.config
    rng = derive_rng(config.seed, "decisions")
    per_project = split(
        config.decisions, [float(len(work_sessions(plan, p))) for p in range(config.projects)]
    )
    busiest = max(per_project, default=0)
    if busiest > len(DECISION_CHOICES):
        msg = (
            f"decisions={config.decisions} puts {busiest} decisions in one project (shares follow "
            f"its work sessions), but a project has only {len(DECISION_CHOICES)} distinct choices; "
            "lower decisions or raise projects"
        )
        raise SyntheticError(msg)
    for p in range(config.projects):
        profile = plan.profiles[p]
        picks = rng.sample(range(len(DECISION_CHOICES)), per_project[p])
        work = work_sessions(plan, p)
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


def plan_chains(plan: Plan) -> None:
    """Temporal chains: a topic decided, then reversed once or twice in later sessions."""
    config = plan.config
    rng = derive_rng(config.seed, "chains")
    per_project = split(
        config.temporal_topics, [float(len(work_sessions(plan, p))) for p in range(config.projects)]
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
        work = work_sessions(plan, p)
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


def plan_hops(plan: Plan) -> None:
    """Multi-hop pairs: session A writes a helper file, a later session B edits its parameter."""
    config = plan.config
    rng = derive_rng(config.seed, "hops")
    per_project = split(
        config.multihop_pairs, [float(len(work_sessions(plan, p))) for p in range(config.projects)]
    )
    idents: set[tuple[int, int, int]] = set()
    files: set[str] = set()
    for p in range(config.projects):
        profile = plan.profiles[p]
        work = work_sessions(plan, p)
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


def plan_incidents(plan: Plan) -> None:
    """Incidents of one project that the negatives roster scopes to another."""
    config = plan.config
    rng = derive_rng(config.seed, "incidents")
    triggers = rng.sample(range(len(INCIDENT_TRIGGERS)), config.negatives)
    errors = list(range(len(INCIDENT_ERRORS)))
    rng.shuffle(errors)
    for n in range(config.negatives):
        p = n % config.projects
        scope = (p + 1 + rng.randrange(config.projects - 1)) % config.projects
        host = rng.choice(work_sessions(plan, p))
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

"""Facts that change or are corrected later, the settles a person makes, and the `corrections` roster.

Off by default (`SyntheticConfig.corrected_facts` and `changed_facts` are 0). When on, each fact gets
two sessions of its own, appended after every other session and drawn from their own generators
(`derive_rng(seed, "corrections", ...)`): session A states a setting of a service, a later session B
replaces it. For a **changed** fact the world changed (the old value was true until B); for a
**corrected** one the person says in B that A's value was wrong and gives the right one. No other
session's plan, draw or byte depends on them, so turning the option on only adds files.

Each statement is one message, and no other message of its session names the service with that value,
so "the memory that says X" is exactly the chunk(s) covering that message. The sessions are appended to
the plan's list but dated among the others (A in the first half of the timeline, B at least a quarter
of it later).
After writing, `outputs` finds those messages' uuids in the written lines and builds:

- ``settles.json``: what the person settles, old -> new by (session id, message uuid), with the kind,
  a reason and one fixed time (`SETTLES_FILE`; the corpus manifest hashes it);
- the ``corrections`` draft roster (unit ``message``): per corrected fact a negative item (the old
  message is forbidden) and its positive control (same text and scope; the replacement is relevant);
  per changed fact one item whose relevant unit is the replacement (scored on hit@1).
"""

from __future__ import annotations

import random
from typing import Any

from harness.settles import SETTLES_FILE, SETTLES_VERSION
from harness.synthetic.config import SyntheticError, derive_rng
from harness.synthetic.correction_vocab import (
    ASPECTS,
    CHANGE_REASONS,
    CODENAMES,
    CORRECTION_REASONS,
    SERVICE_KINDS,
)
from harness.synthetic.facts import SettingFact
from harness.synthetic.lines import MODERN, OLDER, Act, Prompt, Step, StreamFile, iso, new_uuid
from harness.synthetic.plan import Plan, SessionPlan
from harness.synthetic.rosters import roster_item

__all__ = [
    "ROSTER_NAME",
    "SETTLES_FILE",
    "SETTLES_VERSION",
    "SettingFact",
    "ep_setting",
    "outputs",
    "plan_corrections",
    "planted_record",
]

ROSTER_NAME = "corrections"
KINDS = ("corrected", "changed")
_DAY_MS = 86_400_000
_HOUR_MS = 3_600_000


def plan_corrections(plan: Plan) -> None:
    """Append two sessions per corrected or changed fact, after every other session of the plan."""
    config = plan.config
    total = config.corrected_facts + config.changed_facts
    if total == 0:
        return
    if total > len(CODENAMES):
        msg = (
            f"corrected_facts + changed_facts must be <= {len(CODENAMES)} (one unique service name "
            f"each), got {config.corrected_facts} + {config.changed_facts}"
        )
        raise SyntheticError(msg)
    rng = derive_rng(config.seed, "corrections")
    span = max(s.start_ms for s in plan.sessions)
    modern = [s.start_ms for s in plan.sessions if s.fmt.modern]
    modern_from = min(modern) if modern else span + 1
    kinds = ["corrected"] * config.corrected_facts + ["changed"] * config.changed_facts
    names = rng.sample(CODENAMES, total)
    for n, kind in enumerate(kinds):
        project = n % config.projects
        aspect = ASPECTS[rng.randrange(len(ASPECTS))]
        old, new = rng.sample(aspect.values, 2)
        reasons = CORRECTION_REASONS if kind == "corrected" else CHANGE_REASONS
        first_ms = rng.randint(0, span // 2)
        gap = max(span // 4, 6 * _HOUR_MS)
        second_ms = first_ms + gap + rng.randint(0, max(span // 4, _HOUR_MS))
        first = _add_session(plan, rng, n, 0, project, first_ms, modern_from)
        second = _add_session(plan, rng, n, 1, project, second_ms, modern_from)
        fact = SettingFact(
            project=project,
            kind=kind,
            subject=f"{names[n]} {rng.choice(SERVICE_KINDS)}",
            aspect=aspect,
            old=old,
            new=new,
            reason=rng.choice(reasons),
            first=first,
            second=second,
        )
        plan.sessions[first].settings.append((len(plan.settings), 0))
        plan.sessions[second].settings.append((len(plan.settings), 1))
        plan.settings.append(fact)


def _add_session(
    plan: Plan,
    rng: random.Random,
    fact: int,
    step: int,
    project: int,
    start_ms: int,
    modern_from: int,
) -> int:
    """A short work session of `project` at `start_ms`, with its own id; returns its index."""
    config = plan.config
    profile = plan.profiles[project]
    index = len(plan.sessions)
    low = max(1500, config.min_chars // 4)
    plan.sessions.append(
        SessionPlan(
            index=index,
            project=project,
            sid=new_uuid(derive_rng(config.seed, "corrections", "session-id", fact, step)),
            start_ms=start_ms,
            fmt=MODERN if start_ms >= modern_from else OLDER,
            branch=rng.choice(profile.branches),
            slug=f"settling-{rng.choice(CODENAMES)}-{rng.choice(SERVICE_KINDS)}",
            role="work",
            target=rng.randint(low, 2 * low),
        )
    )
    return index


def ep_setting(rng: random.Random, fact: SettingFact, step: int) -> list[Step]:
    """Session A's statement (step 0) or session B's replacement (step 1); the value is said once."""
    if step == 0:
        ask = rng.choice(
            (
                f"Before I touch the firewall rules: what do we know about the {fact.subject}'s "
                f"{fact.aspect.name}?",
                f"Quick one, I need the {fact.aspect.name} of the {fact.subject} for the runbook.",
                f"Can you remind me of the {fact.subject}'s {fact.aspect.name}? Writing the handover.",
            )
        )
        return [
            Prompt(text=ask, slot="gold"),
            Act(text=fact.old_text()),
            Prompt(text="Thanks, that's what I needed.", slot="fixed"),
            Act(text="Glad to help. Anything else for the handover?"),
        ]
    ack = (
        "Understood: I'll treat the earlier value as wrong and use the corrected one from now on."
        if fact.kind == "corrected"
        else "Noted: the earlier value was right until today; I'll use the new one from now on."
    )
    return [Prompt(text=fact.new_text(), slot="gold"), Act(text=ack)]


def planted_record(plan: Plan) -> list[dict[str, Any]]:
    """The facts as `planted.json` records them."""
    return [
        {
            "kind": f.kind,
            "project": plan.cwd(f.project),
            "subject": f.subject,
            "aspect": f.aspect.name,
            "old": f.old,
            "new": f.new,
            "first_session": plan.sid(f.first),
            "second_session": plan.sid(f.second),
        }
        for f in plan.settings
    ]


def _message_uuid(stream: StreamFile, text: str, sid: str) -> str:
    """The uuid of the one line of `stream` whose text is exactly `text`."""
    found: list[str] = []
    for line in stream.lines:
        message = line.get("message")
        if line.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if isinstance(blocks, list) and any(
            isinstance(b, dict) and b.get("type") == "text" and b.get("text") == text
            for b in blocks
        ):
            found.append(str(line["uuid"]))
    if len(found) != 1:
        msg = f"session {sid}: expected one message reading {text!r}, found {len(found)}"
        raise SyntheticError(msg)
    return found[0]


def outputs(plan: Plan, streams: list[StreamFile]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `corrections` draft roster and the settles file, from the written main streams.

    `streams[i]` is the main stream of session `i`.
    """
    settles: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    numbers = dict.fromkeys(KINDS, 0)
    for f in plan.settings:
        a, b = plan.sessions[f.first], plan.sessions[f.second]
        old_ref = {
            "session": a.sid,
            "message": _message_uuid(streams[f.first], f.old_text(), a.sid),
        }
        new_ref = {
            "session": b.sid,
            "message": _message_uuid(streams[f.second], f.new_text(), b.sid),
        }
        numbers[f.kind] += 1
        qid = f"{f.kind}-{numbers[f.kind]:04d}"
        settles.append(
            {
                "id": f"settle-{len(settles) + 1:04d}",
                "kind": f.kind,
                "old": old_ref,
                "by": new_ref,
                "reason": f.reason,
                "qid": qid,
            }
        )
        questions += _items(plan, f, qid, old_ref["message"], new_ref["message"])
    last = max(s.start_ms for s in plan.sessions)
    settled_at = iso((last // _DAY_MS + 2) * _DAY_MS, plan.config.epoch_datetime())
    roster = {
        "name": ROSTER_NAME,
        "unit": "message",
        "description": (
            "Typed corrections: per corrected fact a negative item (the old statement's message is "
            "forbidden) with a positive control of the same text and scope (the correction's message "
            "is relevant); per changed fact an item whose relevant message is the replacement, judged "
            "on whether it ranks first. The settles in settles.json are applied before any arm runs."
        ),
        "questions": questions,
    }
    document = {
        "version": SETTLES_VERSION,
        "actor": "person",
        "settled_at": settled_at.replace(".000Z", "Z"),
        "settles": settles,
    }
    return roster, document


def _items(plan: Plan, f: SettingFact, qid: str, old: str, new: str) -> list[dict[str, Any]]:
    """The roster items of one fact (the draft format `harness.roster.load_draft` reads)."""
    scope = [plan.cwd(f.project)]
    tags = {"kind": f.kind, "aspect": f.aspect.name}
    if f.kind == "changed":
        return [
            roster_item(
                qid, f.question(), scope, "changed", {**tags, "role": "replacement"}, {new: 1}
            )
        ]
    control = f"corrected-control-{qid.rsplit('-', 1)[1]}"
    negative = roster_item(
        qid,
        f.question(),
        scope,
        "corrected",
        {**tags, "role": "negative"},
        {},
        forbidden=[old],
        control=control,
    )
    return [
        negative,
        roster_item(
            control, f.question(), scope, "corrected-control", {**tags, "role": "control"}, {new: 1}
        ),
    ]

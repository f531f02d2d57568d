"""The five gold rosters, built from the plan's facts, and the word-overlap figure of the paraphrases."""

from __future__ import annotations

import random
import re
from typing import Any

from harness.synthetic.config import derive_rng
from harness.synthetic.plan import Plan
from harness.synthetic.vocab import (
    DECISION_QUESTION_TEMPLATES,
    HOP_QUESTION_TEMPLATES,
    INCIDENT_QUESTION_TEMPLATES,
    RECEIPT_QUESTION_TEMPLATES,
    STOPWORDS,
    TEMPORAL_QUESTION_TEMPLATES,
)


def _content_words(text: str) -> set[str]:
    """Lower-cased alphanumeric tokens minus stopwords (for the paraphrase overlap figure)."""
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS}


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the content words of two texts (0 when both are empty)."""
    wa, wb = _content_words(a), _content_words(b)
    union = wa | wb
    return len(wa & wb) / len(union) if union else 0.0


def roster_item(
    qid: str,
    text: str,
    scope: list[str],
    category: str,
    tags: dict[str, str],
    relevant: dict[str, int],
    forbidden: list[str] | None = None,
    control: str | None = None,
) -> dict[str, Any]:
    """One roster question in the draft format `harness.roster.load_draft` reads."""
    return {
        "qid": qid,
        "text": text,
        "scope": scope,
        "category": category,
        "tags": tags,
        "gold": {"relevant": relevant, "forbidden": forbidden or [], "control": control},
    }


def build_rosters(plan: Plan) -> None:
    """Write the five rosters into `plan.rosters`, with the multi-hop and temporal question ids.

    One generator picks every question template, roster by roster in a fixed order, so each step below
    must keep its place.
    """
    rng = derive_rng(plan.config.seed, "rosters")
    receipts = _receipt_questions(plan, rng)
    decisions = _decision_questions(plan, rng)
    multihop = _multihop_questions(plan, rng)
    temporal = _temporal_questions(plan, rng)
    negatives = _negative_questions(plan, rng)
    questions = {
        "receipts": receipts,
        "decisions": decisions,
        "multihop": multihop,
        "temporal": temporal,
        "negatives": negatives,
    }
    descriptions = _descriptions(plan)
    plan.rosters = {
        name: {"name": name, "unit": "session", "description": descriptions[name], "questions": qs}
        for name, qs in questions.items()
    }


def _receipt_questions(plan: Plan, rng: random.Random) -> list[dict[str, Any]]:
    """A commit in the user's words -> the session whose git result holds its hash."""
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
            roster_item(
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
    return receipts


def _decision_questions(plan: Plan, rng: random.Random) -> list[dict[str, Any]]:
    """A decision reworded -> its session; records the question-to-decision word overlap."""
    decisions = []
    overlaps = []
    for n, d in enumerate(sorted(plan.decisions, key=lambda d: (d.session, d.choice[0])), 1):
        text = rng.choice(DECISION_QUESTION_TEMPLATES).format(
            choice=d.choice[1], component=d.component.paraphrase, reason=d.reason[1]
        )
        overlaps.append(jaccard(text, d.text))
        decisions.append(
            roster_item(
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
    return decisions


def _multihop_questions(plan: Plan, rng: random.Random) -> list[dict[str, Any]]:
    """An identifier only session A defines -> session B, which edits the same file."""
    multihop = []
    for n, hi in enumerate(
        sorted(range(len(plan.hops)), key=lambda i: (plan.hops[i].b_session, plan.hops[i].ident)), 1
    ):
        h = plan.hops[hi]
        plan.hop_qids[hi] = f"multihop-{n:04d}"
        text = rng.choice(HOP_QUESTION_TEMPLATES).format(param=h.param[0], ident=h.ident)
        multihop.append(
            roster_item(
                f"multihop-{n:04d}",
                text,
                [plan.cwd(h.project)],
                "multihop",
                {"hop": "multi", "bridge": "file"},
                {plan.sid(h.b_session): 1},
            )
        )
    return multihop


def _temporal_questions(plan: Plan, rng: random.Random) -> list[dict[str, Any]]:
    """A topic decided and reversed -> the session of the last reversal."""
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
            roster_item(
                f"temporal-{n:04d}",
                text,
                [plan.cwd(ch.project)],
                "temporal",
                {"hop": "single", "revisions": str(len(ch.sessions) - 1)},
                {plan.sid(ch.sessions[-1]): 1},
            )
        )
    return temporal


def _negative_questions(plan: Plan, rng: random.Random) -> list[dict[str, Any]]:
    """Each incident twice: scoped to another project (forbidden gold), and as its positive control."""
    negatives = []
    for n, inc in enumerate(plan.incidents, 1):
        text = rng.choice(INCIDENT_QUESTION_TEMPLATES).format(
            component=inc.component.name, error=inc.error, trigger=inc.trigger
        )
        neg, ctl = f"negative-{n:04d}", f"negative-control-{n:04d}"
        negatives.append(
            roster_item(
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
            roster_item(
                ctl,
                text,
                [plan.cwd(inc.project)],
                "control",
                {"hop": "single", "kind": "control"},
                {plan.sid(inc.session): 1},
            )
        )
    return negatives


def _descriptions(plan: Plan) -> dict[str, str]:
    """What each roster asks; the decisions roster quotes the measured overlap."""
    overlap = f"{plan.decision_overlap:.3f}"
    return {
        "receipts": (
            "Receipt look-up: a commit recalled in the user's words (never verbatim) -> the session "
            "whose git tool result holds its hash. Distractors: near-duplicate sessions whose commit "
            "attempt failed, and later sessions citing the short hash in prose."
        ),
        "decisions": (
            "Decision recall by paraphrase: the question rewords the choice, the component and the "
            "reason with synonym tables. Mean content-word Jaccard overlap between question and "
            f"the gold decision sentence: {overlap}."
        ),
        "multihop": (
            "Two hops tied by a shared file: the question names an identifier that only session A "
            "defines, in a file that only A and B edit; the gold is B, which holds the parameter "
            "value asked for and never mentions the identifier."
        ),
        "temporal": (
            "The latest decision wins: each topic was decided and later reversed (once or twice); "
            "the gold is the session holding the last reversal, never the superseded ones."
        ),
        "negatives": (
            "Cross-project negatives: the query matches an incident session of project B but is "
            "scoped to project A (that session is forbidden); each has a positive control with "
            "the same text scoped to B."
        ),
    }

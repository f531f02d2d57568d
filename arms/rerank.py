"""The shared rerank stage (ARMS.md, "Rerank"): provenance signals added to a base score, stable sort.

Two policies: `recall` (what the shipped search tool uses; it favours what the user said and demotes tool
mechanics) and `provenance` (what the walk uses; scaffold, authority and primacy signals only).

The "supersedes" signal (+0.20, both policies) is a chunk that replaces another: the `new` chunk of an
active `changed` or `corrected` settle (`engine.trust`, read as `ChunkRecord.supersedes`). On a memory
without settles no chunk has it, so rankings there are what they were before settles existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Literal

from arms.decay import parse_ts
from arms.spec import check_float, check_int
from engine.api import ChunkRecord
from engine.markers import CONTEXT_OPEN
from engine.model import Author

Policy = Literal["recall", "provenance"]
POLICIES: tuple[Policy, ...] = ("recall", "provenance")

TOOL_MARKERS: tuple[str, ...] = (
    "[Edit:",
    "[Bash:",
    "[Write:",
    "[Read:",
    "[Tool:",
    "[MultiEdit:",
    "[Grep:",
)
SCAFFOLD_MARKERS: tuple[str, ...] = (
    "<command-message>",
    "<command-args>",
    "This session is being continued from a previous conversation",
    CONTEXT_OPEN,
)
AUTHORITY_PHRASES: tuple[str, ...] = (
    "correction:",
    "the real ",
    "disregard",
    "always assume",
    "never re-ask",
    "ignore the",
)


@dataclass(frozen=True, kw_only=True)
class RerankWeights:
    """Signal weights from ARMS.md; `mechanic_min_markers` is how many tool markers make a chunk mechanic."""

    user: float = 0.50
    supersedes: float = 0.20
    mechanic: float = -0.50
    scaffold: float = -0.30
    authority: float = -0.60
    primacy: float = 0.15
    primacy_window: float = 0.05
    mechanic_min_markers: int = 3

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name == "mechanic_min_markers":
                continue
            check_float("rerank", f.name, getattr(self, f.name))
        check_float("rerank", "primacy_window", self.primacy_window, low=0.0)
        check_int("rerank", "mechanic_min_markers", self.mechanic_min_markers, minimum=1)


@dataclass(frozen=True, kw_only=True)
class Reranked:
    """One candidate after rerank: its base score, its adjusted score and the channel that found it."""

    record: ChunkRecord
    score: float
    adjusted: float
    via: str


def rerank(
    candidates: Sequence[tuple[ChunkRecord, float, str]],
    policy: Policy,
    weights: RerankWeights | None = None,
) -> list[Reranked]:
    """Add the provenance signals to each base score and sort by the result, stable.

    The prior order is (−base score, chunk id); candidates whose adjusted scores tie keep it.

    Raises:
        ValueError: `policy` is not one of `recall`, `provenance`.
    """
    if policy not in POLICIES:
        msg = f"unknown rerank policy {policy!r}, choose one of: {', '.join(POLICIES)}"
        raise ValueError(msg)
    w = weights if weights is not None else RerankWeights()
    prior = sorted(candidates, key=lambda c: (-c[1], c[0].id))
    origin = _origin_session(prior, w)
    out = [
        Reranked(
            record=rec, score=score, adjusted=score + _adjustment(rec, policy, origin, w), via=via
        )
        for rec, score, via in prior
    ]
    # list.sort is stable, so ties in the adjusted score keep the (-score, id) prior order.
    out.sort(key=lambda r: -r.adjusted)
    return out


def is_mechanic(text: str, min_markers: int = 3) -> bool:
    """A chunk that starts with a tool marker or holds `min_markers` or more of them."""
    if text.lstrip().startswith(TOOL_MARKERS):
        return True
    return sum(text.count(marker) for marker in TOOL_MARKERS) >= min_markers


def is_scaffold(text: str) -> bool:
    """Slash-command wrappers, a continued-session summary, or this project's own injected context."""
    return any(marker in text for marker in SCAFFOLD_MARKERS)


def claims_authority(record: ChunkRecord) -> bool:
    """A tool result that tells the reader to trust it over everything else (a prompt-injection shape)."""
    if record.author != Author.TOOL_RESULT:
        return False
    lowered = record.text.lower()
    return any(phrase in lowered for phrase in AUTHORITY_PHRASES)


def _adjustment(record: ChunkRecord, policy: Policy, origin: str | None, w: RerankWeights) -> float:
    delta = 0.0
    if policy == "recall":
        if record.author == Author.USER:
            delta += w.user
        if is_mechanic(record.text, w.mechanic_min_markers):
            delta += w.mechanic
    if record.supersedes:
        delta += w.supersedes
    if is_scaffold(record.text):
        delta += w.scaffold
    if claims_authority(record):
        delta += w.authority
    if origin is not None and record.author == Author.USER and record.session_id == origin:
        delta += w.primacy
    return delta


def _origin_session(
    prior: Sequence[tuple[ChunkRecord, float, str]], w: RerankWeights
) -> str | None:
    """The earliest session among User, non-scaffold candidates within the window of the best of them."""
    users = [(rec, score) for rec, score, _ in prior if rec.author == Author.USER]
    users = [(rec, score) for rec, score in users if not is_scaffold(rec.text)]
    if not users:
        return None
    best = max(score for _, score in users)
    # The epsilon keeps "within 0.05" inclusive despite binary rounding (0.8 - 0.05 != 0.75 exactly).
    close = [rec for rec, score in users if score >= best - w.primacy_window - 1e-12]
    # Undated sessions sort after every dated one; the session id breaks remaining ties.
    earliest = min(close, key=lambda rec: (_start_key(rec.session_start), rec.session_id))
    return earliest.session_id


def _start_key(ts: str | None) -> tuple[int, datetime]:
    parsed = parse_ts(ts)
    if parsed is None:
        return (1, datetime.min.replace(tzinfo=UTC))
    return (0, parsed)

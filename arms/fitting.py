"""Fitted arms: what an arm with learned or tuned state gets to learn from, and what it must give back.

An arm is *fitted* when a number in it was chosen by looking at answers: a model's weights, a fusion
weight, one constant. Fitting is part of pre-registration (HARNESS.md, Fitting): `protocol register`
imports the training corpus, turns the training rosters into `Example`s and calls the arm's fit function
once, seeded; the returned `Fitted` is written as an artifact whose hash the lock records, and a run
builds the arm from that artifact only. The arms layer never sees a test roster, and never reads an
artifact itself: the harness hands it the model the artifact holds.

A fit function must be deterministic: the same memory, examples, params and seed give the same
`Fitted`, so that fitting twice writes byte-identical artifacts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

from arms.base import Query
from engine.api import ChunkRecord, ReadAPI

__all__ = ["Example", "FitError", "FitFunction", "Fitted", "Part", "PartsFitFunction", "grade"]


class FitError(ValueError):
    """A fit that cannot be made (no usable example, a degenerate target) or a model that is malformed."""


@dataclass(frozen=True, kw_only=True)
class Example:
    """One training question: the query an arm would be asked, and its graded gold units.

    `unit` says what `relevant` names: sessions (``session``) or message uuids (``message``).
    """

    qid: str
    query: Query
    unit: Literal["session", "message"]
    relevant: Mapping[str, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "relevant", MappingProxyType(dict(self.relevant)))
        if self.unit not in ("session", "message"):
            msg = f"Example {self.qid}: unit must be 'session' or 'message', got {self.unit!r}"
            raise FitError(msg)

    def grade(self, record: ChunkRecord) -> int:
        """The gold grade of a retrieved chunk for this question (0: not relevant)."""
        return grade(self.unit, self.relevant, record)


def grade(unit: str, relevant: Mapping[str, int], record: ChunkRecord) -> int:
    """A chunk's grade: its session's (unit ``session``) or its best message's (unit ``message``).

    The same rule the harness scores by (`harness.metrics`), so a model learns what is measured.
    """
    if unit == "session":
        return relevant.get(record.session_id, 0)
    return max((relevant.get(u, 0) for u in record.message_uuids), default=0)


@dataclass(frozen=True, kw_only=True)
class Fitted:
    """What a fit returns: the features it uses (in order) and a JSON-ready model.

    `counts` reports the training data as the fit saw it (examples used, skipped and why, candidates,
    positives); it goes into the artifact beside the model.
    """

    features: tuple[str, ...]
    model: Mapping[str, Any]
    counts: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", MappingProxyType(dict(self.model)))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))


class FitFunction(Protocol):
    """``fit(memory, params, examples, seed) -> Fitted``: learn an arm's state from examples."""

    def __call__(
        self, memory: ReadAPI, params: Any, examples: tuple[Example, ...], seed: int
    ) -> Fitted: ...


Part = tuple[ReadAPI, tuple[Example, ...]]


class PartsFitFunction(Protocol):
    """``fit_parts(parts, params, seed) -> Fitted``: learn one state from examples read through
    several memories, each part's examples through its own (cross-fitting: each part's vectors come
    from an encoder that never saw that part's questions). One part is the same fit as `FitFunction`.
    """

    def __call__(self, parts: Sequence[Part], params: Any, seed: int) -> Fitted: ...

"""Per-query retrieval metrics over an arm's ranked chunks, at the session or the message unit.

Pure functions: they see only the ranked chunks (with the session and message uuids each
covers) and the gold key, never the engine. A measure has one canonical string (`recall@5`,
`hit@10`, `mrr`, `mrr@10`, `ndcg@10`) used in protocols, results and locks, parsed back by a
small parser (never `eval`).

Units and cutoffs:
- `session`: the ranked list is the distinct sessions of the ranked chunks, in first-seen order.
  A cutoff `k` keeps the top k *distinct sessions*, however many chunks that takes (so
  `recall@5` at the session unit may look at more than five chunks when several chunks share a
  session). This is the published benchmark's Gate M: any chunk from a gold session is a hit.
- `message`: the ranked list is the distinct chunks (by chunk id, first-seen order), and a
  cutoff `k` keeps the top k chunks. A chunk is relevant when it covers a gold message uuid; its
  grade is the highest gold grade among the uuids it covers. `recall@k` is the share of gold
  uuids covered by any of the top k chunks. For `ndcg@k` a chunk gains only for gold uuids that
  no higher-ranked chunk already covered: the engine splits a long message across several
  chunks, and crediting every piece would let DCG exceed the ideal (nDCG > 1) and reward
  retrieving one message twice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast, get_args

from engine.checks import is_int

MeasureName = Literal["hit", "recall", "mrr", "ndcg"]
Unit = Literal["session", "message"]

# name -> whether a cutoff is required. The "unknown measure" message is built from these keys.
_MEASURES: dict[str, bool] = {"hit": True, "recall": True, "mrr": False, "ndcg": True}
_UNITS: tuple[str, ...] = get_args(Unit)
# Canonical spelling only: lower-case name, optional "@" and a positive integer without leading
# zeros, so that str(parse_measure(s)) == s for every accepted s.
_MEASURE_RE = re.compile(r"(?P<name>[a-z]+)(?:@(?P<k>[0-9]+))?")
_K_RE = re.compile(r"[1-9][0-9]*")


class MetricError(ValueError):
    """A measure, gold key or ranked list that cannot be scored."""


@dataclass(frozen=True, kw_only=True)
class Measure:
    """One measure at an optional cutoff; `str()` gives its canonical spelling."""

    name: MeasureName
    k: int | None

    def __post_init__(self) -> None:
        if self.name not in _MEASURES:
            msg = f"unknown measure {self.name!r}; choose one of {', '.join(sorted(_MEASURES))}"
            raise MetricError(msg)
        if self.k is None:
            if _MEASURES[self.name]:
                msg = (
                    f"measure {self.name!r} needs a cutoff, got none; "
                    f"write it as '{self.name}@k', e.g. '{self.name}@10'"
                )
                raise MetricError(msg)
            return
        if not is_int(self.k) or self.k < 1:
            msg = f"measure {self.name!r} cutoff must be an integer >= 1, got {self.k!r}"
            raise MetricError(msg)

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"


def parse_measure(s: str) -> Measure:
    """Parse a canonical measure string such as `recall@5`, `mrr`, `mrr@10` or `ndcg@10`.

    Raises:
        MetricError: when `s` is not in canonical form, names an unknown measure, or lacks a
            required cutoff.
    """
    match = _MEASURE_RE.fullmatch(s)
    if match is None:
        msg = (
            f"cannot parse measure {s!r}; write a lower-case name with an optional '@k' cutoff, "
            f"e.g. 'recall@5' or 'mrr' (names: {', '.join(sorted(_MEASURES))})"
        )
        raise MetricError(msg)
    name = match.group("name")
    if name not in _MEASURES:
        msg = f"unknown measure {name!r} in {s!r}; choose one of {', '.join(sorted(_MEASURES))}"
        raise MetricError(msg)
    raw_k = match.group("k")
    if raw_k is not None and _K_RE.fullmatch(raw_k) is None:
        msg = f"measure cutoff in {s!r} must be a positive integer without leading zeros"
        raise MetricError(msg)
    k = None if raw_k is None else int(raw_k)
    # The name was checked against the registry above; Measure re-validates it.
    return Measure(name=cast(MeasureName, name), k=k)


@dataclass(frozen=True, kw_only=True)
class RankedItem:
    """One retrieved chunk as metrics see it: its id, session and the message uuids it covers."""

    chunk_id: str
    session_id: str
    message_uuids: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.chunk_id:
            msg = "RankedItem.chunk_id must be a non-empty string, got ''"
            raise MetricError(msg)
        if not self.session_id:
            msg = f"RankedItem.session_id must be a non-empty string (chunk {self.chunk_id})"
            raise MetricError(msg)
        # Typed callers cannot pass a list, but a list would make the item unhashable later.
        uuids: object = self.message_uuids
        if not isinstance(uuids, tuple):
            msg = (
                f"RankedItem.message_uuids must be a tuple of str, got "
                f"{type(uuids).__name__} (chunk {self.chunk_id}); pass tuple(...)"
            )
            raise MetricError(msg)


def to_units(ranked: Sequence[RankedItem], unit: Unit) -> list[str]:
    """The ranked unit ids, first-seen: distinct sessions (`session`) or chunk ids (`message`).

    Raises:
        MetricError: for an unknown unit.
    """
    _check_unit(unit)
    if unit == "session":
        return list(dict.fromkeys(item.session_id for item in ranked))
    return list(dict.fromkeys(item.chunk_id for item in ranked))


def score_query(
    ranked: Sequence[RankedItem],
    gold: Mapping[str, int],
    unit: Unit,
    measures: Sequence[Measure],
) -> dict[str, float]:
    """Score one query's ranking against its gold key, keyed by each measure's canonical string.

    - `hit@k`: 1.0 when any relevant unit is in the top k.
    - `recall@k`: share of gold units found in the top k (message unit: gold uuids covered).
    - `mrr` / `mrr@k`: 1 / rank of the first relevant unit (within k), 0.0 when there is none.
    - `ndcg@k`: DCG@k / IDCG@k with gain 2^grade − 1 and discount log2(rank + 1) (Järvelin &
      Kekäläinen 2002, exponential gain as in Burges et al. 2005); the ideal ranking is the key's
      grades sorted descending, top k of them.

    An empty `ranked` (the arm failed, timed out or abstained) scores 0.0 for every measure, so
    the query stays in the roster mean.

    References:
        Järvelin, K., & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques.
            ACM TOIS 20(4), 422-446.
        Burges, C., et al. (2005). Learning to rank using gradient descent. ICML '05, 89-96.

    Args:
        ranked: the arm's chunks, best first.
        gold: unit id (session id or message uuid) -> grade >= 1.
        unit: `session` or `message` (see the module docstring for how cutoffs apply).
        measures: the measures to compute.

    Raises:
        MetricError: for an empty gold key, a grade below 1, an unknown unit or a non-Measure.
    """
    _check_unit(unit)
    _check_gold(gold)
    checked: Sequence[object] = measures
    for measure in checked:
        if not isinstance(measure, Measure):
            msg = (
                f"measures must be Measure values, got {measure!r}; use parse_measure('{measure}')"
            )
            raise MetricError(msg)
    grades, found = _ranked_relevance(ranked, gold, unit)
    return {str(m): _score(m, grades, found, gold) for m in measures}


def leak_at_k(
    ranked: Sequence[RankedItem], forbidden: Collection[str], unit: Unit, k: int
) -> float:
    """1.0 when a forbidden unit is in the top k (message unit: a top-k chunk covers one), else 0.

    Raises:
        MetricError: for an empty `forbidden`, an unknown unit or k < 1.
    """
    _check_unit(unit)
    _check_k(k)
    if not forbidden:
        msg = "leak_at_k needs at least one forbidden unit, got none; a negative item must name one"
        raise MetricError(msg)
    grades, _ = _ranked_relevance(ranked, dict.fromkeys(forbidden, 1), unit)
    return 1.0 if any(g > 0 for g in grades[:k]) else 0.0


def control_hit_at_k(
    ranked: Sequence[RankedItem], gold: Mapping[str, int], unit: Unit, k: int
) -> float:
    """`hit@k` of a negative item's positive control: 1.0 when the unit that must appear does.

    Raises:
        MetricError: for an empty gold key, a grade below 1, an unknown unit or k < 1.
    """
    _check_k(k)
    return score_query(ranked, gold, unit, [Measure(name="hit", k=k)])[f"hit@{k}"]


def mean_over_roster(scores: Mapping[str, float], qids: Collection[str]) -> float:
    """Mean of one measure over the whole roster; a qid with no score counts as 0.0, never dropped.

    Raises:
        MetricError: for an empty roster, or scores for qids that are not in the roster.
    """
    if not qids:
        msg = "cannot average over an empty roster; pass the sealed roster's qids"
        raise MetricError(msg)
    roster = set(qids)
    strays = sorted(set(scores) - roster)
    if strays:
        msg = f"scores for qids not in the roster: {strays[:5]} ({len(strays)} in all)"
        raise MetricError(msg)
    return math.fsum(scores.get(qid, 0.0) for qid in roster) / len(roster)


def _ranked_relevance(
    ranked: Sequence[RankedItem], gold: Mapping[str, int], unit: Unit
) -> tuple[list[int], list[set[str]]]:
    """Per ranked unit: its gain grade and the gold ids it newly covers (for recall)."""
    grades: list[int] = []
    found: list[set[str]] = []
    if unit == "session":
        for session in to_units(ranked, "session"):
            grades.append(gold.get(session, 0))
            found.append({session} if session in gold else set())
        return grades, found
    seen_chunks: set[str] = set()
    covered: set[str] = set()
    for item in ranked:
        if item.chunk_id in seen_chunks:
            continue
        seen_chunks.add(item.chunk_id)
        new = {u for u in item.message_uuids if u in gold and u not in covered}
        covered |= new
        grades.append(max((gold[u] for u in new), default=0))
        found.append(new)
    return grades, found


def _score(
    measure: Measure, grades: Sequence[int], found: Sequence[set[str]], gold: Mapping[str, int]
) -> float:
    """One measure from the per-rank grades."""
    cut = len(grades) if measure.k is None else measure.k
    top = grades[:cut]
    if measure.name == "hit":
        return 1.0 if any(g > 0 for g in top) else 0.0
    if measure.name == "recall":
        return len(set().union(*found[:cut])) / len(gold)
    if measure.name == "mrr":
        return next((1.0 / rank for rank, g in enumerate(top, start=1) if g > 0), 0.0)
    ideal = sorted(gold.values(), reverse=True)[:cut]
    return _dcg(top) / _dcg(ideal)


def _dcg(grades: Sequence[int]) -> float:
    """Sum of (2^grade − 1) / log2(rank + 1) over ranks 1..n."""
    return math.fsum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


def _check_unit(unit: str) -> None:
    if unit not in _UNITS:
        msg = f"unknown relevance unit {unit!r}; choose one of {', '.join(_UNITS)}"
        raise MetricError(msg)


def _check_k(k: int) -> None:
    if not is_int(k) or k < 1:
        msg = f"cutoff k must be an integer >= 1, got {k!r}"
        raise MetricError(msg)


def _check_gold(gold: Mapping[str, int]) -> None:
    if not gold:
        msg = (
            "gold key is empty: a question without gold cannot be scored; "
            "score negative items with leak_at_k and their controls with control_hit_at_k"
        )
        raise MetricError(msg)
    for unit_id, grade in gold.items():
        if not is_int(grade) or grade < 1:
            msg = f"gold grade for {unit_id!r} must be an integer >= 1, got {grade!r}"
            raise MetricError(msg)

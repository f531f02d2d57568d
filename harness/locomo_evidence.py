"""LoCoMo evidence ids: a question's raw evidence list cleaned into canonical ``D<s>:<t>`` turn ids.

Evidence cleaning (`clean_evidence`) accepts, per string, one or more ids separated by ``;``, ``,`` or
whitespace, each of the forms ``D<s>:<t>`` (canonical), ``D:<s>:<t>`` (extra colon), ``d<s>:<t>``
(lower case), ``D<s>:0<t>`` (leading zeros), ``D<s>:<t>-<u>`` and ``D<s>:<t>-D<s>:<u>`` (a range inside
one session, ``t <= u``), with optional spaces around ``:`` and ``-``. Every repair is counted per kind;
anything else is counted as junk and listed with its question.

`EvidenceProblem` is what the converter (`harness.locomo`) reports for a question whose evidence could
not be used in full.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["CleanedEvidence", "EvidenceProblem", "clean_evidence"]

_ID_SEPARATORS = re.compile(r"[;,\s]+")
_SPACED_PUNCT = re.compile(r"\s*([:\-])\s*")
_ONE_ID = re.compile(r"^(?P<d>[Dd])(?P<colon>:?)(?P<s>[0-9]+):(?P<t>[0-9]+)$")
_RANGE = re.compile(
    r"^(?P<d>[Dd])(?P<colon>:?)(?P<s>[0-9]+):(?P<t>[0-9]+)-(?:(?P<d2>[Dd]):?(?P<s2>[0-9]+):)?(?P<u>[0-9]+)$"
)
_MAX_RANGE = 200  # a wider range inside one session is a typo, not evidence


@dataclass(frozen=True, kw_only=True)
class CleanedEvidence:
    """Canonical ``D<s>:<t>`` ids from a question's raw evidence, with what had to be repaired."""

    ids: tuple[str, ...]  # first-seen order, no duplicates
    repairs: Mapping[str, int]  # repair kind -> count
    junk: tuple[str, ...]  # tokens matching no accepted form

    def __post_init__(self) -> None:
        object.__setattr__(self, "repairs", MappingProxyType(dict(self.repairs)))

    def __hash__(self) -> int:
        return hash((self.ids, tuple(sorted(self.repairs.items())), self.junk))


@dataclass(frozen=True, kw_only=True)
class EvidenceProblem:
    """A question whose evidence could not be used in full (`dropped`: none of it could)."""

    qid: str
    sample_id: str
    question: str
    category: str
    raw_evidence: tuple[str, ...]
    unknown_ids: tuple[str, ...]  # well-formed ids that name no turn of the conversation
    junk: tuple[str, ...]  # tokens that are not dialogue ids at all
    dropped: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "qid": self.qid,
            "sample_id": self.sample_id,
            "question": self.question,
            "category": self.category,
            "raw_evidence": list(self.raw_evidence),
            "unknown_ids": list(self.unknown_ids),
            "junk": list(self.junk),
            "dropped": self.dropped,
        }


def clean_evidence(raw: Sequence[object]) -> CleanedEvidence:
    """Split, repair and expand a question's raw evidence list into canonical turn ids.

    Repairs counted: ``split`` (a string holding several ids), ``spaces`` (spaces removed inside an
    id), ``extra_colon`` (``D:11:26``), ``lowercase`` (``d3:4``), ``leading_zero`` (``D3:04``),
    ``range`` (``D3:4-6`` expanded), ``duplicate`` (an id listed twice). Non-strings and tokens of no
    accepted form are returned as `junk`.
    """
    ids: list[str] = []
    repairs: Counter[str] = Counter()
    junk: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            junk.append(repr(item))
            continue
        text = item.strip()
        collapsed = _SPACED_PUNCT.sub(r"\1", text)
        if collapsed != text:
            repairs["spaces"] += 1
        tokens = [t for t in _ID_SEPARATORS.split(collapsed) if t]
        if len(tokens) > 1:
            repairs["split"] += 1
        for token in tokens:
            expanded = _parse_token(token, repairs)
            if expanded is None:
                junk.append(token)
                continue
            for one in expanded:
                if one in ids:
                    repairs["duplicate"] += 1
                else:
                    ids.append(one)
    return CleanedEvidence(ids=tuple(ids), repairs=repairs, junk=tuple(junk))


def _parse_token(token: str, repairs: Counter[str]) -> list[str] | None:
    """One token -> canonical ids (several for a range), counting repairs; None for junk."""
    single = _ONE_ID.match(token)
    if single is not None:
        _count_form(single.group("d"), single.group("colon"), repairs)
        s, t = single.group("s"), single.group("t")
        if _has_leading_zero(s) or _has_leading_zero(t):
            repairs["leading_zero"] += 1
        return [f"D{int(s)}:{int(t)}"]
    span = _RANGE.match(token)
    if span is None:
        return None
    s, t, u = int(span.group("s")), int(span.group("t")), int(span.group("u"))
    s2 = span.group("s2")
    if (s2 is not None and int(s2) != s) or u < t or u - t > _MAX_RANGE:
        return None  # a range across sessions or backwards cannot be expanded without guessing
    _count_form(span.group("d"), span.group("colon"), repairs)
    if any(_has_leading_zero(span.group(g) or "") for g in ("s", "t", "u", "s2")):
        repairs["leading_zero"] += 1
    repairs["range"] += 1
    return [f"D{s}:{i}" for i in range(t, u + 1)]


def _count_form(d: str, colon: str, repairs: Counter[str]) -> None:
    if d == "d":
        repairs["lowercase"] += 1
    if colon:
        repairs["extra_colon"] += 1


def _has_leading_zero(digits: str) -> bool:
    return len(digits) > 1 and digits.startswith("0")

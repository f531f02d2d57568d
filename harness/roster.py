"""Rosters: the questions arms may see, kept apart from the gold key that scores them.

A draft roster is one JSON file (``rosters/<name>.json``) holding both halves::

    {"name": "receipts", "unit": "session", "description": "...",
     "questions": [
       {"qid": "r0001", "text": "commit: fix flaky retry", "scope": ["/home/u/proj-a"],
        "category": "receipt", "tags": {"hop": "single"},
        "gold": {"relevant": {"<session id>": 1}, "forbidden": [], "control": null}}]}

Sealing (``harness.seal``) splits it into ``questions.json`` (no gold) and ``key.json``. The types
follow the split: a `Question` holds nothing an arm must not see, and the key is only loaded through
``harness.seal.load_sealed_key``, which checks it against the roster's seal first. Subset
expressions over questions live in ``harness.subset``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from engine.checks import is_int

__all__ = [
    "BUILTIN_FIELDS",
    "UNITS",
    "Draft",
    "Gold",
    "Question",
    "RosterError",
    "ScopeSpec",
    "SealedKey",
    "Unit",
    "gold_from_json",
    "gold_to_json",
    "load_draft",
    "load_questions",
    "parse_draft",
    "parse_key_file",
    "question_from_json",
    "question_to_json",
]

Unit: TypeAlias = Literal["session", "message"]
UNITS: tuple[Unit, ...] = ("session", "message")
ScopeSpec: TypeAlias = tuple[str, ...] | Literal["*"]

# Names a subset expression may use besides tag names; a tag may not shadow them.
BUILTIN_FIELDS = ("category", "qid")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TAG_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DRAFT_KEYS = frozenset({"name", "unit", "description", "questions"})
_QUESTION_KEYS = frozenset({"qid", "text", "scope", "category", "tags"})
_GOLD_KEYS = frozenset({"relevant", "forbidden", "control"})


class RosterError(ValueError):
    """A roster, key or subset expression is malformed."""


@dataclass(frozen=True, kw_only=True)
class Question:
    """What an arm may see of a roster item: no gold, ever."""

    qid: str
    text: str
    scope: ScopeSpec
    category: str
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.qid, str) or not self.qid.strip():
            msg = f"Question.qid must be a non-empty string, got {self.qid!r}; give every question an id"
            raise RosterError(msg)
        if not isinstance(self.text, str) or not self.text.strip():
            msg = f"Question {self.qid}: text must be a non-empty string, got {self.text!r}"
            raise RosterError(msg)
        object.__setattr__(self, "scope", _check_scope(self.qid, self.scope))
        category: object = self.category  # typed str, but drafts are untyped JSON
        if not isinstance(category, str):
            msg = f"Question {self.qid}: category must be a string, got {self.category!r}"
            raise RosterError(msg)
        object.__setattr__(self, "tags", MappingProxyType(_check_tags(self.qid, self.tags)))

    def __hash__(self) -> int:
        return hash(
            (self.qid, self.text, self.scope, self.category, tuple(sorted(self.tags.items())))
        )

    def field_value(self, name: str) -> str | None:
        """The value a subset expression sees for `name` (None when the tag is absent)."""
        if name == "category":
            return self.category
        if name == "qid":
            return self.qid
        return self.tags.get(name)


@dataclass(frozen=True, kw_only=True)
class Gold:
    """How one question is scored: graded relevant units, forbidden units and their control."""

    relevant: Mapping[str, int] = field(default_factory=dict)
    forbidden: tuple[str, ...] = ()
    control: str | None = None

    def __post_init__(self) -> None:
        relevant = dict(self.relevant)
        for unit, grade in relevant.items():
            if not isinstance(unit, str) or not unit:
                msg = f"Gold.relevant keys must be non-empty unit ids, got {unit!r}"
                raise RosterError(msg)
            # `true` as a grade is a typo, not grade 1.
            if not is_int(grade) or grade < 1:
                msg = (
                    f"Gold.relevant grade for {unit!r} must be an integer >= 1, got {grade!r}; "
                    "list non-relevant units nowhere (or under forbidden for negative items)"
                )
                raise RosterError(msg)
        forbidden = tuple(self.forbidden)
        for unit in forbidden:
            if not isinstance(unit, str) or not unit:
                msg = f"Gold.forbidden entries must be non-empty unit ids, got {unit!r}"
                raise RosterError(msg)
        if len(set(forbidden)) != len(forbidden):
            msg = f"Gold.forbidden lists a unit twice: {list(forbidden)!r}; list each unit once"
            raise RosterError(msg)
        overlap = sorted(set(forbidden) & set(relevant))
        if overlap:
            msg = f"Gold lists {overlap!r} as both relevant and forbidden; a unit can be only one"
            raise RosterError(msg)
        if self.control is not None and (not isinstance(self.control, str) or not self.control):
            msg = f"Gold.control must be a qid or null, got {self.control!r}"
            raise RosterError(msg)
        object.__setattr__(self, "relevant", MappingProxyType(relevant))
        object.__setattr__(self, "forbidden", forbidden)

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.relevant.items())), self.forbidden, self.control))


@dataclass(frozen=True, kw_only=True)
class Draft:
    """A whole draft roster: questions and key together, checked for consistency."""

    name: str
    unit: Unit
    description: str
    questions: tuple[Question, ...]
    key: Mapping[str, Gold]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            msg = (
                f"Roster name must be letters, digits, '.', '_' or '-' (it names the sealed "
                f"folder), got {self.name!r}"
            )
            raise RosterError(msg)
        if self.unit not in UNITS:
            msg = f"Roster {self.name}: unit must be one of {list(UNITS)}, got {self.unit!r}"
            raise RosterError(msg)
        questions = tuple(self.questions)
        if not questions:
            msg = f"Roster {self.name} has no questions; a roster needs at least one"
            raise RosterError(msg)
        key = dict(self.key)
        _check_consistency(self.name, questions, key)
        object.__setattr__(self, "questions", questions)
        object.__setattr__(self, "key", MappingProxyType(key))

    def __hash__(self) -> int:
        return hash((self.name, self.unit, self.questions, tuple(sorted(self.key.items()))))


@dataclass(frozen=True, kw_only=True)
class SealedKey:
    """A key file's contents after its seal was checked."""

    unit: Unit
    gold: Mapping[str, Gold]


# ---------------------------------------------------------------------------------------------
# JSON conversion


def question_to_json(question: Question) -> dict[str, Any]:
    """The arm-visible JSON form of a question (what ``questions.json`` holds)."""
    scope: str | list[str] = "*" if question.scope == "*" else list(question.scope)
    return {
        "qid": question.qid,
        "text": question.text,
        "scope": scope,
        "category": question.category,
        "tags": dict(question.tags),
    }


def gold_to_json(gold: Gold) -> dict[str, Any]:
    """The JSON form of one question's gold (an entry of ``key.json``)."""
    return {
        "relevant": dict(gold.relevant),
        "forbidden": list(gold.forbidden),
        "control": gold.control,
    }


def question_from_json(data: object, where: str) -> Question:
    """Build a `Question` from its JSON object; `where` locates it in error messages."""
    obj = _require_object(data, where)
    _refuse_unknown(obj, _QUESTION_KEYS, where)
    for name in ("qid", "text", "scope", "category"):
        if name not in obj:
            msg = f"{where}: missing required field {name!r}; each question needs {sorted(_QUESTION_KEYS - {'tags'})}"
            raise RosterError(msg)
    scope = obj["scope"]
    if isinstance(scope, list):
        scope = tuple(scope)
    try:
        return Question(
            qid=obj["qid"],
            text=obj["text"],
            scope=scope,
            category=obj["category"],
            tags=obj.get("tags", {}),
        )
    except RosterError as err:
        msg = f"{where}: {err}"
        raise RosterError(msg) from err


def gold_from_json(data: object, where: str) -> Gold:
    """Build a `Gold` from its JSON object; `where` locates it in error messages."""
    obj = _require_object(data, where)
    _refuse_unknown(obj, _GOLD_KEYS, where)
    relevant = obj.get("relevant", {})
    if not isinstance(relevant, dict):
        msg = f"{where}.relevant must be an object of unit id -> grade, got {relevant!r}"
        raise RosterError(msg)
    forbidden = obj.get("forbidden", [])
    if not isinstance(forbidden, list):
        msg = f"{where}.forbidden must be a list of unit ids, got {forbidden!r}"
        raise RosterError(msg)
    try:
        return Gold(relevant=relevant, forbidden=tuple(forbidden), control=obj.get("control"))
    except RosterError as err:
        msg = f"{where}: {err}"
        raise RosterError(msg) from err


def parse_draft(data: object, source: str = "<draft>") -> Draft:
    """Validate a draft roster's parsed JSON and split it into questions and key."""
    obj = _require_object(data, source)
    _refuse_unknown(obj, _DRAFT_KEYS, source)
    for name in ("name", "unit", "questions"):
        if name not in obj:
            msg = (
                f"{source}: missing required field {name!r}; a draft needs name, unit and questions"
            )
            raise RosterError(msg)
    raw_questions = obj["questions"]
    if not isinstance(raw_questions, list):
        msg = f"{source}: questions must be a list, got {type(raw_questions).__name__}"
        raise RosterError(msg)
    questions: list[Question] = []
    key: dict[str, Gold] = {}
    for i, raw in enumerate(raw_questions):
        where = f"{source}: questions[{i}]"
        item = _require_object(raw, where)
        if "gold" not in item:
            msg = f"{where}: missing required field 'gold'; give relevant units (or forbidden + control)"
            raise RosterError(msg)
        visible = {k: v for k, v in item.items() if k != "gold"}
        question = question_from_json(visible, where)
        if question.qid in key:
            msg = f"{where}: duplicate qid {question.qid!r}; every qid must be unique"
            raise RosterError(msg)
        questions.append(question)
        key[question.qid] = gold_from_json(item["gold"], f"{where}.gold")
    description = obj.get("description", "")
    if not isinstance(description, str):
        msg = f"{source}: description must be a string, got {description!r}"
        raise RosterError(msg)
    try:
        return Draft(
            name=obj["name"],
            unit=obj["unit"],
            description=description,
            questions=tuple(questions),
            key=key,
        )
    except RosterError as err:
        msg = f"{source}: {err}"
        raise RosterError(msg) from err


# ---------------------------------------------------------------------------------------------
# Loading


def load_draft(path: Path | str) -> Draft:
    """Read and validate a draft roster JSON file."""
    path = Path(path)
    return parse_draft(_read_json(path), str(path))


def load_questions(path: Path | str) -> list[Question]:
    """Read the arm-visible questions of a sealed roster (a sealed folder or its questions.json)."""
    path = Path(path)
    if path.is_dir():
        path = path / "questions.json"
    obj = _require_object(_read_json(path), str(path))
    raw = obj.get("questions")
    if not isinstance(raw, list):
        msg = f"{path}: expected an object with a 'questions' list, got keys {sorted(obj)}"
        raise RosterError(msg)
    questions = [question_from_json(q, f"{path}: questions[{i}]") for i, q in enumerate(raw)]
    seen: set[str] = set()
    for q in questions:
        if q.qid in seen:
            msg = f"{path}: duplicate qid {q.qid!r}; every qid must be unique"
            raise RosterError(msg)
        seen.add(q.qid)
    return questions


def alone_in_scope(
    questions: Iterable[tuple[Iterable[str], Iterable[str]]], sessions: Iterable[tuple[str, str]]
) -> int:
    """How many questions, each given as (its scope's projects, its gold sessions), have a scope that
    holds no session but its gold among `sessions` ((project, session id) of the corpus): at the
    session unit any arm that returns anything finds such a question's gold, so it compares no arms."""
    by_project: dict[str, set[str]] = {}
    for project, session in sessions:
        by_project.setdefault(project, set()).add(session)
    return sum(
        1
        for projects, gold in questions
        if set().union(*(by_project.get(p, set()) for p in projects)) <= set(gold)
    )


def parse_key_file(path: Path) -> SealedKey:
    """Parse a key file (check it against its seal first: `harness.seal.load_sealed_key`)."""
    obj = _require_object(_read_json(path), str(path))
    _refuse_unknown(obj, frozenset({"unit", "key"}), str(path))
    unit = obj.get("unit")
    if unit not in UNITS:
        msg = f"{path}: unit must be one of {list(UNITS)}, got {unit!r}"
        raise RosterError(msg)
    raw = obj.get("key")
    if not isinstance(raw, dict):
        msg = f"{path}: expected 'key' to be an object of qid -> gold, got {type(raw).__name__}"
        raise RosterError(msg)
    gold = {qid: gold_from_json(g, f"{path}: key[{qid!r}]") for qid, g in raw.items()}
    return SealedKey(unit=unit, gold=MappingProxyType(gold))


# ---------------------------------------------------------------------------------------------
# Validation helpers


def _check_scope(qid: str, scope: object) -> ScopeSpec:
    if scope == "*":
        return "*"
    if isinstance(scope, list | tuple) and scope:
        items = tuple(scope)
        if all(isinstance(p, str) and p for p in items):
            if len(set(items)) != len(items):
                msg = f"Question {qid}: scope lists a project twice: {list(items)!r}"
                raise RosterError(msg)
            return items
    msg = (
        f'Question {qid}: scope must be a non-empty list of project paths or the string "*", '
        f"got {scope!r}"
    )
    raise RosterError(msg)


def _check_tags(qid: str, tags: object) -> dict[str, str]:
    if not isinstance(tags, Mapping):
        msg = f"Question {qid}: tags must be an object of name -> string, got {tags!r}"
        raise RosterError(msg)
    out: dict[str, str] = {}
    for name, value in tags.items():
        if not isinstance(name, str) or not _TAG_RE.match(name) or name in BUILTIN_FIELDS:
            msg = (
                f"Question {qid}: tag name {name!r} must be an identifier other than "
                f"{list(BUILTIN_FIELDS)} (subset expressions refer to it by name)"
            )
            raise RosterError(msg)
        if not isinstance(value, str):
            msg = f'Question {qid}: tag {name!r} must be a string, got {value!r}; write it as "{value}"'
            raise RosterError(msg)
        out[name] = value
    return out


def _check_consistency(name: str, questions: Iterable[Question], key: dict[str, Gold]) -> None:
    qids = [q.qid for q in questions]
    if len(set(qids)) != len(qids):
        dupes = sorted({q for q in qids if qids.count(q) > 1})
        msg = f"Roster {name}: duplicate qid(s) {dupes}; every qid must be unique"
        raise RosterError(msg)
    if set(qids) != set(key):
        msg = (
            f"Roster {name}: questions and key disagree (questions without gold: "
            f"{sorted(set(qids) - set(key))}, gold without question: {sorted(set(key) - set(qids))})"
        )
        raise RosterError(msg)
    for qid in qids:
        gold = key[qid]
        if gold.forbidden and gold.control is None:
            msg = (
                f"Roster {name}: question {qid} has forbidden units but no control; name the "
                "qid of a positive control, or a negative gate could pass without being able to fail"
            )
            raise RosterError(msg)
        if not gold.relevant and not gold.forbidden:
            msg = (
                f"Roster {name}: question {qid} has no relevant units and is not a negative item; "
                "give gold.relevant, or gold.forbidden plus gold.control (a positive-control qid)"
            )
            raise RosterError(msg)
        if gold.control is None:
            continue
        if not gold.forbidden:
            msg = (
                f"Roster {name}: question {qid} names control {gold.control!r} but has no forbidden "
                "units; a control belongs to a negative item, so drop it or add gold.forbidden"
            )
            raise RosterError(msg)
        if gold.control == qid:
            msg = f"Roster {name}: question {qid} names itself as its control; name a different qid"
            raise RosterError(msg)
        control = key.get(gold.control)
        if control is None:
            msg = (
                f"Roster {name}: question {qid} names control {gold.control!r}, which is not a qid "
                "in this roster; add the control question or fix the qid"
            )
            raise RosterError(msg)
        if not control.relevant:
            msg = (
                f"Roster {name}: control {gold.control!r} of question {qid} has no relevant units; "
                "a positive control must have a unit that must be retrieved"
            )
            raise RosterError(msg)


def _read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        msg = f"Roster file {path} does not exist; check the path"
        raise RosterError(msg) from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        msg = f"{path} is not valid JSON: {err}"
        raise RosterError(msg) from err


def _require_object(data: object, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        msg = f"{where}: expected a JSON object, got {type(data).__name__}"
        raise RosterError(msg)
    return data


def _refuse_unknown(obj: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        msg = f"{where}: unknown field(s) {unknown}; allowed fields are {sorted(allowed)}"
        raise RosterError(msg)

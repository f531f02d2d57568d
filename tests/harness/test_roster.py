"""Draft rosters and the questions/key split."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from harness.roster import (
    Gold,
    Question,
    RosterError,
    load_draft,
    load_questions,
    parse_draft,
)
from harness.seal import SealError, load_sealed_key, seal_roster


def _question(qid: str, **over: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "qid": qid,
        "text": f"question {qid}",
        "scope": ["/home/u/proj-a"],
        "category": "receipt",
        "tags": {"hop": "single"},
        "gold": {"relevant": {f"session-{qid}": 1}, "forbidden": [], "control": None},
    }
    item.update(over)
    return item


def _draft(*questions: dict[str, Any]) -> dict[str, Any]:
    return {"name": "receipts", "unit": "session", "description": "d", "questions": list(questions)}


def _negative_pair() -> list[dict[str, Any]]:
    """A negative item (unit from proj-b must not surface in proj-a) and its positive control."""
    control = _question(
        "c1",
        text="where is the retry fix",
        scope=["/home/u/proj-b"],
        gold={"relevant": {"session-b": 1}, "forbidden": [], "control": None},
    )
    negative = _question(
        "n1",
        text="where is the retry fix",
        gold={"relevant": {}, "forbidden": ["session-b"], "control": "c1"},
    )
    return [control, negative]


def test_draft_splits_into_questions_that_hold_no_gold_and_a_key() -> None:
    draft = parse_draft(_draft(_question("r1"), _question("r2", scope="*")))

    assert [q.qid for q in draft.questions] == ["r1", "r2"]
    assert draft.questions[0].scope == ("/home/u/proj-a",)
    assert draft.questions[1].scope == "*"
    assert draft.questions[0].tags == {"hop": "single"}
    assert {f.name for f in fields(Question)} == {"qid", "text", "scope", "category", "tags"}
    assert draft.key["r1"] == Gold(relevant={"session-r1": 1})
    assert draft.key["r2"].relevant == {"session-r2": 1}


def test_duplicate_qids_are_refused() -> None:
    with pytest.raises(RosterError, match=r"duplicate qid 'r1'"):
        parse_draft(_draft(_question("r1"), _question("r1")))
    assert len(parse_draft(_draft(_question("r1"), _question("r2"))).questions) == 2


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_question_text_is_refused(text: str) -> None:
    with pytest.raises(RosterError, match=r"text must be a non-empty string"):
        parse_draft(_draft(_question("r1", text=text)))


@pytest.mark.parametrize("grade", [0, -1, True, 1.5, "1"])
def test_grades_must_be_integers_of_at_least_one(grade: object) -> None:
    gold: dict[str, Any] = {"relevant": {"s1": grade}, "forbidden": [], "control": None}
    with pytest.raises(RosterError, match=r"grade for 's1' must be an integer >= 1"):
        parse_draft(_draft(_question("r1", gold=gold)))
    graded: dict[str, Any] = {"relevant": {"s1": 3, "s2": 1}, "forbidden": [], "control": None}
    assert parse_draft(_draft(_question("r1", gold=graded))).key["r1"].relevant == {
        "s1": 3,
        "s2": 1,
    }


def test_question_without_relevant_units_must_be_a_negative_item_with_a_control() -> None:
    empty: dict[str, Any] = {"relevant": {}, "forbidden": [], "control": None}
    with pytest.raises(RosterError, match=r"r1 has no relevant units and is not a negative item"):
        parse_draft(_draft(_question("r1", gold=empty)))

    draft = parse_draft(_draft(*_negative_pair()))
    assert draft.key["n1"].forbidden == ("session-b",)  # a negative item
    assert draft.key["n1"].control == "c1"
    assert draft.key["c1"].forbidden == ()


def test_negative_item_must_name_an_existing_control() -> None:
    control, negative = _negative_pair()
    negative["gold"]["control"] = "c9"
    with pytest.raises(RosterError, match=r"names control 'c9', which is not a qid in this roster"):
        parse_draft(_draft(control, negative))
    negative["gold"]["control"] = None
    with pytest.raises(RosterError, match=r"has forbidden units but no control"):
        parse_draft(_draft(control, negative))
    negative["gold"]["control"] = "c1"
    assert parse_draft(_draft(control, negative)).key["n1"].control == "c1"


def test_control_question_must_have_a_unit_that_must_be_retrieved() -> None:
    control, negative = _negative_pair()
    control["gold"] = {"relevant": {}, "forbidden": ["session-x"], "control": "r1"}
    with pytest.raises(RosterError, match=r"control 'c1' of question n1 has no relevant units"):
        parse_draft(_draft(_question("r1"), control, negative))
    control["gold"] = {"relevant": {"session-b": 1}, "forbidden": [], "control": None}
    assert parse_draft(_draft(_question("r1"), control, negative)).key["c1"].relevant


def test_unknown_fields_are_refused_so_a_typo_cannot_drop_gold() -> None:
    with pytest.raises(RosterError, match=r"unknown field\(s\) \['answer'\]"):
        parse_draft(_draft(_question("r1", answer="the hash")))
    with pytest.raises(RosterError, match=r"unknown field\(s\) \['relevent'\]"):
        parse_draft(_draft(_question("r1", gold={"relevent": {"s": 1}})))


def test_tag_values_must_be_strings() -> None:
    with pytest.raises(RosterError, match=r"tag 'conversation' must be a string, got 3"):
        parse_draft(_draft(_question("r1", tags={"conversation": 3})))
    draft = parse_draft(_draft(_question("r1", tags={"conversation": "3"})))
    assert draft.questions[0].tags["conversation"] == "3"


def test_load_draft_reads_the_documented_json_shape(tmp_path: Path) -> None:
    path = tmp_path / "receipts.json"
    path.write_text(json.dumps(_draft(_question("r0001", text="commit: fix flaky retry"))))

    draft = load_draft(path)

    assert draft.name == "receipts"
    assert draft.unit == "session"
    assert draft.questions[0].text == "commit: fix flaky retry"


def test_load_sealed_key_verifies_the_seal_before_returning_gold(tmp_path: Path) -> None:
    draft_path = tmp_path / "receipts.json"
    draft_path.write_text(json.dumps(_draft(_question("r1"), *_negative_pair())))
    sealed = tmp_path / "sealed" / "receipts"
    seal_roster(draft_path, sealed)

    key = load_sealed_key(sealed).gold
    assert key["r1"].relevant == {"session-r1": 1}
    assert key["n1"].forbidden == ("session-b",)
    assert [q.qid for q in load_questions(sealed)] == ["r1", "c1", "n1"]

    (sealed / "key.json").write_bytes((sealed / "key.json").read_bytes().replace(b"r1", b"r7"))
    with pytest.raises(SealError, match=r"key\.json"):
        load_sealed_key(sealed)

"""Subset expressions: what they select, and everything outside their grammar refused."""

from __future__ import annotations

import pytest

from harness.roster import Question, RosterError
from harness.subset import parse_subset, select


def _questions() -> list[Question]:
    def q(qid: str, category: str, **tags: str) -> Question:
        return Question(qid=qid, text=f"t {qid}", scope="*", category=category, tags=tags)

    return [
        q("q1", "receipt", hop="single"),
        q("q2", "temporal", hop="multi"),
        q("q3", "receipt", hop="multi"),
        q("q4", "decision"),
    ]


def test_subset_selects_by_tag_category_and_qid_in_roster_order() -> None:
    qs = _questions()

    assert [q.qid for q in select(qs, 'hop == "multi"')] == ["q2", "q3"]
    assert [q.qid for q in select(qs, 'category == "temporal"')] == ["q2"]
    assert [q.qid for q in select(qs, '"receipt" == category')] == ["q1", "q3"]
    assert [q.qid for q in select(qs, 'hop == "multi" and category != "temporal"')] == ["q3"]
    assert [q.qid for q in select(qs, 'qid in ("q4", "q1") or hop == "multi"')] == [
        "q1",
        "q2",
        "q3",
        "q4",
    ]
    # A question without the tag is unequal to every value.
    assert [q.qid for q in select(qs, 'hop != "multi"')] == ["q1", "q4"]


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os')",
        "__import__('os').system('true')",
        "hop.upper() == 'MULTI'",
        "not hop == 'multi'",
        "hop == 'a' + 'b'",
        "hop == other",
        "'a' < hop",
        "'a' == hop == 'a'",
        "hop in 'multi'",
        "lambda: 1",
    ],
)
def test_subset_expressions_outside_the_grammar_are_refused(expr: str) -> None:
    with pytest.raises(RosterError, match=r"Subset expression"):
        parse_subset(expr)
    assert parse_subset('hop == "multi"').names == frozenset({"hop"})


def test_subset_with_unknown_name_lists_the_names_it_can_use() -> None:
    with pytest.raises(
        RosterError, match=r"unknown name\(s\) \['hops'\]; choose from \['category', 'hop', 'qid'\]"
    ):
        select(_questions(), 'hops == "multi"')
    assert len(select(_questions(), 'hop == "multi"')) == 2

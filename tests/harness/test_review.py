"""The review log's rules: what counts as an edit, what a drop keeps, and drafts without a side file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.review import Review, ReviewError, excerpt

DRAFT = {
    "name": "mined",
    "unit": "session",
    "description": "",
    "questions": [
        {
            "qid": f"q{i}",
            "text": f"question {i}",
            "scope": ["/p"],
            "category": "receipt",
            "tags": {},
            "gold": {"relevant": {f"s{i}": 1}, "forbidden": [], "control": None},
        }
        for i in (1, 2)
    ],
}


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "mined.json"
    path.write_text(json.dumps(DRAFT))
    return path


def test_a_draft_without_a_side_file_is_reviewed_and_gets_one(tmp_path: Path) -> None:
    review = Review.load(_write(tmp_path))
    assert review.passage("q1") == ""  # a mined roster has no passages
    review.decide("q1", "accept", at="2026-01-01T00:00:00+00:00")
    review.save()
    side = json.loads((tmp_path / "mined.passages.json").read_text())
    assert side["review"]["q1"]["action"] == "accept"
    assert Review.load(tmp_path / "mined.json").pending() == [DRAFT["questions"][1]]


def test_edit_is_measured_against_the_drafted_text_whatever_was_typed_last(tmp_path: Path) -> None:
    review = Review.load(_write(tmp_path))
    at = "2026-01-01T00:00:00+00:00"
    assert review.decide("q1", "edit", "question one, reworded", at=at) == "edit"
    # accepting the edited text later keeps it an edit, with the drafted text as original
    assert review.decide("q1", "accept", at=at) == "edit"
    assert review.log["q1"]["original"] == "question 1"
    # editing back to the drafted text makes it an accept again, with no original recorded
    assert review.decide("q1", "edit", "question 1", at=at) == "accept"
    assert "original" not in review.log["q1"]
    # an edit whose text equals the current one is an accept (positive control for the rule above)
    assert review.decide("q2", "edit", "question 2", at=at) == "accept"


def test_a_drop_keeps_the_whole_question_and_its_drafted_text(tmp_path: Path) -> None:
    review = Review.load(_write(tmp_path))
    at = "2026-01-01T00:00:00+00:00"
    review.decide("q1", "edit", "reworded", at=at)
    assert review.decide("q1", "drop", at=at) == "drop"
    assert [q["qid"] for q in review.questions()] == ["q2"]
    assert review.log["q1"]["dropped"]["gold"]["relevant"] == {"s1": 1}
    assert review.log["q1"]["original"] == "question 1"
    with pytest.raises(ReviewError, match="dropped in an earlier review"):
        review.decide("q1", "accept", at=at)
    with pytest.raises(ReviewError, match="empty"):
        review.decide("q2", "edit", "   ", at=at)
    assert review.counts() == {"drop": 1, "pending": 1}


def test_excerpt_collapses_whitespace_and_marks_a_cut() -> None:
    assert excerpt("a\n\n b\tc", 10) == "a b c"
    assert excerpt("abcdefghijkl", 5) == "abcd…"

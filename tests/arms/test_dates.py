"""`arms.dates`: the dates a question names, and the gap in days from a chunk's day to them."""

from __future__ import annotations

from datetime import date

import pytest

from arms.dates import DateSpan, gap_days, named_date


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("What painting did Melanie show on October 13, 2023?", DateSpan(2023, 10, 13)),
        ("What did Gina find for her store on 1 February, 2023?", DateSpan(2023, 2, 1)),
        ("the fix of 3rd of March 2024", DateSpan(2024, 3, 3)),
        ("What did we change in the deploy script on 2024-03-03?", DateSpan(2024, 3, 3)),
        ("What setback did Melanie face in October 2023?", DateSpan(2023, 10)),
        ("which flags did we drop in Dec. 2022", DateSpan(2022, 12)),
        ("When did Melanie go camping in June?", DateSpan(None, 6)),
        ("what broke since March", DateSpan(None, 3)),
        ("How many times did she go to the beach in 2023?", DateSpan(2023)),
        # the first form that matches wins: a full date before a bare month
        ("in May, or on May 3, 2023?", DateSpan(2023, 5, 3)),
    ],
)
def test_a_named_date_is_read_with_its_span(text: str, span: DateSpan) -> None:
    assert named_date(text) == span


@pytest.mark.parametrize(
    "text",
    [
        "we may go camping",  # the verb, not the month: a bare month needs its preposition
        "What did Caroline research?",
        "port 2023 is taken",  # a bare number is no year without its preposition
        "in Mayfair",  # a word that starts with a month's name
    ],
)
def test_text_without_a_date_names_none(text: str) -> None:
    assert named_date(text) is None
    assert named_date(f"{text} on July 4, 2021") == DateSpan(2021, 7, 4)  # control: one is read


def test_a_date_that_does_not_exist_is_skipped_for_the_next_form() -> None:
    assert named_date("on February 30, 2023 or in March") == DateSpan(None, 3)
    assert named_date("on February 29, 2024") == DateSpan(2024, 2, 29)  # control: a leap day
    assert named_date("on 2023-13-01") is None


def test_the_gap_is_zero_inside_the_span_and_counts_days_to_its_nearest_edge() -> None:
    day = DateSpan(2023, 10, 13)
    assert gap_days(date(2023, 10, 13), day) == 0
    assert gap_days(date(2023, 10, 20), day) == 7
    assert gap_days(date(2023, 10, 3), day) == 10
    month = DateSpan(2023, 10)
    assert gap_days(date(2023, 10, 31), month) == 0
    assert gap_days(date(2023, 11, 2), month) == 2  # 1 November is one day past the 31st
    assert gap_days(date(2023, 9, 25), month) == 6
    year = DateSpan(2023)
    assert gap_days(date(2023, 7, 1), year) == 0
    assert gap_days(date(2024, 1, 10), year) == 10


def test_a_month_of_any_year_is_measured_to_the_nearest_such_month() -> None:
    june = DateSpan(None, 6)
    assert gap_days(date(2023, 6, 15), june) == 0
    assert gap_days(date(2021, 6, 1), june) == 0  # any year
    assert gap_days(date(2023, 7, 2), june) == 2  # 30 June 2023
    december = DateSpan(None, 12)
    assert gap_days(date(2023, 1, 5), december) == 5  # 31 December 2022, the year before
    assert gap_days(date(2023, 11, 29), december) == 2  # 1 December 2023

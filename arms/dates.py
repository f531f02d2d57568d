"""Dates a question names, and how far a chunk's time lies from them (`ltr`'s ``dates`` features).

"What did we change in the deploy script on 3 March 2024?", "Which setback did Melanie face in October
2023?": a question that names a date says when its answer was written, and neither BM25 nor a sentence
vector reads that. `named_date` finds the first date a question names, in English, as one of:

| form | example | span |
|---|---|---|
| month day, year (or day month year, day of month, year) | "October 13, 2023", "1 February, 2023" | that day |
| ISO date | "2024-03-03" | that day |
| month year | "July 2023", "Dec. 2022" | that month |
| a preposition and a month | "in June", "since March", "of May" | that month, in any year |
| a preposition and a year | "in 2023", "during 2022" | that year |

A bare month needs its preposition ("in May", never the verb "may"), and a date that does not exist
("February 30, 2023") is no date. `gap_days` is the distance in days from a day to the span: 0 inside
it; for a month of any year, the distance to the nearest such month (the day's own year, the one
before or the one after). Matching is case-insensitive; nothing relative ("last week") is read.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

__all__ = ["DateSpan", "gap_days", "named_date"]


@dataclass(frozen=True)
class DateSpan:
    """A named day (all three set), month (year and month), year (year only) or month of any year."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def bounds(self) -> tuple[date, date]:
        """First and last day of the span (which names its year).

        Raises:
            ValueError: the span names no year, or a day or month that does not exist.
        """
        y = self.year
        if y is None:
            msg = "a month of any year has no bounds; gap_days measures it to the nearest one"
            raise ValueError(msg)
        if self.month is None:
            return date(y, 1, 1), date(y, 12, 31)
        if self.day is not None:
            one = date(y, self.month, self.day)
            return one, one
        last = calendar.monthrange(y, self.month)[1]
        return date(y, self.month, 1), date(y, self.month, last)


_MONTHS: dict[str, int] = {}
for _number in range(1, 13):
    _MONTHS[calendar.month_name[_number].lower()] = _number
    _MONTHS[calendar.month_abbr[_number].lower()] = _number
_MONTH = "(" + "|".join(sorted(_MONTHS, key=lambda m: (-len(m), m))) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"


def _month(name: str) -> int:
    return _MONTHS[name.lower()]


# In order: the first form that matches anywhere in the text, and names a real date, is the one read.
_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], DateSpan]], ...] = (
    (
        re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
        lambda m: DateSpan(int(m[3]), _month(m[1]), int(m[2])),
    ),
    (
        re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
        lambda m: DateSpan(int(m[3]), _month(m[2]), int(m[1])),
    ),
    (
        re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        lambda m: DateSpan(int(m[1]), int(m[2]), int(m[3])),
    ),
    (
        re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
        lambda m: DateSpan(int(m[2]), _month(m[1])),
    ),
    (
        re.compile(rf"\b(?:in|during|since|before|after|of)\s+{_MONTH}(?![\w-])", re.IGNORECASE),
        lambda m: DateSpan(None, _month(m[1])),
    ),
    (
        re.compile(r"\b(?:in|during|of)\s+(\d{4})\b", re.IGNORECASE),
        lambda m: DateSpan(int(m[1])),
    ),
)


def named_date(text: str) -> DateSpan | None:
    """The first date `text` names (see the module doc), or None."""
    for pattern, read in _FORMS:
        for match in pattern.finditer(text):
            span = read(match)
            if span.year is None:  # a month by its name: always a month
                return span
            try:
                span.bounds()
            except ValueError:  # month 13, February 30, ...
                continue
            return span
    return None


def gap_days(day: date, span: DateSpan) -> int:
    """Days from `day` to the nearest day of `span` (0 inside it)."""
    if span.year is None:  # a month of any year: the nearest of the three around `day`
        years = (day.year - 1, day.year, day.year + 1)
        return min(gap_days(day, DateSpan(year, span.month)) for year in years)
    first, last = span.bounds()
    if day < first:
        return (first - day).days
    if day > last:
        return (day - last).days
    return 0

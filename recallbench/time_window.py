"""The times a person gives `search --since/--until` (and the model gives `search_memory`), read as
instants: a date, a date and time, or an age (`7d`).

Times are read in UTC unless they name their zone, because every time recallbench prints is UTC; with
`local` (the person's `time.local`, on the command line only), a date or time without a zone is read in
this machine's time zone, as the command line then shows times.
A bare date is that day's start for `since` and the next day's start for `until`, so that
`--since 2026-02-11 --until 2026-02-11` is that whole day. An age counts back from `now`, which the
caller passes in.

Standard library only: the command line asks a running server before it loads anything heavy.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from engine.scope import Scope, ScopeError

# An age: a count and a unit (minutes, hours, days, weeks).
_AGE = re.compile(r"(\d{1,6})\s*(m|min|h|d|w)", re.IGNORECASE)
_UNITS = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}

FORMS = "a date (2026-02-11), a date and time (2026-02-11T14:30, UTC unless it ends in Z or +02:00) or an age (90m, 12h, 7d, 2w)"


class TimeError(ValueError):
    """A time that cannot be read, or a window that holds no time."""


def parse_time(text: str, now: datetime, *, end: bool = False, local: bool = False) -> datetime:
    """The instant `text` names (see the module); `end`: a bare date means the next day's start;
    `local`: a date or time without a zone is this machine's local time, not UTC."""
    given = text.strip()
    age = _AGE.fullmatch(given)
    if age is not None:
        count, unit = int(age.group(1)), _UNITS[age.group(2).lower()]
        try:
            return now - timedelta(**{unit: count})
        except OverflowError:
            msg = f"{text!r} reaches back before the year 1"
            raise TimeError(msg) from None
    try:
        day = date.fromisoformat(given)
    except ValueError:
        pass
    else:
        if end:
            day += timedelta(days=1)
        start = datetime(day.year, day.month, day.day)
        return start.astimezone() if local else start.replace(tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(given)
    except ValueError:
        msg = f"cannot read {text!r} as a time; give {FORMS}"
        raise TimeError(msg) from None
    if moment.utcoffset() is not None:
        return moment
    return moment.astimezone() if local else moment.replace(tzinfo=UTC)


def narrowed(
    scope: Scope, since: str | None, until: str | None, now: datetime, *, local: bool = False
) -> Scope:
    """`scope` narrowed to the window `since` .. `until` (texts as `parse_time` reads them; None or
    blank: open), or `scope` itself when neither is given."""
    start = parse_time(since, now, local=local) if since and since.strip() else None
    stop = parse_time(until, now, end=True, local=local) if until and until.strip() else None
    if start is None and stop is None:
        return scope
    try:
        return scope.within(start, stop)
    except ScopeError:
        msg = f"the window holds no time: since {since} is not before until {until}"
        raise TimeError(msg) from None

"""Recency decay shared by arms: `score · ((1 − w) + w · 2^(−age_days / half_life))`.

Search uses w = 0.3 and a 90-day half-life (ARMS.md); prompt injection uses 0.5 and 30 days. A score never
decays below `(1 − w)` of itself, so an old but exact memory is dimmed, not dropped.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.api import ChunkRecord

SECONDS_PER_DAY = 86_400.0


def parse_ts(ts: str | None) -> datetime | None:
    """An ISO-8601 timestamp (a trailing `Z` allowed) as an aware datetime; naive means UTC; else None."""
    if ts is None or not isinstance(ts, str):
        return None
    text = ts.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    # Transcript timestamps are written in UTC; a naive one is read the same way rather than dropped.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def record_time(record: ChunkRecord) -> datetime | None:
    """A chunk's time: its own start, else its session's start; None when neither parses."""
    return parse_ts(record.ts_start) or parse_ts(record.session_start)


def decay(
    score: float, ts: str | None, now: datetime, w: float = 0.3, half_life_days: float = 90.0
) -> float:
    """`score` dimmed by the age of `ts` at `now`; a missing, unparseable or future `ts` leaves it as is.

    Raises:
        ValueError: `w` is outside [0, 1], `half_life_days` is not positive, or `now` is naive.
    """
    if not 0.0 <= w <= 1.0:
        msg = f"decay weight w must be in [0, 1], got {w}"
        raise ValueError(msg)
    if not (half_life_days > 0.0 and math.isfinite(half_life_days)):
        msg = f"half_life_days must be a positive finite number, got {half_life_days}"
        raise ValueError(msg)
    if now.tzinfo is None:
        msg = f"now must be timezone-aware, got {now.isoformat()}; pass Query.now"
        raise ValueError(msg)
    when = parse_ts(ts)
    if when is None:
        return score
    age_days = (now - when).total_seconds() / SECONDS_PER_DAY
    if age_days <= 0.0:
        return score
    return score * ((1.0 - w) + w * math.pow(2.0, -age_days / half_life_days))

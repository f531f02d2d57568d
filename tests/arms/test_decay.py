"""Recency decay: `score · ((1 − w) + w · 2^(−age / half_life))`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from arms.decay import decay, parse_ts

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def _ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat().replace("+00:00", "Z")


def test_decay_at_zero_ninety_and_one_eighty_days_follows_the_half_life() -> None:
    assert decay(1.0, _ago(0), NOW) == pytest.approx(0.7 + 0.3 * 1.0)
    assert decay(1.0, _ago(90), NOW) == pytest.approx(0.7 + 0.3 * 0.5)
    assert decay(1.0, _ago(180), NOW) == pytest.approx(0.7 + 0.3 * 0.25)
    assert decay(0.8, _ago(180), NOW) == pytest.approx(0.8 * (0.7 + 0.3 * 0.25))


def test_prompt_injection_parameters_halve_at_thirty_days() -> None:
    assert decay(1.0, _ago(30), NOW, w=0.5, half_life_days=30.0) == pytest.approx(0.5 + 0.5 * 0.5)


def test_missing_unparseable_or_future_timestamps_do_not_decay() -> None:
    assert decay(0.6, None, NOW) == 0.6
    assert decay(0.6, "yesterday-ish", NOW) == 0.6
    assert decay(0.6, (NOW + timedelta(days=90)).isoformat(), NOW) == 0.6
    # Control: the same distance in the past does decay.
    assert decay(0.6, _ago(90), NOW) == pytest.approx(0.6 * 0.85)


def test_parse_ts_accepts_z_and_offsets_and_reads_naive_as_utc() -> None:
    assert parse_ts("2025-06-01T00:00:00Z") == NOW
    assert parse_ts("2025-06-01T00:00:00.000Z") == NOW
    assert parse_ts("2025-06-01T02:00:00+02:00") == NOW
    assert parse_ts("2025-06-01T00:00:00") == NOW
    assert parse_ts("2025-06-01T02:00:00+02:00").tzinfo == timezone(timedelta(hours=2))  # type: ignore[union-attr]
    assert parse_ts("not a time") is None
    assert parse_ts(None) is None


def test_decay_refuses_a_naive_now_and_bad_parameters() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        decay(1.0, _ago(1), datetime(2025, 6, 1))
    with pytest.raises(ValueError, match="w must be in"):
        decay(1.0, _ago(1), NOW, w=1.5)
    with pytest.raises(ValueError, match="half_life_days"):
        decay(1.0, _ago(1), NOW, half_life_days=0.0)

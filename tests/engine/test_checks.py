"""The one bool-aware type check used wherever TOML, JSON or spec values are validated."""

from __future__ import annotations

from engine.checks import is_int, is_number


def test_is_int_accepts_ints_and_refuses_bools_floats_and_strings() -> None:
    assert is_int(0)
    assert is_int(-7)
    assert not is_int(True)
    assert not is_int(False)
    assert not is_int(1.0)
    assert not is_int("1")


def test_is_number_accepts_ints_and_floats_and_refuses_bools() -> None:
    assert is_number(3)
    assert is_number(0.25)
    assert not is_number(True)
    assert not is_number(None)
    assert not is_number("0.25")

"""Type checks for values read from TOML, JSON and spec strings, where `True` must not pass as `1`."""

from __future__ import annotations

from typing import TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """Whether `value` is an int and not a bool (`isinstance(True, int)` is True in Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """Whether `value` is an int or a float and not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)

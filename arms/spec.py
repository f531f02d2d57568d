"""Arm specs: `rrf(pool=20,rrf_k=60)` parsed with `ast` (never `eval`) and printed in one canonical form.

The canonical string is what protocols, locks and results record, so it must be stable: parameters are
sorted by name, ints print as ints, floats as their shortest round-tripping `repr` (`0.2`, never
`0.20000000000000001`), strings as Python literals, booleans as `True`/`False`. Parsing a canonical
string and printing it again gives the same string.

This module also holds the small type checks that every arm's params dataclass uses in `__post_init__`.
It knows no arm: the defaults of a registered arm are the registry's (`arms.registry.default_spec`).
"""

from __future__ import annotations

import ast
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from engine.checks import is_int, is_number

ParamValue = int | float | str | bool

# Field metadata key for a parameter added to an arm after specs of it were recorded: the canonical
# spec names such a parameter only when it differs from its default, so every recorded spec keeps its
# string (`arms.registry.resolve`). Written `field(default=False, metadata={OMIT_DEFAULT: True})`.
OMIT_DEFAULT = "omit_default"


class SpecError(ValueError):
    """An arm spec string or value that cannot be used."""


@dataclass(frozen=True, kw_only=True)
class ArmSpec:
    """An arm name and its explicitly given parameters, sorted by name."""

    name: str
    params: tuple[tuple[str, ParamValue], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            msg = f"arm name must be a Python identifier such as 'rrf', got {self.name!r}"
            raise SpecError(msg)
        names = [key for key, _ in self.params]
        duplicates = sorted({key for key in names if names.count(key) > 1})
        if duplicates:
            msg = f"arm spec {self.name!r} repeats parameter(s) {duplicates}; give each one once"
            raise SpecError(msg)
        for key, value in self.params:
            if not isinstance(key, str) or not key.isidentifier():
                msg = f"parameter names must be identifiers, got {key!r} in arm spec {self.name!r}"
                raise SpecError(msg)
            _check_value(self.name, key, value)
        # Sorted so that two specs with the same parameters are equal and hash alike.
        object.__setattr__(self, "params", tuple(sorted(self.params, key=lambda kv: kv[0])))


def parse_spec(text: str) -> ArmSpec:
    """Parse `name` or `name(key=literal, ...)`; only int, float, str and bool literals are accepted.

    Raises:
        SpecError: the text is not a bare name or a call with keyword literals (positional arguments,
            `**kwargs`, expressions, attribute access and nested calls are all refused).
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        msg = f"arm spec {text!r} is not valid syntax ({exc.msg}); write it like 'rrf(pool=20,rrf_k=60)'"
        raise SpecError(msg) from None
    body = tree.body
    if isinstance(body, ast.Name):
        return ArmSpec(name=body.id)
    if not isinstance(body, ast.Call) or not isinstance(body.func, ast.Name):
        msg = f"arm spec {text!r} must be a name or a call like 'rrf(pool=20)', got {type(body).__name__}"
        raise SpecError(msg)
    if body.args:
        msg = (
            f"arm spec {text!r} has positional arguments; name every parameter, e.g. 'rrf(pool=20)'"
        )
        raise SpecError(msg)
    params: list[tuple[str, ParamValue]] = []
    for keyword in body.keywords:
        if keyword.arg is None:
            msg = f"arm spec {text!r} uses **kwargs; name every parameter explicitly"
            raise SpecError(msg)
        params.append((keyword.arg, _literal(text, keyword.arg, keyword.value)))
    return ArmSpec(name=body.func.id, params=tuple(params))


def canonical(spec: ArmSpec | str) -> str:
    """The one string form of a spec: `name(k=v,...)` with keys sorted and literals printed stably."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    inner = ",".join(f"{key}={format_value(value)}" for key, value in spec.params)
    return f"{spec.name}({inner})"


def format_value(value: ParamValue) -> str:
    """A literal that `ast.literal_eval` reads back to the same value and type."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # repr is the shortest string that round-trips; 2.0 stays "2.0" so the type survives.
        return repr(value)
    return repr(value)


def _literal(text: str, key: str, node: ast.expr) -> ParamValue:
    """The constant value of `node`, allowing a unary minus on numbers."""
    negate = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        negate = True
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float | str):
        value: ParamValue = node.value
        if negate:
            if not is_number(value):
                msg = f"arm spec {text!r}: parameter {key} negates a non-number {value!r}"
                raise SpecError(msg)
            value = -value
        return value
    msg = (
        f"arm spec {text!r}: parameter {key} must be an int, float, str or bool literal, "
        f"got the expression {ast.unparse(node)!r}"
    )
    raise SpecError(msg)


def _check_value(arm: str, key: str, value: object) -> None:
    if not isinstance(value, bool | int | float | str):
        msg = f"{arm}: {key} must be an int, float, str or bool, got {value!r}"
        raise SpecError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"{arm}: {key} must be a finite number, got {value!r}"
        raise SpecError(msg)


# --- checks shared by the params dataclasses' __post_init__ -------------------------------------


def omitted(f: dataclasses.Field[Any], value: object) -> bool:
    """Whether `value` of field `f` is a default that a canonical spec leaves out (`OMIT_DEFAULT`)."""
    default = f.default
    return bool(f.metadata.get(OMIT_DEFAULT)) and type(value) is type(default) and value == default


def check_int(arm: str, field: str, value: object, *, minimum: int) -> None:
    """Refuse a non-int (bool included) or a value below `minimum`.

    `arm` and `field` are the names a user writes in a spec (`rrf`, `rrf_k`), so the message reads
    `rrf: rrf_k must be >= 1, got 0` rather than naming the params class.
    """
    if not is_int(value):
        msg = f"{arm}: {field} must be an int, got {value!r} ({type(value).__name__})"
        raise SpecError(msg)
    if value < minimum:
        msg = f"{arm}: {field} must be >= {minimum}, got {value}"
        raise SpecError(msg)


def check_bool(arm: str, field: str, value: object) -> None:
    """Refuse anything but True or False (1 and 0 included); names as in `check_int`."""
    if not isinstance(value, bool):
        msg = f"{arm}: {field} must be True or False, got {value!r} ({type(value).__name__})"
        raise SpecError(msg)


def check_float(
    arm: str, field: str, value: object, *, low: float | None = None, high: float | None = None
) -> None:
    """Refuse a non-number, a non-finite number, or one outside [low, high]; names as in `check_int`."""
    if not is_number(value):
        msg = f"{arm}: {field} must be a number, got {value!r} ({type(value).__name__})"
        raise SpecError(msg)
    if not math.isfinite(value):
        msg = f"{arm}: {field} must be finite, got {value!r}"
        raise SpecError(msg)
    if low is not None and value < low:
        msg = f"{arm}: {field} must be >= {low}, got {value}"
        raise SpecError(msg)
    if high is not None and value > high:
        msg = f"{arm}: {field} must be <= {high}, got {value}"
        raise SpecError(msg)

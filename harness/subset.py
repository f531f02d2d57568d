"""Roster subsets: named slices of a roster's questions, written in protocols as strings.

A subset (``hop == "multi" and category != "temporal"``) is parsed with `ast` and evaluated by a small
interpreter over ``category``, ``qid`` and tag names, never with `eval`, because protocols store them
as strings and a protocol must not be able to run code.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from harness.roster import BUILTIN_FIELDS, Question, RosterError

__all__ = ["Subset", "parse_subset", "select"]


_Node: TypeAlias = tuple[Any, ...]


@dataclass(frozen=True, kw_only=True)
class Subset:
    """A parsed subset expression; `matches` evaluates it without `eval`."""

    expr: str
    names: frozenset[str]
    tree: _Node

    def matches(self, question: Question) -> bool:
        """Whether `question` belongs to the subset."""
        return _evaluate(self.tree, question)


def parse_subset(expr: str) -> Subset:
    """Parse a subset expression such as ``hop == "multi" and category != "temporal"``.

    Allowed: ``==``, ``!=`` and ``in`` between a field name (``category``, ``qid`` or a tag name)
    and string literals (``in`` takes a tuple or list of them), joined by ``and`` / ``or`` and
    parentheses. Anything else (calls, attributes, arithmetic, ``not``) is refused.

    Raises:
        RosterError: the expression uses anything outside that grammar.
    """
    if not isinstance(expr, str) or not expr.strip():
        msg = f"Subset expression must be a non-empty string, got {expr!r}"
        raise RosterError(msg)
    try:
        parsed = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as err:
        msg = (
            f'Subset expression {expr!r} is not valid syntax ({err.msg}); write e.g. hop == "multi"'
        )
        raise RosterError(msg) from err
    names: set[str] = set()
    tree = _compile(parsed.body, expr, names)
    return Subset(expr=expr, names=frozenset(names), tree=tree)


def select(questions: Sequence[Question], expr: str) -> list[Question]:
    """The questions (in roster order) that satisfy a subset expression.

    Raises:
        RosterError: the expression is malformed or names a field no question has.
    """
    subset = parse_subset(expr)
    known = set(BUILTIN_FIELDS)
    for q in questions:
        known.update(q.tags)
    unknown = sorted(subset.names - known)
    if unknown:
        msg = (
            f"Subset expression {expr!r} uses unknown name(s) {unknown}; "
            f"choose from {sorted(known)}"
        )
        raise RosterError(msg)
    return [q for q in questions if subset.matches(q)]


def _compile(node: ast.expr, expr: str, names: set[str]) -> _Node:
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return (op, tuple(_compile(v, expr, names) for v in node.values))
    if isinstance(node, ast.Compare):
        return _compile_compare(node, expr, names)
    msg = (
        f"Subset expression {expr!r}: {ast.unparse(node)!r} is not allowed; use only "
        "==, !=, in, and, or between field names and string literals"
    )
    raise RosterError(msg)


def _compile_compare(node: ast.Compare, expr: str, names: set[str]) -> _Node:
    if len(node.ops) != 1:
        msg = (
            f"Subset expression {expr!r}: chained comparison {ast.unparse(node)!r}; join with 'and'"
        )
        raise RosterError(msg)
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if isinstance(op, ast.Eq | ast.NotEq):
        # Accept the literal on either side: `hop == "multi"` or `"multi" == hop`.
        if isinstance(right, ast.Name) and not isinstance(left, ast.Name):
            left, right = right, left
        name = _field_name(left, expr)
        value = _string_literal(right, expr)
        names.add(name)
        return ("==" if isinstance(op, ast.Eq) else "!=", name, value)
    if isinstance(op, ast.In):
        name = _field_name(left, expr)
        if not isinstance(right, ast.Tuple | ast.List | ast.Set) or not right.elts:
            msg = f"Subset expression {expr!r}: 'in' needs a non-empty tuple of strings, got {ast.unparse(right)!r}"
            raise RosterError(msg)
        values = frozenset(_string_literal(e, expr) for e in right.elts)
        names.add(name)
        return ("in", name, values)
    msg = f"Subset expression {expr!r}: operator in {ast.unparse(node)!r} is not allowed; use ==, != or in"
    raise RosterError(msg)


def _field_name(node: ast.expr, expr: str) -> str:
    if isinstance(node, ast.Name):
        return node.id
    msg = f"Subset expression {expr!r}: expected a field name, got {ast.unparse(node)!r}"
    raise RosterError(msg)


def _string_literal(node: ast.expr, expr: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    msg = f"Subset expression {expr!r}: expected a string literal, got {ast.unparse(node)!r}"
    raise RosterError(msg)


def _evaluate(tree: _Node, question: Question) -> bool:
    op = tree[0]
    if op == "and":
        return all(_evaluate(sub, question) for sub in tree[1])
    if op == "or":
        return any(_evaluate(sub, question) for sub in tree[1])
    value = question.field_value(tree[1])
    if op == "==":
        return bool(value == tree[2])
    if op == "!=":
        return bool(value != tree[2])
    return bool(value in tree[2])

"""How the active settles of a ranked answer change it: the one ordering rule of typed corrections.

Every ranked answer the application shows passes through `arrange`: every arm's, through the final
stage `arms.settled` that `arms.registry.build` wraps around each arm, and the prompt hook's lexical
read, which runs without arms. The rule, in settle order (oldest first):

- `corrected`: the old chunk is dropped (the engine's searches already leave it out; this catches a
  chunk an arm reached by id, such as a neighbour added by `neighbors(expand=True)`);
- `changed`: the replacement is placed directly above the old chunk: moved up when it ranks lower,
  or brought in (made by `bring`, next to its anchor) when the answer lacks it;
- `open`: the pair is shown together: the lower-ranked one moves directly below the other, or the
  missing one is brought in below it.

A chunk is brought in only when it lies in the query's scope and is not corrected itself; it is a
copy of the item it is placed beside (`dataclasses.replace`: the same score) with its own `chunk_id`
and `via` "replaces" or "open". `settle_ranked` reads what the rule needs (the settles of the ids,
and which missing partners may be brought in) through the scoped reads of `SettleReader`. The module
imports neither numpy nor SQL, so the prompt hook can use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

from engine import copies
from engine.api import ChunkRecord, Settlement
from engine.scope import Scope


class Ranked(Protocol):
    """A ranked item: a frozen dataclass with at least `chunk_id` and `via` fields (an arm's `Hit`)."""

    @property
    def chunk_id(self) -> str: ...


class SettleReader(Protocol):
    """The scoped reads the rule needs; `Memory` and `TextReads` provide them."""

    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]: ...
    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...


T = TypeVar("T", bound=Ranked)

REPLACES = "replaces"  # the `via` of a replacement brought in next to the chunk it replaces
OPEN = "open"  # the `via` of the other half of an open pair brought in


def missing_partners(present: Collection[str], settles: Sequence[Settlement]) -> list[str]:
    """The chunks `arrange` would bring in if they are visible: a changed chunk's replacement, an
    open chunk's partner, where the answer holds one side only."""
    wanted: list[str] = []
    for s in settles:
        if s.kind == "changed" and s.old in present and s.new not in present:
            wanted.append(s.new)
        elif s.kind == "open" and (s.old in present) != (s.new in present):
            wanted.append(s.new if s.old in present else s.old)
    return list(dict.fromkeys(wanted))


def settle_ranked(items: list[T], reader: SettleReader, scope: Scope) -> list[T]:
    """`items` (best first, all in `scope`) without the copies a resumed or forked session holds of a
    higher-ranked item (`engine.copies`), then with the active settles of their chunks applied; a
    settle of a dropped copy applies to the item that stands for it. `items` itself when nothing is
    dropped and no settle touches them. Nothing is cut: the caller keeps as many as it wants."""
    if not items:
        return items
    ids = [i.chunk_id for i in items]
    kept, stands_for = copies.collapse(items, reader.chunks(ids, scope))
    settles = reader.settlements_of(ids, scope)
    if stands_for:
        settles = _onto_keepers(settles, stands_for)
    if not settles:
        return kept if stands_for else items
    items = kept
    wanted = missing_partners({i.chunk_id for i in items}, settles)
    records = reader.chunks(wanted, scope) if wanted else []
    return arrange(items, settles=settles, bringable={r.id for r in records if not r.corrected})


def _onto_keepers(settles: Sequence[Settlement], stands_for: Mapping[str, str]) -> list[Settlement]:
    """`settles` with each dropped copy's id read as the id of the item that stands for it; a settle
    between an item and its own copy says nothing about which to show, and is left out."""
    out: list[Settlement] = []
    for s in settles:
        old, new = stands_for.get(s.old, s.old), stands_for.get(s.new, s.new)
        if old == new:
            continue
        out.append(s if (old, new) == (s.old, s.new) else dataclasses.replace(s, old=old, new=new))
    return out


def _bring(chunk: str, anchor: T, via: str) -> T:
    """A copy of `anchor` (a dataclass, as `Ranked` says) with another chunk id and `via`."""
    return cast(T, dataclasses.replace(cast(Any, anchor), chunk_id=chunk, via=via))


def arrange(
    items: Sequence[T],
    *,
    settles: Sequence[Settlement],
    bringable: Collection[str],
    bring: Callable[[str, T, str], T] = _bring,
) -> list[T]:
    """`items` (best first) with the active `settles` applied; see the module docstring.

    `bring(chunk_id, anchor, via)` makes the item for a chunk brought in beside `anchor` (by default
    a copy of `anchor` with that id and `via`).
    """
    key = _key
    hidden = {s.old for s in settles if s.kind == "corrected" and s.active}
    out = [item for item in items if key(item) not in hidden]
    for s in settles:
        if not s.active:
            continue
        if s.kind == "changed":
            _above(out, key, s.old, s.new, bringable, bring)
        elif s.kind == "open":
            _together(out, key, s.old, s.new, bringable, bring)
    return out


def _key(item: Ranked) -> str:
    return item.chunk_id


def _index(out: Sequence[T], key: Callable[[T], str], chunk: str) -> int | None:
    return next((i for i, item in enumerate(out) if key(item) == chunk), None)


def _above(
    out: list[T],
    key: Callable[[T], str],
    old: str,
    new: str,
    bringable: Collection[str],
    bring: Callable[[str, T, str], T],
) -> None:
    """Place `new` directly above `old` unless it already ranks above it."""
    i = _index(out, key, old)
    if i is None:
        return
    j = _index(out, key, new)
    if j is None:
        if new in bringable:
            out.insert(i, bring(new, out[i], REPLACES))
        return
    if j > i:
        out.insert(i, out.pop(j))


def _together(
    out: list[T],
    key: Callable[[T], str],
    a: str,
    b: str,
    bringable: Collection[str],
    bring: Callable[[str, T, str], T],
) -> None:
    """Place the lower-ranked of an open pair directly below the other, or bring the missing one in."""
    i, j = _index(out, key, a), _index(out, key, b)
    if i is None or j is None:
        anchor, missing = (j, a) if i is None else (i, b)
        if anchor is not None and missing in bringable:
            out.insert(anchor + 1, bring(missing, out[anchor], OPEN))
        return
    first, second = min(i, j), max(i, j)
    if second > first + 1:
        out.insert(first + 1, out.pop(second))

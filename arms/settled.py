"""The final stage every built arm passes through: typed corrections applied to the arm's answer.

`arms.registry.build` wraps each arm it builds in `SettledArm`, so the search CLI, the MCP tools, the
prompt hook's server search and the harness runner all see answers that obey the settles, and no arm
carries code of its own for them. The stage reads the active settles of the returned ids once
(`ReadAPI.settlements_of`); with none, the arm's answer is returned as it came (the same list), so an
arm's output on a memory without settles is exactly what it was before settles existed.

With settles, in settle order:

- `corrected`: the old chunk is dropped. The engine's reads already leave it out (`engine.memory`);
  this catches a chunk an arm reached by id, such as a neighbour that `neighbors(expand=True)` adds.
- `changed`: the replacement is placed directly above the old chunk: moved up when the arm ranked it
  lower, or brought in (`via` "replaces", with the old chunk's score) when the arm did not find it.
- `open`: the pair is shown together: the lower-ranked one moves directly below the other, or the
  missing one is brought in below it (`via` "open").

A chunk is only brought in when it is in the query's scope and not itself corrected. The answer is
then cut to `query.k`. Scores are the arm's; after a move the order, not the score, is the ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arms.base import Arm, Hit, Query
from engine.api import ReadAPI, Settlement

REPLACES_VIA = "replaces"
OPEN_VIA = "open"


class SettledArm:
    """`inner` with the settles applied to its answer (`arrange`); other attributes are `inner`'s."""

    def __init__(self, inner: Arm, memory: ReadAPI) -> None:
        self.inner = inner
        self.memory = memory
        self.name = inner.name

    def search(self, query: Query) -> list[Hit]:
        """`inner`'s answer, then the settles of its ids (see the module docstring)."""
        return arrange(self.inner.search(query), self.memory, query)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this wrapper lacks (an arm's `params`, `model`, ...). Looked up in
        # __dict__ so that a half-built instance (copy, pickle) raises instead of recursing.
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def arrange(hits: list[Hit], memory: ReadAPI, query: Query) -> list[Hit]:
    """`hits` with the active settles of their chunks applied, cut to `query.k`; `hits` itself when
    no settle touches them."""
    if not hits:
        return hits
    settles = memory.settlements_of([h.chunk_id for h in hits], query.scope)
    if not settles:
        return hits
    hidden = {s.old for s in settles if s.kind == "corrected"}
    out = [h for h in hits if h.chunk_id not in hidden]
    visible = _bringable(out, settles, memory, query)
    for s in settles:
        if s.kind == "changed":
            _above(out, s.old, s.new, visible)
        elif s.kind == "open":
            _together(out, s.old, s.new, visible)
    return out[: query.k]


def _bringable(
    out: Sequence[Hit], settles: Sequence[Settlement], memory: ReadAPI, query: Query
) -> set[str]:
    """The chunks the stage may bring in: missing partners that are in scope and not corrected."""
    present = {h.chunk_id for h in out}
    wanted: list[str] = []
    for s in settles:
        if s.kind == "changed" and s.old in present and s.new not in present:
            wanted.append(s.new)
        elif s.kind == "open" and (s.old in present) != (s.new in present):
            wanted.append(s.new if s.old in present else s.old)
    if not wanted:
        return set()
    return {r.id for r in memory.chunks(wanted, query.scope) if not r.corrected}


def _index(out: Sequence[Hit], chunk: str) -> int | None:
    return next((i for i, h in enumerate(out) if h.chunk_id == chunk), None)


def _above(out: list[Hit], old: str, new: str, visible: set[str]) -> None:
    """Place `new` directly above `old` unless it already ranks above it."""
    i = _index(out, old)
    if i is None:
        return
    j = _index(out, new)
    if j is None:
        if new in visible:
            out.insert(i, Hit(chunk_id=new, score=out[i].score, via=REPLACES_VIA))
        return
    if j > i:
        out.insert(i, out.pop(j))


def _together(out: list[Hit], a: str, b: str, visible: set[str]) -> None:
    """Place the lower-ranked of an open pair directly below the other, or bring the missing one in."""
    i, j = _index(out, a), _index(out, b)
    if i is None and j is None:
        return
    if i is None or j is None:
        anchor, missing = (j, a) if i is None else (i, b)
        if anchor is not None and missing in visible:
            out.insert(anchor + 1, Hit(chunk_id=missing, score=out[anchor].score, via=OPEN_VIA))
        return
    first, second = min(i, j), max(i, j)
    if second > first + 1:
        out.insert(first + 1, out.pop(second))

"""The final stage every built arm passes through: copies dropped, typed corrections applied.

`arms.registry.build` wraps each arm it builds in `SettledArm`, so the search CLI, the MCP tools, the
prompt hook's server search and the harness runner all see answers that obey the settles, and no arm
carries code of its own for them. The stage reads the returned ids' records and active settles once
(`ReadAPI.chunks`, `ReadAPI.settlements_of`); with no copy among them and no settle, the arm's answer is
returned as it came (the same list), so an arm's output on a memory without copies or settles is
exactly what it was before the stage existed.

First, a hit that is a copy of a higher-ranked one (the lines a resumed or forked session copied from
another: `engine.copies`) is dropped, and the settles of a dropped copy apply to the hit shown for it.
With settles, the rule of `engine.trust_order.arrange` applies (a corrected chunk dropped, a changed
chunk's replacement placed directly above it, an open pair kept together); a chunk brought in gets
the score of the hit it is placed beside and `via` "replaces" or "open", and only when it lies in the
query's scope and is not corrected itself. The answer is then cut to `query.k`. Scores stay the arm's;
after a move the order, not the score, is the ranking. An answer left shorter than `query.k` by what
the stage dropped, from an arm that had returned `k` hits, is asked for again with as many more (at most
`_REFILLS` times), so a copy does not cost the user a result.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from arms.base import Arm, Hit, Query
from engine.api import ReadAPI
from engine.trust_order import settle_ranked

# How many times an answer that lost hits to the stage is asked for again, with as many more hits as
# it lost: each round costs the arm one more search, and only a memory with copies or settles pays it.
_REFILLS = 2


class SettledArm:
    """`inner` with the settles applied to its answer; other attributes read through to `inner`."""

    def __init__(self, inner: Arm, memory: ReadAPI) -> None:
        self.inner = inner
        self.memory = memory
        self.name = inner.name

    def search(self, query: Query) -> list[Hit]:
        """`inner`'s answer, then the settles of its ids (see the module docstring)."""
        asked = query
        for _ in range(_REFILLS + 1):
            hits = self.inner.search(asked)
            out = settle_hits(hits, self.memory, query)
            short = query.k - len(out)
            if short <= 0 or out is hits or len(hits) < asked.k:
                return out
            asked = dataclasses.replace(asked, k=asked.k + short)
        return out

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this wrapper lacks (an arm's `params`, `model`, ...). Looked up in
        # __dict__ so that a half-built instance (copy, pickle) raises instead of recursing.
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def settle_hits(hits: list[Hit], memory: ReadAPI, query: Query) -> list[Hit]:
    """`hits` with the active settles of their chunks applied, cut to `query.k`; `hits` itself when
    no settle touches them."""
    out = settle_ranked(hits, memory, query.scope)
    return hits if out is hits else out[: query.k]

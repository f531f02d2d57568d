"""What an empty search answer says to try next, for `recallbench search` (on stderr) and the MCP tool
`search_memory` (its `message`), each in its own words for the scope and the window.

The no-memory arm `none()` finds nothing by design: `search` says nothing more, `search_memory` says
so. A query holding no word the lexical index reads (`"`, `* ?`) finds nothing in any scope, so it is
told that; otherwise the wider scope (when the caller may ask for it) and then the whole time.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.scope import Scope
from engine.text_reads import query_terms
from recallbench import config

NO_WORD = "the query holds no word to look for (two letters or digits or more)"


@dataclass(frozen=True)
class Tries:
    """How one caller says it: the empty answer, and how to widen the scope and the window."""

    lead: str
    wider: str
    window: str
    no_memory: str | None  # what it says for the no-memory arm (None: nothing)


CLI = Tries(
    lead="nothing found",
    wider="`--all-projects` searches every project",
    window="leave out --since and --until to search every time",
    no_memory=None,
)
MCP = Tries(
    lead="nothing relevant found",
    wider="all_projects=true searches every project",
    window="leave out since and until to search every time",
    no_memory="nothing relevant found: the arm this server runs is none(), which holds no memory",
)


def nothing_found(
    scope: Scope, text: str, tries: Tries, *, spec: str, may_widen: bool = True
) -> str | None:
    """What to try after an empty answer to `text` in `scope` from the arm `spec` (`may_widen`: the
    caller may ask for every project)."""
    if config.no_memory(spec):
        return tries.no_memory
    if not query_terms(text):
        return f"{tries.lead}: {NO_WORD}"
    wider = [] if scope.all_projects or not may_widen else [tries.wider]
    since, until = scope.window_bounds()
    window = [] if since is None and until is None else [tries.window]
    said = "; ".join(wider + window)
    return f"{tries.lead}{f' ({said})' if said else ''}"

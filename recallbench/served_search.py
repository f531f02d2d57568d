"""`recallbench search` through a running `recallbench serve`: the server's warm model answers.

A search in a fresh process pays for loading the embedding model (seconds, hundreds of MB) before it
can embed one query; a running server has it loaded. `ask_server` sends the query to the server's
socket (`recallbench.search_service`) and accepts the answer only when it is the answer the command
would have computed itself: the same database, the same arm (the server compares the canonical specs,
so this module imports no arm), and well-formed hits. Otherwise it returns None with the reason, and
the command searches in-process.

This module imports neither numpy nor the arms: the point of asking the server is not to load them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engine.checks import is_number
from recallbench.search_service import MAX_SEARCH_K, search_via_socket, socket_path

# How long the command waits for a busy server before searching itself, which costs far more.
SERVER_TIMEOUT_S = 3.0


@dataclass(frozen=True, kw_only=True)
class ServedHit:
    """One hit as the server ranked it: what `recallbench.present.hit_rows` needs."""

    chunk_id: str
    score: float
    via: str


@dataclass(frozen=True, kw_only=True)
class ServedAnswer:
    """The server's hits (None when it did not answer acceptably) and what happened, in words."""

    hits: list[ServedHit] | None
    how: str


@dataclass(frozen=True, kw_only=True)
class ServedQuery:
    """What the command asks: `spec` as the person wrote it (the server canonicalises it)."""

    text: str
    spec: str
    projects: Sequence[str]
    k: int
    now: datetime
    # The scope's time window as `Scope.window_bounds` gives it (UTC texts; None: open).
    since: str | None = None
    until: str | None = None


def ask_server(
    query: ServedQuery,
    *,
    db: Path,
    home: Path,
    embedder_id: str,
    timeout_s: float = SERVER_TIMEOUT_S,
) -> ServedAnswer:
    """The server's answer to `query` over `db`, or hits=None with the reason it cannot be used."""
    if query.k > MAX_SEARCH_K:
        return ServedAnswer(hits=None, how=f"the server answers at most {MAX_SEARCH_K} hits")
    if not query.projects:
        return ServedAnswer(hits=None, how="no project is recorded, so there is nothing to ask")
    path = socket_path(home, embedder_id)
    if not path.exists():
        return ServedAnswer(hits=None, how=f"no server is listening at {path}")
    request = {
        "text": query.text,
        "projects": list(query.projects),
        "k": query.k,
        "now": query.now.isoformat(),
        "arm": query.spec,
        "database": str(db.resolve()),
    }
    window = [query.since, query.until]
    if window != [None, None]:
        request["since"], request["until"] = window
    reasons: list[str] = []
    answer = search_via_socket(
        request,
        timeout_s,
        path=path,
        embedder_id=embedder_id,
        why=reasons.append,
        refusal=reasons.append,
    )
    if answer is None:
        why = reasons[-1] if reasons else "it did not answer"
        return ServedAnswer(hits=None, how=f"the server at {path} was not used: {why}")
    if window != [None, None] and answer.get("window") != window:
        return ServedAnswer(
            hits=None,
            how=f"the server at {path} did not apply the time window (a version from before "
            "windows: restart `recallbench serve`)",
        )
    hits = _hits(answer.get("hits"))
    if hits is None:
        return ServedAnswer(hits=None, how=f"the server at {path} sent malformed hits")
    arm = answer.get("arm")
    return ServedAnswer(hits=hits, how=f"answered by the server at {path} (arm {arm})")


def _hits(raw: object) -> list[ServedHit] | None:
    if not isinstance(raw, list):
        return None
    hits = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        chunk_id, score, via = item.get("chunk_id"), item.get("score"), item.get("via")
        if not isinstance(chunk_id, str) or not is_number(score) or not isinstance(via, str):
            return None
        hits.append(ServedHit(chunk_id=chunk_id, score=float(score), via=via))
    return hits

"""The server's side of the prompt hook's search: what `recallbench serve` answers on its socket.

The hook (`recallbench.hooks`) sends the prompt through `recallbench.search_service`; `PromptSearch`
runs the shipped arm over the server's loaded model, vector catalog and lexical snapshot, and answers
with each hit's score and the prompt's cosine to the chunk's stored vector, which the hook's relevance
threshold needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from arms.base import Query
from arms.registry import full_canonical
from engine.api import ReadAPI
from engine.checks import is_int
from engine.scope import Scope, ScopeError
from recallbench.home_trust import LoggableError
from recallbench.inject import MAX_PROMPT_CHARS
from recallbench.search_service import MAX_SEARCH_K
from recallbench.shipped_model import build_arm


class BadSearchRequestError(LoggableError, ValueError):
    """A malformed search request; the message names the field, never its text."""


class PromptSearch:
    """Answers a prompt hook's search request with the arm `arm_spec` over `reader`.

    Request: {"text": prompt, "projects": [project, ...], "k": int, "now": ISO-8601}, and optionally
    "arm" (a spec the answer must be computed with), "database" (the database file the asker
    means), and "since"/"until" (ISO-8601 with an offset: the scope's time window, `Scope.within`): a
    server that runs another arm or serves another database refuses rather than answer for
    something else (`recallbench search` then searches in-process). Answer: {"arm": canonical spec,
    "database": the served file, "hits": [{"chunk_id", "score", "via", "cosine"}, ...]} where cosine
    is the prompt's cosine to the chunk's stored vector (None without one), and, for a windowed
    request, "window": [since, until] as applied (UTC; null on an open side). A server from before
    windows answers without "window", which the asker takes as not applied.

    Raises:
        ValueError: `arm_spec` does not parse or names an unknown arm or parameter, or is fitted and
            its shipped model cannot be used (`recallbench.shipped_model`; when built), or a request
            is malformed (when called).
    """

    def __init__(self, reader: ReadAPI, arm_spec: str, *, database: Path | None = None) -> None:
        self._reader = reader
        self._arm = build_arm(arm_spec, reader)  # a fitted arm with the shipped model
        self.arm = full_canonical(arm_spec)
        self.database = None if database is None else str(Path(database).resolve())

    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        text, projects, k, now = parse_request(request)
        self._check_asked_for(request)
        scope = request_scope(request, projects)
        query = Query(text=text, scope=scope, now=now, k=k)
        found = self._arm.search(query)
        vector = self._reader.embed_query(text)  # cached: the arm has just embedded the same text
        hits = []
        for hit in found:
            stored = self._reader.vector(hit.chunk_id)
            cosine = None if stored is None else float(stored @ vector)
            hits.append(
                {
                    "chunk_id": hit.chunk_id,
                    "score": float(hit.score),
                    "via": hit.via,
                    "cosine": cosine,
                }
            )
        answer: dict[str, Any] = {"arm": self.arm, "database": self.database, "hits": hits}
        if scope.windowed:  # named back, so an asker knows the window was applied
            answer["window"] = list(scope.window_bounds())
        return answer

    def _check_asked_for(self, request: Mapping[str, Any]) -> None:
        """Refuse a request for another arm or another database than this server's."""
        arm, database = request.get("arm"), request.get("database")
        if arm is not None:
            try:
                wanted = full_canonical(arm) if isinstance(arm, str) else None
            except (ValueError, KeyError):
                wanted = None
            if wanted != self.arm:
                msg = f"this server runs arm {self.arm}, not the arm asked for"
                raise BadSearchRequestError(msg)
        if database is not None and database != self.database:
            msg = f"this server serves the database {self.database}, not {database}"
            raise BadSearchRequestError(msg)


def parse_request(request: Mapping[str, Any]) -> tuple[str, list[str], int, datetime]:
    """The (text, projects, k, now) of a search request.

    Raises:
        BadSearchRequestError: a field is missing or out of range; the message names it.
    """
    text, projects, k, now = (request.get(key) for key in ("text", "projects", "k", "now"))
    if not isinstance(text, str) or not 0 < len(text) <= MAX_PROMPT_CHARS:
        msg = f"text must be a non-empty str of at most {MAX_PROMPT_CHARS} characters"
        raise BadSearchRequestError(msg)
    if (
        not isinstance(projects, list)
        or not projects
        or not all(isinstance(p, str) and p for p in projects)
    ):
        msg = "projects must be a non-empty list of project paths"
        raise BadSearchRequestError(msg)
    if not is_int(k) or not 0 < k <= MAX_SEARCH_K:
        msg = f"k must be an int in 1..{MAX_SEARCH_K}"
        raise BadSearchRequestError(msg)
    if not isinstance(now, str):
        msg = "now must be an ISO-8601 timestamp"
        raise BadSearchRequestError(msg)
    try:
        when = datetime.fromisoformat(now)
    except ValueError:
        msg = "now must be an ISO-8601 timestamp"
        raise BadSearchRequestError(msg) from None
    if when.tzinfo is None:
        msg = "now must carry a UTC offset"
        raise BadSearchRequestError(msg)
    return text, [str(p) for p in projects], k, when


def request_scope(request: Mapping[str, Any], projects: list[str]) -> Scope:
    """The request's projects, narrowed to its "since"/"until" window when it names one.

    Raises:
        BadSearchRequestError: a bound is not an ISO-8601 time with an offset, or the window is empty.
    """
    bounds: list[datetime | None] = []
    for key in ("since", "until"):
        raw = request.get(key)
        if raw is None:
            bounds.append(None)
            continue
        try:
            when = datetime.fromisoformat(raw) if isinstance(raw, str) else None
        except ValueError:
            when = None
        if when is None or when.tzinfo is None:
            msg = f"{key} must be an ISO-8601 timestamp with a UTC offset"
            raise BadSearchRequestError(msg)
        bounds.append(when)
    scope = Scope.of(*projects)
    if bounds == [None, None]:
        return scope
    try:
        return scope.within(bounds[0], bounds[1])
    except ScopeError:
        msg = "since must be before until"
        raise BadSearchRequestError(msg) from None

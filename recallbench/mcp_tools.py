"""The tools the model calls over MCP: scoped reads of memory through the shipped arm, and one flag.

Four tools are annotated read-only and non-destructive. The fifth, `flag_memory`, is the one write the
model may make: it settles a memory as corrected, changed or open against another (`engine.trust`),
or undoes a settle its own session made. It never deletes: a corrected memory is only hidden from
searches, still readable by id, and the person reviews every such flag (`recallbench corrections
--pending`) and may undo it. `MemoryTools` is handed a reader (`ToolReader`, the scoped read methods
it needs), a built arm and, for the flag, a `Flagger` (the narrow settle/undo interface) by the
wiring in `recallbench.mcp_server`; this module imports nothing that writes (a test walks its
imports to keep it that way). Reads are scoped to the Claude Code project (`$CLAUDE_PROJECT_DIR`, else
the server's cwd, resolved by `engine.scope.explain_project` under the person's scope settings, its
other git worktrees included when `scope.worktrees` is on). A call may ask for all projects only when
the person turned `mcp.all_projects` on in config; otherwise it is refused with a tool error, so neither
the model nor a prompt injection can widen a read. Search hits are `recallbench.present` rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal, Protocol

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from arms.base import Arm, Query
from engine.api import ChunkRecord, Settlement
from engine.git_repo import Checkout
from engine.scope import Resolution, Scope, explain_recorded
from recallbench.chunk_view import chunk_fields, previous_and_next, read_chunk
from recallbench.empty_answer import MCP, nothing_found
from recallbench.mcp_context import search_outside_context
from recallbench.present import clip, one_line
from recallbench.time_window import TimeError, narrowed

MAX_LIMIT = 50
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# The flag writes (a settle and its audit row) but never deletes anything.
FLAG = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
FlagKind = Literal["corrected", "changed", "open", "undo"]
FLAG_HELP = (
    "corrected: the memory was wrong (hidden from searches; still readable by id); changed: it was "
    "true then, the world changed (ranked below its replacement); open: they disagree and nobody "
    "knows yet (both shown together); undo: take back a flag this session made on chunk_id."
)
FLAG_DONE = {
    "corrected": "hidden from searches from now on; get_memory still shows it, with its replacement",
    "changed": "ranked below its replacement from now on, marked with the date",
    "open": "both memories are shown together from now on, marked open",
}


EMPTY_QUERY = 'the query is empty; say what to look for, e.g. "retry flake"'
ALL_PROJECTS_OFF = (
    "all_projects=true is turned off: these tools read only the current project. The person using "
    "recallbench can allow it by running `recallbench config set mcp.all_projects true`."
)
ALL_PROJECTS_HELP = (
    "Read every project instead of the current one; refused unless the person ran "
    "`recallbench config set mcp.all_projects true`."
)
SINCE_HELP = (
    "Only memories written at or after this time: a date (2026-02-11), a date and time "
    "(2026-02-11T14:30, UTC unless it names its zone) or an age back from now (90m, 12h, 7d, 2w)."
)
UNTIL_HELP = "Only what was written before this time (as since; a bare date counts that whole day)."
SESSIONS_SINCE_HELP = (
    "Only sessions with a chunk written at or after this time (a date, a date and time, UTC unless "
    "zoned, or an age back from now: 90m, 12h, 7d, 2w)."
)


class ScopeSettings(Protocol):
    """The person's switches the tools obey (`recallbench.config.Settings`), read on every call."""

    @property
    def mcp_all_projects(self) -> bool: ...
    @property
    def scope_inherit_parent(self) -> bool: ...
    @property
    def scope_worktrees(self) -> bool: ...


@dataclass(frozen=True)
class _AllOff:
    mcp_all_projects: bool = False
    scope_inherit_parent: bool = False
    scope_worktrees: bool = False


class ToolReader(Protocol):
    """The scoped reads the tools make; `engine.memory.Memory` provides them."""

    def projects(self) -> list[str]: ...
    def project_checkouts(self) -> dict[str, Checkout]: ...
    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def recent_sessions(self, scope: Scope, limit: int) -> list[dict[str, object]]: ...
    def ids_starting_with(
        self, kind: str, prefix: str, scope: Scope, limit: int
    ) -> tuple[list[str], int]: ...
    def status(self) -> dict[str, object]: ...
    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None: ...
    def main_transcript(self, session_id: str) -> Path | None: ...


class Flagger(Protocol):
    """The one write the model may make (`engine.memory.Memory` provides it): settle a chunk against
    another, or undo a settle; plus the listing that finds a session's own settles. It cannot delete."""

    def settle(
        self, old: str, *, by: str, kind: str, reason: str, actor: str, now: datetime
    ) -> Settlement: ...
    def undo_settle(
        self, settlement_id: int, *, actor: str, now: datetime, reason: str = ""
    ) -> Settlement: ...
    def settlements(self, scope: Scope, *, include_undone: bool = False) -> list[Settlement]: ...
    def settled_with(self, settle: Settlement) -> list[str]: ...


# --- return models ------------------------------------------------------------------------------
# (No docstrings: pydantic would put them into the output schemas the client sees.)


class SearchHit(BaseModel):
    # the fields of `recallbench.present.HitRow`, the one shape of a shown hit
    rank: int
    chunk_id: str
    score: float
    via: str
    session_id: str
    project: str
    author: str
    timestamp: str | None
    text: str
    status: str | None = None
    same_text: list[str] = []
    nearly_same: list[str] = []


class FlagResult(BaseModel):
    settlement_id: int
    chunk_id: str
    by: str
    kind: str
    actor: str
    active: bool
    message: str
    same_text: list[str] = Field(
        default_factory=list,
        description="The memories of the searched projects that say what chunk_id says (for "
        "open, what either says: the same text stored again, or a resumed session's copy): the "
        "flag applies to them too.",
    )


class SearchResult(BaseModel):
    query: str
    arm: str
    scope: list[str] = Field(description="Projects searched; empty with all_projects=true.")
    all_projects: bool
    since: str | None = Field(
        default=None, description="The window's start searched (UTC), when one was given."
    )
    until: str | None = Field(
        default=None, description="The window's end searched (UTC, exclusive), when one was given."
    )
    hits: list[SearchHit]
    message: str | None = None


class MemoryChunk(BaseModel):
    found: bool
    chunk_id: str
    session_id: str | None = None
    project: str | None = None
    stream: str | None = None
    index: int | None = None
    author: str | None = None
    ts_start: str | None = None
    ts_end: str | None = None
    session_start: str | None = None
    text: str | None = None
    previous_chunk_id: str | None = None
    next_chunk_id: str | None = None
    status: str | None = Field(
        default=None, description="Its part in typed corrections, e.g. 'corrected on DATE ...'."
    )
    replaced_by: str | None = Field(
        default=None, description="The chunk that corrects or replaces it, when one does."
    )
    message: str | None = None


# Characters of a session's opening that `recent_sessions` gives (`get_memory` reads it whole).
OPENING_CHARS = 200


class SessionSummary(BaseModel):
    session_id: str
    project: str
    started: str | None
    ended: str | None
    chunks: int
    opening_chunk_id: str | None = Field(
        default=None, description="The session's first chunk (get_memory reads it whole)."
    )
    opening: str | None = Field(
        default=None,
        description=f"The start of that chunk, usually the first prompt (at most {OPENING_CHARS} "
        "characters, on one line).",
    )


class RecentSessions(BaseModel):
    scope: list[str]
    all_projects: bool
    since: str | None = Field(
        default=None, description="The window's start (UTC), when one was given."
    )
    until: str | None = Field(
        default=None, description="The window's end (UTC, exclusive), when one was given."
    )
    sessions: list[SessionSummary]
    message: str | None = None


class MemoryStatus(BaseModel):
    database: str
    projects: int
    sessions: int
    self_transcripts: int
    chunks: int
    vectors: int
    embedder: str | None
    index: str
    arm: str
    current_project: str | None
    worktrees: list[str] = Field(
        default_factory=list,
        description="The same folder in other git worktrees of the repository, read with the "
        "current project (the person's scope.worktrees setting).",
    )
    skipped: dict[str, int]
    scrubbed: dict[str, int]


def default_project_dir() -> Path:
    """`$CLAUDE_PROJECT_DIR` (set by Claude Code), else the server's working directory."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return Path(env).expanduser() if env else Path.cwd()


# --- tools --------------------------------------------------------------------------------------


class MemoryTools:
    """The four read-only tools over `reader` and `arm`, and `flag_memory` over `flagger` when one is
    given; `register` adds them to a server.

    `arm_spec` is the arm's canonical spec, reported by `search_memory` and `memory_status`.
    `settings` gives the person's switches; it is called on every call, so turning one off takes effect
    at once (default: all off). `actor` is who the flags are recorded as (`agent:<session id>`).
    Plain methods run on the server's worker threads; the reader must allow that (`Memory` gives each
    thread its own connection).
    """

    def __init__(
        self,
        reader: ToolReader,
        arm: Arm,
        arm_spec: str,
        *,
        project_dir: Path,
        clock: Callable[[], datetime],
        settings: Callable[[], ScopeSettings] = _AllOff,
        flagger: Flagger | None = None,
        actor: str = "agent:unknown-session",
        session_id: str | None = None,
    ) -> None:
        self._reader = reader
        self._session_id = session_id
        self._flagger = flagger
        self._actor = actor
        self._arm = arm
        self._arm_spec = arm_spec
        self._project_dir = project_dir
        self._clock = clock
        self._settings = settings

    def register(self, server: MCPServer) -> None:
        """Add every tool to `server`: the reads annotated read-only, the flag (when this has a
        flagger) as a write that is not destructive."""
        for tool in (self.search_memory, self.get_memory, self.recent_sessions, self.memory_status):
            server.add_tool(tool, annotations=READ_ONLY)
        if self._flagger is not None:
            server.add_tool(self.flag_memory, annotations=FLAG)

    # --- scope ---------------------------------------------------------------------------------
    def current_project(self) -> str | None:
        """The recorded project the project folder resolves to, or None."""
        return self._resolve().project

    def _resolve(self) -> Resolution:
        """The project folder's resolution under the person's scope settings (`engine.scope`)."""
        settings = self._settings()
        return explain_recorded(
            self._reader,
            self._project_dir,
            inherit_parent=settings.scope_inherit_parent,
            join_worktrees=settings.scope_worktrees,
        )

    def _scope(self, all_projects: bool) -> tuple[Scope | None, str | None]:
        """The scope of a call, or None and a message when the project has no memory.

        Raises:
            ToolError: the call asks for all projects and the person has not allowed that.
        """
        if all_projects:
            if not self._settings().mcp_all_projects:
                raise ToolError(ALL_PROJECTS_OFF)
            return Scope.everywhere(), None
        found = self._resolve()
        if not found.projects:
            return None, (
                f"no sessions are recorded for {self._project_dir}; run `recallbench import` (or "
                "install the hooks); `recallbench status --project DIR` says why a folder has none"
            )
        return Scope.of(found.projects), None

    def _windowed_scope(
        self, all_projects: bool, since: str | None, until: str | None, now: datetime
    ) -> tuple[Scope | None, str | None]:
        """`_scope`, narrowed to the window `since`..`until` (`recallbench.time_window`).

        Raises:
            ToolError: as `_scope`, or a time cannot be read, or the window is empty.
        """
        scope, message = self._scope(all_projects)
        if scope is None:
            return None, message
        try:
            return narrowed(scope, since, until, now), None
        except TimeError as exc:
            raise ToolError(str(exc)) from exc

    # --- the tools -----------------------------------------------------------------------------
    def search_memory(
        self,
        query: Annotated[str, Field(description="What to recall, in plain words.", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits to return.")] = 5,
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
        since: Annotated[str | None, Field(description=SINCE_HELP)] = None,
        until: Annotated[str | None, Field(description=UNTIL_HELP)] = None,
    ) -> SearchResult:
        """Search memory of earlier Claude Code sessions of this project for `query`; `since` and
        `until` keep to what was written in that window. What this session already has in context
        is left out, and a hit whose words a hit shown holds is listed under it (`same_text`), one
        nearly the same under the later of the two (`nearly_same`: a file read again after an edit)."""
        if not query.strip():
            raise ToolError(EMPTY_QUERY)
        now = self._clock()
        scope, message = self._windowed_scope(all_projects, since, until, now)
        projects, everywhere = _scope_fields(scope)
        bounds = (None, None) if scope is None else scope.window_bounds()
        result = SearchResult(
            query=query,
            arm=self._arm_spec,
            scope=projects,
            all_projects=everywhere,
            since=bounds[0],
            until=bounds[1],
            hits=[],
            message=message,
        )
        if scope is None:
            return result
        asked = Query(text=query, scope=scope, now=now, k=limit)
        hits, shown = search_outside_context(self._arm, self._reader, asked, self._session_id)
        rows = [SearchHit.model_validate(row.to_dict()) for row in shown.rows(hits)]
        allowed = self._settings().mcp_all_projects
        empty = nothing_found(scope, query, MCP, spec=self._arm_spec, may_widen=allowed)
        return result.model_copy(update={"hits": rows, "message": None if rows else empty})

    def get_memory(
        self,
        chunk_id: Annotated[
            str,
            Field(
                description="A chunk id from search_memory (or its first characters, 4 or more, "
                "when they start one id).",
                min_length=1,
            ),
        ],
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
    ) -> MemoryChunk:
        """One memory chunk in full, with its session, project, timestamps and neighbouring chunk ids."""
        scope, message = self._scope(all_projects)
        if scope is None:
            return MemoryChunk(found=False, chunk_id=chunk_id, message=message)
        record, starting, _ = read_chunk(self._reader, chunk_id, scope)
        if record is None:
            where = "any project" if scope.all_projects else str(scope)
            hint = (
                " (pass all_projects=true to look everywhere)"
                if not scope.all_projects and self._settings().mcp_all_projects
                else ""
            )
            if starting:  # a short id that starts several: the ids, to call again with
                hint = f"; ids that start with it: {', '.join(starting)}"
            return MemoryChunk(
                found=False, chunk_id=chunk_id, message=f"no chunk {chunk_id} in {where}{hint}"
            )
        previous, following = previous_and_next(self._reader, record, scope)
        replaced_by = (
            None if record.status is None or record.status.kind == "open" else record.status.other
        )
        fields = chunk_fields(record, previous, following)
        return MemoryChunk.model_validate({"found": True, **fields, "replaced_by": replaced_by})

    def flag_memory(
        self,
        chunk_id: Annotated[
            str,
            Field(description="The memory to flag: a chunk id from search_memory.", min_length=1),
        ],
        kind: Annotated[FlagKind, Field(description=FLAG_HELP)],
        reason: Annotated[
            str,
            Field(description="Why, in one sentence (no secrets).", min_length=1, max_length=500),
        ],
        by: Annotated[
            str | None,
            Field(
                description="The chunk id of the memory that corrects, replaces or disputes it "
                "(required except for undo, where it picks one of several flags)."
            ),
        ] = None,
    ) -> FlagResult:
        """Flag a memory of this project that another contradicts, or undo this session's own flag.
        It never deletes: the person reviews every flag and may undo it."""
        flagger = self._flagger
        if flagger is None:  # not registered without one
            raise ToolError("this server takes no flags")
        scope, message = self._scope(False)
        if scope is None:
            raise ToolError(message or "no memory for this project")
        if kind == "undo":
            return self._undo_flag(flagger, scope, chunk_id, reason, by)
        if by is None:
            msg = f"by is required for kind={kind}: the chunk id of the memory that replaces or disputes it"
            raise ToolError(msg)
        found = {r.id for r in self._reader.chunks([chunk_id, by], scope)}
        missing = [c for c in (chunk_id, by) if c not in found]
        if missing:
            msg = f"no chunk {', '.join(missing)} in {scope}; flag only memories of this project"
            raise ToolError(msg)
        try:
            done = flagger.settle(
                chunk_id, by=by, kind=kind, reason=reason, actor=self._actor, now=self._clock()
            )
        except ValueError as exc:  # the engine's refusal (engine.trust.TrustError) says why
            raise ToolError(str(exc)) from None
        # the same words elsewhere in this project: the flag applies to them too (engine.trust_sql)
        same = [r.id for r in self._reader.chunks(flagger.settled_with(done), scope)]
        also = (
            f"; so is each memory in same_text ({len(same)}), which says the same" if same else ""
        )
        return _flag_result(done, f"flagged {kind}: {FLAG_DONE[kind]}{also}", same)

    def _undo_flag(
        self, flagger: Flagger, scope: Scope, chunk_id: str, reason: str, by: str | None
    ) -> FlagResult:
        """Undo the one active flag this session made on `chunk_id` (against `by`, when given)."""
        mine = [
            s
            for s in flagger.settlements(scope)
            if s.old == chunk_id and s.actor == self._actor and by in (None, s.new)
        ]
        if not mine:
            msg = (
                f"this session has no active flag on {chunk_id}; a flag another session or the "
                "person made can only be undone by the person (`recallbench correct --undo ID`)"
            )
            raise ToolError(msg)
        if len(mine) > 1:
            others = ", ".join(s.new for s in mine)
            msg = f"this session flagged {chunk_id} against {others}; pass by= to pick one"
            raise ToolError(msg)
        try:
            done = flagger.undo_settle(
                mine[0].id, actor=self._actor, now=self._clock(), reason=reason
            )
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return _flag_result(done, "undone: the memory is searched and ranked as before")

    def recent_sessions(
        self,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Sessions to list.")] = 10,
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
        since: Annotated[str | None, Field(description=SESSIONS_SINCE_HELP)] = None,
        until: Annotated[str | None, Field(description=UNTIL_HELP)] = None,
    ) -> RecentSessions:
        """The most recently started sessions of this project: when, how many chunks, and how each
        opened (usually its first prompt); `since` and `until` list only the sessions with a chunk
        written in that window."""
        window, message = self._windowed_scope(all_projects, since, until, self._clock())
        projects, everywhere = _scope_fields(window)
        if window is None:
            return RecentSessions(
                scope=projects, all_projects=everywhere, sessions=[], message=message
            )
        rows = self._reader.recent_sessions(window, limit)
        first = [str(r["opening_chunk_id"]) for r in rows if r["opening_chunk_id"]]
        whole = window.within(None, None)  # an opening written before the window is still shown
        openings = {
            c.id: clip(one_line(c.text), OPENING_CHARS) for c in self._reader.chunks(first, whole)
        }
        sessions = [
            SessionSummary(
                session_id=str(r["session_id"]),
                project=str(r["project"]),
                started=None if r["started"] is None else str(r["started"]),
                ended=None if r["ended"] is None else str(r["ended"]),
                chunks=_int(r["chunks"]),
                opening_chunk_id=None
                if r["opening_chunk_id"] is None
                else str(r["opening_chunk_id"]),
                opening=openings.get(str(r["opening_chunk_id"])),
            )
            for r in rows
        ]
        since_utc, until_utc = window.window_bounds()
        return RecentSessions(
            scope=projects,
            all_projects=everywhere,
            since=since_utc,
            until=until_utc,
            sessions=sessions,
        )

    def memory_status(self) -> MemoryStatus:
        """What the memory holds: sessions, chunks, vectors, index state, and the arm being served."""
        info = self._reader.status()
        found = self._resolve()
        return MemoryStatus(
            database=str(info["database"]),
            projects=_int(info["projects"]),
            sessions=_int(info["sessions"]),
            self_transcripts=_int(info["self_transcripts"]),
            chunks=_int(info["chunks"]),
            vectors=_int(info["vectors"]),
            embedder=None if info["embedder"] is None else str(info["embedder"]),
            index=str(info["index"]),
            arm=self._arm_spec,
            current_project=found.project,
            worktrees=list(found.worktrees if found.joined else ()),
            skipped=_counts(info["skipped"]),
            scrubbed=_counts(info["scrubbed"]),
        )


def _flag_result(done: Settlement, message: str, same: Sequence[str] = ()) -> FlagResult:
    return FlagResult(
        settlement_id=done.id,
        chunk_id=done.old,
        by=done.new,
        kind=done.kind,
        actor=done.actor,
        active=done.active,
        message=message,
        same_text=list(same),
    )


def _scope_fields(scope: Scope | None) -> tuple[list[str], bool]:
    if scope is None:
        return [], False
    return sorted(scope.projects), scope.all_projects


def _int(value: object) -> int:
    return int(str(value))


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(k): _int(v) for k, v in value.items()}

"""The tools the model calls over MCP: read-only, scoped reads of memory through the shipped arm.

Every tool is annotated read-only and non-destructive, and none of them can edit or delete memory:
`MemoryTools` is handed a reader (`ToolReader`, the scoped read methods it needs) and a built arm by
the wiring in `recallbench.mcp_server`, and this module imports nothing that writes (a test walks its
imports to keep it that way). Reads are scoped to the Claude Code project (`$CLAUDE_PROJECT_DIR`, else
the server's cwd, resolved by `engine.scope.resolve_project`). A call may ask for all projects only when
the person turned `mcp.all_projects` on in config; otherwise it is refused with a tool error, so neither
the model nor a prompt injection can widen a read. Search hits are `recallbench.present` rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Protocol

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from arms.base import Arm, Query
from engine.api import ChunkRecord
from engine.chunking import chunk_id as make_chunk_id
from engine.scope import Scope, resolve_project
from recallbench.present import hit_rows

MAX_LIMIT = 50
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


EMPTY_QUERY = 'the query is empty; say what to look for, e.g. "retry flake"'
ALL_PROJECTS_OFF = (
    "all_projects=true is turned off: these tools read only the current project. The person using "
    "recallbench can allow it by running `recallbench config set mcp.all_projects true`."
)
ALL_PROJECTS_HELP = (
    "Read every project instead of the current one; refused unless the person ran "
    "`recallbench config set mcp.all_projects true`."
)


class ScopeSettings(Protocol):
    """The person's switches the tools obey (`recallbench.config.Settings`), read on every call."""

    @property
    def mcp_all_projects(self) -> bool: ...
    @property
    def scope_inherit_parent(self) -> bool: ...


@dataclass(frozen=True)
class _AllOff:
    mcp_all_projects: bool = False
    scope_inherit_parent: bool = False


class ToolReader(Protocol):
    """The scoped reads the tools make; `engine.memory.Memory` provides them."""

    def projects(self) -> list[str]: ...
    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def recent_sessions(self, scope: Scope, limit: int) -> list[dict[str, object]]: ...
    def status(self) -> dict[str, object]: ...


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


class SearchResult(BaseModel):
    query: str
    arm: str
    scope: list[str] = Field(description="Projects searched; empty with all_projects=true.")
    all_projects: bool
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
    message: str | None = None


class SessionSummary(BaseModel):
    session_id: str
    project: str
    started: str | None
    ended: str | None
    chunks: int


class RecentSessions(BaseModel):
    scope: list[str]
    all_projects: bool
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
    skipped: dict[str, int]
    scrubbed: dict[str, int]


def default_project_dir() -> Path:
    """`$CLAUDE_PROJECT_DIR` (set by Claude Code), else the server's working directory."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return Path(env).expanduser() if env else Path.cwd()


# --- tools --------------------------------------------------------------------------------------


class MemoryTools:
    """The four read-only tools over `reader` and `arm`; `register` adds them to a server.

    `arm_spec` is the arm's canonical spec, reported by `search_memory` and `memory_status`.
    `settings` gives the person's switches; it is called on every call, so turning one off takes effect
    at once (default: all off). Plain methods run on the server's worker threads; the reader must allow
    that (`Memory` gives each thread its own connection).
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
    ) -> None:
        self._reader = reader
        self._arm = arm
        self._arm_spec = arm_spec
        self._project_dir = project_dir
        self._clock = clock
        self._settings = settings

    def register(self, server: MCPServer) -> None:
        """Add every tool to `server`, annotated read-only."""
        for tool in (self.search_memory, self.get_memory, self.recent_sessions, self.memory_status):
            server.add_tool(tool, annotations=READ_ONLY)

    # --- scope ---------------------------------------------------------------------------------
    def current_project(self) -> str | None:
        """The recorded project the project folder resolves to, or None."""
        inherit = self._settings().scope_inherit_parent
        return resolve_project(self._reader.projects(), self._project_dir, inherit_parent=inherit)

    def _scope(self, all_projects: bool) -> tuple[Scope | None, str | None]:
        """The scope of a call, or None and a message when the project has no memory.

        Raises:
            ToolError: the call asks for all projects and the person has not allowed that.
        """
        if all_projects:
            if not self._settings().mcp_all_projects:
                raise ToolError(ALL_PROJECTS_OFF)
            return Scope.everywhere(), None
        project = self.current_project()
        if project is None:
            return None, (
                f"no sessions are recorded for {self._project_dir}; run `recallbench import` (or "
                "install the hooks); `recallbench status --project DIR` says why a folder has none"
            )
        return Scope.of(project), None

    # --- the tools -----------------------------------------------------------------------------
    def search_memory(
        self,
        query: Annotated[str, Field(description="What to recall, in plain words.", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits to return.")] = 5,
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
    ) -> SearchResult:
        """Search memory of earlier Claude Code sessions of this project for `query`."""
        if not query.strip():
            raise ToolError(EMPTY_QUERY)
        scope, message = self._scope(all_projects)
        projects, everywhere = _scope_fields(scope)
        if scope is None:
            return SearchResult(
                query=query,
                arm=self._arm_spec,
                scope=projects,
                all_projects=everywhere,
                hits=[],
                message=message,
            )
        hits = self._arm.search(Query(text=query, scope=scope, now=self._clock(), k=limit))
        records = self._reader.chunks([h.chunk_id for h in hits], scope)
        rows = [SearchHit.model_validate(row.to_dict()) for row in hit_rows(hits, records)]
        return SearchResult(
            query=query,
            arm=self._arm_spec,
            scope=projects,
            all_projects=everywhere,
            hits=rows,
            message=None if rows else "nothing relevant found",
        )

    def get_memory(
        self,
        chunk_id: Annotated[str, Field(description="A chunk id from search_memory.", min_length=1)],
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
    ) -> MemoryChunk:
        """One memory chunk in full, with its session, project, timestamps and neighbouring chunk ids."""
        scope, message = self._scope(all_projects)
        if scope is None:
            return MemoryChunk(found=False, chunk_id=chunk_id, message=message)
        found = self._reader.chunks([chunk_id], scope)
        if not found:
            where = "any project" if scope.all_projects else str(scope)
            hint = (
                " (pass all_projects=true to look everywhere)"
                if not scope.all_projects and self._settings().mcp_all_projects
                else ""
            )
            return MemoryChunk(
                found=False, chunk_id=chunk_id, message=f"no chunk {chunk_id} in {where}{hint}"
            )
        record = found[0]
        previous = make_chunk_id(record.stream, record.index - 1) if record.index > 0 else None
        following = make_chunk_id(record.stream, record.index + 1)
        # Neighbours are looked up in the same scope, so an id is only offered if it can be read.
        neighbours = [i for i in (previous, following) if i]
        present = {r.id for r in self._reader.chunks(neighbours, scope)}
        return MemoryChunk(
            found=True,
            chunk_id=record.id,
            session_id=record.session_id,
            project=record.project,
            stream=record.stream,
            index=record.index,
            author=record.author.label,
            ts_start=record.ts_start,
            ts_end=record.ts_end,
            session_start=record.session_start,
            text=record.text,
            previous_chunk_id=previous if previous in present else None,
            next_chunk_id=following if following in present else None,
        )

    def recent_sessions(
        self,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Sessions to list.")] = 10,
        all_projects: Annotated[bool, Field(description=ALL_PROJECTS_HELP)] = False,
    ) -> RecentSessions:
        """The most recently started sessions of this project, with their chunk counts."""
        scope, message = self._scope(all_projects)
        projects, everywhere = _scope_fields(scope)
        if scope is None:
            return RecentSessions(
                scope=projects, all_projects=everywhere, sessions=[], message=message
            )
        sessions = [
            SessionSummary(
                session_id=str(r["session_id"]),
                project=str(r["project"]),
                started=None if r["started"] is None else str(r["started"]),
                ended=None if r["ended"] is None else str(r["ended"]),
                chunks=_int(r["chunks"]),
            )
            for r in self._reader.recent_sessions(scope, limit)
        ]
        return RecentSessions(scope=projects, all_projects=everywhere, sessions=sessions)

    def memory_status(self) -> MemoryStatus:
        """What the memory holds: sessions, chunks, vectors, index state, and the arm being served."""
        info = self._reader.status()
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
            current_project=self.current_project(),
            skipped=_counts(info["skipped"]),
            scrubbed=_counts(info["scrubbed"]),
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

"""The MCP stdio server: read-only memory tools over the shipped retrieval arm.

Every tool is annotated read-only and non-destructive, and none of them can edit or delete memory: this
module only calls the engine's scoped read API (a test walks its imports to keep it that way). Reads are
scoped to the Claude Code project (`$CLAUDE_PROJECT_DIR`, else the server's cwd) unless a call asks for
all projects. Plain `def` tools run on worker threads; `Memory` gives each thread its own connection.
Logs go to stderr: stdout is the protocol channel.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from arms.base import Arm, Query
from arms.registry import build, full_canonical
from engine.chunking import chunk_id as make_chunk_id
from engine.markers import OWN_SERVER
from engine.memory import Memory
from engine.scope import Scope, resolve_project

log = logging.getLogger("recallbench.mcp")

DEFAULT_ARM = "rrf"
MAX_LIMIT = 50
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
INSTRUCTIONS = (
    "Long-term memory of earlier Claude Code sessions (recallbench). Use `search_memory` when the user "
    "refers to earlier work, or before re-deriving a decision, an error's cause, a command or a fix that "
    "may have come up before; read a whole chunk and its neighbours with `get_memory`. Results are "
    "limited to the current project unless all_projects=true. These tools only read."
)


# --- return models ------------------------------------------------------------------------------


class SearchHit(BaseModel):
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


# --- scope --------------------------------------------------------------------------------------


def default_project_dir() -> Path:
    """`$CLAUDE_PROJECT_DIR` (set by Claude Code), else the server's working directory."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return Path(env).expanduser() if env else Path.cwd()


class _Scoper:
    """Turns a tool's `all_projects` flag into a Scope, or a message when the project has no memory."""

    def __init__(self, memory: Callable[[], Memory], directory: Path) -> None:
        self._memory = memory
        self.directory = directory

    def project(self) -> str | None:
        return resolve_project(self._memory().projects(), self.directory)

    def scope(self, all_projects: bool) -> tuple[Scope | None, str | None]:
        if all_projects:
            return Scope.everywhere(), None
        project = self.project()
        if project is None:
            return None, (
                f"no sessions are recorded for {self.directory} or a folder above it; run "
                "`recallbench import` (or install the hooks), or pass all_projects=true"
            )
        return Scope.of(project), None


def _scope_fields(scope: Scope | None) -> tuple[list[str], bool]:
    if scope is None:
        return [], False
    return sorted(scope.projects), scope.all_projects


# --- server -------------------------------------------------------------------------------------


def build_server(
    memory_factory: Callable[[], Memory],
    arm_spec: str | None,
    *,
    project_dir: Path | None = None,
    now: Callable[[], datetime] | None = None,
) -> MCPServer:
    """The MCP server over the arm `arm_spec` (the default `rrf`, with a notice on stderr, when None).

    `memory_factory` is called once, on the first tool call. `project_dir` defaults to
    `default_project_dir()` at build time.

    Raises:
        ValueError: `arm_spec` does not parse or names an unknown arm or parameter.
    """
    if arm_spec is None:
        print(
            f"recallbench: no arm has been shipped (config.toml [ship] arm); serving {DEFAULT_ARM!r}",
            file=sys.stderr,
        )
        arm_spec = DEFAULT_ARM
    canonical = full_canonical(arm_spec)  # validates the spec now rather than on the first search
    clock = now if now is not None else (lambda: datetime.now(UTC))
    lock = threading.RLock()  # arm() builds over memory() while holding it
    state: dict[str, object] = {}

    def memory() -> Memory:
        with lock:
            if "memory" not in state:
                state["memory"] = memory_factory()
            value = state["memory"]
        if not isinstance(value, Memory):
            msg = f"memory_factory returned {type(value).__name__}, expected a Memory"
            raise TypeError(msg)
        return value

    def arm() -> Arm:
        with lock:
            if "arm" not in state:
                state["arm"] = build(canonical, memory())
            return state["arm"]  # type: ignore[return-value]

    scoper = _Scoper(memory, project_dir if project_dir is not None else default_project_dir())
    server = MCPServer(OWN_SERVER, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    def search_memory(
        query: Annotated[str, Field(description="What to recall, in plain words.", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits to return.")] = 5,
        all_projects: Annotated[
            bool, Field(description="Search every project instead of the current one.")
        ] = False,
    ) -> SearchResult:
        """Search memory of earlier Claude Code sessions of this project for `query`."""
        scope, message = scoper.scope(all_projects)
        projects, everywhere = _scope_fields(scope)
        if scope is None:
            return SearchResult(
                query=query,
                arm=canonical,
                scope=projects,
                all_projects=everywhere,
                hits=[],
                message=message,
            )
        hits = arm().search(Query(text=query, scope=scope, now=clock(), k=limit))
        records = {r.id: r for r in memory().chunks([h.chunk_id for h in hits], scope)}
        rows = [
            SearchHit(
                rank=rank,
                chunk_id=h.chunk_id,
                score=round(h.score, 6),
                via=h.via,
                session_id=records[h.chunk_id].session_id,
                project=records[h.chunk_id].project,
                author=records[h.chunk_id].author.label,
                timestamp=records[h.chunk_id].ts_start,
                text=records[h.chunk_id].text,
            )
            for rank, h in enumerate((h for h in hits if h.chunk_id in records), start=1)
        ]
        return SearchResult(
            query=query,
            arm=canonical,
            scope=projects,
            all_projects=everywhere,
            hits=rows,
            message=None if rows else "nothing relevant found",
        )

    @server.tool(annotations=READ_ONLY)
    def get_memory(
        chunk_id: Annotated[str, Field(description="A chunk id from search_memory.", min_length=1)],
        all_projects: Annotated[
            bool, Field(description="Look outside the current project too.")
        ] = False,
    ) -> MemoryChunk:
        """One memory chunk in full, with its session, project, timestamps and neighbouring chunk ids."""
        scope, message = scoper.scope(all_projects)
        if scope is None:
            return MemoryChunk(found=False, chunk_id=chunk_id, message=message)
        found = memory().chunks([chunk_id], scope)
        if not found:
            where = "any project" if scope.all_projects else str(scope)
            hint = "" if scope.all_projects else " (pass all_projects=true to look everywhere)"
            return MemoryChunk(
                found=False, chunk_id=chunk_id, message=f"no chunk {chunk_id} in {where}{hint}"
            )
        record = found[0]
        previous = make_chunk_id(record.stream, record.index - 1) if record.index > 0 else None
        following = make_chunk_id(record.stream, record.index + 1)
        # Neighbours are looked up in the same scope, so an id is only offered if it can be read.
        present = {r.id for r in memory().chunks([i for i in (previous, following) if i], scope)}
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

    @server.tool(annotations=READ_ONLY)
    def recent_sessions(
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Sessions to list.")] = 10,
        all_projects: Annotated[bool, Field(description="List sessions of every project.")] = False,
    ) -> RecentSessions:
        """The most recently started sessions of this project, with their chunk counts."""
        scope, message = scoper.scope(all_projects)
        projects, everywhere = _scope_fields(scope)
        if scope is None:
            return RecentSessions(
                scope=projects, all_projects=everywhere, sessions=[], message=message
            )
        rows = memory().recent_sessions(scope, limit)
        sessions = [
            SessionSummary(
                session_id=str(r["session_id"]),
                project=str(r["project"]),
                started=None if r["started"] is None else str(r["started"]),
                ended=None if r["ended"] is None else str(r["ended"]),
                chunks=int(str(r["chunks"])),
            )
            for r in rows
        ]
        return RecentSessions(scope=projects, all_projects=everywhere, sessions=sessions)

    @server.tool(annotations=READ_ONLY)
    def memory_status() -> MemoryStatus:
        """What the memory holds: sessions, chunks, vectors, index state, and the arm being served."""
        info = memory().status()
        return MemoryStatus(
            database=str(info["database"]),
            projects=_int(info["projects"]),
            sessions=_int(info["sessions"]),
            self_transcripts=_int(info["self_transcripts"]),
            chunks=_int(info["chunks"]),
            vectors=_int(info["vectors"]),
            embedder=None if info["embedder"] is None else str(info["embedder"]),
            index=str(info["index"]),
            arm=canonical,
            current_project=scoper.project(),
            skipped=_counts(info["skipped"]),
            scrubbed=_counts(info["scrubbed"]),
        )

    return server


def _int(value: object) -> int:
    return int(str(value))


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(k): int(str(v)) for k, v in value.items()}

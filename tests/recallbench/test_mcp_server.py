"""The MCP server: tools, annotations, scope and the stdio process (its import graph: test_mcp_read_only)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server import MCPServer

from arms.registry import full_canonical
from engine.chunking import chunk_id
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench import mcp_server
from recallbench.background_embed import BackgroundEmbedder
from recallbench.cli import main
from recallbench.mcp_server import LEXICAL_READY, build_server
from recallbench.search_service import embed_via_socket, socket_path
from tests.engine.fixtures_transcripts import write_jsonl
from tests.recallbench.corpus import (
    ALPHA,
    BETA,
    SID_A1,
    SID_B1,
    chat_session,
    import_corpus,
    write_corpus,
)
from tests.recallbench.scope_corpus import A_TEXT, B_TEXT, PROMPT, two_projects
from tests.recallbench.serving import start_serve, stop

REPO = Path(__file__).resolve().parents[2]
TOOLS = {"search_memory", "get_memory", "recent_sessions", "memory_status"}
WRITE_TOOLS = {"flag_memory"}  # the one write: a settle, never a delete (test_mcp_flag.py)
SID_LONG = "aaaaaaaa-0000-4000-8000-00000000000f"
MODES = ["auto", "legacy"]  # the current handshake, and the initialize handshake Claude Code uses


@pytest.fixture
def db(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "projects"
    write_corpus(root)
    # a three-chunk alpha session, for neighbour links
    turns = [(f"Step {n}: " + "migrate the schema carefully " * 28, "Done.") for n in range(3)]
    write_jsonl(
        root / "-home-dev-alpha" / f"{SID_LONG}.jsonl", chat_session(SID_LONG, ALPHA, turns, 30)
    )
    import_corpus(home / "memory.db", root).close()
    return home / "memory.db"


def stream_of(db: Path, session_id: str, project: str) -> str:
    """The key the store gave a session's main stream (it names the file, not only the session)."""
    memory = Memory(db)
    (row,) = [
        r for r in memory.recent_sessions(Scope.of(project), 10) if r["session_id"] == session_id
    ]
    return memory.chunks([str(row["opening_chunk_id"])], Scope.of(project))[0].stream


def server_for(db: Path, project: str | Path, arm: str | None = "rrf") -> MCPServer:
    return build_server(Memory(db, HashEmbedder()), arm, project_dir=Path(project))


def call(
    server: MCPServer | StdioServerParameters, mode: str, *calls: tuple[str, dict[str, Any]]
) -> list[Any]:
    """Open a client, run the tool calls in order, return their structured results."""

    async def go() -> list[Any]:
        with anyio.fail_after(60):
            async with Client(server, mode=mode) as client:
                out = []
                for name, args in calls:
                    result = await client.call_tool(name, args)
                    assert not result.is_error, result.content
                    out.append(result.structured_content)
                return out

    return anyio.run(go)


def call_results(server: MCPServer, *calls: tuple[str, dict[str, Any]]) -> list[tuple[bool, Any]]:
    """Like `call`, but each result is (is_error, structured content or the error's text)."""

    async def go() -> list[tuple[bool, Any]]:
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                out: list[tuple[bool, Any]] = []
                for name, args in calls:
                    result = await client.call_tool(name, args)
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    out.append(
                        (result.is_error, text if result.is_error else result.structured_content)
                    )
                return out

    return anyio.run(go)


def allow(key: str) -> None:
    """Turn a setting on as the person does, through `recallbench config set`."""
    result = CliRunner().invoke(main, ["config", "set", key, "true"], catch_exceptions=False)
    assert result.exit_code == 0, result.output


# --- tools and annotations ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_read_tool_is_listed_read_only_and_no_tool_is_destructive(
    db: Path, mode: str
) -> None:
    async def go() -> Any:
        with anyio.fail_after(60):
            async with Client(server_for(db, ALPHA), mode=mode) as client:
                return await client.list_tools()

    listed = anyio.run(go)
    assert {t.name for t in listed.tools} == TOOLS | WRITE_TOOLS
    for tool in listed.tools:
        assert tool.annotations is not None
        assert (tool.name, tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (
            tool.name,
            tool.name not in WRITE_TOOLS,  # the flag is not read-only: it is told as it is
            False,
        )
        assert tool.output_schema is not None
        assert tool.description


@pytest.mark.parametrize("mode", MODES)
def test_every_tool_answers(db: Path, mode: str) -> None:
    search, status, recent = call(
        server_for(db, ALPHA),
        mode,
        ("search_memory", {"query": "flaky retry test decorator", "limit": 3}),
        ("memory_status", {}),
        ("recent_sessions", {"limit": 10}),
    )
    assert search["scope"] == [ALPHA]
    assert search["arm"] == "rrf(min_score=0.2,pool=20,rrf_k=60)"
    top = search["hits"][0]
    assert top["session_id"] == SID_A1
    assert top["rank"] == 1
    assert "The retry decorator swallowed the timeout error." in top["text"]
    assert len(search["hits"]) <= 3
    (got,) = call(server_for(db, ALPHA), mode, ("get_memory", {"chunk_id": top["chunk_id"]}))
    assert got["found"] is True
    assert got["text"] == top["text"]
    assert (got["project"], got["session_id"], got["author"]) == (ALPHA, SID_A1, "User")
    assert status["sessions"] == 4
    assert status["chunks"] == 3 + 3  # one chunk per short session, three for the long one
    assert status["current_project"] == ALPHA
    assert [s["session_id"] for s in recent["sessions"]] == [
        SID_LONG,
        "aaaaaaaa-0000-4000-8000-000000000002",
        SID_A1,
    ]
    first = recent["sessions"][2]
    assert first["opening"].startswith("Why does the flaky retry test in the importer fail on CI?")
    long_opening = recent["sessions"][0]["opening"]
    assert long_opening.startswith("Step 0: migrate the schema carefully migrate")
    assert len(long_opening) == 200  # clipped: the chunk holds 8 + 29 * 28 characters
    assert long_opening.endswith("…")
    (opened,) = call(
        server_for(db, ALPHA), mode, ("get_memory", {"chunk_id": first["opening_chunk_id"]})
    )
    assert opened["session_id"] == SID_A1
    assert opened["index"] == 0


def test_get_memory_links_the_previous_and_next_chunk_of_the_same_stream(db: Path) -> None:
    stream = stream_of(db, SID_LONG, ALPHA)
    first, middle, last = (chunk_id(stream, i) for i in range(3))
    got_first, got_middle, got_last = call(
        server_for(db, ALPHA),
        "legacy",
        ("get_memory", {"chunk_id": first}),
        ("get_memory", {"chunk_id": middle}),
        ("get_memory", {"chunk_id": last}),
    )
    assert (got_first["previous_chunk_id"], got_first["next_chunk_id"]) == (None, middle)
    assert (got_middle["previous_chunk_id"], got_middle["next_chunk_id"]) == (first, last)
    assert (got_last["previous_chunk_id"], got_last["next_chunk_id"]) == (middle, None)
    assert got_middle["text"].startswith("Step 1: migrate the schema")


def test_get_memory_reads_a_chunk_by_the_start_of_its_id_in_scope(db: Path) -> None:
    middle = chunk_id(stream_of(db, SID_LONG, ALPHA), 1)
    short, whole, too_short = call(
        server_for(db, ALPHA),
        "legacy",
        ("get_memory", {"chunk_id": middle[:8]}),
        ("get_memory", {"chunk_id": middle}),
        ("get_memory", {"chunk_id": middle[:3]}),
    )
    (elsewhere,) = call(server_for(db, BETA), "legacy", ("get_memory", {"chunk_id": middle[:8]}))
    assert whole["found"] is True  # control: the whole id reads it
    assert short == whole  # eight characters that start one id in scope read the same chunk
    assert too_short["found"] is False  # three never do: the ids they start are named
    assert too_short["message"].startswith(f"no chunk {middle[:3]} in {ALPHA}; ids that start")
    assert middle in too_short["message"]
    assert elsewhere["message"] == f"no chunk {middle[:8]} in {BETA}"  # never another project's id


def test_search_never_leaves_the_project_unless_asked(db: Path) -> None:
    allow("mcp.all_projects")
    beta_chunk = chunk_id(stream_of(db, SID_B1, BETA), 0)
    scoped, everywhere, get_scoped, get_everywhere = call(
        server_for(db, ALPHA),
        "legacy",
        ("search_memory", {"query": "postgres backup cron job", "limit": 10}),
        ("search_memory", {"query": "postgres backup cron job", "limit": 10, "all_projects": True}),
        ("get_memory", {"chunk_id": beta_chunk}),
        ("get_memory", {"chunk_id": beta_chunk, "all_projects": True}),
    )
    assert beta_chunk not in [h["chunk_id"] for h in scoped["hits"]]
    assert {h["project"] for h in scoped["hits"]} <= {ALPHA}
    assert beta_chunk in [h["chunk_id"] for h in everywhere["hits"]]
    assert everywhere["all_projects"] is True
    assert get_scoped["found"] is False
    assert "all_projects=true" in get_scoped["message"]
    assert get_everywhere["found"] is True
    assert get_everywhere["project"] == BETA


def test_an_unrecorded_project_gets_an_empty_result_and_a_message_never_all_projects(
    db: Path,
) -> None:
    allow("mcp.all_projects")
    scoped, recent, everywhere = call(
        server_for(db, "/somewhere/else"),
        "legacy",
        ("search_memory", {"query": "flaky retry test"}),
        ("recent_sessions", {}),
        ("search_memory", {"query": "flaky retry test", "all_projects": True}),
    )
    assert scoped["hits"] == []
    assert scoped["scope"] == []
    assert "no sessions are recorded for /somewhere/else" in scoped["message"]
    assert recent["sessions"] == []
    assert everywhere["hits"] != []


def test_the_project_is_claude_project_dir_and_a_sub_folder_inherits_only_when_allowed(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", ALPHA + "/src/pkg")
    server = build_server(Memory(db, HashEmbedder()), "rrf")
    (status,) = call(server, "legacy", ("memory_status", {}))
    assert status["current_project"] is None
    allow("scope.inherit_parent")  # read on every call: the same server now inherits
    (status,) = call(server, "legacy", ("memory_status", {}))
    assert status["current_project"] == ALPHA
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", BETA)
    (status,) = call(
        build_server(Memory(db, HashEmbedder()), "rrf"), "legacy", ("memory_status", {})
    )
    assert status["current_project"] == BETA


def test_bad_arguments_are_tool_errors_not_crashes(db: Path) -> None:
    async def go() -> tuple[bool, bool]:
        with anyio.fail_after(60):
            async with Client(server_for(db, ALPHA), mode="legacy") as client:
                bad = await client.call_tool("search_memory", {"query": "x", "limit": 0})
                good = await client.call_tool("search_memory", {"query": "retry", "limit": 1})
                return bad.is_error, good.is_error

    assert anyio.run(go) == (True, False)


def test_without_a_shipped_arm_rrf_is_served_with_a_notice(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = server_for(db, ALPHA, arm=None)
    assert "no arm has been shipped" in capsys.readouterr().err
    (status,) = call(server, "legacy", ("memory_status", {}))
    assert status["arm"] == full_canonical("rrf")
    shipped = server_for(db, ALPHA, arm="fts(pool=30)")
    assert "no arm has been shipped" not in capsys.readouterr().err
    (status,) = call(shipped, "legacy", ("memory_status", {}))
    assert status["arm"] == full_canonical("fts(pool=30)")


def test_an_invalid_arm_spec_is_refused_when_the_server_is_built(db: Path) -> None:
    with pytest.raises(ValueError, match="unknown arm 'nope'"):
        server_for(db, ALPHA, arm="nope(k=1)")


def test_all_projects_is_a_tool_error_until_the_person_enables_it(db: Path) -> None:
    server = server_for(db, ALPHA)
    query = {"query": "the flaky retry test and the postgres backup cron job", "limit": 10}
    calls = (
        ("search_memory", {**query, "all_projects": True}),
        (
            "get_memory",
            {"chunk_id": chunk_id(stream_of(db, SID_B1, BETA), 0), "all_projects": True},
        ),
        ("recent_sessions", {"all_projects": True}),
        ("search_memory", query),
    )
    *refused, scoped = call_results(server, *calls)
    for is_error, text in refused:
        assert is_error is True
        assert "recallbench config set mcp.all_projects true" in text
    assert scoped[0] is False  # the current project still answers
    assert {h["project"] for h in scoped[1]["hits"]} == {ALPHA}
    # positive control: once the person enables it, the same calls answer across projects
    allow("mcp.all_projects")
    search, got, recent, _ = call_results(server, *calls)
    assert (search[0], got[0], recent[0]) == (False, False, False)
    assert {h["project"] for h in search[1]["hits"]} == {ALPHA, BETA}
    assert got[1]["project"] == BETA
    assert {s["project"] for s in recent[1]["sessions"]} == {ALPHA, BETA}
    # and turning it off again refuses at once
    CliRunner().invoke(main, ["config", "set", "mcp.all_projects", "false"], catch_exceptions=False)
    assert call_results(server, calls[0])[0][0] is True


@pytest.mark.parametrize("through", ["through_dotdot", "through_link"])
def test_a_project_dir_that_passes_through_another_project_reads_the_project_it_reaches(
    tmp_path: Path, home: Path, through: str
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    for project_dir, expected, text in (
        (getattr(projects, through), projects.alpha, A_TEXT),
        (projects.beta, projects.beta, B_TEXT),  # positive control: B itself is B
    ):
        server = server_for(projects.db, project_dir)
        search, status, recent = call(
            server,
            "legacy",
            ("search_memory", {"query": PROMPT, "limit": 10}),
            ("memory_status", {}),
            ("recent_sessions", {}),
        )
        assert status["current_project"] == str(expected)
        assert search["scope"] == [str(expected)]
        assert {h["project"] for h in search["hits"]} == {str(expected)}
        assert text in search["hits"][0]["text"]
        assert {s["project"] for s in recent["sessions"]} == {str(expected)}


# --- background embedding -----------------------------------------------------------------------


def test_background_embedder_fills_missing_vectors_once_and_yields_to_a_lock_holder(
    tmp_path: Path, home: Path
) -> None:
    root = tmp_path / "projects"
    write_corpus(root)
    memory = Memory(home / "memory.db", HashEmbedder())
    memory.import_paths([root], embed=False)
    assert memory.status()["vectors"] == 0
    lock = home / "embed.lock"
    worker = BackgroundEmbedder(lambda: memory, lock)
    with lock.open("a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert worker.run_once(memory) == 0  # another server holds the lock
        assert memory.status()["vectors"] == 0
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    assert worker.run_once(memory) == 3
    assert memory.status()["vectors"] == 3
    assert memory.index_state() == "current"
    assert worker.run_once(memory) == 0


# --- the stdio process --------------------------------------------------------------------------


def test_recallbench_serve_answers_over_stdio_and_removes_its_socket_on_exit(
    db: Path, home: Path
) -> None:
    (home / "config.toml").write_text('[ship]\narm = "fts(pool=30)"\n', encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallbench.cli", "serve"],
        env={
            "PYTHONPATH": str(REPO),
            "RECALLBENCH_HOME": str(home),
            "RECALLBENCH_EMBEDDER": "hash",
            "CLAUDE_PROJECT_DIR": ALPHA,
        },
        cwd=str(REPO),
    )
    sock = socket_path(home, HashEmbedder().id)
    seen: dict[str, Any] = {}

    async def go() -> None:
        with anyio.fail_after(120):
            async with Client(params, mode="legacy") as client:
                result = await client.call_tool("search_memory", {"query": "flaky retry decorator"})
                seen["search"] = result.structured_content
                status = await client.call_tool("memory_status", {})
                seen["status"] = status.structured_content
                # the embedding service runs in the server process while the session lasts
                vectors = await anyio.to_thread.run_sync(
                    lambda: embed_via_socket(["hello"], 5.0, path=sock)
                )
                seen["vector_shape"] = None if vectors is None else vectors.shape

    anyio.run(go)
    assert seen["search"]["hits"][0]["session_id"] == SID_A1
    assert seen["status"]["arm"] == full_canonical("fts(pool=30)")
    assert seen["vector_shape"] == (1, 256)
    assert not sock.exists()


class _ExitCalledError(Exception):
    """Raised by the stand-in for os._exit, with the status it was given."""


def test_serve_stops_its_helpers_then_ends_the_process_when_the_client_goes_away(
    db: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Daemon threads may be inside ONNX Runtime or hnswlib when the client goes away; finalising the
    # interpreter under them aborted the process (exit 134). serve ends it with os._exit instead.
    events: list[object] = []

    class Client:
        def run(self, transport: str) -> None:
            events.append(("run", transport))  # the client went away at once

    stop_background = BackgroundEmbedder.stop

    def stop_and_say(self: BackgroundEmbedder) -> None:
        stop_background(self)
        events.append("background stopped")

    def exit_now(status: int) -> None:
        events.append(("exit", status))
        raise _ExitCalledError(status)

    monkeypatch.setattr(mcp_server, "build_server", lambda memory, spec: Client())
    monkeypatch.setattr(BackgroundEmbedder, "stop", stop_and_say)
    monkeypatch.setattr(os, "_exit", exit_now)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        with pytest.raises(_ExitCalledError):
            mcp_server.serve(db, search_service=False)
    finally:  # serve installed its own for the signals; this process keeps pytest's
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert events == [("run", "stdio"), "background stopped", ("exit", 0)]


def test_a_service_that_is_starting_is_stopped_with_the_server(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A signal may end the server between the socket's bind and `start` returning.
    entered, release = threading.Event(), threading.Event()
    stopped: list[str] = []

    class Starting:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def start(self) -> Starting:
            entered.set()  # bound and announced; not yet returned
            release.wait(10.0)
            return self

        def stop(self) -> None:
            stopped.append("stopped")

    monkeypatch.setattr(mcp_server, "SearchService", Starting)
    memory = Memory(db, HashEmbedder())
    try:
        with contextlib.ExitStack() as stack:
            mcp_server._start_search_service(stack, memory, HashEmbedder(), "fts")
            assert entered.wait(10.0)
            assert stopped == []  # control: nothing stopped while the server runs
        assert stopped == ["stopped"]  # the exit (the signal handler's cleanup) stopped it
    finally:
        release.set()
        memory.close()


def test_the_process_ends_even_when_a_stream_cannot_be_flushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A signal handler that interrupted a write to stderr gets "reentrant call" from its flush.
    class Reentrant:
        flushed = 0

        def flush(self) -> None:
            Reentrant.flushed += 1
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stderr>'>")

    exits: list[int] = []

    def exit_now(status: int) -> None:
        exits.append(status)
        raise _ExitCalledError(status)

    monkeypatch.setattr(sys, "stdout", Reentrant())
    monkeypatch.setattr(sys, "stderr", Reentrant())
    monkeypatch.setattr(os, "_exit", exit_now)
    with pytest.raises(_ExitCalledError):
        mcp_server._end_process(130)
    assert (Reentrant.flushed, exits) == (2, [130])  # both tried, and the process still ends


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_recallbench_serve_removes_its_socket_when_terminated(
    db: Path, home: Path, sig: signal.Signals
) -> None:
    sock = socket_path(home, HashEmbedder().id)
    proc, lines = start_serve(home)
    try:
        assert str(sock) in lines[-1]  # the server announces its socket once it listens
        assert embed_via_socket(["still here"], 5.0, path=sock) is not None
        # It also says when its first lexical snapshot is held (before or after it listens).
        said = list(lines)
        while not any(LEXICAL_READY in line for line in said):
            line = proc.stderr.readline() if proc.stderr is not None else ""
            assert line, f"the server exited without its lexical snapshot: {said}"
            said.append(line)
        assert re.search(rf"{LEXICAL_READY} \d+\.\d s after start", "".join(said))
        proc.send_signal(sig)  # SIGINT: Ctrl-C at a terminal; stdin stays open either way
        assert proc.wait(timeout=30) == 128 + sig
    finally:
        stop(proc, signal.SIGKILL)
    assert not sock.exists()

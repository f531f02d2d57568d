"""The MCP tools `search_memory` and `recent_sessions` keep to a time window when the model gives
`since`/`until`.

Corpus: `tests.engine.window_corpus` (chunks of project P written on 2026-01-10, -20 and -30 at
09:00 UTC; the best match for its query is the earliest).
"""

from __future__ import annotations

from pathlib import Path

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.mcp_server import build_server
from tests.engine.window_corpus import QUERY, P, session_id, window_memory
from tests.recallbench.test_mcp_server import call, call_results


def test_search_memory_keeps_to_the_window_it_is_given(tmp_path: Path) -> None:
    window_memory(tmp_path).close()
    server = build_server(Memory(tmp_path / "w.db", HashEmbedder(64)), "rrf", project_dir=Path(P))
    everything, windowed, open_end = call(
        server,
        "legacy",
        ("search_memory", {"query": QUERY, "limit": 10}),
        ("search_memory", {"query": QUERY, "since": "2026-01-15", "until": "2026-01-24"}),
        ("search_memory", {"query": QUERY, "since": "2026-01-25T09:00"}),
    )
    # control: unwindowed, the Jan 10 chunk ranks first and the result names no window
    assert everything["hits"][0]["session_id"] == session_id(1)
    assert (everything["since"], everything["until"]) == (None, None)
    assert [h["session_id"] for h in windowed["hits"]] == [session_id(2)]
    assert (windowed["since"], windowed["until"]) == (
        "2026-01-15T00:00:00.000Z",
        "2026-01-25T00:00:00.000Z",
    )
    assert [h["session_id"] for h in open_end["hits"]] == [session_id(3)]
    assert open_end["until"] is None


def test_an_unreadable_time_is_a_tool_error_naming_the_forms(tmp_path: Path) -> None:
    window_memory(tmp_path).close()
    server = build_server(Memory(tmp_path / "w.db", HashEmbedder(64)), "rrf", project_dir=Path(P))
    (bad, msg), (good, _) = call_results(
        server,
        ("search_memory", {"query": QUERY, "since": "last week"}),
        ("search_memory", {"query": QUERY, "since": "7d"}),
    )
    assert bad is True
    assert "cannot read 'last week' as a time; give a date (2026-02-11)" in msg
    assert good is False  # control: an age is read


def test_recent_sessions_lists_those_with_a_chunk_in_the_window(tmp_path: Path) -> None:
    window_memory(tmp_path).close()
    server = build_server(Memory(tmp_path / "w.db", HashEmbedder(64)), "rrf", project_dir=Path(P))
    everything, windowed = call(
        server,
        "legacy",
        ("recent_sessions", {}),
        ("recent_sessions", {"since": "2026-01-15", "until": "2026-01-20"}),
    )
    assert [s["session_id"] for s in everything["sessions"]] == [
        session_id(3),
        session_id(2),
        session_id(1),
    ]  # control
    assert (everything["since"], everything["until"]) == (None, None)
    assert [s["session_id"] for s in windowed["sessions"]] == [session_id(2)]
    assert windowed["until"] == "2026-01-21T00:00:00.000Z"  # a bare date counts its whole day
    assert windowed["sessions"][0]["opening"].startswith("deploy notes: the gateway")

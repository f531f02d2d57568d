"""`search_memory` leaves out what the running session has in context (`recallbench.mcp_context`):
its own chunks, unless a compaction took their lines out, as the prompt hook does."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.mcp_server import SESSION_ENV, build_server, running_session_id
from tests.engine.fixtures_transcripts import append_jsonl, system_line, ts, write_jsonl
from tests.recallbench.corpus import ALPHA, chat_session
from tests.recallbench.test_mcp_server import call

OLDER = "aaaaaaaa-0000-4000-8000-0000000000c1"
RUNNING = "aaaaaaaa-0000-4000-8000-0000000000c2"
TURN = ("Why is the zebra cache warmup slow?", "The zebra cache warmup reads every shard serially.")
# the running session says it more often, so it ranks first when nothing is left out
AGAIN = ("Zebra cache warmup again?", "Yes: the zebra cache warmup, zebra cache warmup and warmup.")


def _memory(tmp_path: Path, home: Path) -> Path:
    """An older session and the running one, both about the same thing; returns the running
    session's transcript."""
    root = tmp_path / "projects" / "-home-dev-alpha"
    write_jsonl(root / f"{OLDER}.jsonl", chat_session(OLDER, ALPHA, [TURN], 0))
    running = write_jsonl(root / f"{RUNNING}.jsonl", chat_session(RUNNING, ALPHA, [AGAIN], 30))
    memory = Memory(home / "memory.db", HashEmbedder())
    memory.import_paths([tmp_path / "projects"])
    memory.close()
    return running


def _sessions(home: Path, limit: int) -> list[str]:
    server = build_server(
        Memory(home / "memory.db", HashEmbedder()), "fts", project_dir=Path(ALPHA)
    )
    (result,) = call(
        server, "legacy", ("search_memory", {"query": "zebra cache warmup", "limit": limit})
    )
    return [hit["session_id"] for hit in result["hits"]]


def test_the_running_sessions_own_chunks_are_left_out_until_a_compaction_takes_them_out(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = _memory(tmp_path, home)
    monkeypatch.delenv(SESSION_ENV, raising=False)
    assert _sessions(home, 5) == [RUNNING, OLDER]  # control: no session, no rule
    assert _sessions(home, 1) == [RUNNING]
    monkeypatch.setenv(SESSION_ENV, RUNNING)
    assert _sessions(home, 5) == [OLDER]
    # with room for one hit, the arm is asked again for one in place of the one left out
    assert _sessions(home, 1) == [OLDER]
    # /compact: the running session's lines before the boundary are no longer in its context
    env = {"session_id": RUNNING, "cwd": ALPHA}
    append_jsonl(running, [system_line("compact_boundary", uuid="b1", timestamp=ts(40), **env)])
    assert _sessions(home, 5) == [RUNNING, OLDER]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(RUNNING, RUNNING), (f" {RUNNING} ", RUNNING), ("", None), ("not an id; rm -rf", None)],
)
def test_the_running_session_is_read_from_claude_codes_variable(
    value: str, expected: str | None
) -> None:
    assert running_session_id({SESSION_ENV: value}) == expected
    assert running_session_id({}) is None

"""The MCP write tool `flag_memory`: a settle by the agent's session, scoped like every read, undone
only by that session or the person, and a corrected memory gone from `search_memory` but shown by
`get_memory` with what replaced it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from engine import audit
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench.mcp_server import SESSION_ENV, agent_actor, build_server
from tests.engine.test_trust_same_text import ALPHA
from tests.engine.test_trust_same_text import memory_of as same_text_memory
from tests.engine.trust_fixtures import SHOP, T0, T1, shop_memory
from tests.recallbench.test_mcp_server import call_results as calls

SESSION = "5e551011-0000-4000-8000-0000000000aa"
OTHER = "5e551011-0000-4000-8000-0000000000bb"
QUERY = "orders database port"


def server(db: Path, monkeypatch: pytest.MonkeyPatch, session: str = SESSION) -> MCPServer:
    monkeypatch.setenv(SESSION_ENV, session)
    return build_server(Memory(db, HashEmbedder(64)), "rrf", project_dir=Path(SHOP), now=lambda: T1)


def hit_ids(result: tuple[bool, Any]) -> list[str]:
    assert result[0] is False, result[1]
    return [h["chunk_id"] for h in result[1]["hits"]]


def test_a_corrected_flag_hides_the_memory_from_search_memory_but_get_memory_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, ids = shop_memory(tmp_path)
    old, new = ids["old"], ids["new"]
    search = ("search_memory", {"query": QUERY, "limit": 4})
    before, flagged, after, got, undone, again = calls(
        server(memory.db_path, monkeypatch),
        search,
        ("flag_memory", {"chunk_id": old, "kind": "corrected", "reason": "port moved", "by": new}),
        search,
        ("get_memory", {"chunk_id": old}),
        ("flag_memory", {"chunk_id": old, "kind": "undo", "reason": "my mistake"}),
        search,
    )
    assert old in hit_ids(before)  # control: found before the flag
    assert flagged == (
        False,
        {
            "settlement_id": 1,
            "chunk_id": old,
            "by": new,
            "kind": "corrected",
            "actor": f"agent:{SESSION}",
            "active": True,
            "message": "flagged corrected: hidden from searches from now on; get_memory still "
            "shows it, with its replacement",
            "same_text": [],
        },
    )
    assert old not in hit_ids(after)
    assert new in hit_ids(after)  # the replacement is found
    assert got[1]["found"] is True
    assert got[1]["replaced_by"] == new
    assert got[1]["status"] == f"corrected on 2026-05-02 (replaced by {new}, settle 1)"
    assert undone[1]["active"] is False
    assert old in hit_ids(again)  # control: the session's own undo brings it back
    rows = [(e.action, e.actor, e.targets) for e in audit.entries(memory.conn)]
    assert rows == [
        ("settle", f"agent:{SESSION}", ("settlement:1", old, new)),
        ("undo", f"agent:{SESSION}", ("settlement:1", old, new)),
    ]


def test_a_changed_flag_marks_the_old_memory_with_its_date_in_search_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, ids = shop_memory(tmp_path)
    old, new = ids["old"], ids["new"]
    search = ("search_memory", {"query": QUERY, "limit": 4})
    before, _, after = calls(
        server(memory.db_path, monkeypatch),
        search,
        ("flag_memory", {"chunk_id": old, "kind": "changed", "reason": "moved", "by": new}),
        search,
    )
    assert [h["status"] for h in before[1]["hits"]] == [None] * 4  # control: nothing marked
    rows = {h["chunk_id"]: h for h in after[1]["hits"]}
    assert rows[old]["status"] == f"changed on 2026-05-02 (replaced by {new}, settle 1)"
    assert rows[new]["status"] == f"replaces {old} since 2026-05-02 (settle 1)"
    assert hit_ids(after).index(new) < hit_ids(after).index(old)


def test_flag_memory_is_scoped_to_the_project_and_needs_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, ids = shop_memory(tmp_path)
    old = ids["old"]
    outside, no_by, unknown_kind, ok = calls(
        server(memory.db_path, monkeypatch),
        ("flag_memory", {"chunk_id": old, "kind": "corrected", "reason": "r", "by": ids["blog"]}),
        ("flag_memory", {"chunk_id": old, "kind": "corrected", "reason": "r"}),
        ("flag_memory", {"chunk_id": old, "kind": "deleted", "reason": "r", "by": ids["new"]}),
        ("flag_memory", {"chunk_id": old, "kind": "open", "reason": "r", "by": ids["pool"]}),
    )
    assert outside[0] is True
    assert f"no chunk {ids['blog']} in {SHOP}; flag only memories of this project" in outside[1]
    assert no_by[0] is True
    assert "by is required for kind=corrected" in no_by[1]
    assert unknown_kind[0] is True
    assert ok[0] is False  # control: the same call inside the project, with by, is recorded
    assert [s.kind for s in memory.settlements(Scope.everywhere())] == ["open"]


def test_the_agent_cannot_undo_a_flag_another_session_or_the_person_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, ids = shop_memory(tmp_path)
    old, new, pool = ids["old"], ids["new"], ids["pool"]
    memory.settle(pool, by=new, kind="corrected", reason="r", actor="person", now=T0)
    (flagged,) = calls(
        server(memory.db_path, monkeypatch, OTHER),
        ("flag_memory", {"chunk_id": old, "kind": "corrected", "reason": "r", "by": new}),
    )
    assert flagged[0] is False
    theirs, persons = calls(
        server(memory.db_path, monkeypatch, SESSION),
        ("flag_memory", {"chunk_id": old, "kind": "undo", "reason": "r"}),
        ("flag_memory", {"chunk_id": pool, "kind": "undo", "reason": "r"}),
    )
    for result in (theirs, persons):
        assert result[0] is True
        assert "this session has no active flag on" in result[1]
    assert len(memory.settlements(Scope.everywhere())) == 2
    (own,) = calls(  # control: the session that made the flag may undo it
        server(memory.db_path, monkeypatch, OTHER),
        ("flag_memory", {"chunk_id": old, "kind": "undo", "reason": "r"}),
    )
    assert own[0] is False
    assert [s.actor for s in memory.settlements(Scope.everywhere())] == ["person"]


def test_the_agent_actor_is_the_claude_code_session_id_or_a_random_one_per_server() -> None:
    assert agent_actor({SESSION_ENV: SESSION}) == f"agent:{SESSION}"
    first, second = agent_actor({}), agent_actor({SESSION_ENV: "not an id; drop table"})
    assert first.startswith("agent:mcp-")
    assert second.startswith("agent:mcp-")
    assert first != second
    assert audit.check_actor(first) == first


def test_a_flag_names_the_memories_of_its_project_that_say_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, ids = same_text_memory(tmp_path)
    monkeypatch.setenv(SESSION_ENV, SESSION)
    tools = build_server(
        Memory(memory.db_path, HashEmbedder()), "rrf", project_dir=Path(ALPHA), now=lambda: T1
    )
    (flagged,) = calls(
        tools,
        (
            "flag_memory",
            {"chunk_id": ids["read_a"], "kind": "changed", "reason": "r", "by": ids["note"]},
        ),
    )
    assert flagged[0] is False, flagged[1]
    # read_b (this project) says the same; read_c (BETA) does too, and the person sees it in
    # `corrections`, but the agent's tools read this project only
    assert flagged[1]["same_text"] == [ids["read_b"]]
    assert memory.same_text_ids(ids["read_a"]) == sorted([ids["read_b"], ids["read_c"]])
    assert flagged[1]["message"] == (
        "flagged changed: ranked below its replacement from now on, marked with the date; so is "
        "each memory in same_text (1), which says the same"
    )

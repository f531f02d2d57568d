"""Typed corrections in the hooks: the prompt hook's injected context (its own lexical read and the
server's arm) and the SessionStart brief never show a corrected memory, and mark a changed one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.prompt_search import PromptSearch
from recallbench.search_service import SearchService, socket_path
from recallbench.serve_cli import hook_command
from tests.engine.trust_fixtures import SESSIONS, SHOP, T0, T1, shop_memory

INPUTS = Path(__file__).resolve().parent / "hook_inputs"
PROMPT = "Which port does the orders database use?"
OLD_TEXT = "The orders database port is port 5432."
NEW_TEXT = "The orders database now listens on 6543."


def payload(name: str, **override: object) -> str:
    data: dict[str, Any] = json.loads((INPUTS / f"{name}.json").read_text(encoding="utf-8"))
    data.update({"cwd": SHOP, **override})
    return json.dumps(data)


def hook(event: str, stdin: str) -> str:
    result = CliRunner().invoke(hook_command, [event], input=stdin, catch_exceptions=False)
    assert result.exit_code == 0
    return result.stdout


def inject() -> str:
    return hook("UserPromptSubmit", payload("user_prompt_submit", prompt=PROMPT))


def test_the_prompt_hooks_lexical_read_never_injects_a_corrected_memory(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = shop_memory(tmp_path, db=home / "memory.db")
    assert OLD_TEXT in inject()  # control: injected before the settle
    done = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0
    )
    out = inject()
    assert OLD_TEXT not in out
    assert NEW_TEXT in out  # the replacement is injected
    memory.undo_settle(done.id, actor="person", now=T1)
    assert OLD_TEXT in inject()  # control: undone, it is injected again


def test_the_prompt_hook_through_the_servers_arm_never_injects_a_corrected_memory(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = shop_memory(tmp_path, db=home / "memory.db")
    emb = HashEmbedder()  # the embedder the hook's settings name (its id names the socket)
    served = Memory(home / "memory.db", emb)
    served.embed_pending()
    service = SearchService(emb, socket_path(home, emb.id), search=PromptSearch(served, "rrf"))
    with service:
        assert OLD_TEXT in inject()  # control
        memory.settle(
            ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0
        )
        out = inject()
    assert OLD_TEXT not in out
    assert NEW_TEXT in out
    assert "answered by the server" in (home / "hooks.log").read_text(encoding="utf-8")


def test_the_prompt_hook_marks_a_changed_memory_below_its_replacement(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = shop_memory(tmp_path, db=home / "memory.db")
    before = inject()
    assert before.index(OLD_TEXT) < before.index(NEW_TEXT)  # control: the old port ranks first
    assert "changed on" not in before
    memory.settle(ids["old"], by=ids["new"], kind="changed", reason="moved", actor="person", now=T0)
    after = inject()
    assert after.index(NEW_TEXT) < after.index(OLD_TEXT)
    assert f"changed on 2026-05-01 (replaced by {ids['new']}, settle 1)" in after


def test_the_session_start_brief_never_quotes_a_corrected_opening(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = shop_memory(tmp_path, db=home / "memory.db")
    prompt = SESSIONS["old"][2]
    assert prompt in hook("SessionStart", payload("session_start"))  # control
    memory.settle(ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0)
    brief = hook("SessionStart", payload("session_start"))
    assert prompt not in brief
    assert SESSIONS["new"][2] in brief  # the replacement's session is still briefed
    # The old session's only chunk is hidden: its line names it with no opening to quote (it used to
    # end in an empty `""`), and one chunk is "1 chunk".
    listed = [line for line in brief.splitlines() if line.startswith("- ")]
    assert '""' not in brief
    assert [line for line in listed if line.endswith(" · 1 chunk")] != []
    assert any(f'· 1 chunk · "{SESSIONS["new"][2]} ' in line for line in listed)  # control

"""Claude Code hooks: settings install/uninstall and the `recallbench hook EVENT` handlers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.embed import HashEmbedder
from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN
from engine.memory import Memory
from engine.scope import Scope, resolve_project
from recallbench import hooks
from recallbench.embed_service import EmbedService, socket_path
from recallbench.serve_cli import hook_command, hooks_group
from tests.engine.fixtures_transcripts import (
    Line,
    append_jsonl,
    assistant_lines,
    simple_session,
    text_block,
    ts,
    user_line,
    write_jsonl,
)

REPO = Path(__file__).resolve().parents[2]
INPUTS = Path(__file__).resolve().parent / "hook_inputs"
ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
SID_A1 = "aaaaaaaa-0000-4000-8000-000000000001"
SID_A2 = "aaaaaaaa-0000-4000-8000-000000000002"
SID_B1 = "bbbbbbbb-0000-4000-8000-000000000001"
CURRENT = "c0ffee00-0000-4000-8000-00000000c0de"  # the session of the recorded hook inputs


# --- corpus helpers (also used by the MCP server and concurrency tests) ---------------------------


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# The installed `recallbench hook UserPromptSubmit` command: the console script's short path.
ENTRY_HOOK = (
    "import sys; sys.argv = ['recallbench', 'hook', 'UserPromptSubmit']; "
    "from recallbench.entry import main; main()"
)


def chat_session(sid: str, cwd: str, turns: list[tuple[str, str]], minute: int = 0) -> list[Line]:
    """A session of (prompt, answer) turns; line uuids are derived from the session id."""
    lines: list[Line] = []
    parent: str | None = None
    for n, (prompt, answer) in enumerate(turns):
        u, a = f"{sid}-u{n}", f"{sid}-a{n}"
        env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
        lines.append(user_line(prompt, uuid=u, parent=parent, timestamp=ts(minute + n), **env))
        lines.extend(
            assistant_lines(
                [text_block(answer)],
                message_id=f"msg-{a}",
                uuids=[a],
                parent=u,
                timestamp=ts(minute + n, 30),
                **env,
            )
        )
        parent = a
    return lines


def write_corpus(root: Path) -> dict[str, Path]:
    """Two alpha sessions and one beta session under a Claude-style projects folder."""
    return {
        SID_A1: write_jsonl(
            root / "-home-dev-alpha" / f"{SID_A1}.jsonl",
            simple_session(
                "Why does the flaky retry test in the importer fail on CI?",
                session_id=SID_A1,
                cwd=ALPHA,
                answer="The retry decorator swallowed the timeout error.",
                prefix="a1-",
            ),
        ),
        SID_A2: write_jsonl(
            root / "-home-dev-alpha" / f"{SID_A2}.jsonl",
            chat_session(
                SID_A2,
                ALPHA,
                [("Rename the config loader module", "Renamed loader.py to settings.py.")],
                minute=20,
            ),
        ),
        SID_B1: write_jsonl(
            root / "-home-dev-beta" / f"{SID_B1}.jsonl",
            simple_session(
                "Schedule the postgres backup cron job for the retry queue",
                session_id=SID_B1,
                cwd=BETA,
                answer="Backups of the retry queue run nightly at 3am.",
                prefix="b1-",
            ),
        ),
    }


def import_corpus(db: Path, root: Path) -> Memory:
    memory = Memory(db, HashEmbedder())
    report = memory.import_paths([root])
    assert report.files_failed == {}
    return memory


@pytest.fixture
def corpus(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "projects"
    write_corpus(root)
    memory = import_corpus(home / "memory.db", root)
    memory.close()
    return root


def sample(name: str, **override: object) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((INPUTS / f"{name}.json").read_text(encoding="utf-8"))
    data.update(override)
    return data


def run(event: str, stdin: str | bytes, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(hook_command, [event], input=stdin, env=env, catch_exceptions=False)


def log_text(home: Path) -> str:
    path = home / hooks.LOG_NAME
    return path.read_text(encoding="utf-8") if path.exists() else ""


# ================================================================================================
# install / uninstall
# ================================================================================================

OTHER_TOOLS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}
        ],
    },
}


def our_commands(settings: dict[str, Any]) -> list[str]:
    return sorted(
        entry["command"]
        for groups in settings.get("hooks", {}).values()
        for group in groups
        for entry in group.get("hooks", [])
        if hooks.is_ours(entry)
    )


def invoke_hooks(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(hooks_group, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def user_settings(home: Path) -> Path:
    # conftest points CLAUDE_CONFIG_DIR at home/claude
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(OTHER_TOOLS, indent=4), encoding="utf-8")
    return path


def test_install_keeps_other_tools_hooks_and_is_idempotent(user_settings: Path) -> None:
    original = user_settings.read_text(encoding="utf-8")
    first = invoke_hooks("install")
    assert first.exit_code == 0
    after_first = user_settings.read_text(encoding="utf-8")
    data = json.loads(after_first)
    assert our_commands(data) == sorted(f"recallbench hook {e}" for e in hooks.EVENTS)
    assert data["hooks"]["Stop"][0] == OTHER_TOOLS["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"] == OTHER_TOOLS["hooks"]["PreToolUse"]
    assert data["model"] == "opus"
    assert data["permissions"] == {"allow": ["Bash(git status)"]}
    assert data["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": "recallbench hook SessionEnd", "timeout": 30}]}
    ]
    backup = user_settings.with_name("settings.json" + hooks.BACKUP_SUFFIX)
    assert backup.read_text(encoding="utf-8") == original

    second = invoke_hooks("install")
    assert second.exit_code == 0
    assert "already installed" in second.output
    assert user_settings.read_text(encoding="utf-8") == after_first


def test_uninstall_removes_exactly_ours(user_settings: Path) -> None:
    invoke_hooks("install")
    assert len(our_commands(json.loads(user_settings.read_text(encoding="utf-8")))) == 5
    result = invoke_hooks("uninstall")
    assert result.exit_code == 0
    assert json.loads(user_settings.read_text(encoding="utf-8")) == OTHER_TOOLS
    again = invoke_hooks("uninstall")
    assert "were not present" in again.output
    assert json.loads(user_settings.read_text(encoding="utf-8")) == OTHER_TOOLS


def test_install_prints_the_mcp_registration_line(user_settings: Path) -> None:
    result = invoke_hooks("install")
    assert "claude mcp add recallbench -- recallbench serve" in result.output


def test_dry_run_prints_the_resulting_json_and_writes_nothing(user_settings: Path) -> None:
    before = user_settings.read_text(encoding="utf-8")
    result = invoke_hooks("install", "--dry-run")
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert our_commands(printed) == sorted(f"recallbench hook {e}" for e in hooks.EVENTS)
    assert user_settings.read_text(encoding="utf-8") == before
    assert not user_settings.with_name("settings.json" + hooks.BACKUP_SUFFIX).exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"hooks": {', "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"hooks": []}', '"hooks"'),
        ('{"hooks": {"Stop": {"hooks": []}}}', '"hooks.Stop"'),
    ],
)
def test_malformed_settings_give_a_clear_error_and_stay_untouched(
    home: Path, content: str, fragment: str
) -> None:
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    for command in ("install", "uninstall"):
        result = invoke_hooks(command)
        assert result.exit_code == 1
        assert fragment in result.output
        assert "nothing was changed" in result.output
        assert path.read_text(encoding="utf-8") == content
    assert not path.with_name("settings.json" + hooks.BACKUP_SUFFIX).exists()


def test_install_creates_a_missing_user_settings_file_under_claude_config_dir(home: Path) -> None:
    path = home / "claude" / "settings.json"
    assert not path.exists()
    invoke_hooks("install")
    assert our_commands(json.loads(path.read_text(encoding="utf-8"))) == sorted(
        f"recallbench hook {e}" for e in hooks.EVENTS
    )


def test_project_scope_writes_the_projects_dot_claude_settings(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    result = invoke_hooks("install", "--scope", "project", env={"CLAUDE_PROJECT_DIR": str(project)})
    assert result.exit_code == 0
    assert len(our_commands(json.loads((project / ".claude" / "settings.json").read_text()))) == 5
    assert not (home / "claude" / "settings.json").exists()


def test_removing_ours_keeps_a_group_that_also_holds_another_tools_hook() -> None:
    shared = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "recallbench hook Stop"},
                        {"type": "command", "command": "other-tool stop"},
                    ]
                }
            ]
        }
    }
    assert hooks.without_our_hooks(shared) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool stop"}]}]}
    }
    # positive control: the entry with our prefix was the one removed
    assert hooks.is_ours(shared["hooks"]["Stop"][0]["hooks"][0])
    assert not hooks.is_ours({"command": "recallbenchx hook Stop"})


# ================================================================================================
# hook handlers
# ================================================================================================


def test_stop_imports_the_transcript_and_prints_nothing(tmp_path: Path, home: Path) -> None:
    transcript = write_corpus(tmp_path / "projects")[SID_A1]
    assert not (home / "memory.db").exists()
    result = run("Stop", json.dumps(sample("stop", transcript_path=str(transcript), cwd=ALPHA)))
    assert result.exit_code == 0
    assert result.stdout == ""
    memory = Memory(home / "memory.db")
    assert memory.status()["chunks"] == 1
    assert memory.status()["vectors"] == 0  # text and FTS only; the server fills vectors


@pytest.mark.parametrize("event", ["SessionEnd", "PreCompact"])
def test_session_end_and_precompact_import_only_the_new_lines(
    tmp_path: Path, home: Path, event: str
) -> None:
    transcript = write_corpus(tmp_path / "projects")[SID_A2]
    stdin = json.dumps(sample("stop", transcript_path=str(transcript), cwd=ALPHA))
    run("Stop", stdin)
    append_jsonl(
        transcript,
        chat_session(SID_A2, ALPHA, [("Add a changelog entry for the rename", "Added.")], 40)[:1],
    )
    name = "session_end" if event == "SessionEnd" else "pre_compact"
    result = run(event, json.dumps(sample(name, transcript_path=str(transcript), cwd=ALPHA)))
    assert result.exit_code == 0
    assert result.stdout == ""
    memory = Memory(home / "memory.db")
    from engine.scope import Scope

    assert [s.chunk_id for s in memory.lexical("changelog", Scope.of(ALPHA), 5)] != []
    assert "imported 1 file(s), 1 message(s)" in log_text(home)


def test_subagent_transcripts_beside_the_session_are_imported_too(
    tmp_path: Path, home: Path
) -> None:
    transcript = write_corpus(tmp_path / "projects")[SID_A2]
    agent = transcript.with_suffix("") / "subagents" / "agent-abc123.jsonl"
    lines = chat_session(SID_A2, ALPHA, [("Survey the loader call sites", "Found seven.")], 50)
    for line in lines:
        line["isSidechain"] = True
        line["agentId"] = "abc123"
    write_jsonl(agent, lines)
    run("Stop", json.dumps(sample("stop", transcript_path=str(transcript), cwd=ALPHA)))
    from engine.scope import Scope

    memory = Memory(home / "memory.db")
    assert memory.lexical("seven", Scope.of(ALPHA), 5) != []
    assert memory.lexical("renamed", Scope.of(ALPHA), 5) != []


@dataclass(frozen=True)
class Fault:
    name: str
    event: str
    stdin: bytes


def _faults(transcripts: dict[str, Path], tmp_path: Path) -> list[Fault]:
    corrupt = tmp_path / "corrupt" / f"{SID_A1}.jsonl"
    good = transcripts[SID_A1].read_bytes().splitlines()
    write_jsonl(
        corrupt, [good[0], b'{"type": "user", "message": {', b"\xff\xfe garbage", *good[1:]]
    )
    fault_list = [
        Fault("malformed stdin", e, b'{"session_id": "x", "prompt": ') for e in hooks.EVENTS
    ]
    fault_list += [Fault("empty stdin", e, b"") for e in hooks.EVENTS]
    fault_list += [Fault("stdin not an object", e, b"[1, 2, 3]") for e in hooks.EVENTS]
    fault_list += [
        Fault(
            "missing transcript",
            e,
            json.dumps(sample("stop", transcript_path=str(tmp_path / "nope.jsonl"))).encode(),
        )
        for e in sorted(hooks.IMPORT_EVENTS)
    ]
    fault_list.append(
        Fault(
            "corrupt transcript line",
            "Stop",
            json.dumps(sample("stop", transcript_path=str(corrupt), cwd=ALPHA)).encode(),
        )
    )
    fault_list.append(Fault("unknown event", "Notification", json.dumps(sample("stop")).encode()))
    return fault_list


def test_every_injected_fault_exits_zero_and_prints_nothing(tmp_path: Path, home: Path) -> None:
    transcripts = write_corpus(tmp_path / "projects")
    for fault in _faults(transcripts, tmp_path):
        result = run(fault.event, fault.stdin)
        assert (fault.name, fault.event, result.exit_code, result.stdout) == (
            fault.name,
            fault.event,
            0,
            "",
        )
    log = log_text(home)
    assert "hook stdin is not JSON" in log
    assert "hook stdin was empty" in log
    assert "must be a JSON object" in log
    assert "does not exist" in log
    assert "unknown hook event 'Notification'" in log
    # positive control: the corrupt transcript's good lines were still imported
    from engine.scope import Scope

    memory = Memory(home / "memory.db")
    assert memory.lexical("decorator swallowed", Scope.of(ALPHA), 5) != []


def test_a_missing_database_gets_nothing_and_is_not_created(home: Path) -> None:
    for name, event in (
        ("user_prompt_submit", "UserPromptSubmit"),
        ("session_start", "SessionStart"),
    ):
        result = run(event, json.dumps(sample(name, cwd=ALPHA)))
        assert (result.exit_code, result.stdout) == (0, "")
    assert not (home / "memory.db").exists()
    assert "no database at" in log_text(home)


def test_without_a_server_the_prompt_hook_reads_lexically_and_says_so(
    corpus: Path, home: Path
) -> None:
    result = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA)))
    assert result.exit_code == 0
    assert "The retry decorator swallowed the timeout error." in result.stdout
    assert "lexical read only" in log_text(home)


def serving(home: Path, emb: HashEmbedder, spec: str = "rrf") -> EmbedService:
    """The socket service as `recallbench serve` runs it: embeddings and the prompt search."""
    memory = Memory(home / "memory.db", emb)
    return EmbedService(
        emb, socket_path(home, emb.id), search=hooks.prompt_search_handler(memory, spec)
    )


def test_with_a_server_the_prompt_hook_gets_the_servers_arm_hits(corpus: Path, home: Path) -> None:
    emb = HashEmbedder()
    with serving(home, emb):
        result = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA)))
    assert result.exit_code == 0
    assert "The retry decorator swallowed the timeout error." in result.stdout
    log = log_text(home)
    assert "answered by the server at" in log
    assert "arm rrf(min_score=0.2,pool=20,rrf_k=60) gave" in log
    assert "lexical read only" not in log


def test_the_server_answers_the_prompt_search_scoped_with_cosines(corpus: Path, home: Path) -> None:
    emb = HashEmbedder()
    handle = hooks.prompt_search_handler(Memory(home / "memory.db", emb), "rrf")
    request = {"text": "flaky retry test", "projects": [ALPHA], "k": 5, "now": NOW.isoformat()}
    answer = handle(request)
    hits = answer["hits"]
    assert hits  # positive control: alpha holds the retry session
    memory = Memory(home / "memory.db", emb)
    alpha = Scope.of(ALPHA)
    assert [r.project for r in memory.chunks([h["chunk_id"] for h in hits], alpha)] == [
        ALPHA
    ] * len(hits)
    for hit in hits:  # the cosine is the prompt's to the stored vector, for the relevance threshold
        stored = memory.vector(hit["chunk_id"])
        assert stored is not None
        assert hit["cosine"] == pytest.approx(float(stored @ emb.embed(["flaky retry test"])[0]))
    beta = handle({**request, "projects": [BETA]})["hits"]
    assert {h["chunk_id"] for h in beta}.isdisjoint(h["chunk_id"] for h in hits)
    for bad, why in (
        ({**request, "k": 0}, "k must be"),
        ({**request, "projects": []}, "projects must be"),
        ({**request, "now": "2026-06-01T12:00:00"}, "UTC offset"),
    ):
        with pytest.raises(ValueError, match=why):
            handle(bad)


def test_a_prompt_under_15_characters_gets_nothing_and_a_longer_one_gets_context(
    corpus: Path,
) -> None:
    short = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit_short", cwd=ALPHA)))
    assert len("flaky retry?") == 12
    assert (short.exit_code, short.stdout) == (0, "")
    exactly = run(
        "UserPromptSubmit",
        json.dumps(sample("user_prompt_submit", prompt="flaky retry CI!", cwd=ALPHA)),
    )
    assert len("flaky retry CI!") == 15
    assert exactly.stdout.startswith(CONTEXT_OPEN)


def test_injected_context_is_wrapped_in_the_sentinels(corpus: Path) -> None:
    out = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA))).stdout
    assert out.startswith(CONTEXT_OPEN + "\n")
    assert out.endswith(CONTEXT_CLOSE)
    assert out.count(CONTEXT_OPEN) == 1
    assert out.count(CONTEXT_CLOSE) == 1


def test_injected_context_stays_within_the_2000_character_budget(
    tmp_path: Path, home: Path
) -> None:
    filler = "the flaky retry test failed again because the retry timeout was wrong; " * 11
    turns = [(f"Turn {n}: {filler}", f"Answer {n}: {filler}") for n in range(8)]
    root = tmp_path / "projects"
    write_jsonl(root / "p" / f"{SID_A1}.jsonl", chat_session(SID_A1, ALPHA, turns))
    import_corpus(home / "memory.db", root).close()
    assert len(filler) == 71 * 11  # one message per ~900-character chunk
    out = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA))).stdout
    assert len(out) <= 2000
    assert out.count("\n[") >= 2  # several whole entries fit before the budget ran out
    assert out.endswith(CONTEXT_CLOSE)


def test_prompt_context_is_scoped_to_the_current_project(corpus: Path) -> None:
    about_beta = "when does the postgres backup cron job run"
    from_alpha = run(
        "UserPromptSubmit",
        json.dumps(sample("user_prompt_submit", prompt=about_beta, cwd=ALPHA)),
    )
    from_beta = run(
        "UserPromptSubmit",
        json.dumps(sample("user_prompt_submit", prompt=about_beta, cwd=BETA)),
    )
    assert "postgres" not in from_alpha.stdout
    assert "Backups of the retry queue run nightly at 3am." in from_beta.stdout


def test_claude_project_dir_wins_over_the_hooks_cwd(corpus: Path) -> None:
    stdin = json.dumps(sample("user_prompt_submit", cwd="/somewhere/else"))
    assert run("UserPromptSubmit", stdin).stdout == ""
    inside = run("UserPromptSubmit", stdin, env={"CLAUDE_PROJECT_DIR": ALPHA + "/src/deep"})
    assert "The retry decorator swallowed the timeout error." in inside.stdout


def test_weakly_related_hits_are_not_injected(corpus: Path, home: Path) -> None:
    # "retry" is in an alpha chunk, but it is 1 of 5 content words and there is no query vector.
    weak = "retry the nightly deployment for staging servers"
    result = run(
        "UserPromptSubmit", json.dumps(sample("user_prompt_submit", prompt=weak, cwd=ALPHA))
    )
    assert result.stdout == ""
    # both alpha chunks matched a word ("the" of "Rename the config"), neither was relevant enough
    assert "2 hit(s), 2 from other sessions, 0 relevant" in log_text(home)
    strong = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA)))
    assert "retry decorator" in strong.stdout


def test_hits_from_the_running_session_are_not_injected(corpus: Path) -> None:
    own = json.dumps(sample("user_prompt_submit", session_id=SID_A1, cwd=ALPHA))
    assert run("UserPromptSubmit", own).stdout == ""
    other = json.dumps(sample("user_prompt_submit", cwd=ALPHA))
    assert "retry decorator" in run("UserPromptSubmit", other).stdout


def test_session_start_briefs_recent_sessions_and_the_search_tool(corpus: Path) -> None:
    result = run("SessionStart", json.dumps(sample("session_start", cwd=ALPHA)))
    out = result.stdout
    assert result.exit_code == 0
    assert out.startswith(CONTEXT_OPEN + "\n")
    assert out.endswith(CONTEXT_CLOSE)
    assert "session aaaaaaaa" in out
    assert out.index("Rename the config loader") < out.index("Why does the flaky retry test")
    assert "search_memory" in out
    assert "postgres" not in out  # beta's session is another project
    beta = run("SessionStart", json.dumps(sample("session_start", cwd=BETA))).stdout
    assert "postgres" in beta


def test_session_start_in_an_unknown_project_prints_nothing(corpus: Path, home: Path) -> None:
    result = run("SessionStart", json.dumps(sample("session_start", cwd="/elsewhere")))
    assert (result.exit_code, result.stdout) == (0, "")
    assert "no sessions recorded for /elsewhere" in log_text(home)


@pytest.mark.parametrize("name", sorted(p.stem for p in INPUTS.glob("*.json")))
def test_every_recorded_sample_exits_zero_through_the_command(
    name: str, corpus: Path, home: Path
) -> None:
    data = sample(name, transcript_path=str(corpus / "-home-dev-alpha" / f"{SID_A1}.jsonl"))
    event = data["hook_event_name"]
    result = run(event, json.dumps(data))
    assert result.exit_code == 0
    if event in hooks.IMPORT_EVENTS:
        assert result.stdout == ""


def test_resolve_project_picks_the_longest_recorded_parent() -> None:
    recorded = ["/w/app", "/w/app/sub", "/w/apple"]
    assert resolve_project(recorded, Path("/w/app/sub/deep")) == "/w/app/sub"
    assert resolve_project(recorded, Path("/w/app/other")) == "/w/app"
    assert resolve_project(recorded, Path("/w/apple")) == "/w/apple"
    assert resolve_project(recorded, Path("/w/ap")) is None


def test_inject_settings_refuse_a_budget_that_cannot_hold_one_entry() -> None:
    with pytest.raises(ValueError, match="budget_chars=100"):
        hooks.InjectSettings(budget_chars=100)
    assert hooks.InjectSettings(budget_chars=2000).budget_chars == 2000


def test_the_hook_process_never_imports_torch(corpus: Path, home: Path) -> None:
    """Run as Claude Code does (a fresh process, the default MiniLM embedder configured) and list imports."""

    class MiniLMStandIn(HashEmbedder):
        """Hash vectors under MiniLM's id and size, so the hook takes the socket + arm path."""

        def __init__(self) -> None:
            super().__init__(dim=384)

        @property
        def id(self) -> str:
            return "minilm-l6-v2"

    stand_in = MiniLMStandIn()
    memory = Memory(home / "memory.db", stand_in)
    memory.embed_pending()
    memory.close()
    search = hooks.prompt_search_handler(Memory(home / "memory.db", stand_in), "rrf")
    with EmbedService(stand_in, socket_path(home, stand_in.id), search=search):
        proc, imported = hook_process_imports()
    assert proc.returncode == 0
    assert "The retry decorator swallowed the timeout error." in proc.stdout
    # positive controls: the listing is real and the server's arm answered
    assert {"engine.reads", "recallbench.embed_service", "sqlite3"} <= imported
    assert "arm rrf(min_score=0.2,pool=20,rrf_k=60) gave" in log_text(home)
    # the arm ran in the server: the hook needs neither numpy nor the vector engine
    assert heavy_modules(imported) == set()


def test_the_lexical_prompt_path_imports_neither_numpy_nor_the_vector_engine(
    corpus: Path, home: Path
) -> None:
    """Without a server the hook answers from FTS5 alone, through the console script's short path."""
    proc, imported = hook_process_imports()
    assert proc.returncode == 0
    # positive control: context was injected from the lexical read, and the import listing is real
    assert "The retry decorator swallowed the timeout error." in proc.stdout
    assert "lexical read only" in log_text(home)
    assert {"engine.reads", "engine.store", "recallbench.hooks", "sqlite3"} <= imported
    assert heavy_modules(imported) == set()


def hook_process_imports() -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `recallbench hook UserPromptSubmit` as Claude Code does (a fresh process, MiniLM configured)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "RECALLBENCH_EMBEDDER": "minilm",
        "CLAUDE_PROJECT_DIR": ALPHA,
    }
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ENTRY_HOOK],
        input=json.dumps(sample("user_prompt_submit")),
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    imported = {
        line.split("|")[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    return proc, imported


def heavy_modules(imported: set[str]) -> set[str]:
    """What the prompt hook must never load: the model, numpy, the vector engine, the CLI stack."""
    heavy_roots = {"torch", "sentence_transformers", "numpy", "hnswlib", "click", "mcp", "arms"}
    return {
        m
        for m in imported
        if m.split(".")[0] in heavy_roots | {"harness"} or m in {"engine.memory", "engine.vectors"}
    }


def test_a_server_that_answers_too_late_or_only_embeddings_leaves_the_lexical_read(
    corpus: Path, home: Path
) -> None:
    emb = HashEmbedder()
    stdin = json.dumps(sample("user_prompt_submit", cwd=ALPHA))
    fast = hooks.prompt_search_handler(Memory(home / "memory.db", emb), "rrf")

    def slow(request: Any) -> Any:
        time.sleep(1.5)  # over the hook's 1 s budget
        return fast(request)

    with EmbedService(emb, socket_path(home, emb.id), search=slow):
        late = run("UserPromptSubmit", stdin)
    with EmbedService(emb, socket_path(home, emb.id)):  # an embedding-only service
        embeddings_only = run("UserPromptSubmit", stdin)
    for result in (late, embeddings_only):
        assert result.exit_code == 0
        assert "decorator swallowed" in result.stdout  # the lexical read still answered
    assert log_text(home).count("lexical read only") == 2
    assert "gave" not in log_text(home)
    with serving(home, emb):  # positive control: a prompt server answers through the same socket
        served = run("UserPromptSubmit", stdin)
    assert "decorator swallowed" in served.stdout
    assert "arm rrf(min_score=0.2,pool=20,rrf_k=60) gave" in log_text(home)


def test_injected_context_is_scrubbed_when_the_session_is_imported(
    corpus: Path, tmp_path: Path, home: Path
) -> None:
    injected = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA))).stdout
    assert "decorator swallowed" in injected
    echo = tmp_path / "echo" / f"{CURRENT}.jsonl"
    write_jsonl(
        echo,
        chat_session(
            CURRENT, ALPHA, [(injected + "\nNow bump the pinned zebra version", "Bumped.")]
        ),
    )
    run("Stop", json.dumps(sample("stop", transcript_path=str(echo), cwd=ALPHA)))
    from engine.scope import Scope

    memory = Memory(home / "memory.db")
    sessions = {
        r.session_id
        for r in memory.chunks(
            [s.chunk_id for s in memory.lexical("decorator swallowed", Scope.of(ALPHA), 10)],
            Scope.of(ALPHA),
        )
    }
    assert sessions == {SID_A1}  # the echo session did not store the injected text
    assert memory.lexical("zebra", Scope.of(ALPHA), 10) != []  # but did store the prompt

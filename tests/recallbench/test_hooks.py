"""The `recallbench hook EVENT` handlers, and the server's side of the prompt hook's search."""

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
from engine.scope import Scope
from recallbench import hooks
from recallbench.inject import InjectSettings
from recallbench.prompt_search import PromptSearch
from recallbench.same_text import nearly_same
from recallbench.search_service import SearchService, socket_path
from recallbench.serve_cli import hook_command
from tests.engine.fixtures_transcripts import append_jsonl, write_jsonl
from tests.recallbench.corpus import (
    ALPHA,
    BETA,
    SID_A1,
    SID_A2,
    chat_session,
    import_corpus,
    write_corpus,
)
from tests.recallbench.scope_corpus import A_TEXT, B_TEXT, PROMPT, two_projects

REPO = Path(__file__).resolve().parents[2]
INPUTS = Path(__file__).resolve().parent / "hook_inputs"
CURRENT = "c0ffee00-0000-4000-8000-00000000c0de"  # the session of the recorded hook inputs
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# The installed `recallbench hook UserPromptSubmit` command: the console script's short path.
ENTRY_HOOK = (
    "import sys; sys.argv = ['recallbench', 'hook', 'UserPromptSubmit']; "
    "from recallbench.entry import main; main()"
)


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
    assert "bytes is not JSON (error at line 1 column" in log
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


def serving(home: Path, emb: HashEmbedder, spec: str = "rrf") -> SearchService:
    """The socket service as `recallbench serve` runs it: embeddings and the prompt search."""
    memory = Memory(home / "memory.db", emb)
    return SearchService(emb, socket_path(home, emb.id), search=PromptSearch(memory, spec))


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
    handle = PromptSearch(Memory(home / "memory.db", emb), "rrf")
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


def test_without_an_event_argument_the_hook_handles_the_event_stdin_names(
    corpus: Path, home: Path
) -> None:
    stdin = sample("user_prompt_submit", cwd=ALPHA)
    named = CliRunner().invoke(hook_command, [], input=json.dumps(stdin), catch_exceptions=False)
    given = run("UserPromptSubmit", json.dumps(stdin))

    assert named.exit_code == 0
    assert named.stdout.startswith(CONTEXT_OPEN)
    assert named.stdout == given.stdout  # the same as with the event on the command line
    assert "UserPromptSubmit INFO: no event given on the command line" in log_text(home)

    stdin["hook_event_name"] = "Notification"  # not one of ours: nothing, and the log says why
    other = CliRunner().invoke(hook_command, [], input=json.dumps(stdin), catch_exceptions=False)

    assert (other.exit_code, other.stdout) == (0, "")
    assert "no hook event given, and stdin's hook_event_name is 'Notification'" in log_text(home)


def test_injected_context_is_wrapped_in_the_sentinels(corpus: Path) -> None:
    out = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", cwd=ALPHA))).stdout
    assert out.startswith(CONTEXT_OPEN + "\n")
    assert out.endswith(CONTEXT_CLOSE)
    assert out.count(CONTEXT_OPEN) == 1
    assert out.count(CONTEXT_CLOSE) == 1


def test_injected_context_stays_within_the_2000_character_budget(
    tmp_path: Path, home: Path
) -> None:
    # each turn about another part, so that no two say nearly the same (`recallbench.same_text`)
    parts = ("cache", "queue", "shard", "index", "tiles", "loads", "parse", "fetch")
    fillers = [
        f"the flaky retry {t} test failed again because the {t} timeout was wrong; " * 11
        for t in parts
    ]
    turns = [(f"Turn {n}: {f}", f"Answer {n}: {f}") for n, f in enumerate(fillers)]
    root = tmp_path / "projects"
    write_jsonl(root / "p" / f"{SID_A1}.jsonl", chat_session(SID_A1, ALPHA, turns))
    import_corpus(home / "memory.db", root).close()
    assert {len(f) for f in fillers} == {77 * 11}  # one message per ~900-character chunk
    assert not any(nearly_same(a, b) for a in fillers for b in fillers if a != b)
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
    inside = run("UserPromptSubmit", stdin, env={"CLAUDE_PROJECT_DIR": ALPHA})
    assert "The retry decorator swallowed the timeout error." in inside.stdout


def test_a_sub_folder_gets_its_parents_memory_only_when_the_person_opted_in(
    corpus: Path, home: Path
) -> None:
    stdin = json.dumps(sample("user_prompt_submit", cwd=ALPHA + "/src/deep"))
    assert run("UserPromptSubmit", stdin).stdout == ""
    assert f"no sessions recorded for {ALPHA}/src/deep" in log_text(home)
    (home / "config.toml").write_text("[scope]\ninherit_parent = true\n", encoding="utf-8")
    assert (
        "The retry decorator swallowed the timeout error." in run("UserPromptSubmit", stdin).stdout
    )


@pytest.mark.parametrize("through", ["through_dotdot", "through_link"])
@pytest.mark.parametrize("via", ["CLAUDE_PROJECT_DIR", "cwd"])
def test_a_prompt_in_a_path_through_another_project_gets_the_project_it_reaches(
    tmp_path: Path, home: Path, through: str, via: str
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    for folder, wanted, unwanted in (
        (getattr(projects, through), A_TEXT, B_TEXT),
        (projects.beta, B_TEXT, A_TEXT),  # positive control: B itself gets B's memory
    ):
        cwd = str(folder) if via == "cwd" else "/somewhere/else"
        env = {"CLAUDE_PROJECT_DIR": str(folder)} if via == "CLAUDE_PROJECT_DIR" else {}
        stdin = json.dumps(sample("user_prompt_submit", prompt=PROMPT, cwd=cwd))
        out = run("UserPromptSubmit", stdin, env=env).stdout
        assert wanted in out
        assert unwanted not in out


def test_weakly_related_hits_are_not_injected(corpus: Path, home: Path) -> None:
    # "retry" is in an alpha chunk, but it is 1 of 5 content words and there is no query vector.
    weak = "retry the nightly deployment for staging servers"
    result = run(
        "UserPromptSubmit", json.dumps(sample("user_prompt_submit", prompt=weak, cwd=ALPHA))
    )
    assert result.stdout == ""
    # both alpha chunks matched a word ("the" of "Rename the config"), neither was relevant enough
    assert "2 hit(s), 2 not in context, 0 relevant" in log_text(home)
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


def test_inject_settings_refuse_a_budget_that_cannot_hold_one_entry() -> None:
    with pytest.raises(ValueError, match="budget_chars=100"):
        InjectSettings(budget_chars=100)
    assert InjectSettings(budget_chars=2000).budget_chars == 2000


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
    search = PromptSearch(Memory(home / "memory.db", stand_in), "rrf")
    with SearchService(stand_in, socket_path(home, stand_in.id), search=search):
        proc, imported = hook_process_imports()
    assert proc.returncode == 0
    assert "The retry decorator swallowed the timeout error." in proc.stdout
    # positive controls: the listing is real and the server's arm answered
    assert {"engine.text_reads", "recallbench.search_service", "sqlite3"} <= imported
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
    assert {"engine.text_reads", "recallbench.hooks", "recallbench.present", "sqlite3"} <= imported
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
    fast = PromptSearch(Memory(home / "memory.db", emb), "rrf")

    def slow(request: Any) -> Any:
        time.sleep(1.5)  # over the hook's 1 s budget
        return fast(request)

    with SearchService(emb, socket_path(home, emb.id), search=slow):
        late = run("UserPromptSubmit", stdin)
    with SearchService(emb, socket_path(home, emb.id)):  # an embedding-only service
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

"""The command line as a user types it (import, status, search, arms, roster, protocol)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import click
import pytest
from click.testing import CliRunner
from mcp.client import Client

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.cli import main
from recallbench.mcp_server import build_server
from recallbench.status_notes import index_note
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.recallbench.pinning import pin_embedder

ROOT = Path(__file__).resolve().parents[2]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path, Path]:
    alpha = tmp_path / "work" / "alpha"
    beta = tmp_path / "work" / "beta"
    alpha.mkdir(parents=True)
    beta.mkdir(parents=True)
    root = tmp_path / "claude" / "projects"
    write_jsonl(
        root / "a" / "55555555-0000-4000-8000-000000000001.jsonl",
        simple_session(
            "Why does the retry test flake?",
            session_id="55555555-0000-4000-8000-000000000001",
            cwd=str(alpha),
            answer="The retry loop used a wall clock.",
            prefix="a-",
        ),
    )
    write_jsonl(
        root / "b" / "55555555-0000-4000-8000-000000000002.jsonl",
        simple_session(
            "Rotate the beta signing key",
            session_id="55555555-0000-4000-8000-000000000002",
            cwd=str(beta),
            answer="Rotated the retry signing key for beta.",
            prefix="b-",
        ),
    )
    return root, alpha, beta


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_import_prints_counts_and_status_shows_them(projects: tuple[Path, Path, Path]) -> None:
    root, _, _ = projects
    out = invoke("import", str(root))
    assert "files: 2 seen, 2 imported, 0 unchanged" in out
    assert "skipped: none" in out
    status = invoke("status")
    assert "sessions: 2" in status
    assert "chunks: 2" in status
    assert "vectors: 2 (hash-256-v1)" in status
    # each chunk text splits into 3 sentences of 20+ characters: the prompt, "[Bash result: pytest
    # -q]" and the answer ("Let me run it.", "[Bash: pytest -q]" and "1 failed" are too short)
    assert "sentence vectors of your prompts: 6" in status
    assert "index: missing (not needed: up to 256 vectors are scanned exactly)" in status
    again = invoke("import", str(root))
    assert "0 imported, 2 unchanged" in again


@pytest.mark.parametrize(
    ("state", "vectors", "note"),
    [
        ("missing", 257, " (the first search by meaning builds it from the stored vectors)"),
        ("stale", 257, " (the first search by meaning builds it from the stored vectors)"),
        ("missing", 256, " (not needed: up to 256 vectors are scanned exactly)"),
        ("stale", 1, " (not needed: up to 256 vectors are scanned exactly)"),
        ("missing", 0, ""),  # nothing to index
        ("current", 257, ""),
    ],
)
def test_status_says_what_a_missing_or_stale_index_means(
    state: str, vectors: int, note: str
) -> None:
    assert index_note({"index": state, "vectors": vectors}) == note


def test_import_defaults_to_claude_config_dir_projects(projects: tuple[Path, Path, Path]) -> None:
    # CLAUDE_CONFIG_DIR points at <home>/claude in the autouse fixture; put the tree there
    import os
    import shutil

    root, _, _ = projects
    target = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    shutil.copytree(root, target)
    assert "files: 2 seen, 2 imported" in invoke("import")


def test_import_of_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["import", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "no such file or folder" in result.output


def test_search_defaults_to_the_current_project(
    projects: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, alpha, beta = projects
    invoke("import", str(root))
    monkeypatch.chdir(alpha)
    data = json.loads(invoke("search", "retry signing", "--json"))
    assert {h["project"] for h in data["hits"]} == {str(alpha)}
    # positive control: asking for every project finds the beta session too
    both = json.loads(invoke("search", "retry signing", "--all-projects", "--json"))
    assert {h["project"] for h in both["hits"]} == {str(alpha), str(beta)}
    only_beta = json.loads(invoke("search", "retry signing", "--project", str(beta), "--json"))
    assert {h["project"] for h in only_beta["hits"]} == {str(beta)}


def test_search_outside_any_project_asks_for_a_scope(
    projects: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, _ = projects
    invoke("import", str(root))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["search", "retry"])
    assert result.exit_code == 2
    assert "--all-projects" in result.output


def test_search_shows_rank_and_channel_who_when_session_project_and_a_snippet(
    projects: tuple[Path, Path, Path],
) -> None:
    root, alpha, _ = projects
    invoke("import", str(root))
    out = invoke(
        "search", "--arm", "walk", "--project", str(alpha), "why does the retry test flake"
    )
    assert out.startswith("arm: walk")
    first = out.splitlines()[1]
    assert first.startswith("#1 via ")  # a rank and a channel a person reads, not a raw score
    assert " · User · 2026-03-01 10:00 · " in first
    assert "session 55555555-0000-4000-8000-000000000001" in first
    assert f" · {alpha} · chunk " in first
    # the id a person passes to `show`: it prints the same chunk whole
    chunk = first.rsplit(" · chunk ", 1)[1]
    assert (
        invoke("show", chunk, "--project", str(alpha))
        .splitlines()[0]
        .startswith(f"--- chunk {chunk} · User · 2026-03-01 10:00 · ")
    )
    assert "retry" in out.splitlines()[2]
    fused = invoke("search", "--project", str(alpha), "retry flake")
    # the default arm (rrf): the channels that found the hit, never the fused value (about 0.03)
    assert fused.splitlines()[1].startswith("#1 via rrf (fts+vector) · ")
    assert "0.03" not in fused.splitlines()[1]


def test_search_json_rows_carry_the_same_fields_as_the_mcp_tool(
    projects: tuple[Path, Path, Path],
) -> None:
    from recallbench.mcp_tools import SearchHit

    root, alpha, _ = projects
    invoke("import", str(root))
    data = json.loads(invoke("search", "retry flake", "--project", str(alpha), "--json"))
    top = data["hits"][0]
    assert list(top) == list(SearchHit.model_fields)  # one set of names, in one order
    assert top["rank"] == 1
    assert top["session_id"] == "55555555-0000-4000-8000-000000000001"
    assert top["author"] == "User"
    assert "Why does the retry test flake?" in top["text"]  # the whole chunk, not a snippet


def test_hostile_fts_syntax_in_a_cli_query_is_plain_words(
    projects: tuple[Path, Path, Path],
) -> None:
    root, _, _ = projects
    invoke("import", str(root))
    data = json.loads(
        invoke("search", '"retry* NEAR( col:flake AND', "--arm", "fts", "--all-projects", "--json")
    )
    assert data["hits"]  # the plain words still match


def test_a_query_that_starts_with_a_dash_is_told_to_follow_double_dash(
    projects: tuple[Path, Path, Path],
) -> None:
    root, _, _ = projects
    invoke("import", str(root))
    flag = CliRunner().invoke(
        main, ["search", "--all-projects", "--no-verify-flake"], prog_name="recallbench"
    )
    assert flag.exit_code == 2
    assert flag.output.splitlines()[-1] == (
        "Error: No such option '--no-verify-flake'. Text that starts with '-' goes after `--`, "
        "as in: recallbench search -- '--no-verify-flake'"
    )
    # a near miss of a real option is a typo: Click's suggestion alone
    typo = CliRunner().invoke(main, ["search", "--all-projects", "--limt", "3", "retry"])
    assert typo.exit_code == 2
    assert typo.output.splitlines()[-1] == "Error: No such option '--limt'. Did you mean '--limit'?"
    # control: after `--` the text is the query
    data = json.loads(invoke("search", "--all-projects", "--json", "--", "--retry flake"))
    assert data["hits"]


def test_unknown_arm_lists_the_registered_ones(projects: tuple[Path, Path, Path]) -> None:
    root, _, _ = projects
    invoke("import", str(root))
    result = CliRunner().invoke(main, ["search", "x", "--arm", "magic", "--all-projects"])
    assert result.exit_code == 2
    assert "unknown arm 'magic'" in result.output
    assert "rrf" in result.output


def test_a_bad_arm_spec_is_named_before_the_scope_is_resolved(
    projects: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, _ = projects
    invoke("import", str(root))
    monkeypatch.chdir(tmp_path)  # a folder no session was recorded in
    result = CliRunner().invoke(main, ["search", "x", "--arm", "rrf(poool=3)"])
    assert result.exit_code == 2
    assert "rrf: no parameter 'poool'" in result.output
    assert "belongs to no project" not in result.output
    # Control: a valid spec from the same folder gets as far as the scope.
    result = CliRunner().invoke(main, ["search", "x", "--arm", "rrf(pool=3)"])
    assert result.exit_code == 2
    assert "belongs to no project" in result.output


def test_arms_lists_each_arm_with_its_canonical_default_spec_and_description() -> None:
    from arms.registry import entry, names

    lines = invoke("arms").splitlines()
    fields = [line.split(maxsplit=2) for line in lines]
    assert [name for name, _, _ in fields] == names()  # every registered arm, by name
    assert len(fields) == 11
    assert ["rrf", "rrf(min_score=0.2,pool=20,rrf_k=60)", entry("rrf").description] in fields
    for name, spec, description in fields:
        assert spec.startswith(f"{name}(")
        assert description == entry(name).description
        assert description  # positive control: a description was printed


def test_roster_seal_and_verify_name_the_changed_file(tmp_path: Path) -> None:
    draft = tmp_path / "d.json"
    draft.write_text(
        json.dumps(
            {
                "name": "d",
                "unit": "session",
                "description": "",
                "questions": [
                    {
                        "qid": "q1",
                        "text": "what changed",
                        "scope": "*",
                        "category": "x",
                        "tags": {},
                        "gold": {"relevant": {"s1": 1}, "forbidden": [], "control": None},
                    }
                ],
            }
        )
    )
    sealed = tmp_path / "sealed" / "d"
    assert "sha256sum -c SEAL.sha256" in invoke("roster", "seal", str(draft), "--out", str(sealed))
    assert invoke("roster", "verify", str(sealed)).startswith("OK:")
    key = sealed / "key.json"
    key.write_bytes(key.read_bytes().replace(b"s1", b"s2"))
    result = CliRunner().invoke(main, ["roster", "verify", str(sealed)])
    assert result.exit_code == 1
    assert "key.json" in result.output


# --- item: empty queries, unknown projects ---------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_a_blank_query_is_refused_by_the_cli_and_the_mcp_tool(
    projects: tuple[Path, Path, Path], query: str
) -> None:
    root, alpha, _ = projects
    invoke("import", str(root))
    result = CliRunner().invoke(main, ["search", query, "--all-projects"])
    assert result.exit_code == 2
    assert "the query is empty" in result.output
    assert "hits:" not in result.output
    assert "hits: 2" in invoke("search", "retry", "--all-projects")  # control: a word finds hits

    async def ask(text: str) -> tuple[bool, str]:
        with anyio.fail_after(60):
            server = build_server(
                Memory(Path(invoke_db()), HashEmbedder()), "rrf", project_dir=alpha
            )
            async with Client(server, mode="legacy") as client:
                answer = await client.call_tool("search_memory", {"query": text})
                return answer.is_error, str(answer.content)

    # "" is refused by the tool's schema already; a blank one by the tool, which says why.
    refused, message = anyio.run(ask, query or " ")
    assert refused
    assert "the query is empty" in message
    assert anyio.run(ask, "retry")[0] is False  # control


def invoke_db() -> str:
    import os

    return str(Path(os.environ["RECALLBENCH_HOME"]) / "memory.db")


def test_a_project_with_no_sessions_is_warned_about_on_stderr(
    projects: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, alpha, _ = projects
    invoke("import", str(root))
    typo = str(tmp_path / "work" / "alpah")
    result = CliRunner().invoke(main, ["search", "retry", "--project", typo])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"warning: no sessions are recorded for project {typo}; "
        "`recallbench status` counts the projects that are",
        "nothing found (`--all-projects` searches every project)",
    ]
    known = CliRunner().invoke(main, ["search", "retry", "--project", str(alpha)])
    assert known.stderr == ""  # control: a recorded project draws no warning
    assert "hits: 1" in known.stdout


# --- item: the command line's help, --db, --key, next lines, closed pipes -----------------------------


def all_commands(
    command: click.Command = main, path: str = "recallbench"
) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):  # lazily imported commands included
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from all_commands(sub, f"{path} {name}")


def test_no_command_summary_is_cut_off_in_any_groups_help() -> None:
    groups = [(p, c) for p, c in all_commands() if isinstance(c, click.Group)]
    # recallbench, protocol, roster, corpus, bench, hooks, config, arm, vectors, models, projects
    assert len(groups) == 11
    for path, _ in groups:
        out = invoke(*path.split()[1:], "--help")
        listing = out.split("Commands:", 1)[1]
        assert "..." not in listing, (path, listing)
    top = " ".join(invoke("--help").split())
    # control: a summary longer than a line is there whole, wrapped
    assert "Ship the arm that RESULTS_DIR's pre-registered ship rule chose (written to" in top
    assert "read by `search`, `serve` and the hooks). show" in top


def test_every_command_has_an_example_and_every_option_has_help() -> None:
    commands = list(all_commands())
    assert len(commands) > 20
    for path, command in commands[1:]:
        assert command.epilog, path
        assert "Example" in command.epilog, path
        out = invoke(*path.split()[1:], "--help")
        assert command.epilog.splitlines()[-1] in out, path  # the example is printed
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{path} {param.opts[0]} has no help"


def test_db_is_accepted_before_and_after_the_command(
    projects: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, _, _ = projects
    db = tmp_path / "elsewhere.db"
    invoke("import", "--db", str(db), str(root))
    after = json.loads(invoke("search", "--db", str(db), "retry", "--all-projects", "--json"))
    before = json.loads(invoke("--db", str(db), "search", "retry", "--all-projects", "--json"))
    assert after == before
    assert len(after["hits"]) == 2
    # control: without --db the default database is used, and it was never created
    result = CliRunner().invoke(main, ["search", "retry", "--all-projects"])
    assert result.exit_code == 1
    assert "no database at" in result.output


def test_key_takes_one_form_everywhere() -> None:
    for path, command in all_commands():
        for param in command.params:
            if isinstance(param, click.Option) and "--key" in param.opts:
                assert param.metavar == "ROSTER=PATH", path
                assert param.multiple, path


def test_instantiates_next_line_is_a_command_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "protocols").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    shutil.copy(
        ROOT / "protocols" / "private-receipts.toml", repo / "protocols" / "private-receipts.toml"
    )
    pin_embedder(repo / "protocols" / "private-receipts.toml")
    corpus = repo / "corpora" / "mine"
    sid = "66666666-0000-4000-8000-000000000001"
    write_jsonl(
        corpus / "projects" / "p" / f"{sid}.jsonl",
        simple_session("commit: fix flaky retry", session_id=sid, cwd="/w/p", answer="done"),
    )
    draft = repo / "rosters" / "mine.json"
    draft.parent.mkdir()
    question = {
        "qid": "q1",
        "text": "fix flaky retry",
        "scope": "*",
        "category": "receipt",
        "tags": {},
        "gold": {"relevant": {sid: 1}, "forbidden": [], "control": None},
    }
    draft.write_text(
        json.dumps(
            {"name": "receipts", "unit": "session", "description": "", "questions": [question]}
        )
    )
    key = tmp_path / "keys" / "mine key.json"  # outside the repository, with a space in its name
    monkeypatch.chdir(repo)
    invoke("roster", "seal", str(draft), "--out", "sealed/mine", "--key-out", str(key))
    out = invoke(
        "protocol", "instantiate", "protocols/private-receipts.toml", "--corpus", str(corpus),
        "--roster", "sealed/mine", "--out", "protocols/mine.toml", "--key", f"receipts={key}",
    )  # fmt: skip
    next_line = out.splitlines()[-1]
    assert next_line.startswith("next: recallbench protocol register ")
    words = shlex.split(next_line.removeprefix("next: "))
    assert words[:4] == ["recallbench", "protocol", "register", "protocols/mine.toml"]
    assert "registered protocols/mine.toml" in invoke(*words[1:])  # the printed command works
    # control: without the key the same register fails (the key is not in the repository)
    (repo / "protocols" / "mine.lock.json").unlink()
    failed = CliRunner().invoke(main, words[1:4])
    assert failed.exit_code == 1


def test_the_command_line_loads_the_slow_ship_command_only_when_it_is_named() -> None:
    probe = (
        "import sys; import recallbench.cli as cli; "
        "print('scipy' in sys.modules, 'ship' in cli.main.commands); "
        "cli.main.get_command(cli.click.Context(cli.main), 'ship'); "
        "print('scipy' in sys.modules, 'ship' in cli.main.commands)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    # starting the command line (e.g. for `search`) does not import the harness's statistics ...
    assert out.stdout.splitlines() == ["False False", "True True"]  # ... naming `ship` does
    listed = invoke("--help")
    assert "ship" in listed  # and help lists it all the same


def test_protocol_verify_of_a_template_without_its_corpus_says_so_without_a_traceback() -> None:
    # protocols/locomo.toml is a template: its corpus folder is made by `recallbench corpus locomo`.
    template = REPO / "protocols" / "locomo.toml"
    assert not (REPO / "corpora" / "locomo").exists()
    result = CliRunner().invoke(main, ["protocol", "verify", str(template)])
    assert result.exit_code == 1
    assert "corpus folder" in result.output
    assert "does not exist" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    # control: a registered protocol whose corpus is generated verifies
    ok = CliRunner().invoke(main, ["protocol", "verify", str(REPO / "protocols" / "arms-v3.toml")])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("OK: ")

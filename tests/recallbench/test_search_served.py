"""`recallbench search` asks a running server first, and answers exactly as it would in-process."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench.cli import main
from recallbench.prompt_search import PromptSearch
from recallbench.search_service import SearchService, socket_path
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

SID_A = "66666666-0000-4000-8000-000000000001"
SID_B = "66666666-0000-4000-8000-000000000002"


@pytest.fixture
def alpha(tmp_path: Path, home: Path) -> Path:
    """Two projects imported into $RECALLBENCH_HOME/memory.db; returns alpha's folder."""
    alpha, beta = tmp_path / "work" / "alpha", tmp_path / "work" / "beta"
    alpha.mkdir(parents=True)
    beta.mkdir(parents=True)
    root = tmp_path / "claude" / "projects"
    write_jsonl(
        root / "a" / f"{SID_A}.jsonl",
        simple_session(
            "Why does the retry test flake?",
            session_id=SID_A,
            cwd=str(alpha),
            answer="The retry loop used a wall clock.",
            prefix="a-",
        ),
    )
    write_jsonl(
        root / "b" / f"{SID_B}.jsonl",
        simple_session(
            "Rotate the beta signing key",
            session_id=SID_B,
            cwd=str(beta),
            answer="Rotated the retry signing key for beta.",
            prefix="b-",
        ),
    )
    assert run("import", str(root)).exit_code == 0
    return alpha


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


class Counting:
    """A search handler that counts the requests it answered."""

    def __init__(self, inner: PromptSearch) -> None:
        self.inner = inner
        self.calls = 0

    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        answer = self.inner(request)  # a refusal raises before it is counted
        self.calls += 1
        return answer


def server(home: Path, spec: str = "rrf", database: Path | None = None) -> tuple[Counting, Any]:
    """A search service over the home's memory, as `recallbench serve` wires it."""
    emb = HashEmbedder()
    db = home / "memory.db"
    handler = Counting(PromptSearch(Memory(db, emb), spec, database=database or db))
    return handler, SearchService(emb, socket_path(home, emb.id), search=handler)


def test_search_is_answered_by_a_running_server_with_the_in_process_hits(
    alpha: Path, home: Path
) -> None:
    query = ("search", "retry flake", "--project", str(alpha), "--json")
    alone = run(*query, "--in-process", "--verbose")
    assert "searching in this process (--in-process was given)" in alone.stderr
    handler, service = server(home)
    with service:
        served = run(*query, "--verbose")
    assert handler.calls == 1  # the server did the search ...
    assert f"answered by the server at {socket_path(home, HashEmbedder().id)}" in served.stderr
    assert "searching in this process" not in served.stderr
    # ... and the person sees the same rows, ranks, scores and channels as in-process
    assert json.loads(served.stdout) == json.loads(alone.stdout)
    hits = json.loads(served.stdout)["hits"]
    assert hits[0]["session_id"] == SID_A
    assert hits[0]["via"] == "rrf (fts+vector)"
    assert {h["project"] for h in hits} == {str(alpha)}


def test_every_project_is_searched_through_the_server_when_asked_for(
    alpha: Path, home: Path
) -> None:
    query = ("search", "retry signing", "--all-projects", "--json")
    handler, service = server(home)
    with service:
        served = run(*query, "--verbose")
    alone = run(*query, "--in-process")
    assert handler.calls == 1
    assert json.loads(served.stdout) == json.loads(alone.stdout)
    assert {h["session_id"] for h in json.loads(served.stdout)["hits"]} == {SID_A, SID_B}


def test_a_server_running_another_arm_is_not_used_for_this_arm(alpha: Path, home: Path) -> None:
    query = ("search", "retry flake", "--project", str(alpha), "--json", "--verbose")
    handler, service = server(home, spec="fts")
    with service:
        fused = run(*query)  # the default arm is rrf; the server runs fts
        lexical = run(*query, "--arm", "fts")
    assert "this server runs arm fts(pool=20,score='rank'), not the arm asked for" in fused.stderr
    assert "searching in this process (the server did not answer)" in fused.stderr
    assert json.loads(fused.stdout)["hits"][0]["via"] == "rrf (fts+vector)"
    # positive control: asked for the server's own arm, the server answers
    assert "answered by the server at" in lexical.stderr
    assert handler.calls == 1  # the refused request was not answered
    assert json.loads(lexical.stdout)["hits"][0]["via"] == "fts"


def test_a_server_of_another_database_is_not_used(alpha: Path, home: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.db"
    handler, service = server(home, database=other)
    query = ("search", "retry flake", "--project", str(alpha), "--json", "--verbose")
    with service:
        result = run(*query)
    assert f"this server serves the database {other.resolve()}, not" in result.stderr
    assert "searching in this process (the server did not answer)" in result.stderr
    assert handler.calls == 0  # asked, and refused
    # positive control: the search itself still answers, in-process
    assert json.loads(result.stdout)["hits"][0]["session_id"] == SID_A


def test_without_a_server_search_says_so_and_searches_in_process(alpha: Path, home: Path) -> None:
    result = run("search", "retry flake", "--project", str(alpha), "--verbose")
    assert result.exit_code == 0
    assert f"no server is listening at {socket_path(home, HashEmbedder().id)}" in result.stderr
    assert "searching in this process (the server did not answer)" in result.stderr
    assert result.stdout.splitlines()[1].startswith("#1 via rrf (fts+vector) · ")


def test_the_server_client_imports_neither_numpy_nor_an_arm() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, importlib; importlib.import_module(sys.argv[1]); "
        "print(sorted(m for m in ('numpy', 'torch', 'arms', 'onnxruntime') if m in sys.modules))"
    )
    root = str(Path(__file__).resolve().parents[2])

    def loaded(module: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", probe, module],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        )
        return out.stdout.strip()

    assert loaded("recallbench.served_search") == "[]"
    # positive control: the server's side of the same request does load the arms and numpy
    assert loaded("recallbench.prompt_search") == "['arms', 'numpy']"


def test_an_in_process_search_builds_its_embedder_for_a_few_texts_and_an_import_does_not(
    alpha: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One query, then the process exits: the ONNX embedder skips prepacking (less memory held).
    from recallbench import config

    asked: list[bool] = []
    built = config.make_embedder

    def recording(name: str | None = None, *, few_texts: bool = False) -> Any:
        asked.append(few_texts)
        return built(name, few_texts=few_texts)

    monkeypatch.setattr(config, "make_embedder", recording)
    monkeypatch.chdir(alpha)

    found = run("search", "retry", "--in-process")
    root = tmp_path / "claude" / "projects"
    imported = run("import", str(root))

    assert found.exit_code == 0
    assert "The retry loop used a wall clock." in found.output
    assert imported.exit_code == 0
    assert asked == [True, False]  # the import (a fresh invocation) is the control

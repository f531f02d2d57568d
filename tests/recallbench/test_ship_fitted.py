"""Shipping a fitted arm: the run's locked model is copied into the home and is the only model it serves.

The toy fitted arm of tests/harness/test_fit.py stands in for a learned one: it answers as BM25 does,
cut to the depth its model holds. Fitted at registration on 3 training examples with seed 2, that
depth is 3 + 2 = 5, so over 8 matching chunks it returns exactly the 5 best lexical hits where `fts`
returns all 8: the hit count shows which model the arm was built with.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arms import registry
from engine.embed import HashEmbedder
from engine.memory import Memory
from harness.runner import run
from recallbench.mcp_server import build_server
from recallbench.prompt_search import PromptSearch
from recallbench.ship import read_config
from recallbench.shipped_model import NotShippedError, ShippedModelError
from tests.engine.fixtures_transcripts import write_jsonl
from tests.harness.test_fit import ToyArm, ToyParams, cli, repo, toy_fit
from tests.harness.test_runner import build_repo, options
from tests.recallbench.corpus import chat_session
from tests.recallbench.test_mcp_server import call

REPO = Path(__file__).resolve().parents[2]
PROJECT = "/home/dev/gamma"
DEPTH = 5  # the toy model's depth: 3 training examples + seed 2
MATCHING = 8  # sessions (one chunk each) that mention "deploy"


@pytest.fixture(autouse=True)
def toyfit() -> Iterator[None]:
    registry.register("toyfit", ToyArm, ToyParams, "A toy fitted arm.", fit=toy_fit)
    try:
        yield
    finally:
        registry._REGISTRY.pop("toyfit")


def shipping_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """test_fit's repository with a ship rule that always chooses toyfit, registered and run once.

    Returns the results folder (relative to the repository, the working directory) and the lock's
    record of the artifact.
    """
    root = repo(tmp_path / "bench")
    protocol = root / "protocols" / "fit.toml"
    text = protocol.read_text()
    assert 'default = "rrf"\n[[ship.rules]]\narm = "fts"' in text  # what is rewritten below
    protocol.write_text(
        text.replace(
            'default = "rrf"\n[[ship.rules]]\narm = "fts"',
            'default = "toyfit"\n[[ship.rules]]\narm = "toyfit"',
        )
    )
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/fit.toml")
    cli("bench", "run", "protocols/fit.toml")
    (folder,) = sorted(Path("results/fit").iterdir())
    assert json.loads((folder / "summary.json").read_text())["shipped_arm"] == "toyfit"
    record: dict[str, str] = json.loads(Path("protocols/fit.lock.json").read_text())["fits"][
        "toyfit"
    ]
    return folder, record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A memory of 8 one-chunk sessions that mention "deploy", and one that does not."""
    root = tmp_path / "projects"
    for n in range(MATCHING + 1):
        sid = f"cccccccc-0000-4000-8000-{n:012d}"
        words = "the deploy step" if n < MATCHING else "the lint step"
        turns = [(f"Session {n}: how does {words} work?", f"Note {n} on {words}.")]
        write_jsonl(root / "-home-dev-gamma" / f"{sid}.jsonl", chat_session(sid, PROJECT, turns))
    memory = Memory(tmp_path / "memory.db", HashEmbedder())
    assert memory.import_paths([root]).files_failed == {}
    memory.close()
    return tmp_path / "memory.db"


def search(db: Path, *args: str, ok: bool = True) -> Any:
    out = cli("search", "--db", str(db), "--all-projects", "--json", *args, "deploy", ok=ok)
    return json.loads(out) if ok else out


def test_ship_copies_the_locked_model_and_search_serves_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, db: Path
) -> None:
    folder, record = shipping_repo(tmp_path, monkeypatch)
    sha = record["sha256"]
    copy = home / "fitted" / f"toyfit-{sha[:12]}.json"
    out = cli("ship", str(folder))
    assert "shipped toyfit from fit run" in out
    assert f"model: {copy} sha256 {sha} (from {record['path']})" in out
    assert copy.read_bytes() == Path(record["path"]).read_bytes()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    shipped = read_config()
    assert shipped is not None
    assert (shipped["model_file"], shipped["model_sha256"], shipped["model_source"]) == (
        f"fitted/toyfit-{sha[:12]}.json",
        sha,
        record["path"],
    )
    assert f"model: {copy} sha256 {sha}" in cli("ship", "--show")
    lexical = search(db, "--arm", "fts")  # positive control: 8 chunks match
    assert len(lexical["hits"]) == MATCHING
    fitted = search(db)  # the shipped arm, built with the shipped model: depth 5
    assert fitted["arm"] == "toyfit"
    assert [h["chunk_id"] for h in fitted["hits"]] == [
        h["chunk_id"] for h in lexical["hits"][:DEPTH]
    ]
    assert all(h["via"] == "toyfit" for h in fitted["hits"])


def test_a_changed_shipped_model_is_refused_naming_the_file_both_hashes_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, db: Path
) -> None:
    folder, record = shipping_repo(tmp_path, monkeypatch)
    cli("ship", str(folder))
    assert len(search(db)["hits"]) == DEPTH  # positive control: the intact copy serves
    copy = home / "fitted" / f"toyfit-{record['sha256'][:12]}.json"
    changed = copy.read_text().replace(
        '"depth": 5', '"depth": 7'
    )  # unchecked, it would serve 7 hits
    assert changed != copy.read_text()
    copy.write_text(changed)
    actual = hashlib.sha256(changed.encode()).hexdigest()
    out = " ".join(search(db, ok=False).split())
    assert (
        f"Expected sha256 of {copy} to be {record['sha256']} (recorded by `recallbench ship`) "
        f"but got {actual}"
    ) in out
    assert "`recallbench ship RESULTS_DIR`" in out
    cli("ship", str(folder))  # shipping again restores the run's model
    assert len(search(db)["hits"]) == DEPTH


def test_a_fitted_arm_runs_only_as_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    folder, _ = shipping_repo(tmp_path, monkeypatch)
    before = " ".join(search(db, "--arm", "toyfit", ok=False).split())
    assert "arm toyfit(depth=0) is fitted: it runs only with the model shipped from a" in before
    assert "nothing is shipped" in before
    assert "`recallbench arm fit`" in before
    cli("ship", str(folder))
    assert (
        len(search(db, "--arm", "toyfit(depth=0)")["hits"]) == DEPTH
    )  # the shipped arm, spelled out
    other = " ".join(search(db, "--arm", "toyfit(depth=3)", ok=False).split())
    assert "arm toyfit(depth=3) is fitted" in other
    assert "the shipped arm is toyfit" in other
    assert "Usage:" in other  # a usage error, exit 2
    assert len(search(db, "--arm", "fts")["hits"]) == MATCHING  # other arms still run


def test_ship_refuses_a_changed_or_missing_artifact_naming_the_file_and_both_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    folder, record = shipping_repo(tmp_path, monkeypatch)
    artifact = Path(record["path"])
    original = artifact.read_bytes()
    artifact.write_bytes(original + b"\n")
    actual = hashlib.sha256(original + b"\n").hexdigest()
    out = " ".join(cli("ship", str(folder), ok=False).split())
    where = (tmp_path / "bench" / "repo" / record["path"]).resolve()
    assert (
        f"Expected sha256 of {where} to be {record['sha256']} (locked in "
        f"{where.parents[2] / 'protocols' / 'fit.lock.json'}) but got {actual}"
    ) in out
    artifact.unlink()
    missing = " ".join(cli("ship", str(folder), ok=False).split())
    assert f"Missing fitted artifact {where} (sha256 {record['sha256']}" in missing
    assert read_config() is None
    assert not (home / "fitted").exists()
    artifact.write_bytes(original)  # positive control: the locked bytes ship
    cli("ship", str(folder))
    assert read_config() is not None


def test_the_prompt_search_and_the_mcp_server_serve_the_shipped_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, db: Path
) -> None:
    folder, record = shipping_repo(tmp_path, monkeypatch)
    memory = Memory(db, HashEmbedder())
    with pytest.raises(NotShippedError, match="nothing is shipped"):
        PromptSearch(memory, "toyfit")
    cli("ship", str(folder))
    request = {"text": "deploy", "projects": [PROJECT], "k": 10, "now": "2026-07-01T00:00:00+00:00"}
    answer = PromptSearch(memory, "toyfit")(request)
    assert answer["arm"] == "toyfit(depth=0)"
    assert len(answer["hits"]) == DEPTH
    server = build_server(
        memory, "toyfit", project_dir=Path(PROJECT), now=lambda: datetime(2026, 7, 1, tzinfo=UTC)
    )
    (found,) = call(server, "legacy", ("search_memory", {"query": "deploy", "limit": 10}))
    assert found["arm"] == "toyfit(depth=0)"
    assert len(found["hits"]) == DEPTH
    copy = home / "fitted" / f"toyfit-{record['sha256'][:12]}.json"
    copy.write_bytes(copy.read_bytes() + b" ")
    # the server's warm-up catches ValueError: the hook then reads lexically, and serve refuses
    with pytest.raises(ShippedModelError, match=f"Expected sha256 of {copy}"):
        PromptSearch(memory, "toyfit")
    with pytest.raises(ValueError, match="the shipped model changed after shipping"):
        build_server(memory, "toyfit", project_dir=Path(PROJECT))
    memory.close()


def test_a_non_fitted_arm_ships_as_before_without_a_model(tmp_path: Path, home: Path) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    cli("ship", str(result.directory))
    shipped = read_config()
    assert shipped is not None
    assert shipped["arm"] == result.summary.shipped_arm  # positive control: it shipped
    assert [k for k in shipped if k.startswith("model")] == []
    assert not (home / "fitted").exists()
    assert "model:" not in cli("ship", "--show")


def test_the_prompt_search_never_imports_scikit_learn() -> None:
    code = (
        "import sys, recallbench.prompt_search; "
        "print('recallbench.shipped_model' in sys.modules, 'sklearn' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    ).stdout.split()
    assert out == ["True", "False"]  # the model reader is loaded (positive control), sklearn is not

"""`recallbench ship` ships only a run made with the embedder that will serve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.runner import run
from recallbench.cli import main
from recallbench.ship import ShipError, read_config, verify_results
from tests.harness.test_runner import build_repo, options
from tests.harness.test_runner_embedder import _unpinned_repo

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_made_with_another_embedder_than_the_serving_one_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))  # pinned hash-256-v1, run with hash
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "minilm")  # serve would use minilm-l6-v2
    out = CliRunner().invoke(main, ["ship", str(result.directory)])
    assert out.exit_code == 1
    text = out.output
    assert (
        "was run with embedder hash-256-v1, but `serve` and the hooks would use minilm-l6-v2"
        in text
    )
    assert "Fix: serve with hash-256-v1 (set RECALLBENCH_EMBEDDER=hash for `serve`" in text
    assert (
        'or keep minilm-l6-v2: register a protocol that pins it (embedder = "minilm-l6-v2"), '
        "run it (unset RECALLBENCH_EMBEDDER" in text
    )
    assert read_config() is None  # nothing was shipped
    # positive control: serving with the run's embedder, the same folder ships and says which
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "hash")
    shipped = CliRunner().invoke(main, ["ship", str(result.directory)])
    assert shipped.exit_code == 0, shipped.output
    assert "embedder: hash-256-v1 (what `serve` and the hooks use)" in shipped.output
    config = read_config()
    assert config is not None
    assert config["embedder"] == "hash-256-v1"
    assert "embedder: hash-256-v1" in CliRunner().invoke(main, ["ship", "--show"]).output


def test_an_unpinned_run_is_checked_against_the_serving_embedder_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, protocol = _unpinned_repo(tmp_path)
    result = run(protocol, options(root))
    assert result.summary.embedder is not None
    assert result.summary.embedder.status == "unpinned"
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "minilm")
    with pytest.raises(
        ShipError, match=r"run the protocol again with it \(unset RECALLBENCH_EMBEDDER"
    ):
        verify_results(result.directory)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "hash")
    assert verify_results(result.directory).embedder == "hash-256-v1"


def test_a_committed_run_from_before_pinning_uses_its_recorded_environment_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    directory = sorted((ROOT / "results" / "default-2").iterdir())[0]
    summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    assert "embedder" not in summary  # written before pinning
    assert summary["environment"]["embedder"] == "minilm-l6-v2"
    with pytest.raises(ShipError, match="it was run with embedder minilm-l6-v2, but"):
        verify_results(directory)  # the tests serve with hash
    monkeypatch.delenv("RECALLBENCH_EMBEDDER")  # the default: minilm, as that run used
    decision = verify_results(directory)
    assert (decision.embedder, decision.protocol_id) == ("minilm-l6-v2", "default-2")


def test_an_arm_that_names_its_embedder_ships_with_that_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # embedders-1's rule chose rrf over the int8 vectors: `rrf(...)@minilm-l6-v2-int8`.
    directory = sorted((ROOT / "results" / "embedders-1").iterdir())[0]
    summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    assert summary["shipped_arm"] == "rrf(min_score=0.2,pool=20,rrf_k=60)@minilm-l6-v2-int8"
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "minilm")  # the protocol's pin, not the arm's
    with pytest.raises(
        ShipError,
        match="it was run with embedder minilm-l6-v2-int8, but `serve` and the hooks would use "
        "minilm-l6-v2",
    ):
        verify_results(directory)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "minilm-int8")
    decision = verify_results(directory)
    assert decision.embedder == "minilm-l6-v2-int8"
    assert decision.arm == "rrf(min_score=0.2,pool=20,rrf_k=60)"  # the spec, without the suffix
    assert decision.canonical.startswith("rrf(")
    assert "@" not in decision.canonical

"""`python -m perf --hook-ship RESULTS_DIR` also times the prompt hook with a server answering with the
arm that run ships, shipped into the hook's home by `recallbench ship` as a person ships it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arms.registry import full_canonical
from harness.runner import run
from perf.hooks import SHIPPED, measure_hook_latency, process_env, ship_into
from perf.report import _hook_lines
from tests.harness.test_runner import build_repo, options


def test_the_prompt_hook_is_timed_with_the_arm_a_results_folder_ships(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    folder = run(protocol, options(root)).directory
    arm = json.loads((folder / "summary.json").read_text())["shipped_arm"]  # as the rule wrote it
    assert full_canonical(arm).startswith(f"{arm}(")  # a registered arm
    hook = measure_hook_latency(
        tmp_path / "work", seed=7, embedder="hash", runs=2, warmup=1, ship=folder
    )
    shipped = hook[SHIPPED]
    assert shipped["arm"] == full_canonical(arm)
    assert shipped["n"] == 2
    assert shipped["answered_by_server"] == 3  # 1 warm-up + 2 timed, each answered with that arm
    assert shipped["p95_ms"] >= shipped["p50_ms"] > 0
    assert hook["targets_ms"] == {"with_server": 300.0, "lexical_only": 150.0, SHIPPED: 300.0}
    config = (tmp_path / "work" / "hook-home" / "config.toml").read_text()
    assert f'arm = "{arm}"' in config  # shipped into the hook's home, as `recallbench ship` does
    lines = _hook_lines({"hook": hook})
    assert any(f"answered by {full_canonical(arm)}" in line for line in lines)
    # control: without a results folder there is no such figure and no such target
    plain = measure_hook_latency(tmp_path / "plain", seed=7, embedder="hash", runs=2, warmup=1)
    assert SHIPPED not in plain
    assert SHIPPED not in plain["targets_ms"]
    assert plain["with_server"]["answered_by_server"] == 3


def test_a_folder_ship_refuses_is_reported_with_the_commands_reason(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    folder = tmp_path / "repo" / "results" / "x" / "run"
    folder.mkdir(parents=True)
    env, _ = process_env(home, "hash")
    with pytest.raises(RuntimeError, match=r"is not a results folder: no summary\.json"):
        ship_into(env, folder)

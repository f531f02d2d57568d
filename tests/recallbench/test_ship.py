"""`recallbench ship`: the pre-registered rule picks the arm; broken seals or locks cannot ship."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness.runner import run
from recallbench.cli import main
from recallbench.ship import read_config
from tests.harness.test_runner import build_repo, options


def test_ship_writes_the_rule_chosen_arm_with_provenance_and_show_explains_it(
    tmp_path: Path,
) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    out = CliRunner().invoke(main, ["ship", str(result.directory)])
    assert out.exit_code == 0, out.output
    shipped = read_config()
    assert shipped is not None
    assert shipped["arm"] == result.summary.shipped_arm
    assert shipped["protocol_id"] == "two"
    assert shipped["run_id"] == result.directory.name
    assert shipped["verdicts"]["S"] == "PASS"
    show = CliRunner().invoke(main, ["ship", "--show"])
    assert f"shipped arm: {shipped['arm']}" in show.output
    assert "S=PASS" in show.output


def test_results_whose_seal_no_longer_verifies_cannot_be_shipped(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    key = root / "sealed" / "fixture" / "key.json"
    key.write_bytes(key.read_bytes() + b" ")
    out = CliRunner().invoke(main, ["ship", str(result.directory)])
    assert out.exit_code == 1
    assert "key.json" in out.output
    assert read_config() is None  # nothing was shipped


def test_nothing_shipped_is_said_plainly() -> None:
    out = CliRunner().invoke(main, ["ship", "--show"])
    assert "nothing shipped" in out.output


def test_ship_keeps_the_settings_the_person_made_and_config_keeps_the_shipped_arm(
    tmp_path: Path,
) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    runner = CliRunner()
    assert runner.invoke(main, ["config", "set", "mcp.all_projects", "true"]).exit_code == 0
    out = runner.invoke(main, ["ship", str(result.directory)])
    assert out.exit_code == 0, out.output
    shipped = read_config()
    assert shipped is not None
    assert shipped["arm"] == result.summary.shipped_arm
    # The person's switch survived the ship, and a later `config set` keeps the shipped arm.
    listed = runner.invoke(main, ["config", "get", "mcp.all_projects"])
    assert listed.output.strip().startswith("true"), listed.output
    assert runner.invoke(main, ["config", "set", "scope.inherit_parent", "true"]).exit_code == 0
    again = read_config()
    assert again is not None
    assert again["arm"] == shipped["arm"]
    assert again["verdicts"] == shipped["verdicts"]

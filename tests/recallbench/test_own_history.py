"""The README's 'Benchmark your own history' sequence, command by command, on a small synthetic corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.synthetic import SyntheticConfig, generate
from recallbench.cli import main
from tests.recallbench.pinning import pin_embedder

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_freeze_mine_seal_instantiate_register_run_ship(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "protocols").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    shutil.copy(
        ROOT / "protocols" / "private-receipts.toml", repo / "protocols" / "private-receipts.toml"
    )
    pin_embedder(repo / "protocols" / "private-receipts.toml")
    generated = generate(tmp_path / "gen", SyntheticConfig.small(seed=11))
    corpus = repo / "corpora" / "mine"
    shutil.copytree(generated.projects_dir, corpus / "projects")
    monkeypatch.chdir(repo)

    assert "manifest sha256" in cli("corpus", "freeze", str(corpus))
    cli("roster", "mine", "--kind", "receipts", str(corpus), "--out", "rosters/mine.json")
    draft = json.loads(Path("rosters/mine.json").read_text())
    assert len(draft["questions"]) > 0
    key = tmp_path / "private" / "mine.key.json"
    cli("roster", "seal", "rosters/mine.json", "--out", "sealed/mine", "--key-out", str(key))
    assert not Path("sealed/mine/key.json").exists()  # the key lives outside the repository
    cli(
        "protocol", "instantiate", "protocols/private-receipts.toml",
        "--corpus", str(corpus), "--roster", "sealed/mine", "--out", "protocols/mine.toml",
        "--key", f"receipts={key}",
    )  # fmt: skip
    cli("protocol", "register", "protocols/mine.toml", "--key", f"receipts={key}")
    assert cli("protocol", "verify", "protocols/mine.toml", "--key", f"receipts={key}").startswith(
        "OK"
    )
    out = cli("bench", "run", "protocols/mine.toml", "--key", f"receipts={key}")
    assert "Gate M  " in out
    assert "Gate N  " in out
    results = sorted(Path("results/mine").iterdir())
    assert len(results) == 1
    shipped = cli("ship", str(results[0]), "--key", f"receipts={key}")
    assert shipped.startswith("shipped ")

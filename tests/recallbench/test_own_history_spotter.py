"""The README's 'Benchmark your own history' on real transcripts: the vendored spotter sessions.

Mine plain and masked receipts, mask the corpus, draft with the test generator, seal, instantiate both
templates, register and run. Spotter gives each session its own worktree, so a project holds one
session and finding the session is trivial for every arm; the receipts are therefore mined with message
gold (the work each commit recorded), where masking the commit call must cost BM25 the rank it got from
the subject quoted verbatim. The measured numbers are in the issue's closing note, not here.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from statistics import fmean

import pytest
from click.testing import CliRunner

from recallbench.cli import main
from tests import spotter as spotter_fixture
from tests.harness.draft_corpus import generator_command
from tests.recallbench.pinning import pin_embedder

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def fts_scores(results: Path, roster: str, metric: str) -> dict[str, float]:
    """Per-question `metric` of the fts arm in the one run under `results`."""
    (run,) = sorted(results.iterdir())
    with (run / "per_query.csv").open(encoding="utf-8") as fh:
        return {
            row["qid"]: float(row["value"])
            for row in csv.DictReader(fh)
            if row["roster"] == roster and row["arm"].startswith("fts(") and row["metric"] == metric
        }


@pytest.mark.slow
def test_masking_the_receipts_costs_fts_on_the_same_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = tmp_path / "repo"
    (repo / "protocols").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    for name in ("private.toml", "private-receipts.toml"):
        shutil.copy(ROOT / "protocols" / name, repo / "protocols" / name)
        pin_embedder(repo / "protocols" / name)
    shutil.copytree(spotter_fixture.spotter_transcripts(tmp_path_factory), repo / "corpora" / "sp")
    monkeypatch.chdir(repo)

    mined = cli("roster", "mine", "--kind", "receipts", "--unit", "message", "corpora/sp",
                "--out", "rosters/plain.json")  # fmt: skip
    assert "22 commits with a hash" in mined
    assert "drafted rosters/plain.json (receipts): 21 questions" in mined
    cli("roster", "mine", "--kind", "masked-receipts", "--unit", "message", "corpora/sp",
        "--out", "rosters/masked.json")  # fmt: skip
    masked = cli("corpus", "mask", "corpora/sp", "--mask", "rosters/masked.mask.json",
                 "--out", "corpora/sp-masked")  # fmt: skip
    assert "subject=52, hash=74" in masked
    cli("roster", "draft", "--generator", generator_command("paraphrase"), "--sample", "12",
        "--seed", "7", "corpora/sp-masked",
        "--out", "rosters/drafted.json")  # fmt: skip
    key = tmp_path / "private" / "masked.key.json"
    cli("roster", "seal", "rosters/plain.json", "--out", "sealed/plain")
    cli("roster", "seal", "rosters/masked.json", "--out", "sealed/masked", "--key-out", str(key))
    cli("roster", "seal", "rosters/drafted.json", "--out", "sealed/drafted")
    cli("protocol", "instantiate", "protocols/private-receipts.toml", "--corpus", "corpora/sp",
        "--roster", "sealed/plain", "--out", "protocols/sp-plain.toml")  # fmt: skip
    cli("protocol", "instantiate", "protocols/private.toml", "--corpus", "corpora/sp-masked",
        "--roster", "masked=sealed/masked", "--roster", "drafted=sealed/drafted",
        "--key", f"masked={key}", "--out", "protocols/sp.toml")  # fmt: skip
    # the templates say unit "session"; instantiate takes each roster's unit from its key
    for name, units in (("sp-plain", ["message"]), ("sp", ["message", "session"])):
        text = Path(f"protocols/{name}.toml").read_text(encoding="utf-8")
        assert re.findall(r'^unit = "(\w+)"$', text, flags=re.MULTILINE) == units
    cli("protocol", "register", "protocols/sp-plain.toml")
    cli("protocol", "register", "protocols/sp.toml", "--key", f"masked={key}")
    cli("bench", "run", "protocols/sp-plain.toml")
    out = cli("bench", "run", "protocols/sp.toml", "--key", f"masked={key}")
    assert "holm-adjusted p=" in out
    # At the message unit a commit's work is tens to hundreds of messages: the gates read hit@5 (a chunk
    # of it among the first five), so fusion against no memory can pass; recall@5 (the share of those
    # messages five chunks cover) stays near zero for every arm and left that gate NULL.
    assert re.search(r"^Gate MN  PASS  rrf\(.*\) vs none\(\)  hit@5  ", out, flags=re.MULTILINE)
    assert "shipped arm (pre-registered rule): none()" not in out

    for metric in ("mrr", "recall@5"):
        plain = fts_scores(Path("results/sp-plain"), "receipts", metric)
        hidden = fts_scores(Path("results/sp"), "masked", metric)
        assert sorted(plain) == sorted(hidden)  # the same 21 questions
        assert len(plain) == 21
        assert fmean(hidden.values()) < fmean(plain.values()), metric
    # The drafted roster runs through the same protocol; its gold is the session (the default unit),
    # which the one-session projects make certain to be found: the flow is tested, not the arms.
    drafted = fts_scores(Path("results/sp"), "drafted", "recall@5")
    assert len(drafted) == 12
    assert fmean(drafted.values()) == 1.0
    # the file bridge the synthetic benchmark ships runs and is gated on both rosters
    for gate in ("BM", "BMm", "BD", "BDm"):
        assert f"Gate {gate}  " in out
    (run,) = sorted(Path("results/sp").iterdir())
    with (run / "per_query.csv").open(encoding="utf-8") as fh:
        bridged = [r for r in csv.DictReader(fh) if r["arm"].startswith("bridge(")]
    asked = {
        r["roster"]: len({q["qid"] for q in bridged if q["roster"] == r["roster"]}) for r in bridged
    }
    assert asked == {"masked": 21, "drafted": 12}


@pytest.mark.slow
def test_a_protocol_whose_unit_is_not_its_keys_is_refused_before_any_arm_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = tmp_path / "repo"
    (repo / "protocols").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    shutil.copy(ROOT / "protocols" / "private-receipts.toml", repo / "protocols" / "t.toml")
    pin_embedder(repo / "protocols" / "t.toml")
    shutil.copytree(spotter_fixture.spotter_transcripts(tmp_path_factory), repo / "corpora" / "sp")
    monkeypatch.chdir(repo)
    cli("roster", "mine", "--unit", "message", "corpora/sp", "--out", "rosters/plain.json")
    cli("roster", "seal", "rosters/plain.json", "--out", "sealed/plain")
    cli("protocol", "instantiate", "protocols/t.toml", "--corpus", "corpora/sp",
        "--roster", "sealed/plain", "--out", "protocols/good.toml")  # fmt: skip
    text = Path("protocols/good.toml").read_text(encoding="utf-8")
    wrong = re.sub(r'^id = ".*"$', 'id = "wrong"', text, count=1, flags=re.MULTILINE)
    Path("protocols/wrong.toml").write_text(wrong.replace('unit = "message"', 'unit = "session"'))
    for name in ("good", "wrong"):
        cli("protocol", "register", f"protocols/{name}.toml")
    refused = CliRunner().invoke(main, ["bench", "run", "protocols/wrong.toml"])
    assert refused.exit_code != 0
    assert "its key is scored per message" in refused.output
    assert not Path("results/wrong").exists() or not any(Path("results/wrong").iterdir())
    assert "Gate M  " in cli("bench", "run", "protocols/good.toml")  # positive control

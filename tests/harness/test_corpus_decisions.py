"""A synthetic corpus's `decisions` knob: how many decisions it plants (its decisions roster's size),
from the protocol's corpus table and from `recallbench corpus synthetic --decisions`."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.corpus_db import materialise
from harness.protocol.load import load_protocol
from harness.protocol.model import Corpus, FitSpec, ProtocolError
from recallbench.cli import main
from tests.harness.test_protocol import PROTOCOL, _error, _write

CUTOFF = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
# A synthetic corpus entry as a protocol declares one (seed, size; the manifest is not checked here).
SYNTHETIC = Corpus(
    source="synthetic",
    path="cache/synthetic/x",
    manifest_sha256="a" * 64,
    cutoff=CUTOFF,
    exclude=(),
    seed=1,
    size=240,
)


def _decisions(folder: Path) -> int:
    return len(json.loads((folder / "rosters" / "decisions.json").read_text())["questions"])


def test_the_decisions_knob_loads_and_belongs_to_synthetic_corpora_only(tmp_path: Path) -> None:
    corpus = load_protocol(
        _write(tmp_path, PROTOCOL.replace("size = 200\n", "size = 200\ndecisions = 96\n"))
    ).corpus
    assert corpus.decisions == 96
    assert load_protocol(_write(tmp_path)).corpus.decisions is None  # absent: the generator's 64
    assert "$.corpus.decisions: 0 is less than the minimum of 1" in _error(
        tmp_path, PROTOCOL.replace("size = 200\n", "size = 200\ndecisions = 0\n")
    )
    with pytest.raises(ProtocolError, match="decisions sets how many decisions"):
        dataclasses.replace(corpus, source="claude-projects", seed=None, size=None)


def test_a_fit_entry_names_decisions_only_when_set() -> None:
    base = SYNTHETIC
    plain = FitSpec(arm="ltr()", seed=0, corpus=base, rosters=()).to_dict()
    more = FitSpec(
        arm="ltr()", seed=0, corpus=dataclasses.replace(base, decisions=96), rosters=()
    ).to_dict()
    assert "decisions" not in plain["corpus"]  # entries written before the knob hash as they did
    assert more["corpus"]["decisions"] == 96


def test_materialise_plants_the_declared_number_of_decisions(tmp_path: Path) -> None:
    corpus = dataclasses.replace(SYNTHETIC, path="more", seed=1357, decisions=96)
    assert _decisions(materialise(corpus, tmp_path, tmp_path / "p.toml")) == 96
    default = dataclasses.replace(corpus, path="plain", decisions=None)
    assert _decisions(materialise(default, tmp_path, tmp_path / "p.toml")) == 64  # control


def test_the_cli_plants_decisions_and_refuses_too_many_for_one_project(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main,
        [
            "corpus",
            "synthetic",
            "--out",
            str(tmp_path / "ok"),
            "--seed",
            "1357",
            "--decisions",
            "112",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert "decisions=112" in ok.output
    assert _decisions(tmp_path / "ok") == 112
    # 128 over four projects: the busiest project's share (40) exceeds its 36 distinct choices
    bad = runner.invoke(
        main,
        [
            "corpus",
            "synthetic",
            "--out",
            str(tmp_path / "bad"),
            "--seed",
            "1357",
            "--decisions",
            "128",
        ],
    )
    assert bad.exit_code == 1
    assert "puts 40 decisions in one project" in bad.output
    assert "Traceback" not in bad.output
    assert not (tmp_path / "bad").exists()

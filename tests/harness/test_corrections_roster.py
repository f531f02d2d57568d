"""End to end: the corrections roster on a small synthetic corpus, through `bench run`'s own steps.

A tiny corpus with the corrections option on (2 corrected facts, 2 changed settings) is imported with
the hash embedder, its settles.json applied through the engine, and fts and rrf are judged by the
gates default-3 uses. The positive control is the same corpus without its settles: the corrected
statements then do surface, and a changed setting's old value comes first at least once, so the
gates that pass with the settles could have failed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness import freeze, runner
from harness.gates import GateResult
from harness.metrics import RankedItem
from harness.protocol.lock import register
from harness.results import validate_summary
from harness.roster import Gold
from harness.runner import Evaluation, RunOptions
from harness.seal import seal_roster
from harness.settles import SETTLES_FILE
from harness.synthetic import SyntheticConfig, generate

NOW = datetime(2026, 6, 1, tzinfo=UTC)
FTS = "fts(pool=20,score='rank')"
RRF = "rrf(min_score=0.2,pool=20,rrf_k=60)"
ARMS = {"fts": FTS, "rrf": RRF}
CONFIG = dataclasses.replace(SyntheticConfig.small(), corrected_facts=2, changed_facts=2)

GATES = """
[[gates]]
id = "CX-{name}"
kind = "negative"
roster = "corrections"
metric = "leak@10"
treatment = "{arm}"
[gates.readings]
pass = "No corrected memory in the top 10; every correction found."
fail = "A corrected memory surfaced."
null = "Not used for negative gates."
vacuous = "A correction was not found."

[[gates]]
id = "CH-{name}"
kind = "every"
roster = "corrections"
subset = "changed"
metric = "hit@1"
treatment = "{arm}"
[gates.readings]
pass = "Every replacement first."
fail = "A replacement was not first."
null = "Not used for every gates."
vacuous = "No changed item."
"""

PROTOCOL = """\
id = "corrections-small"
title = "Typed corrections on a small synthetic corpus"
hypothesis = "Settled memories are honoured by every arm."
registered = 2026-12-01
embedder = "hash-256-v1"
arms = ["{fts}", "{rrf}"]

[corpus]
source = "synthetic"
seed = 1234
size = 20
corrected_facts = 2
changed_facts = 2
path = "corpus"
manifest_sha256 = "{manifest}"
cutoff = 2026-06-01T00:00:00Z
exclude = ["self_transcript", "roster_leak", "after_cutoff"]

[[rosters]]
name = "corrections"
path = "sealed/corrections"
seal = "{seal}"
unit = "message"
[rosters.subsets]
changed = 'kind == "changed"'

[metrics]
primary = "hit@1"
secondary = ["recall@10"]
k = 10
{gates}
[stats]
seed = 0
resamples = 200
confidence = 0.95

[ship]
default = "{fts}"

[reporting]
commitments = ["exact counts"]
"""


def _repo(tmp_path: Path, name: str, corpus: Path, *, settles: bool) -> Path:
    """A repository holding `corpus` (less its settles.json unless `settles`), the sealed
    corrections roster and a registered protocol; returns the protocol's path."""
    root = tmp_path / name
    (root / "protocols").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    shutil.copytree(corpus, root / "corpus")
    if not settles:
        (root / "corpus" / SETTLES_FILE).unlink()
    info = seal_roster(corpus / "rosters" / "corrections.json", root / "sealed" / "corrections")
    manifest = freeze.manifest(root / "corpus").sha256
    gates = "".join(GATES.format(name=n, arm=a) for n, a in ARMS.items())
    path = root / "protocols" / "small.toml"
    path.write_text(
        PROTOCOL.format(fts=FTS, rrf=RRF, manifest=manifest, seal=info.seal, gates=gates),
        encoding="utf-8",
    )
    register(
        path, manifest_sha256=manifest, seals={"corrections": info.seal}, now=NOW, git_commit=None
    )
    return path


def _evaluate(protocol: Path) -> tuple[Evaluation, dict[str, Any]]:
    """`bench run`'s three steps, keeping the arms' answers; and the summary.json it wrote."""
    root = protocol.parents[1]
    options = RunOptions(
        embedder="hash", cache_dir=root / "cache", results_root=root / "results", clock=lambda: NOW
    )
    verified = runner.verify_inputs(protocol, options)
    evaluation = runner.evaluate(verified, options)
    result = runner.write_outputs(verified, evaluation, options)
    summary = json.loads((result.directory / "summary.json").read_text(encoding="utf-8"))
    summary["report.md"] = (result.directory / "report.md").read_text(encoding="utf-8")
    return evaluation, summary


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[tuple[Evaluation, dict[str, Any]], tuple[Evaluation, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("corrections-e2e")
    corpus = generate(tmp / "generated", CONFIG).root
    settled = _evaluate(_repo(tmp, "settled", corpus, settles=True))
    plain = _evaluate(_repo(tmp, "plain", corpus, settles=False))
    return settled, plain


def _gates(evaluation: Evaluation) -> dict[str, GateResult]:
    return {g.id: g for g in evaluation.gates}


def _rank(items: list[RankedItem], uuid: str) -> int | None:
    return next((i for i, item in enumerate(items, 1) if uuid in item.message_uuids), None)


def _ranked(evaluation: Evaluation, arm: str) -> dict[str, list[RankedItem]]:
    run = next(r for r in evaluation.runs if r.spec == arm)
    return {qid: list(items) for qid, items in run.ranked["corrections"].items()}


def _key(evaluation: Evaluation) -> dict[str, Gold]:
    return dict(evaluation.keys["corrections"])


def test_with_the_settles_no_corrected_memory_surfaces_and_every_replacement_ranks_first(
    runs: tuple[tuple[Evaluation, dict[str, Any]], tuple[Evaluation, dict[str, Any]]],
) -> None:
    (settled, written), _ = runs
    report = written.pop("report.md")
    validate_summary(written)  # the shipped schema accepts the settles record
    assert (
        "- settles (settles.json, applied through the engine before any arm ran): 4 in the file; 4 applied by this run, 0 already held; 0 skipped"
        in report
    )
    assert written["corpus"]["settles"]["applied"] == 4
    record = settled.summary.corpus.settles
    assert record is not None
    assert (record["count"], record["applied"], record["already"], record["skipped"]) == (
        4,
        4,
        0,
        [],
    )
    key = _key(settled)
    for name, arm in ARMS.items():
        ranked = _ranked(settled, arm)
        for n in ("0001", "0002"):
            old = key[f"corrected-{n}"].forbidden[0]
            new = next(iter(key[f"corrected-control-{n}"].relevant))
            assert _rank(ranked[f"corrected-{n}"], old) is None  # the old statement is gone
            assert (
                _rank(ranked[f"corrected-control-{n}"], new) is not None
            )  # the correction is found
            replacement = next(iter(key[f"changed-{n}"].relevant))
            assert _rank(ranked[f"changed-{n}"], replacement) == 1
        gates = _gates(settled)
        cx, ch = gates[f"CX-{name}"], gates[f"CH-{name}"]
        assert (cx.verdict, cx.counts["n"], cx.counts["leaks"], cx.counts["controls_hit"]) == (
            "PASS",
            2,
            0,
            2,
        )
        assert (ch.verdict, dict(ch.counts)) == ("PASS", {"n": 2, "hits": 2, "misses": 0})


def test_without_the_settles_the_corrected_memories_surface_and_the_gates_fail(
    runs: tuple[tuple[Evaluation, dict[str, Any]], tuple[Evaluation, dict[str, Any]]],
) -> None:
    _, (plain, written) = runs
    assert "settles" not in written["corpus"]
    assert "- settles (" not in written["report.md"]
    assert plain.summary.corpus.settles is None
    key = _key(plain)
    for name, arm in ARMS.items():
        ranked = _ranked(plain, arm)
        olds = [
            _rank(ranked[f"corrected-{n}"], key[f"corrected-{n}"].forbidden[0])
            for n in ("0001", "0002")
        ]
        assert any(rank is not None for rank in olds)  # a corrected statement is in the top 10
        gates = _gates(plain)
        assert gates[f"CX-{name}"].verdict == "FAIL"
        assert gates[f"CX-{name}"].counts["leaks"] >= 1
        assert gates[f"CX-{name}"].counts["controls_hit"] == 2  # the corrections are there too
        firsts = [
            _rank(ranked[f"changed-{n}"], next(iter(key[f"changed-{n}"].relevant)))
            for n in ("0001", "0002")
        ]
        assert firsts.count(1) < 2  # an old value comes first at least once ...
        assert gates[f"CH-{name}"].verdict == "FAIL"  # ... which the every gate catches

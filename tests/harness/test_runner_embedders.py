"""`bench run` over two embedders: each arm runs over the embedder it names, the corpus is embedded by
both into one database, results name each arm with its embedder, and an extra embedder that cannot be
built as pinned is refused naming both ids."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import engine.embed as embed_module
from engine.embed import HashEmbedder, register_embedder
from engine.memory import Memory
from harness import arm_memories, runner
from harness.arm_memories import memory_for
from harness.protocol.lock import register
from harness.runner import RunRefusedError, run
from tests.harness.test_runner import NOW, build_repo, options, sid

EXTRA = "hash-64-v1"
ARMS = 'arms = ["fts", "rrf", "none"]'
TWO = 'arms = ["fts", "vector", "rrf", "none", "vector@hash-64-v1", "rrf@hash-64-v1"]'
GATE = 'treatment = "rrf"\nbaseline = "fts"\ntest = "bootstrap"'
LOSS = 'treatment = "vector"\nbaseline = "vector@hash-64-v1"\ntest = "bootstrap"'


@pytest.fixture
def hash64(monkeypatch: pytest.MonkeyPatch) -> str:
    """A second, cheap embedder registered as `hash64` (id hash-64-v1) for this test only."""
    monkeypatch.setattr(embed_module, "_REGISTRY", dict(embed_module._REGISTRY))
    register_embedder("hash64", lambda: HashEmbedder(dim=64))
    return "hash64"


def two_embedder_repo(tmp_path: Path) -> tuple[Path, Path]:
    """build_repo's fixture corpus and roster, registered again with arms over a second embedder."""
    root, first = build_repo(tmp_path)
    text = first.read_text(encoding="utf-8")
    pinned = 'embedder = "hash-256-v1"\n'
    text = text.replace(pinned, pinned + f'embedders = ["{EXTRA}"]\n').replace(ARMS, TWO)
    text = text.replace(GATE, LOSS).replace('id = "two"', 'id = "both"')
    assert TWO in text  # the edits took
    assert LOSS in text
    protocol = root / "protocols" / "both.toml"
    protocol.write_text(text, encoding="utf-8")
    lock = json.loads((root / "protocols" / "two.lock.json").read_text(encoding="utf-8"))
    register(
        protocol,
        manifest_sha256=lock["corpus_manifest_sha256"],
        seals=lock["seals"],
        now=NOW,
        git_commit=None,
    )
    return root, protocol


def test_each_arm_runs_over_the_embedder_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hash64: str
) -> None:
    root, protocol = two_embedder_repo(tmp_path)
    used: dict[str, str] = {}
    real = runner.run_arm

    def spy(spec: str, memory: Memory, *args: Any, **kw: Any) -> Any:
        assert memory.embedder is not None
        used[spec] = memory.embedder.id
        return real(spec, memory, *args, **kw)

    monkeypatch.setattr(runner, "run_arm", spy)
    result = run(protocol, options(root))
    assert used == {
        "fts": "hash-256-v1",
        "vector": "hash-256-v1",
        "rrf": "hash-256-v1",
        "none": "hash-256-v1",
        "vector@hash-64-v1": "hash-64-v1",
        "rrf@hash-64-v1": "hash-64-v1",
    }
    summary = json.loads((result.directory / "summary.json").read_text(encoding="utf-8"))
    arms = {a["spec"]: a["canonical"] for a in summary["arms"]}
    assert arms["vector@hash-64-v1"] == arms["vector"] + "@hash-64-v1"
    assert arms["rrf@hash-64-v1"] == arms["rrf"] + "@hash-64-v1"
    assert summary["embedder"] == {
        "used": "hash-256-v1",
        "pinned": "hash-256-v1",
        "status": "pinned",
    }
    assert summary["lock"]["embedders"] == [EXTRA]
    # One database, every chunk text embedded once by each embedder at its own size.
    (db,) = (root / "cache" / "bench").glob("*.db")
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT embedder || ':' || dim, count(*) FROM vectors GROUP BY 1"))
        texts = conn.execute("SELECT count(DISTINCT sha256) FROM vectors").fetchone()[0]
    assert rows == {"hash-256-v1:256": texts, "hash-64-v1:64": texts}
    assert texts > 0


def test_results_name_each_arm_with_its_embedder_and_the_gate_pairs_them(
    tmp_path: Path, hash64: str
) -> None:
    root, protocol = two_embedder_repo(tmp_path)
    result = run(protocol, options(root))
    with (result.directory / "per_query.csv").open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["metric"] == "recall@5"]
    by_arm = {
        arm: {r["qid"]: float(r["value"]) for r in rows if r["arm"] == arm}
        for arm in ("vector", "vector@hash-64-v1")
    }
    # Each question's text is its answer's own sentence: both hash embedders rank it in the top 5.
    assert by_arm["vector"] == {"q0": 1.0, "q1": 1.0, "q2": 1.0, "q3": 1.0, "neg1-control": 1.0}
    assert by_arm["vector@hash-64-v1"] == by_arm["vector"]
    runs = sorted(p.name for p in (result.directory / "runs").iterdir())
    assert runs == [
        "00-fts.trec",
        "01-vector.trec",
        "02-rrf.trec",
        "03-none.trec",
        "04-vector@hash-64-v1.trec",
        "05-rrf@hash-64-v1.trec",
    ]
    trec = (result.directory / "runs" / "04-vector@hash-64-v1.trec").read_text(encoding="utf-8")
    assert f"fixture/neg1-control Q0 {sid(9)} 1 " in trec  # its run, the beta session ranked first
    (gate,) = [g for g in result.gates if g.id == "F"]
    assert (gate.treatment, gate.baseline) == ("vector", "vector@hash-64-v1")
    # Four recall questions, the same score over both embedders: every pair ties, the CI is [0, 0].
    assert dict(gate.counts) == {"n": 4, "wins": 0, "losses": 0, "ties": 4}
    assert gate.verdict == "NULL"
    report = (result.directory / "report.md").read_text(encoding="utf-8")
    # The legend maps each label (the entry's name, here with its suffix) to its canonical spec.
    canonical = {a.spec: a.canonical for a in result.summary.arms}
    assert f"| `vector@hash-64-v1` | `{canonical['vector@hash-64-v1']}` |" in report
    assert f"| `vector` | `{canonical['vector']}` |" in report


def test_an_extra_embedder_nothing_reports_is_refused_even_with_a_deviation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hash64: str
) -> None:
    root, protocol = two_embedder_repo(tmp_path)
    registry = dict(embed_module._REGISTRY)
    del registry[hash64]
    monkeypatch.setattr(embed_module, "_REGISTRY", registry)
    for opts in (options(root), options(root, deviation="try anyway")):
        with pytest.raises(RunRefusedError) as err:
            run(protocol, opts)
        assert (
            f"embedders: {protocol} pins extra embedder hash-64-v1, which no registered embedder "
            "reports (known: " in str(err.value)
        )
    assert not (root / "results" / "both").exists()
    # positive control: registered again, the run goes through
    monkeypatch.setattr(
        embed_module, "_REGISTRY", {**registry, hash64: lambda: HashEmbedder(dim=64)}
    )
    assert run(protocol, options(root)).directory.is_dir()


def test_an_extra_embedder_built_with_another_id_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hash64: str
) -> None:
    root, protocol = two_embedder_repo(tmp_path)
    monkeypatch.setattr(arm_memories, "name_for", lambda _id: "hash")  # resolves to the 256-d one
    with pytest.raises(RunRefusedError) as err:
        run(protocol, options(root))
    assert (
        f"embedders: {protocol} pins extra embedder hash-64-v1 but this run would use hash-256-v1 "
        "(embedder 'hash')" in str(err.value)
    )
    assert not (root / "results" / "both").exists()


def test_memory_for_picks_the_named_embedders_memory(tmp_path: Path) -> None:
    primary = Memory(tmp_path / "m.db", HashEmbedder())
    extra = Memory(tmp_path / "m.db", HashEmbedder(dim=64))
    extras = {EXTRA: extra}
    assert memory_for("vector(pool=20)", primary, extras) is primary
    assert memory_for("vector(pool=20)@hash-64-v1", primary, extras) is extra
    with pytest.raises(KeyError, match="names embedder hash-32-v1"):
        memory_for("vector(pool=20)@hash-32-v1", primary, extras)

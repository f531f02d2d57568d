"""Fine-tuned encoders under pre-registration: `protocol register` fine-tunes and locks, `bench run`
checks, fits missing weights again, and ranks the arms named ``@<encoder>`` by the encoder's vectors.

The corpus is the LoCoMo fixture: conversation demo-1 trains, demo-2 is tested. Worked by hand from
the fixture: demo-1's sealed roster keeps 6 questions (q5 and q7 have no resolvable evidence), and each
of its two short sessions is one chunk (A: session 2's four turns, B: session 1's three). A pair is a
question and a chunk holding one of its evidence turns: q0 -> B, q1 -> A and B (its turns are in
both), q2, q3 and q4 -> A (q3's three turns and q4's two are all in A), q6 -> B: 7 pairs.
Most tests replace the fine-tune by a fake (the plumbing is under test, and a fine-tune of the real
model takes seconds); the last one fine-tunes the real model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from numpy.typing import NDArray

from engine.embed import HashEmbedder
from engine.tuned_embed import tuned_dir
from harness import cross_fit, fit_encoder
from harness.locomo import convert
from harness.protocol.load import load_protocol
from harness.protocol.model import ProtocolError
from harness.seal import seal_roster
from harness.tune import Pair, TuneParams
from recallbench.cli import main

FIXTURE = Path(__file__).with_name("locomo_fixture.json")
ENC = "minilm-l6-v2-tuned"
VECTOR = f"vector(min_score=0.0,pool=20)@{ENC}"

PROTOCOL = """\
id = "enc"
title = "Vectors of a fine-tuned encoder against BM25 on a fixture"
hypothesis = "The fine-tuned encoder's vectors find the evidence turn as often as BM25."
registered = 2026-06-01
embedder = "hash-256-v1"
arms = ["fts(pool=20,score='rank')", "{vector}"]

[[encoders]]
name = "{enc}"
tune = "{tune}"
seed = 3
[encoders.corpus]
source = "locomo"
path = "corpora/train"
manifest_sha256 = "{train_manifest}"
cutoff = 2025-01-01T00:00:00Z
exclude = ["self_transcript"]
conversations = ["demo-1"]
[[encoders.rosters]]
name = "train"
path = "sealed/{train_roster}"
seal = "{train_seal}"
unit = "message"

[corpus]
source = "locomo"
path = "corpora/test"
manifest_sha256 = "{test_manifest}"
cutoff = 2025-01-01T00:00:00Z
exclude = ["self_transcript"]
conversations = ["demo-2"]

[[rosters]]
name = "locomo"
path = "sealed/test"
seal = "{test_seal}"
unit = "message"

[metrics]
primary = "recall@10"
secondary = ["mrr"]
k = 10

[[gates]]
id = "G"
roster = "locomo"
metric = "recall@10"
treatment = "{vector}"
baseline = "fts(pool=20,score='rank')"
test = "bootstrap"
margin = 0.0
[gates.readings]
pass = "The encoder's vectors beat BM25 here."
fail = "BM25 beats the encoder's vectors here."
null = "No detectable difference on this fixture."

[stats]
seed = 0
resamples = 200
confidence = 0.95

[ship]
default = "fts(pool=20,score='rank')"

[reporting]
commitments = ["Every sealed question is scored."]
"""


def cli(*args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(main, list(args))
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def repo(
    tmp_path: Path, *, tune: str = "tune(epochs=1)", train_roster: str = "train", unit: str = ""
) -> Path:
    """The fixture converted (demo-1 trains, demo-2 is tested), both rosters sealed, a protocol."""
    from harness import freeze

    root = tmp_path / "repo"
    (root / "protocols").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    seals: dict[str, str] = {}
    manifests: dict[str, str] = {}
    for name, conversation in (("train", "demo-1"), ("test", "demo-2")):
        out = root / "corpora" / name
        convert(FIXTURE, out, conversations=[conversation])
        manifests[name] = freeze.manifest(out).sha256
        seals[name] = seal_roster(out / "roster.json", root / "sealed" / name).seal
    text = PROTOCOL.format(
        vector=VECTOR,
        enc=ENC,
        tune=tune,
        train_manifest=manifests["train"],
        train_seal=seals[train_roster],
        train_roster=train_roster,
        test_manifest=manifests["test"],
        test_seal=seals["test"],
    )
    if unit:
        text = text.replace('unit = "message"', f'unit = "{unit}"', 1)
    (root / "protocols" / "enc.toml").write_text(text)
    return root


class FakeTuned(HashEmbedder):
    """Stands in for the fine-tuned encoder: hash vectors under the tuned id, counting its texts."""

    embedded = 0

    def __init__(self, sha: str, *, cache: Path | None = None) -> None:
        super().__init__(dim=64)
        self.sha = sha

    @property
    def id(self) -> str:
        return f"minilm-l6-v2-tuned-{self.sha[:12]}"

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        FakeTuned.embedded += len(texts)
        return super().embed(texts)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[Pair], TuneParams, int]]:
    """Replace the fine-tune: its weights' hash is the hash of the pairs, params and seed it got
    (plus `salt`, to play a machine that does not reproduce the fit); the calls are recorded."""
    calls: list[tuple[list[Pair], TuneParams, int]] = []
    FakeTuned.embedded = 0

    def fit(
        pairs: Sequence[Pair],
        params: TuneParams,
        seed: int,
        *,
        cache: Path | None = None,
        progress: bool = False,
    ) -> str:
        calls.append((list(pairs), params, seed))
        salt = str(getattr(fit, "salt", ""))
        blob = json.dumps([[p.qid, p.chunk_id] for p in pairs] + [params.canonical(), seed, salt])
        sha = hashlib.sha256(blob.encode()).hexdigest()
        tuned_dir(sha, cache).mkdir(parents=True, exist_ok=True)
        return sha

    for module in (fit_encoder, cross_fit):
        monkeypatch.setattr(module, "fit_encoder", fit)
        monkeypatch.setattr(module, "TunedEmbedder", FakeTuned)
    return calls


def _lock(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "protocols" / "enc.lock.json").read_text())
    return data


def test_register_fine_tunes_on_training_pairs_only_and_locks_the_artifact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    out = cli("protocol", "register", "protocols/enc.toml")
    ((pairs, params, seed),) = fake
    assert (len(pairs), params, seed) == (7, TuneParams(epochs=1), 3)
    # every pair asks a training question (demo-1), none a test question (demo-2)
    assert [p.qid.removeprefix("train/demo-1-") for p in pairs] == [
        "q0", "q1", "q1", "q2", "q3", "q4", "q6"
    ]  # fmt: skip
    assert len({p.chunk_id for p in pairs}) == 2
    assert {p.text.split(":")[0] for p in pairs if p.qid.endswith("q3")} == {"Bo"}  # chunk A
    record = _lock(root)["encoders"][ENC]
    assert f"fine-tuned encoder {ENC}: {record['path']} (sha256 {record['sha256']})" in out
    assert record["path"] == f"arms/fitted/encoder-{ENC}-{record['sha256'][:12]}.json"
    body = json.loads(Path(record["path"]).read_bytes())
    assert hashlib.sha256(Path(record["path"]).read_bytes()).hexdigest() == record["sha256"]
    assert body["kind"] == "encoder"
    assert body["tune"] == "tune(batch=16,epochs=1,lr=2e-05,scale=20.0,threads=2,warmup=0.1)"
    assert body["embedder"] == f"minilm-l6-v2-tuned-{body['weights_sha256'][:12]}"
    assert body["counts"] == {"examples": 6, "pairs": 7, "skipped_no_chunk": 0, "used": 6}
    assert [q.rsplit("-", 1)[1] for q in body["training"]["qids"]] == [
        "q0", "q1", "q2", "q3", "q4", "q6"
    ]  # fmt: skip
    assert set(body["versions"]) >= {"torch", "sentence-transformers"}


def test_an_encoder_asked_for_hard_negatives_trains_on_mined_ones_that_hold_no_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo(tmp_path, tune="tune(epochs=1,hard=3)")
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    ((pairs, params, _),) = fake
    assert params == TuneParams(epochs=1, hard=3)
    positives: dict[str, set[str]] = {}
    for p in pairs:
        positives.setdefault(p.qid, set()).add(p.chunk_id)
    # The training corpus has two chunks: a question with evidence in one has the other as its only
    # negative; q1 has evidence in both, so it has none.
    assert len({p.chunk_id for p in pairs}) == 2
    for p in pairs:
        assert not {n.chunk_id for n in p.negatives} & positives[p.qid]
        assert len(p.negatives) == 2 - len(positives[p.qid])
    assert sum(bool(p.negatives) for p in pairs) == 5  # control: mined for every other question
    body = json.loads(Path(_lock(root)["encoders"][ENC]["path"]).read_bytes())
    assert body["tune"] == "tune(batch=16,epochs=1,hard=3,lr=2e-05,scale=20.0,threads=2,warmup=0.1)"
    assert body["counts"]["negatives"] == 5


def test_a_run_ranks_the_named_arm_by_the_encoder_and_a_changed_artifact_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    FakeTuned.embedded = 0
    cli("bench", "run", "protocols/enc.toml")
    assert len(fake) == 1  # the weights were in the cache: nothing was fitted again
    assert FakeTuned.embedded > 0  # the test corpus and its questions went through the encoder
    (folder,) = sorted(Path("results/enc").iterdir())
    summary = json.loads((folder / "summary.json").read_text())
    arm = next(a for a in summary["arms"] if a["spec"] == VECTOR)
    assert arm["error_items"] == {}
    record = _lock(root)["encoders"][ENC]
    artifact = Path(record["path"])
    edited = json.loads(artifact.read_text()) | {"seed": 4}
    artifact.write_text(json.dumps(edited))
    refused = " ".join(cli("bench", "run", "protocols/enc.toml", ok=False).split())
    assert f"Expected sha256 of {record['path']} to be {record['sha256']} but got" in refused
    assert len(list(Path("results/enc").iterdir())) == 1  # no second run


def test_missing_weights_are_fitted_again_and_refused_unless_they_reproduce(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    body = json.loads(Path(_lock(root)["encoders"][ENC]["path"]).read_text())
    weights = tuned_dir(body["weights_sha256"])
    shutil.rmtree(weights)
    cli("bench", "run", "protocols/enc.toml")  # fitted again, same hash: it runs
    assert len(fake) == 2
    assert fake[0][0] == fake[1][0]  # the same pairs both times
    assert weights.is_dir()
    shutil.rmtree(weights)
    fit = getattr(fit_encoder, "fit_encoder")  # noqa: B009 - the fake, which mypy does not know
    fit.salt = "another machine"
    refused = " ".join(cli("bench", "run", "protocols/enc.toml", ok=False).split())
    assert f"to have sha256 {body['weights_sha256']}" in refused
    assert "this machine does not reproduce the registered fit" in refused
    assert f"encoder {ENC}: its artifact or weights did not check out" in refused
    assert len(list(Path("results/enc").iterdir())) == 1


def test_training_on_the_test_roster_is_refused_before_any_fine_tune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo(tmp_path, train_roster="test")
    monkeypatch.chdir(root)
    out = " ".join(cli("protocol", "register", "protocols/enc.toml", ok=False).split())
    assert (
        f"refusing to fit: encoder {ENC} (tune(epochs=1)): 3 training questions share a qid" in out
    )
    assert fake == []
    assert not Path("protocols/enc.lock.json").exists()
    # positive control: the training roster registers
    root = repo(tmp_path / "ok")
    monkeypatch.chdir(root)
    assert f"fine-tuned encoder {ENC}" in cli("protocol", "register", "protocols/enc.toml")


def test_encoder_entries_are_checked_at_load(tmp_path: Path) -> None:
    root = repo(tmp_path)
    path = root / "protocols" / "enc.toml"
    text = path.read_text()
    assert load_protocol(path).encoders[0].name == ENC  # positive control: it loads as written
    bad = {
        "tune(epochs=0)": text.replace("tune(epochs=1)", "tune(epochs=0)"),
        "is already an embedder": text.replace(f'name = "{ENC}"', 'name = "hash-256-v1"'),
        "no arm ranks by encoder": text.replace(VECTOR, VECTOR.removesuffix(f"@{ENC}")),
        "must have unit = 'message'": text.replace('unit = "message"', 'unit = "session"', 1),
        "unknown": text.replace("tune(epochs=1)", "tune(epoch=1)"),
    }
    for expected, edited in bad.items():
        path.write_text(edited)
        with pytest.raises(ProtocolError, match=expected.replace("(", r"\(").replace(")", r"\)")):
            load_protocol(path)


def test_instantiate_fills_every_encoder_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    made = load_protocol("protocols/enc.toml").encoders[0]
    zeros = "0" * 64
    template = Path("protocols/enc.toml").read_text()
    template = template.replace(made.corpus.manifest_sha256, zeros).replace(
        made.rosters[0].seal, zeros
    )
    template = template.replace('path = "corpora/train"', 'path = "corpora/placeholder"')
    Path("protocols/template.toml").write_text(template)
    cli("protocol", "instantiate", "protocols/template.toml", "--corpus", "corpora/test",
        "--roster", "sealed/test", "--fit-corpus", "corpora/train", "--fit-roster", "sealed/train",
        "--out", "protocols/inst.toml")  # fmt: skip
    filled = load_protocol("protocols/inst.toml").encoders[0]
    assert filled.corpus.path == "corpora/train"
    assert filled.corpus.manifest_sha256 == made.corpus.manifest_sha256
    assert filled.rosters[0].seal == made.rosters[0].seal


@pytest.mark.model
def test_a_real_fine_tune_registers_runs_and_is_fitted_again_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(tmp_path / "models"))
    root = repo(tmp_path, tune="tune(batch=4,epochs=1,threads=1)")
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    body = json.loads(Path(_lock(root)["encoders"][ENC]["path"]).read_text())
    weights = tuned_dir(body["weights_sha256"])
    assert (weights / "modules.json").is_file()
    cli("bench", "run", "protocols/enc.toml")
    shutil.rmtree(weights)
    cli("bench", "run", "protocols/enc.toml")  # fitted again from the entry: the same weights
    assert weights.is_dir()
    runs = sorted(Path("results/enc").iterdir())
    scores = [
        [row for row in (r / "per_query.csv").read_text().splitlines() if f"@{ENC}" in row]
        for r in runs
    ]
    assert len(runs) == 2
    assert len(scores[0]) == 3 * 2  # three test questions, recall@10 and mrr
    assert scores[0] == scores[1]


# ---------------------------------------------------------------------------------------------
# Cross-fitting an arm over the encoder

LTR = "ltr(min_score=0.0,objective='pointwise',pool=100,rrf_k=60)"


def repo_cross(tmp_path: Path) -> Path:
    """demo-1 and demo-2 train (two projects, so two folds); demo-3, demo-2 with Cy renamed Di and the
    harbour a river (new questions, sessions and project), is tested. The protocol also cross-fits ltr over the encoder."""
    root = repo(tmp_path)
    data = json.loads(FIXTURE.read_text())
    renamed = json.dumps(data[1]).replace("Cy", "Di").replace("harbour", "river")
    third = json.loads(renamed.replace("demo-2", "demo-3"))
    (tmp_path / "third.json").write_text(json.dumps([third]))
    for name in ("train", "test"):
        shutil.rmtree(root / "corpora" / name)
        shutil.rmtree(root / "sealed" / name)
    convert(FIXTURE, root / "corpora" / "train", conversations=["demo-1", "demo-2"])
    convert(tmp_path / "third.json", root / "corpora" / "test")
    from harness import freeze

    seals = {
        n: seal_roster(root / "corpora" / n / "roster.json", root / "sealed" / n).seal
        for n in ("train", "test")
    }
    path = root / "protocols" / "enc.toml"
    old = load_protocol(path)
    text = path.read_text()
    text = text.replace(
        old.encoders[0].corpus.manifest_sha256, freeze.manifest(root / "corpora" / "train").sha256
    )
    text = text.replace(
        old.corpus.manifest_sha256, freeze.manifest(root / "corpora" / "test").sha256
    )
    text = text.replace(old.encoders[0].rosters[0].seal, seals["train"])
    text = text.replace(old.rosters[0].seal, seals["test"])
    text = text.replace('conversations = ["demo-1"]', 'conversations = ["demo-1", "demo-2"]')
    text = text.replace('conversations = ["demo-2"]', 'conversations = ["demo-3"]')
    text = text.replace(f', "{VECTOR}"]', f', "{VECTOR}", "{LTR}@{ENC}"]')
    block = text[text.index("[[encoders]]") : text.index("[corpus]")]
    fit = block.replace("[[encoders]]", "[[fits]]").replace("encoders.", "fits.")
    fit = fit.replace(f'name = "{ENC}"\ntune = "tune(epochs=1)"\n', f'arm = "{LTR}@{ENC}"\n')
    path.write_text(text.replace("[corpus]", fit + "[corpus]", 1))
    return root


def test_an_arm_over_the_encoder_is_cross_fitted_by_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: list[tuple[list[Pair], TuneParams, int]]
) -> None:
    root = repo_cross(tmp_path)
    monkeypatch.chdir(root)
    out = cli("protocol", "register", "protocols/enc.toml")
    # the encoder on all 7 + 3 pairs, then one fold encoder per held-out conversation
    assert [len(pairs) for pairs, _, _ in fake] == [10, 3, 7]
    conversations = [{p.qid.split("/")[1].rsplit("-", 1)[0] for p in pairs} for pairs, _, _ in fake]
    assert conversations == [{"demo-1", "demo-2"}, {"demo-2"}, {"demo-1"}]
    assert {(params, seed) for _, params, seed in fake} == {(TuneParams(epochs=1), 3)}
    record = _lock(root)["fits"][f"{LTR}@{ENC}"]
    assert f"fitted {LTR}@{ENC}: {record['path']}" in out
    body = json.loads(Path(record["path"]).read_text())
    folds = body["cross_fit"]["folds"]
    assert [(f["projects"], f["pairs"], f["examples"]) for f in folds] == [
        (["/locomo/demo-1"], 3, 6),
        (["/locomo/demo-2"], 7, 3),
    ]
    assert [f["weights_sha256"] for f in folds] != [
        body["cross_fit"]["folds"][0]["weights_sha256"]
    ] * 2
    assert body["counts"]["examples"] == 9
    assert body["embedder"] == ENC
    cli("bench", "run", "protocols/enc.toml")
    (folder,) = sorted(Path("results/enc").iterdir())
    summary = json.loads((folder / "summary.json").read_text())
    arm = next(a for a in summary["arms"] if a["spec"] == f"{LTR}@{ENC}")
    assert arm["error_items"] == {}


def test_folds_deal_sorted_projects_round_robin_and_need_two() -> None:
    from harness.cross_fit import folds_of
    from harness.fit import FitRefusedError

    assert folds_of(["e", "b", "a", "d", "c"]) == [("a", "c", "e"), ("b", "d")]
    assert folds_of(["b", "a"], k=3) == [("a",), ("b",)]
    with pytest.raises(FitRefusedError, match=r"at least two projects, got \['a'\]"):
        folds_of(["a", "a"])

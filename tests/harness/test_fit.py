"""Fitting under pre-registration: `protocol register` fits and locks, `bench run` checks and uses.

A toy fitted arm stands in for a learned one: its fit counts the training examples and the distinct
chunks lexical search returns for their queries over the training corpus (so the training corpus must
really be imported), and it answers as BM25 does, its depth taken from the model.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arms import registry
from arms.base import Hit, Query
from arms.fitting import Example, Fitted
from engine.api import ReadAPI
from harness import freeze
from harness.protocol.load import load_protocol
from harness.protocol.model import ProtocolError
from harness.seal import seal_roster
from recallbench.cli import main
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.harness.test_runner import PROTOCOL, TOPICS, A, sid

TRAIN = [
    ("Why is the nightly export late?", "The export waited on a lock; it takes a lease now."),
    ("Why did the login page break?", "The login page lost its CSRF token after the upgrade."),
    ("How is the queue drained?", "The queue drains through a worker pool of four."),
]


@dataclass(frozen=True, kw_only=True)
class ToyParams:
    depth: int = 0  # 0: the fitted depth


class ToyArm:
    name = "toyfit"

    def __init__(self, memory: ReadAPI, params: ToyParams, model: Mapping[str, Any]) -> None:
        self.memory, self.depth = memory, params.depth or int(model["depth"])

    def search(self, query: Query) -> list[Hit]:
        hits = self.memory.lexical(query.text, query.scope, self.depth)
        return [Hit(chunk_id=h.chunk_id, score=h.score, via="toyfit") for h in hits][: query.k]


def toy_fit(memory: ReadAPI, params: ToyParams, examples: tuple[Example, ...], seed: int) -> Fitted:
    seen = {h.chunk_id for e in examples for h in memory.lexical(e.query.text, e.query.scope, 50)}
    return Fitted(
        features=("bm25",),
        model={"depth": len(examples) + seed, "chunks_seen": len(seen)},
        counts={"examples": len(examples)},
    )


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    registry.register("toyfit", ToyArm, ToyParams, "A toy fitted arm.", fit=toy_fit)
    try:
        yield
    finally:
        registry._REGISTRY.pop("toyfit")


def cli(*args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(main, list(args))
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def write_corpus(folder: Path, sessions: list[tuple[str, str, str]]) -> str:
    for session_id, prompt, answer in sessions:
        lines = simple_session(
            prompt, session_id=session_id, cwd=A, answer=answer, prefix=session_id[-4:]
        )
        write_jsonl(folder / "projects" / "-home-dev-alpha" / f"{session_id}.jsonl", lines)
    return freeze.manifest(folder).sha256


def seal(root: Path, name: str, questions: list[dict[str, Any]]) -> str:
    draft = root / "rosters" / f"{name}.json"
    draft.parent.mkdir(exist_ok=True)
    draft.write_text(
        json.dumps({"name": name, "unit": "session", "description": "", "questions": questions})
    )
    return seal_roster(draft, root / "sealed" / name).seal


def question(qid: str, text: str, session_id: str) -> dict[str, Any]:
    gold: dict[str, Any] = {"relevant": {session_id: 1}, "forbidden": [], "control": None}
    return {"qid": qid, "text": text, "scope": [A], "category": "recall", "tags": {}, "gold": gold}


FITS = """
[[fits]]
arm = "toyfit"
seed = 2
{shared}
[fits.corpus]
source = "claude-projects"
path = "train"
manifest_sha256 = "{manifest}"
cutoff = 2026-06-01T00:00:00Z
exclude = ["self_transcript"]

[[fits.rosters]]
name = "train"
path = "sealed/train"
seal = "{seal}"
unit = "session"
"""


def repo(
    tmp_path: Path,
    *,
    train_questions: list[tuple[str, str]] | None = None,
    share_test_session: bool = False,
    shared: bool = False,
) -> Path:
    """Test corpus and roster as in test_runner, a training corpus and roster, a protocol fitting toyfit."""
    root = tmp_path / "repo"
    (root / "protocols").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    test_manifest = write_corpus(
        root / "corpus", [(sid(i), p, a) for i, (_, p, a) in enumerate(TOPICS)]
    )
    test_seal = seal(
        root,
        "fixture",
        [question(f"q{i}", a.split(";")[0], sid(i)) for i, (_, _, a) in enumerate(TOPICS)],
    )
    sessions = [(sid(100 + i), p, a) for i, (p, a) in enumerate(TRAIN)]
    if share_test_session:
        sessions.append((sid(0), TOPICS[0][1], TOPICS[0][2]))
    train_manifest = write_corpus(root / "train", sessions)
    asked = train_questions or [(f"t{i}", a.split(";")[0]) for i, (_, a) in enumerate(TRAIN)]
    train_seal = seal(root, "train", [question(q, text, sid(100)) for q, text in asked])
    text = PROTOCOL.format(manifest=test_manifest, seal=test_seal)
    text = text.replace('arms = ["fts", "rrf", "none"]', 'arms = ["fts", "rrf", "none", "toyfit"]')
    text = text.replace(
        "[corpus]",
        FITS.format(
            manifest=train_manifest,
            seal=train_seal,
            shared="shared_sessions = true" if shared else "",
        )
        + "\n[corpus]",
        1,
    )
    (root / "protocols" / "fit.toml").write_text(text.replace('id = "two"', 'id = "fit"'))
    return root


def test_register_fits_locks_the_artifact_and_the_run_uses_its_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    out = cli("protocol", "register", "protocols/fit.toml")
    lock = json.loads(Path("protocols/fit.lock.json").read_text())
    record = lock["fits"]["toyfit"]
    assert f"fitted toyfit: {record['path']} (sha256 {record['sha256']})" in out
    assert record["path"] == f"arms/fitted/toyfit-{record['sha256'][:12]}.json"
    body = json.loads(Path(record["path"]).read_text())
    # 3 training examples + seed 2 = depth 5; each training question finds its own session's chunk
    assert body["model"] == {"depth": 5, "chunks_seen": body["model"]["chunks_seen"]}
    assert body["model"]["chunks_seen"] >= 3
    assert body["training"]["qids"] == ["train/t0", "train/t1", "train/t2"]
    assert (
        body["training"]["corpus_manifest_sha256"]
        == load_protocol("protocols/fit.toml").fits[0].corpus.manifest_sha256
    )
    assert body["arm"] == "toyfit(depth=0)"
    assert body["embedder"] == "hash-256-v1"
    assert set(body["versions"]) >= {"python", "numpy", "scikit-learn"}
    run = cli("bench", "run", "protocols/fit.toml")
    (folder,) = sorted(Path("results/fit").iterdir())
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["lock"]["fits"] == lock["fits"]
    toy = next(a for a in summary["arms"] if a["spec"] == "toyfit")
    assert toy["error_items"] == {}
    assert "toyfit" in run


def test_fitting_twice_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digests = []
    for name in ("one", "two"):
        root = repo(tmp_path / name)
        monkeypatch.chdir(root)
        cli("protocol", "register", "protocols/fit.toml")
        record = json.loads(Path("protocols/fit.lock.json").read_text())["fits"]["toyfit"]
        digests.append((record["path"], Path(record["path"]).read_bytes()))
    assert digests[0] == digests[1]


def test_a_changed_artifact_is_refused_naming_the_file_and_both_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/fit.toml")
    record = json.loads(Path("protocols/fit.lock.json").read_text())["fits"]["toyfit"]
    artifact = Path(record["path"])
    artifact.write_text(artifact.read_text().replace('"depth": 5', '"depth": 9'))
    out = cli("bench", "run", "protocols/fit.toml", ok=False)
    assert f"Expected sha256 of {record['path']} to be {record['sha256']} but got" in out
    assert not Path("results/fit").exists()


@pytest.mark.parametrize(
    ("asked", "why"),
    [
        ([("q1", "How is the queue drained?")], "share a qid with a test question: train/q1"),
        (
            [("t9", "the RETRY loop used a wall-clock!")],
            "ask a test question's text: train/t9 = fixture/q0",
        ),
    ],
)
def test_training_questions_that_are_test_questions_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: list[tuple[str, str]], why: str
) -> None:
    root = repo(tmp_path, train_questions=asked)
    monkeypatch.chdir(root)
    out = cli("protocol", "register", "protocols/fit.toml", ok=False)
    assert "refusing to fit: fit of toyfit: 1 training questions " + why in " ".join(out.split())
    assert not Path("protocols/fit.lock.json").exists()
    assert not Path("arms/fitted").exists()


def test_a_shared_session_is_refused_unless_the_protocol_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path / "refused", share_test_session=True)
    monkeypatch.chdir(root)
    out = " ".join(cli("protocol", "register", "protocols/fit.toml", ok=False).split())
    assert "shares sessions with the test corpus" in out
    assert sid(0) in out
    root = repo(tmp_path / "allowed", share_test_session=True, shared=True)
    monkeypatch.chdir(root)
    assert "fitted toyfit" in cli("protocol", "register", "protocols/fit.toml")  # positive control


def test_the_protocol_must_fit_every_fitted_arm_and_only_those(tmp_path: Path) -> None:
    root = repo(tmp_path)
    path = root / "protocols" / "fit.toml"
    text = path.read_text()
    assert load_protocol(path).fits[0].arm == "toyfit"  # positive control: it loads as written
    no_fit = text[: text.index("[[fits]]")] + text[text.index("[corpus]") :]
    path.write_text(no_fit)
    with pytest.raises(
        ProtocolError, match=r"fitted arm\(s\) \['toyfit'\] have no \[\[fits\]\] entry"
    ):
        load_protocol(path)
    path.write_text(text.replace('arm = "toyfit"', 'arm = "fts"'))
    with pytest.raises(ProtocolError, match="is not a fitted arm"):
        load_protocol(path)
    shutil.rmtree(root)


def test_arm_fit_writes_an_exploratory_artifact_a_run_would_not_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    args = ["--corpus", "train", "--roster", "sealed/train", "--now", "2026-06-01", "--seed", "2"]
    out = cli("arm", "fit", "toyfit", *args, "--out", "explore/toy.json")
    assert "training: 3 questions; examples=3" in out
    assert "exploration only" in out
    body = json.loads(Path("explore/toy.json").read_text())
    assert body["model"]["depth"] == 5  # the same fit registration makes: 3 examples + seed 2
    assert body["fit_sha256"] is None  # bound to no protocol entry
    assert "exists; artifacts are not overwritten" in cli(
        "arm", "fit", "toyfit", *args, "--out", "explore/toy.json", ok=False
    )
    assert "is not a fitted arm" in cli("arm", "fit", "fts", *args, "--out", "x.json", ok=False)


def test_instantiate_fills_the_training_corpus_and_roster_of_every_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    filled = Path("protocols/fit.toml").read_text()
    fitted = load_protocol("protocols/fit.toml").fits[0]
    zeros = "0" * 64
    template = filled.replace(fitted.corpus.manifest_sha256, zeros).replace(
        fitted.rosters[0].seal, zeros
    )
    template = template.replace('path = "train"', 'path = "corpora/placeholder"')
    Path("protocols/template.toml").write_text(template)
    base = ["protocol", "instantiate", "protocols/template.toml", "--corpus", "corpus",
            "--roster", "sealed/fixture"]  # fmt: skip
    missing = cli(*base, "--out", "protocols/x.toml", ok=False)
    assert "give their training data with --fit-corpus DIR --fit-roster SEALED_DIR" in " ".join(
        missing.split()
    )
    cli(
        *base,
        "--fit-corpus",
        "train",
        "--fit-roster",
        "sealed/train",
        "--out",
        "protocols/inst.toml",
    )
    made = load_protocol("protocols/inst.toml")
    assert made.fits[0].corpus.path == "train"
    assert made.fits[0].corpus.manifest_sha256 == fitted.corpus.manifest_sha256
    assert made.fits[0].rosters[0].seal == fitted.rosters[0].seal
    assert made.fits[0].rosters[0].unit == "session"
    assert "fitted toyfit" in cli("protocol", "register", "protocols/inst.toml")
    # a template that fits nothing refuses the options (positive control: it instantiates without)
    plain = Path("protocols/plain.toml")
    no_fits = template[: template.index("[[fits]]")] + template[template.index("[corpus]") :]
    plain.write_text(no_fits.replace(', "toyfit"]', "]"))
    refused = cli("protocol", "instantiate", str(plain), "--corpus", "corpus", "--roster", "sealed/fixture",
                  "--fit-corpus", "train", "--fit-roster", "sealed/train", "--out", "protocols/y.toml", ok=False)  # fmt: skip
    assert "fits no arm; drop --fit-corpus and --fit-roster" in refused
    cli(
        "protocol",
        "instantiate",
        str(plain),
        "--corpus",
        "corpus",
        "--roster",
        "sealed/fixture",
        "--out",
        "protocols/y.toml",
    )


def test_a_run_without_the_training_corpus_is_refused_until_it_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/fit.toml")
    shutil.move("train", "train-away")
    out = " ".join(cli("bench", "run", "protocols/fit.toml", ok=False).split())
    assert "training corpus of toyfit: corpus folder" in out
    assert "the leak check needs it" in out
    shutil.move("train-away", "train")
    assert "toyfit" in cli("bench", "run", "protocols/fit.toml")  # positive control: back, it runs

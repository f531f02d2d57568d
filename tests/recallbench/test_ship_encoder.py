"""`recallbench ship` of an arm that ranks by a fine-tuned encoder (``ltr(...)@<encoder>``).

The repository is test_fit_encoder's cross-fitting one (the fine-tune replaced by its fake, which
names the weights by a hash of what it was given and leaves their folder in the model cache), with a
ship rule that always chooses ``ltr(...)@minilm-l6-v2-tuned``. Shipping it records the encoder and
needs the serving embedder to be the encoder's id (``minilm-l6-v2-tuned-<sha12>``), which
`engine.embed.get_embedder` builds from the weights in the model cache; weights the cache lacks are
refused with the command that fits them again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.embed import get_embedder
from engine.tuned_cache import tuned_dir
from recallbench import config
from recallbench.ship import read_config
from recallbench.shipped_model import arm_model
from tests.harness.test_fit_encoder import (
    ENC,
    LTR,
    _lock,
    cli,
    fake,  # noqa: F401  (the fixture, by name)
    repo_cross,
)

ARM = f"{LTR}@{ENC}"


def shipping_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    """The cross-fitting repository with a rule that ships the reranker over the encoder, registered
    and run once; the results folder and the encoder's artifact."""
    root = repo_cross(tmp_path)
    protocol = root / "protocols" / "enc.toml"
    text = protocol.read_text()
    assert "[ship]\ndefault = \"fts(pool=20,score='rank')\"" in text  # what is rewritten below
    protocol.write_text(
        text.replace(
            "[ship]\ndefault = \"fts(pool=20,score='rank')\"", f'[ship]\ndefault = "{ARM}"'
        )
    )
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    cli("bench", "run", "protocols/enc.toml")
    (folder,) = sorted(Path("results/enc").iterdir())
    assert json.loads((folder / "summary.json").read_text())["shipped_arm"] == ARM
    record = _lock(root)["encoders"][ENC]
    body: dict[str, Any] = json.loads(Path(record["path"]).read_text()) | {"record": record}
    return folder, body


@pytest.mark.usefixtures("fake")
def test_an_arm_over_a_fine_tuned_encoder_ships_with_it_once_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, encoder = shipping_repo(tmp_path, monkeypatch)
    tuned = encoder["embedder"]
    assert tuned == f"minilm-l6-v2-tuned-{encoder['weights_sha256'][:12]}"
    # serving the packaged embedders' ids (here hash-256-v1): refused, naming the id to serve with
    refused = " ".join(cli("ship", str(folder), ok=False).split())
    assert f"it was run with embedder {tuned}, but `serve` and the hooks would use hash-256-v1" in (
        refused
    )
    assert f"set RECALLBENCH_EMBEDDER={tuned}" in refused
    assert read_config() is None
    # the encoder's id names an embedder built from the weights in the model cache
    assert get_embedder(tuned).id == tuned
    monkeypatch.delenv(
        "RECALLBENCH_EMBEDDER"
    )  # no embedder named: shipping the encoder makes it serve
    assert config.embedder_name() == "minilm"
    out = cli("ship", str(folder))
    assert f"shipped {LTR} from enc run {folder.name}" in out
    assert f"embedder: {tuned} (what `serve` and the hooks use)" in out
    record = encoder["record"]
    shipped = read_config()
    assert shipped is not None
    assert (shipped["arm"], shipped["embedder"]) == (LTR, tuned)
    assert (shipped["encoder"], shipped["encoder_weights_sha256"]) == (
        ENC,
        encoder["weights_sha256"],
    )
    assert (shipped["encoder_source"], shipped["encoder_sha256"]) == (
        record["path"],
        record["sha256"],
    )
    fit = _lock(Path.cwd())["fits"][ARM]  # the reranker's model is the one fitted over the encoder
    assert shipped["model_sha256"] == fit["sha256"]
    assert f"encoder: {ENC} weights sha256 {encoder['weights_sha256']}" in cli("ship", "--show")
    # `serve`, the hooks and `search` now embed with the encoder and build the reranker with the
    # model fitted over it (its artifact names the arm with its `@<encoder>`)
    assert config.embedder_name() == tuned
    assert config.make_embedder().id == tuned
    model = arm_model(LTR)
    assert model is not None
    assert model == json.loads(Path(fit["path"]).read_text())["model"]
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "hash")  # control: a named embedder still wins
    assert config.embedder_name() == "hash"


@pytest.mark.usefixtures("fake")
def test_weights_the_model_cache_lacks_are_refused_with_the_command_that_fits_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, encoder = shipping_repo(tmp_path, monkeypatch)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", encoder["embedder"])
    weights = tuned_dir(encoder["weights_sha256"])
    kept = tmp_path / "kept"
    shutil.move(weights, kept)
    refused = " ".join(cli("ship", str(folder), ok=False).split())
    assert f"the weights of encoder {ENC} ({encoder['embedder']}" in refused
    assert "are not in this machine's model cache" in refused
    assert "run `recallbench bench run" in refused
    assert read_config() is None
    shutil.move(kept, weights)  # control: the same folder, weights back in the cache, ships
    cli("ship", str(folder))
    shipped = read_config()
    assert shipped is not None
    assert shipped["embedder"] == encoder["embedder"]


@pytest.mark.usefixtures("fake")
def test_a_changed_encoder_artifact_is_refused_naming_both_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, encoder = shipping_repo(tmp_path, monkeypatch)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", encoder["embedder"])
    record = encoder["record"]
    artifact = Path(record["path"])
    original = artifact.read_bytes()
    artifact.write_bytes(original + b"\n")
    refused = " ".join(cli("ship", str(folder), ok=False).split())
    assert f"Expected sha256 of {Path.cwd() / record['path']} to be {record['sha256']}" in refused
    assert "the encoder artifact changed after registration" in refused
    assert read_config() is None
    artifact.write_bytes(original)  # control
    cli("ship", str(folder))
    assert read_config() is not None


@pytest.mark.model
def test_a_real_fine_tune_ships_and_search_ranks_by_its_vectors_without_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Register and run with a real fine-tune, ship `vector(...)@<encoder>`, import the test
    conversation into a memory under the encoder's id and search it: each hit's score is the torch
    encoder's cosine of the query and the hit's text, and the hits come in that order."""
    import numpy as np

    from engine.tuned_embed import TunedEmbedder
    from tests.harness.test_fit_encoder import VECTOR, repo

    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(tmp_path / "models"))
    root = repo(tmp_path, tune="tune(batch=4,epochs=1,threads=1)")
    protocol = root / "protocols" / "enc.toml"
    text = protocol.read_text().replace(
        "[ship]\ndefault = \"fts(pool=20,score='rank')\"", f'[ship]\ndefault = "{VECTOR}"'
    )
    protocol.write_text(text)
    monkeypatch.chdir(root)
    cli("protocol", "register", "protocols/enc.toml")
    cli("bench", "run", "protocols/enc.toml")
    (folder,) = sorted(Path("results/enc").iterdir())
    body = json.loads(Path(_lock(root)["encoders"][ENC]["path"]).read_text())
    tuned = body["embedder"]
    monkeypatch.delenv("RECALLBENCH_EMBEDDER")  # from here on, what was shipped decides
    cli("ship", str(folder))
    assert config.embedder_name() == tuned
    db = tmp_path / "memory.db"
    cli("import", "--db", str(db), "corpora/test/projects")
    query = "Which course did Cy sign up for?"
    found = json.loads(cli("search", "--db", str(db), "--all-projects", "--json", query))
    assert found["arm"] == "vector(min_score=0.0,pool=20)"  # the shipped arm, read from config.toml
    hits = found["hits"]
    assert len(hits) >= 2
    torch_encoder = TunedEmbedder(body["weights_sha256"])
    vectors = torch_encoder.embed([query] + [h["text"] for h in hits])
    cosines = vectors[1:] @ vectors[0]
    np.testing.assert_allclose([h["score"] for h in hits], cosines, atol=2e-3)
    assert cosines.tolist() == sorted(cosines.tolist(), reverse=True)
    assert (
        tuned_dir(body["weights_sha256"]) / "onnx" / "all-MiniLM-L6-v2.fp32.single.onnx"
    ).is_file()

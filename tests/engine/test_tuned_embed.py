"""The fine-tuned encoder as an artifact: a weights hash over the tensors, a folder named by it, and an
embedder that loads only the weights it was promised."""

from __future__ import annotations

import hashlib
import shutil
import struct
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from engine.embed import Embedder
from engine.embed_common import minilm_model_dir
from engine.tuned_embed import (
    TUNED_DIR,
    TunedEmbedder,
    TunedWeightsError,
    save_tuned,
    tuned_dir,
    weights_sha256,
)

TEXTS = [
    "the export waited on a lock",
    "the login page lost its CSRF token",
    "a worker pool of four",
]


def linear(weight: list[float], bias: float) -> torch.nn.Linear:
    """A 2 -> 1 linear layer with the given weights (float32)."""
    layer = torch.nn.Linear(2, 1)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([weight]))
        layer.bias.copy_(torch.tensor([bias]))
    return layer


class Reordered:
    """A module stand-in whose state_dict lists the same tensors in reverse order."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.module = module

    def state_dict(self) -> OrderedDict[str, torch.Tensor]:
        return OrderedDict(reversed(list(self.module.state_dict().items())))


class Holder(torch.nn.Module):
    """One parameter named `weight` of any shape (to show that the shape is hashed)."""

    def __init__(self, values: torch.Tensor) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(values)


def test_the_weights_hash_follows_the_documented_stream_of_sorted_tensors() -> None:
    layer = linear([1.0, -2.0], 0.5)
    stream = (
        b"recallbench-weights-v1\n"
        + b'["bias", "torch.float32", [1], 4]\n'
        + struct.pack("<f", 0.5)
        + b'["weight", "torch.float32", [1, 2], 8]\n'
        + struct.pack("<ff", 1.0, -2.0)
    )
    assert weights_sha256(layer) == hashlib.sha256(stream).hexdigest()


def test_the_same_weights_give_the_same_hash_and_one_changed_weight_another() -> None:
    first, twin = linear([1.0, -2.0], 0.5), linear([1.0, -2.0], 0.5)
    changed = linear([1.0, -2.0000002], 0.5)  # the next float32 below -2.0
    assert weights_sha256(first) == weights_sha256(twin)  # control: equal weights, equal hash
    assert weights_sha256(changed) != weights_sha256(first)
    assert weights_sha256(Reordered(first)) == weights_sha256(first)  # key order is irrelevant


def test_the_same_bytes_under_another_shape_give_another_hash() -> None:
    row = Holder(torch.tensor([[1.0, 2.0]]))
    column = Holder(torch.tensor([[1.0], [2.0]]))
    same_row = Holder(torch.tensor([[1.0, 2.0]]))
    assert weights_sha256(row) == weights_sha256(same_row)  # control
    assert weights_sha256(row) != weights_sha256(column)


def test_weights_saved_and_loaded_with_torch_keep_their_hash(tmp_path: Path) -> None:
    layer = linear([0.25, 3.0], -1.0)
    torch.save(layer.state_dict(), tmp_path / "w.pt")
    loaded = linear([0.0, 0.0], 0.0)
    before = weights_sha256(loaded)
    loaded.load_state_dict(torch.load(tmp_path / "w.pt"))
    assert weights_sha256(loaded) == weights_sha256(layer)
    assert before != weights_sha256(layer)  # control: the zeroed layer hashed differently


def test_the_tuned_folder_is_named_by_the_hash_under_the_cache() -> None:
    sha = "ab" * 32
    assert tuned_dir(sha, Path("/c")) == Path("/c") / "tuned" / sha
    assert TUNED_DIR == "tuned"
    embedder = TunedEmbedder(sha, cache=Path("/c"))
    assert embedder.id == "minilm-l6-v2-tuned-abababababab"
    assert embedder.dim == 384
    assert embedder.folder == Path("/c/tuned") / sha
    assert isinstance(embedder, Embedder)


def test_a_missing_folder_is_refused_on_first_embed_naming_the_folder_and_the_hash(
    tmp_path: Path,
) -> None:
    sha = "0123456789abcdef" * 4
    embedder = TunedEmbedder(sha, cache=tmp_path)
    assert embedder.embed([]).shape == (0, 384)  # control: nothing to embed loads nothing
    with pytest.raises(TunedWeightsError) as raised:
        embedder.embed(["x"])
    message = str(raised.value)
    assert str(tmp_path / "tuned" / sha) in message
    assert sha in message
    assert "recallbench protocol register" in message


@pytest.mark.parametrize("bad", ["abc", "AB" * 32, "../" + "a" * 61, "g" * 64])
def test_a_hash_that_is_not_64_lower_case_hex_digits_is_refused(bad: str) -> None:
    assert TunedEmbedder("a" * 64).id == "minilm-l6-v2-tuned-aaaaaaaaaaaa"  # control
    with pytest.raises(ValueError, match="64 lower-case hex digits"):
        TunedEmbedder(bad)


# --- the real model -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_model() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_model_dir()), device="cpu")


@pytest.fixture(scope="module")
def saved(base_model: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The packaged model saved as a tuned artifact: (cache, weights sha256)."""
    cache = tmp_path_factory.mktemp("tuned-cache")
    return cache, save_tuned(base_model, cache)


@pytest.mark.model
def test_the_saved_base_model_embeds_exactly_as_the_packaged_one(
    base_model: Any, saved: tuple[Path, str]
) -> None:
    cache, sha = saved
    assert sha == weights_sha256(base_model)
    assert save_tuned(base_model, cache) == sha  # saving again keeps the folder
    assert sorted(p.name for p in (cache / "tuned").iterdir()) == [sha]  # and leaves no temp
    embedder = TunedEmbedder(sha, cache=cache)
    vectors = embedder.embed(TEXTS)
    expected = base_model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert embedder.id == f"minilm-l6-v2-tuned-{sha[:12]}"
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


@pytest.mark.model
def test_weights_under_another_hash_are_refused_naming_both_hashes(saved: tuple[Path, str]) -> None:
    cache, sha = saved
    wrong = "f" * 64
    shutil.copytree(tuned_dir(sha, cache), tuned_dir(wrong, cache))
    assert TunedEmbedder(sha, cache=cache).embed(["x"]).shape == (1, 384)  # control
    with pytest.raises(TunedWeightsError) as raised:
        TunedEmbedder(wrong, cache=cache).embed(["x"])
    message = str(raised.value)
    assert f"to be {wrong} but got {sha}" in message
    assert str(tuned_dir(wrong, cache)) in message

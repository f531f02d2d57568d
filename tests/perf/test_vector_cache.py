"""The real-vector tier's cache: content-hash keys, hits and misses, shards that survive a new process."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from perf.config import PerfError
from perf.vector_cache import (
    CACHE_ENV,
    VectorCache,
    cached_embed,
    default_cache_dir,
    progress_line,
    text_cost,
    text_key,
)


class CountingEmbedder:
    """A 4-d embedder that records every text it is asked to embed, call by call."""

    def __init__(self, name: str = "count-4") -> None:
        self.name = name
        self.calls: list[list[str]] = []

    @property
    def id(self) -> str:
        return self.name

    @property
    def dim(self) -> int:
        return 4

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        # row i: (len, first char code, 1, 0), unnormalised on purpose (the cache stores what it gets)
        return np.asarray([[len(t), ord(t[0]), 1.0, 0.0] for t in texts], dtype=np.float32)


def test_the_key_is_the_sha256_of_the_text_and_the_folder_names_the_embedder(
    tmp_path: Path,
) -> None:
    assert text_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    cache = VectorCache(tmp_path, "minilm-l6-v2", 4)
    digest = hashlib.sha256(b"minilm-l6-v2").hexdigest()[:12]
    assert cache.folder == tmp_path / "vectors" / f"minilm-l6-v2-{digest}"
    odd = VectorCache(tmp_path, "a/b c", 4)
    assert odd.folder.name.startswith("a_b_c-")
    assert odd.folder.parent == cache.folder.parent


def test_missing_texts_are_embedded_once_longest_first_and_a_new_process_reuses_them(
    tmp_path: Path,
) -> None:
    first = CountingEmbedder()
    texts = ["a", "bb", "a", "ccc"]
    matrix, stats = cached_embed(first, texts, tmp_path, slice_size=2)
    # three distinct texts, longest first, two per call
    assert first.calls == [["ccc", "bb"], ["a"]]
    assert (stats.texts, stats.hits, stats.embedded) == (4, 0, 3)
    assert matrix.shape == (4, 4)
    assert matrix[:, 0].tolist() == [1.0, 2.0, 1.0, 3.0]  # rows in the order asked, duplicates too
    assert len(list(stats.folder.glob("shard-*.npz"))) == 2  # one shard per slice
    again = CountingEmbedder()  # a rerun: a fresh cache object reads the shards back
    matrix2, stats2 = cached_embed(again, ["ccc", "dddd", "a"], tmp_path, slice_size=2)
    assert again.calls == [["dddd"]]
    assert (stats2.hits, stats2.embedded) == (2, 1)
    assert matrix2[:, 0].tolist() == [3.0, 4.0, 1.0]
    other = CountingEmbedder("count-other")  # the same texts under another embedder id: all missing
    cached_embed(other, ["ccc", "a"], tmp_path)
    assert other.calls == [["ccc", "a"]]


def test_a_shard_of_another_dimension_is_refused_with_the_fix(tmp_path: Path) -> None:
    cached_embed(CountingEmbedder(), ["abc"], tmp_path)
    assert len(VectorCache(tmp_path, "count-4", 4)) == 1  # positive control
    with pytest.raises(PerfError, match=r"delete .* to re-embed"):
        VectorCache(tmp_path, "count-4", 8)
    with pytest.raises(PerfError, match="expected 2 x 4 vectors"):
        VectorCache(tmp_path, "count-4", 4).add(["k1", "k2"], np.zeros((2, 3), dtype=np.float32))


def test_the_cache_folder_defaults_to_the_environment_then_the_home_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "recallbench" / "perf"


def test_progress_lines_estimate_the_time_left_from_the_characters_done() -> None:
    # a quarter of the cost in 10 s: 30 s left; 512 texts in 10 s
    line = progress_line(512, 2000, 250, 1000, 10.0)
    assert line == "[#####---------------] 512/2000 embedded (25.0%), 51.2 texts/s, about 30 s left"
    # 40% in 100 s: 150 s left, shown in minutes
    assert progress_line(10, 20, 400, 1000, 100.0).endswith("about 2 min 30 s left")
    assert text_cost("x" * 50) == 51
    assert text_cost("x" * 5000) == 1201  # capped at the model's truncation

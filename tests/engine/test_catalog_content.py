"""A partition records the digest of the (label, text sha256) pairs it holds, so that growing it checks
the digest instead of reading every vector back (`engine.catalog._extend_partition`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from engine.catalog import _extend_partition, content_digest
from engine.vectors import VectorIndex

GEN_1, GEN_2 = "e:1", "e:2"


def matrix(n: int) -> NDArray[np.float32]:
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(n, 8)).astype(np.float32)
    unit: NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def built(
    tmp_path: Path, *, with_content: bool
) -> tuple[VectorIndex, NDArray[np.int64], list[str]]:
    labels = np.arange(1, 301, dtype=np.int64)
    shas = [f"sha-{i}" for i in labels.tolist()]
    index = VectorIndex(tmp_path / "p.hnsw", 8)
    content = content_digest(labels, shas) if with_content else None
    index.build(labels, matrix(300), GEN_1, embedder_id="e", content=content)
    return VectorIndex(tmp_path / "p.hnsw", 8), labels, shas


def test_the_digest_is_order_free_and_changes_with_any_text() -> None:
    labels = np.asarray([3, 1, 2], dtype=np.int64)
    shas = ["c", "a", "b"]
    assert content_digest(labels, shas) == content_digest(
        np.asarray([1, 2, 3], dtype=np.int64), ["a", "b", "c"]
    )
    assert content_digest(labels, shas) != content_digest(labels, ["c", "a", "x"])


def test_a_grown_partition_with_a_digest_is_extended_without_reading_vectors_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, _labels, shas = built(tmp_path, with_content=True)
    grown = np.arange(1, 311, dtype=np.int64)
    grown_shas = [*shas, *(f"sha-{i}" for i in range(301, 311))]

    def no_readback(self: VectorIndex, wanted: NDArray[np.int64]) -> NDArray[np.float32]:
        raise AssertionError("vectors were read back")

    monkeypatch.setattr(VectorIndex, "vectors", no_readback)
    assert _extend_partition(index, grown, matrix(310), grown_shas, GEN_2, "e")
    assert len(index) == 310
    assert index.content == content_digest(grown, grown_shas)
    assert VectorIndex(tmp_path / "p.hnsw", 8).load()  # persisted with its new digest
    # A held label whose text changed (a rowid SQLite reused) makes the digests differ: rebuild.
    again, _, _ = built(tmp_path, with_content=True)
    changed = list(grown_shas)
    changed[0] = "sha-other-text"
    assert not _extend_partition(again, grown, matrix(310), changed, GEN_2, "e")


def test_a_partition_without_a_digest_is_still_checked_vector_by_vector(tmp_path: Path) -> None:
    index, _labels, shas = built(tmp_path, with_content=False)
    assert index.load()
    assert index.content is None
    index = VectorIndex(tmp_path / "p.hnsw", 8)  # unloaded again: the extension loads it itself
    grown = np.arange(1, 311, dtype=np.int64)
    grown_shas = [*shas, *(f"sha-{i}" for i in range(301, 311))]
    same = matrix(310)
    assert _extend_partition(index, grown, same, grown_shas, GEN_2, "e")
    assert index.content == content_digest(grown, grown_shas)  # recorded from now on
    # control: different vectors under the held labels are refused by the comparison
    plain, _, _ = built(tmp_path, with_content=False)
    other = matrix(310)[::-1].copy()
    assert not _extend_partition(plain, grown, other, grown_shas, GEN_2, "e")

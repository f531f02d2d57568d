"""Tests for engine.vectors: the hnswlib cache against the exact scan, persistence, ties, filters."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from engine import vectors
from engine.vectors import (
    EXACT_THRESHOLD,
    FORMAT_VERSION,
    IndexParams,
    VectorIndex,
    VectorIndexError,
    exact_search,
)
from tests.hashing import hashed_files


def _unit_rows(seed: int, n: int, dim: int) -> NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    unit: NDArray[np.float32] = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(
        np.float32
    )
    return unit


def _built(path: Path, n: int, dim: int = 16, seed: int = 3, generation: str = "g1") -> VectorIndex:
    index = VectorIndex(path, dim)
    index.build(np.arange(n, dtype=np.int64), _unit_rows(seed, n, dim), generation)
    return index


def test_index_top10_agrees_with_exact_scan_on_2000_random_vectors(tmp_path: Path) -> None:
    matrix = _unit_rows(seed=20240601, n=2000, dim=32)
    labels = np.arange(2000, dtype=np.int64)
    queries = _unit_rows(seed=7, n=50, dim=32)
    index = VectorIndex(tmp_path / "v.hnsw", 32)
    index.build(labels, matrix, "g1")

    recalls = []
    for query in queries:
        got, _ = index.query(query, 10)
        want, _ = exact_search(matrix, labels, query, 10)
        assert len(got) == 10
        recalls.append(len(set(got.tolist()) & set(want.tolist())) / 10)

    assert float(np.mean(recalls)) >= 0.98
    assert EXACT_THRESHOLD == 256


def test_index_scores_are_cosine_similarity_sorted_best_first(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "v.hnsw", 2)
    rows = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    index.build(np.array([10, 11, 12, 13], dtype=np.int64), rows, "g1")

    labels, scores = index.query(np.array([1.0, 0.0], dtype=np.float32), 4)

    # cos to [1, 0]: identical 1, [0.6, 0.8] gives 0.6, orthogonal 0, opposite -1.
    assert labels.tolist() == [10, 13, 11, 12]
    assert scores.tolist() == pytest.approx([1.0, 0.6, 0.0, -1.0], abs=1e-6)
    assert labels.dtype == np.int64
    assert scores.dtype == np.float32


def test_filtered_query_returns_only_allowed_labels(tmp_path: Path) -> None:
    index = _built(tmp_path / "v.hnsw", n=400)
    target = 7
    query = _unit_rows(seed=3, n=400, dim=16)[target]

    unfiltered, _ = index.query(query, 10)
    filtered, _ = index.query(query, 10, allowed=lambda label: label % 2 == 0)

    # Positive control: the odd target is the best hit when nothing is filtered.
    assert unfiltered[0] == target
    assert target not in filtered.tolist()
    assert len(filtered) == 10
    assert all(label % 2 == 0 for label in filtered.tolist())


def test_filter_allowing_fewer_than_k_returns_every_allowed_label_in_exact_order(
    tmp_path: Path,
) -> None:
    rows = _unit_rows(seed=3, n=400, dim=16)
    index = _built(tmp_path / "v.hnsw", n=400)
    allowed = {5, 50, 123}
    query = rows[0]

    labels, scores = index.query(query, 10, allowed=lambda label: label in allowed)
    want_labels, want_scores = exact_search(
        rows[sorted(allowed)], np.array(sorted(allowed), dtype=np.int64), query, 10
    )

    assert sorted(labels.tolist()) == [5, 50, 123]
    assert labels.tolist() == want_labels.tolist()
    assert scores.tolist() == pytest.approx(want_scores.tolist(), abs=1e-5)
    # Positive control: without the filter label 0 (the query itself) comes first.
    assert index.query(query, 10)[0][0] == 0


def test_filter_that_allows_nothing_returns_empty_arrays(tmp_path: Path) -> None:
    index = _built(tmp_path / "v.hnsw", n=50)
    query = _unit_rows(seed=3, n=50, dim=16)[4]

    labels, scores = index.query(query, 5, allowed=lambda label: False)

    assert labels.shape == (0,)
    assert scores.shape == (0,)
    # Positive control: the same query with everything allowed finds its own row.
    assert index.query(query, 5, allowed=lambda label: True)[0][0] == 4


def test_k_above_the_count_returns_everything_and_k_zero_returns_nothing(tmp_path: Path) -> None:
    index = _built(tmp_path / "v.hnsw", n=12)
    query = _unit_rows(seed=3, n=12, dim=16)[0]

    assert sorted(index.query(query, 50)[0].tolist()) == list(range(12))
    assert index.query(query, 0)[0].shape == (0,)
    with pytest.raises(ValueError, match="k must be a non-negative int, received -1"):
        index.query(query, -1)
    assert len(index) == 12


def test_index_reloaded_in_a_fresh_object_returns_the_same_results(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "v.hnsw"
    built = _built(path, n=500, generation="gen-7")
    queries = _unit_rows(seed=11, n=5, dim=16)

    fresh = VectorIndex(path, 16)
    assert len(fresh) == 0
    assert fresh.load() is True

    assert len(fresh) == 500
    for query in queries:
        got_labels, got_scores = fresh.query(query, 10)
        want_labels, want_scores = built.query(query, 10)
        assert got_labels.tolist() == want_labels.tolist()
        assert got_scores.tolist() == want_scores.tolist()
    meta = json.loads(fresh.meta_path.read_text(encoding="utf-8"))
    assert meta["generation"] == "gen-7"
    assert meta["count"] == 500
    assert meta["dim"] == 16
    assert meta["format"] == FORMAT_VERSION
    assert meta["params"] == {"space": "cosine", "M": 16, "ef_construction": 800, "ef_search": 600}


def test_same_vectors_build_a_byte_identical_index(tmp_path: Path) -> None:
    first = _built(tmp_path / "a.hnsw", n=300)
    second = _built(tmp_path / "b.hnsw", n=300)

    assert first.path.read_bytes() == second.path.read_bytes()


def test_is_current_only_for_the_built_generation_and_an_existing_file(tmp_path: Path) -> None:
    index = _built(tmp_path / "v.hnsw", n=20, generation="gen-a")

    assert index.is_current("gen-a") is True
    assert index.is_current("gen-b") is False
    assert VectorIndex(tmp_path / "v.hnsw", 8).is_current("gen-a") is False  # other dim
    index.path.unlink()
    assert index.is_current("gen-a") is False
    assert VectorIndex(tmp_path / "never.hnsw", 16).is_current("gen-a") is False


def test_truncated_index_file_fails_to_load_instead_of_crashing(tmp_path: Path) -> None:
    path = tmp_path / "v.hnsw"
    _built(path, n=200)
    assert VectorIndex(path, 16).load() is True  # control: the intact file loads

    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    index = VectorIndex(path, 16)

    assert index.load() is False
    assert index.is_current("g1") is False
    assert len(index) == 0


def test_same_size_corruption_and_foreign_bytes_fail_to_load(tmp_path: Path) -> None:
    path = tmp_path / "v.hnsw"
    _built(path, n=200)
    data = bytearray(path.read_bytes())
    assert VectorIndex(path, 16).load() is True  # control: the intact file loads

    data[100:140] = bytes(40)
    path.write_bytes(bytes(data))
    assert VectorIndex(path, 16).load() is False

    path.write_bytes(b"not an hnsw index")
    assert VectorIndex(path, 16).load() is False


def test_an_index_its_sidecar_wrote_loads_without_hashing_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v.hnsw"
    _built(path, n=200)
    hashed = hashed_files(monkeypatch, vectors, "sha256_file")
    assert VectorIndex(path, 16).load() is True
    assert hashed == []  # size, mtime and inode as the writer recorded them
    assert VectorIndex(path, 16).load(full_check=True) is True
    assert hashed == [path]  # control: a full check hashes it
    # Same-size damage whose mtime is put back: the quick load cannot see it, the full check can.
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[100:140] = bytes(40)
    with path.open("r+b") as handle:  # in place: the inode stays
        handle.write(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert VectorIndex(path, 16).load(full_check=True) is False
    # Any other write moves the mtime, and the quick load hashes and refuses it too.
    path.write_bytes(bytes(data))
    hashed.clear()
    assert VectorIndex(path, 16).load() is False
    assert hashed == [path]


def test_unreadable_or_stale_sidecar_fails_to_load(tmp_path: Path) -> None:
    path = tmp_path / "v.hnsw"
    index = _built(path, n=30)
    meta = json.loads(index.meta_path.read_text(encoding="utf-8"))
    assert VectorIndex(path, 16).load() is True  # control

    index.meta_path.write_text(json.dumps({**meta, "format": FORMAT_VERSION + 1}), "utf-8")
    assert VectorIndex(path, 16).load() is False
    index.meta_path.write_text(json.dumps({**meta, "params": {"M": 32}}), "utf-8")
    assert VectorIndex(path, 16).load() is False
    index.meta_path.write_text("{not json", "utf-8")
    assert VectorIndex(path, 16).load() is False
    index.meta_path.write_text(json.dumps(meta), "utf-8")
    assert VectorIndex(path, 16).load() is True
    assert VectorIndex(path, 16, IndexParams(M=32)).load() is False


def test_a_kill_while_rebuilding_leaves_no_index_that_claims_to_be_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v.hnsw"
    _built(path, n=40, generation="gen-a")
    assert VectorIndex(path, 16).is_current("gen-a") is True  # control

    def killed(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("engine.vectors.os.replace", killed)
    with pytest.raises(KeyboardInterrupt):
        _built(path, n=60, generation="gen-b")
    monkeypatch.undo()

    assert VectorIndex(path, 16).is_current("gen-a") is False
    assert VectorIndex(path, 16).is_current("gen-b") is False
    assert VectorIndex(path, 16).load() is False
    assert [p.name for p in tmp_path.iterdir()] == ["v.hnsw"]


def test_add_grows_the_index_and_persists_it(tmp_path: Path) -> None:
    path = tmp_path / "v.hnsw"
    rows = _unit_rows(seed=5, n=150, dim=16)
    index = VectorIndex(path, 16)
    index.build(np.arange(100, dtype=np.int64), rows[:100], "g1")

    index.add(np.arange(100, 150, dtype=np.int64), rows[100:], "g2", embedder_id="hash-16-v1")

    fresh = VectorIndex(path, 16)
    assert fresh.is_current("g2") is True
    assert fresh.is_current("g1") is False
    assert fresh.load() is True
    assert len(fresh) == 150
    assert fresh.query(rows[140], 1)[0].tolist() == [140]
    assert fresh.query(rows[10], 1)[0].tolist() == [10]
    assert json.loads(fresh.meta_path.read_text("utf-8"))["embedder_id"] == "hash-16-v1"


def test_add_to_a_missing_index_starts_a_new_one(tmp_path: Path) -> None:
    rows = _unit_rows(seed=5, n=3, dim=16)
    index = VectorIndex(tmp_path / "v.hnsw", 16)

    index.add(np.array([4, 9, 2], dtype=np.int64), rows, "g1")

    assert len(index) == 3
    assert index.query(rows[1], 1)[0].tolist() == [9]


def test_query_before_build_or_load_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(VectorIndexError, match=r"call build\(\) or load\(\) first"):
        VectorIndex(tmp_path / "v.hnsw", 4).query(np.ones(4, dtype=np.float32), 3)


def test_build_rejects_mismatched_shapes_duplicates_and_negative_labels(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "v.hnsw", 4)
    rows = _unit_rows(seed=1, n=3, dim=4)

    with pytest.raises(ValueError, match=r"shape \(3, 4\)"):
        index.build(np.arange(3, dtype=np.int64), rows[:, :3], "g1")
    with pytest.raises(ValueError, match="repeat"):
        index.build(np.array([1, 1, 2], dtype=np.int64), rows, "g1")
    with pytest.raises(ValueError, match="non-negative"):
        index.build(np.array([-1, 1, 2], dtype=np.int64), rows, "g1")
    index.build(np.array([0, 1, 2], dtype=np.int64), rows, "g1")  # control
    assert len(index) == 3


def test_index_params_reject_values_hnsw_cannot_use() -> None:
    with pytest.raises(ValueError, match="M must be an int >= 2, received 1"):
        IndexParams(M=1)
    with pytest.raises(ValueError, match="space must be one of cosine, received 'l2'"):
        IndexParams(space="l2")
    assert IndexParams().to_dict()["ef_search"] == 600


def test_exact_search_breaks_score_ties_by_label() -> None:
    a = [1.0, 0.0]
    b = [0.0, 1.0]
    matrix = np.array([a, b, a, a, b], dtype=np.float32)
    labels = np.array([9, 4, 2, 7, 1], dtype=np.int64)

    got, scores = exact_search(matrix, labels, np.array(a, dtype=np.float32), 4)

    # Three rows tie at cosine 1 (labels 9, 2, 7), two at 0 (labels 4, 1).
    assert got.tolist() == [2, 7, 9, 1]
    assert scores.tolist() == [1.0, 1.0, 1.0, 0.0]


def test_exact_search_keeps_a_score_equal_to_min_score_and_drops_one_below() -> None:
    query = np.array([1.0, 0.0], dtype=np.float32)
    matrix = np.array(
        [[0.6, 0.8], [0.5, math.sqrt(0.75)], [0.4, math.sqrt(0.84)]], dtype=np.float32
    )
    labels = np.array([1, 2, 3], dtype=np.int64)

    at_half, scores = exact_search(matrix, labels, query, 10, min_score=0.5)
    just_above, _ = exact_search(matrix, labels, query, 10, min_score=0.5001)
    everything, _ = exact_search(matrix, labels, query, 10)

    assert at_half.tolist() == [1, 2]
    assert scores.tolist() == pytest.approx([0.6, 0.5])
    assert just_above.tolist() == [1]
    assert everything.tolist() == [1, 2, 3]


def test_exact_search_on_an_empty_matrix_returns_empty_arrays() -> None:
    labels, scores = exact_search(
        np.zeros((0, 3), dtype=np.float32), np.zeros(0, dtype=np.int64), np.ones(3), 5
    )

    assert labels.shape == (0,)
    assert scores.shape == (0,)


def test_exact_search_rejects_a_query_of_the_wrong_dimension() -> None:
    matrix = _unit_rows(seed=2, n=4, dim=3)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        exact_search(matrix, np.arange(4, dtype=np.int64), np.ones(5, dtype=np.float32), 2)


def test_index_files_live_beside_the_given_path(tmp_path: Path) -> None:
    index = _built(tmp_path / "store" / "chunks.hnsw", n=5)

    assert sorted(os.listdir(tmp_path / "store")) == ["chunks.hnsw", "chunks.hnsw.meta.json"]
    assert index.meta_path == tmp_path / "store" / "chunks.hnsw.meta.json"

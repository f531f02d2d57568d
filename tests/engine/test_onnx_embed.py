"""engine.onnx_embed without the real model: batching by length, the export cache and its checks."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from engine import onnx_embed, onnx_sources
from engine.embed import Embedder, EmbedderUnavailableError, get_embedder
from engine.onnx_embed import (
    FP32,
    INT8,
    SINGLE,
    OnnxCacheError,
    OnnxMiniLMEmbedder,
    Variant,
    default_workers,
    ensure_export,
    export_in_child,
    length_order,
    model_cache_dir,
    read_export,
    write_export,
)
from engine.onnx_export import main as export_main
from engine.onnx_sources import SOURCE_FILES
from tests.hashing import hashed_files


@dataclass(frozen=True)
class _Encoding:
    ids: list[int]


class _CharTokenizer:
    """One token per character, its code point as the id."""

    def encode_batch(self, texts: Sequence[str]) -> list[_Encoding]:
        return [_Encoding([ord(c) for c in text]) for text in texts]


class _OneHotSession:
    """Each real token's hidden state is the one-hot of its id; padding gets a loud vector at 383."""

    def __init__(self) -> None:
        self.batches: list[list[list[int]]] = []

    def run(self, names: list[str], feeds: dict[str, NDArray[np.int64]]) -> list[NDArray[Any]]:
        ids, mask = feeds["input_ids"], feeds["attention_mask"]
        self.batches.append(ids.tolist())
        hidden = np.zeros((*ids.shape, 384), dtype=np.float32)
        for row, col in np.ndindex(ids.shape):
            if mask[row, col]:
                hidden[row, col, ids[row, col]] = 1.0
            else:
                hidden[row, col, 383] = 100.0
        return [hidden]


def _fake_embedder(
    monkeypatch: pytest.MonkeyPatch, batch_size: int, workers: int = 1, session: Any = None
) -> tuple[Embedder, Any]:
    session = session if session is not None else _OneHotSession()
    monkeypatch.setattr(OnnxMiniLMEmbedder, "_build", lambda self: (session, _CharTokenizer()))
    return OnnxMiniLMEmbedder(batch_size=batch_size, workers=workers), session


class _MeetingSession(_OneHotSession):
    """Records which thread ran each batch; the first `meet` calls wait for each other (a barrier)."""

    def __init__(self, meet: int) -> None:
        super().__init__()
        self.threads: list[int] = []
        self._barrier = threading.Barrier(meet, timeout=10)
        self._meet = meet
        self._lock = threading.Lock()

    def run(self, names: list[str], feeds: dict[str, NDArray[np.int64]]) -> list[NDArray[Any]]:
        with self._lock:
            self.threads.append(threading.get_ident())
            first = len(self.threads) <= self._meet
        if first:
            self._barrier.wait()  # raises BrokenBarrierError unless `meet` calls run at once
        with self._lock:
            return super().run(names, feeds)


def test_length_order_sorts_positions_by_length_and_keeps_ties_in_input_order() -> None:
    assert length_order([3, 1, 2, 1]) == [1, 3, 2, 0]
    assert length_order([]) == []


def test_batches_run_sorted_by_length_and_rows_come_back_in_input_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder, session = _fake_embedder(monkeypatch, batch_size=2)

    vectors = embedder.embed(["ccc", "a", "ab"])

    # Sorted by token count: "a" (1), "ab" (2) in the first batch, padded with id 0; then "ccc".
    assert session.batches == [[[97, 0], [97, 98]], [[99, 99, 99]]]
    # Rows in input order: "ccc" is e_99; "a" is e_97; "ab" is the mean of e_97 and e_98, normalised.
    # The padding's loud vector at 383 is masked out of every mean.
    expected = np.zeros((3, 384), dtype=np.float32)
    expected[0, 99] = 1.0
    expected[1, 97] = 1.0
    expected[2, [97, 98]] = 1 / np.sqrt(2)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert vectors.dtype == np.float32


def test_workers_run_batches_at_once_and_give_the_same_rows_as_one_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["ccc", "a", "ab", "dddd", "e", "ff", "ggggg"]
    serial, one = _fake_embedder(monkeypatch, batch_size=2, workers=1)
    expected = serial.embed(texts)
    # 7 texts in batches of 2 make 4 batches; 3 workers: the first 3 batches meet at a barrier,
    # which only concurrent calls can pass (one worker would wait there until the timeout).
    parallel, meeting = _fake_embedder(
        monkeypatch, batch_size=2, workers=3, session=_MeetingSession(meet=3)
    )

    vectors = parallel.embed(texts)

    assert np.array_equal(vectors, expected)
    assert len(meeting.threads) == 4
    assert len(set(meeting.threads[:3])) == 3  # three threads ran the first three batches
    assert sorted(map(sorted, meeting.batches)) == sorted(map(sorted, one.batches))
    # one batch needs no thread pool: it runs on the calling thread
    single, lone = _fake_embedder(
        monkeypatch, batch_size=8, workers=3, session=_MeetingSession(meet=1)
    )
    assert np.array_equal(single.embed(texts), expected)
    assert lone.threads == [threading.get_ident()]


def test_default_workers_are_the_usable_cpus_capped_at_eight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(3)), raising=False)
    assert default_workers() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)), raising=False)
    assert default_workers() == 8


def test_empty_input_gives_an_empty_matrix_and_a_bare_string_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder, session = _fake_embedder(monkeypatch, batch_size=4)

    assert embedder.embed([]).shape == (0, 384)
    assert session.batches == []  # nothing was run for no texts ...
    assert embedder.embed(["x"]).shape == (1, 384)
    assert session.batches == [[[120]]]  # ... and one text runs one batch
    with pytest.raises(TypeError, match=r"wrap it in a list"):
        embedder.embed("one string")


def test_variants_report_their_ids_and_bad_arguments_are_refused() -> None:
    assert isinstance(OnnxMiniLMEmbedder(), Embedder)
    assert OnnxMiniLMEmbedder().id == "minilm-l6-v2"
    assert OnnxMiniLMEmbedder("int8").id == "minilm-l6-v2-int8"
    assert OnnxMiniLMEmbedder().dim == 384
    assert OnnxMiniLMEmbedder().batch_size == 1  # the single-text graph (DEFAULT_BATCH)
    assert OnnxMiniLMEmbedder().workers == default_workers() >= 1
    assert OnnxMiniLMEmbedder(prepack=False).workers == 1  # a few texts: one call at a time
    assert OnnxMiniLMEmbedder(workers=3).workers == 3
    with pytest.raises(ValueError, match="unknown ONNX variant 'fp16', choose one of fp32, int8"):
        OnnxMiniLMEmbedder("fp16")
    with pytest.raises(ValueError, match="batch_size must be a positive int, received 0"):
        OnnxMiniLMEmbedder(batch_size=0)
    with pytest.raises(ValueError, match="workers must be a positive int, received 0"):
        OnnxMiniLMEmbedder(workers=0)


def test_model_cache_is_the_environment_setting_else_the_xdg_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(tmp_path / "models"))
    assert model_cache_dir() == tmp_path / "models"
    monkeypatch.delenv("RECALLBENCH_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "recallbench" / "models"


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "model"
    for rel in SOURCE_FILES:
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(f"contents of {rel}", encoding="utf-8")
    return source


class _FakeExporter:
    """Writes `model-N` through the real sidecar writer; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, variant: Variant, cache: Path, source: Path) -> None:
        self.calls.append(variant.name)
        write_export(variant, cache, source, b"onnx bytes of " + variant.name.encode(), {"t": "1"})


def test_a_missing_export_is_made_once_with_a_message_then_read_from_the_cache(
    tmp_path: Path,
) -> None:
    source, cache, exporter = _source(tmp_path), tmp_path / "cache", _FakeExporter()
    lines: list[str] = []

    first = ensure_export(FP32, cache, source, exporter=exporter, say=lines.append)
    second = ensure_export(FP32, cache, source, exporter=exporter, say=lines.append)

    assert first == second == cache / FP32.file_name
    assert first.read_bytes() == b"onnx bytes of fp32"
    assert exporter.calls == ["fp32"]
    assert len(lines) == 2
    assert lines[0].startswith(
        f"recallbench: exporting all-MiniLM-L6-v2 (fp32) to ONNX once, into {cache}"
    )
    assert lines[1].startswith("recallbench: ONNX export done in ")
    sidecar = json.loads((cache / "all-MiniLM-L6-v2.fp32.onnx.json").read_text(encoding="utf-8"))
    assert sidecar["sha256"] == hashlib.sha256(b"onnx bytes of fp32").hexdigest()
    assert (
        sidecar["sources"]["tokenizer.json"]["sha256"]
        == hashlib.sha256(b"contents of tokenizer.json").hexdigest()
    )
    assert sidecar["settings"]["opset"] == 17
    assert sidecar["embedder_id"] == "minilm-l6-v2"


def test_a_changed_source_file_makes_the_export_stale_and_it_is_exported_again(
    tmp_path: Path,
) -> None:
    source, cache, exporter = _source(tmp_path), tmp_path / "cache", _FakeExporter()
    ensure_export(FP32, cache, source, exporter=exporter, say=lambda _: None)
    # Control: a new mtime with the same content is not a change (the content hash decides).
    os.utime(source / "tokenizer.json", ns=(1, 1))
    assert read_export(FP32, cache, source).read_bytes() == b"onnx bytes of fp32"

    (source / "tokenizer.json").write_text("another vocabulary", encoding="utf-8")

    with pytest.raises(OnnxCacheError, match=r"other model files .*\(tokenizer\.json\)") as err:
        read_export(FP32, cache, source)
    assert err.value.kind == "stale"
    ensure_export(FP32, cache, source, exporter=exporter, say=lambda _: None)
    assert exporter.calls == ["fp32", "fp32"]
    assert read_export(FP32, cache, source).read_bytes() == b"onnx bytes of fp32"


def test_an_export_made_with_other_settings_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, cache = _source(tmp_path), tmp_path / "cache"
    _FakeExporter()(INT8, cache, source)
    assert read_export(INT8, cache, source).read_bytes() == b"onnx bytes of int8"

    monkeypatch.setattr(onnx_embed, "EXPORT_FORMAT", onnx_embed.EXPORT_FORMAT + 1)

    with pytest.raises(OnnxCacheError, match="exported with other settings") as err:
        read_export(INT8, cache, source)
    assert err.value.kind == "stale"


def test_a_damaged_export_is_refused_by_its_sha256_and_exported_again(tmp_path: Path) -> None:
    source, cache, exporter = _source(tmp_path), tmp_path / "cache", _FakeExporter()
    ensure_export(FP32, cache, source, exporter=exporter, say=lambda _: None)
    good = hashlib.sha256(b"onnx bytes of fp32").hexdigest()
    bad = hashlib.sha256(b"onnx bytes of fp33").hexdigest()
    (cache / FP32.file_name).write_bytes(b"onnx bytes of fp33")  # same size, one byte off

    with pytest.raises(OnnxCacheError) as err:
        read_export(FP32, cache, source)
    assert err.value.kind == "damaged"
    assert str(err.value) == (
        f"Expected sha256 of {cache / FP32.file_name} to be {good} but got {bad} (18 bytes); "
        "the file is damaged"
    )
    lines: list[str] = []
    fresh = ensure_export(FP32, cache, source, exporter=exporter, say=lines.append)
    assert fresh.read_bytes() == b"onnx bytes of fp32"
    assert exporter.calls == ["fp32", "fp32"]
    assert "(damaged: Expected sha256" in lines[0]
    assert "; refused)" in lines[0]


def test_an_export_that_does_not_verify_afterwards_is_an_error_naming_the_problem(
    tmp_path: Path,
) -> None:
    source, cache = _source(tmp_path), tmp_path / "cache"
    calls: list[str] = []

    def broken(variant: Variant, cache: Path, source: Path) -> None:
        calls.append(variant.name)

    with pytest.raises(EmbedderUnavailableError, match=r"fresh fp32 ONNX export does not verify"):
        ensure_export(FP32, cache, source, exporter=broken, say=lambda _: None)
    assert calls == ["fp32"]


def test_a_failed_export_process_reports_its_stderr_and_the_torch_fallback(tmp_path: Path) -> None:
    bogus = Variant(name="fp16", embedder_id="x", file_name="x.onnx")

    with pytest.raises(EmbedderUnavailableError) as err:
        export_in_child(bogus, tmp_path / "cache", _source(tmp_path))

    message = str(err.value)
    assert "(fp16) to ONNX" in message
    assert "(exit 2)" in message
    assert (
        "usage: python -m engine.onnx_export {fp32,int8,fp32-single,int8-single} CACHE_DIR MODEL_DIR"
        in message
    )
    assert "RECALLBENCH_EMBEDDER=minilm-torch" in message
    assert export_main([]) == 2  # the same refusal, in process


def test_a_few_texts_embedder_skips_prepacking_under_the_same_id() -> None:
    # `recallbench search` without a server embeds one query and exits: it asks for `few_texts`.
    few = get_embedder("minilm", few_texts=True)
    many = get_embedder("minilm")
    assert isinstance(few, OnnxMiniLMEmbedder)
    assert isinstance(many, OnnxMiniLMEmbedder)
    assert (few.prepack, many.prepack) == (False, True)  # the default is the control
    assert few.id == many.id == "minilm-l6-v2"
    int8 = get_embedder("minilm-int8", few_texts=True)
    assert isinstance(int8, OnnxMiniLMEmbedder)
    assert (int8.prepack, int8.id) == (False, "minilm-l6-v2-int8")
    # an embedder with no such trade is built as usual
    assert get_embedder("hash", few_texts=True).id == get_embedder("hash").id


def test_building_the_default_embedder_for_its_id_exports_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hooks build the configured embedder only for its id (the socket's name): that must never
    # start an export. The control: the first embed of a text does export.
    cache = tmp_path / "cache"
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(cache))
    assert get_embedder("minilm").id == "minilm-l6-v2"
    assert get_embedder("minilm-int8").embed([]).shape == (0, 384)
    assert not cache.exists()

    exporter = _FakeExporter()
    embedder = OnnxMiniLMEmbedder(exporter=exporter)
    with pytest.raises(EmbedderUnavailableError, match=r"ONNX Runtime cannot load .*delete it"):
        embedder.embed(["a text"])  # the fake export is not a real ONNX graph
    # At the default batch of one text the embedder runs the single-text form; at two, the whole graph.
    assert exporter.calls == ["fp32-single"]
    assert (cache / SINGLE["fp32"].file_name).exists()
    with pytest.raises(EmbedderUnavailableError, match=r"ONNX Runtime cannot load"):
        OnnxMiniLMEmbedder(exporter=exporter, batch_size=2).embed(["a text"])
    assert exporter.calls == ["fp32-single", "fp32"]
    assert (cache / FP32.file_name).exists()


def test_each_single_text_form_shares_its_variants_id_and_names_it_in_its_settings() -> None:
    assert [(v.name, v.embedder_id, v.file_name) for v in SINGLE.values()] == [
        ("fp32-single", "minilm-l6-v2", "all-MiniLM-L6-v2.fp32.single.onnx"),
        ("int8-single", "minilm-l6-v2-int8", "all-MiniLM-L6-v2.int8.single.onnx"),
    ]
    assert onnx_embed.export_settings(SINGLE["int8"]) == {
        **onnx_embed.export_settings(INT8),
        "variant": "int8-single",
        "single_of": "int8",
    }
    assert "single_of" not in onnx_embed.export_settings(INT8)  # the control


def _exported(tmp_path: Path) -> tuple[Path, Path]:
    """(source folder, cache) after a fake fp32 export."""
    source, cache = _source(tmp_path), tmp_path / "cache"
    ensure_export(FP32, cache, source, exporter=_FakeExporter(), say=lambda _: None)
    return source, cache


def test_a_verified_export_is_not_hashed_again_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, cache = _exported(tmp_path)
    hashed = hashed_files(monkeypatch, onnx_embed, "sha256_file")
    model = cache / FP32.file_name
    read_export(FP32, cache, source)
    read_export(FP32, cache, source)
    assert hashed.count(model) == 0  # ensure_export's check left the stamp
    # Control: a write to the file (same size, one byte off) changes its mtime, so it is hashed
    # again and refused as damaged.
    model.write_bytes(b"onnx bytes of fp33")
    with pytest.raises(OnnxCacheError) as err:
        read_export(FP32, cache, source)
    assert err.value.kind == "damaged"
    assert hashed.count(model) == 1


def test_reinstalled_sources_are_hashed_once_then_trusted_by_their_new_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, cache = _exported(tmp_path)
    hashed = hashed_files(monkeypatch, onnx_sources, "sha256_file")
    weights = source / SOURCE_FILES[0]
    read_export(FP32, cache, source)
    assert hashed == []  # sizes and mtimes as the sidecar recorded them: nothing is hashed
    # A reinstall: the same bytes with new mtimes. The first load hashes the two files once ...
    os.utime(weights, ns=(10**18, 10**18))
    os.utime(source / "tokenizer.json", ns=(10**18, 10**18))
    read_export(FP32, cache, source)
    assert sorted(hashed) == sorted([weights, source / "tokenizer.json"])
    # ... and later loads trust their new stats.
    read_export(FP32, cache, source)
    read_export(FP32, cache, source)
    assert len(hashed) == 2
    assert (cache / FP32.sources_verified_name).is_file()
    # Control: other bytes of the same size under a stamped stat's mtime are hashed and refused.
    original = weights.read_bytes()
    weights.write_bytes(bytes(len(original)))
    os.utime(weights, ns=(10**18 + 1, 10**18 + 1))
    with pytest.raises(OnnxCacheError) as err:
        read_export(FP32, cache, source)
    assert err.value.kind == "stale"
    assert hashed.count(weights) == 2

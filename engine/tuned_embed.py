"""A fine-tuned all-MiniLM-L6-v2 as a fitted, hash-checked artifact in the model cache.

`harness.tune` fine-tunes the packaged model on training pairs and `save_tuned` writes the result to
``<model cache>/tuned/<weights sha256>/`` (a sentence-transformers folder). The folder is named by
`weights_sha256`, a hash over the weights themselves (every tensor of the `state_dict`, with its name,
dtype and shape), not over the files: the same weights give the same name however they were saved.
`TunedEmbedder` loads the folder for the hash a protocol's lock records and refuses weights whose hash
is another, so a run can only embed with the encoder that registration fitted.

Loading imports torch and sentence-transformers (as `engine.embed.MiniLMEmbedder` does), offline.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.checks import is_int
from engine.embed import load_sentence_transformer, st_encode
from engine.embed_common import MINILM_DIM, check_texts
from engine.tuned_cache import (
    ID_PREFIX,
    SHA256,
    TUNED_DIR,
    TUNED_ID,
    TunedWeightsError,
    tuned_dir,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


__all__ = [
    "ID_PREFIX",
    "TUNED_DIR",
    "TunedEmbedder",
    "TunedWeightsError",
    "check_folder",
    "load_sentence_transformer",
    "save_tuned",
    "tuned_dir",
    "weights_sha256",
]

# Starts the hashed stream, so that a change to the hashing rule changes every hash.
_HASH_FORMAT = b"recallbench-weights-v1\n"


def weights_sha256(model: Any) -> str:
    """The sha256 of a torch module's weights, independent of how (or whether) they were saved.

    Each `state_dict` entry, in sorted key order, contributes a JSON header line (key, dtype, shape
    and byte count) and then the tensor's contiguous CPU bytes. Headers cannot contain a newline and
    announce how many bytes follow, so two different state dicts never feed the same stream.
    """
    digest = hashlib.sha256(_HASH_FORMAT)
    state = model.state_dict()
    for key in sorted(state):
        tensor = state[key]
        data = tensor.detach().cpu().contiguous().numpy().tobytes()
        header = json.dumps([key, str(tensor.dtype), list(tensor.shape), len(data)])
        digest.update(header.encode("utf-8") + b"\n")
        digest.update(data)
    return digest.hexdigest()


def save_tuned(model: Any, cache: Path | None = None) -> str:
    """Write a SentenceTransformer's folder to `tuned_dir(<its weights sha256>)`; return the hash.

    The model is saved into a temporary folder beside the target and renamed into place, so the
    target is either absent or complete. A target that already exists holds the same weights (its
    name is their hash) and is kept; the new copy is deleted.
    """
    sha = weights_sha256(model)
    target = tuned_dir(sha, cache)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if target.is_dir():
        return sha
    tmp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", suffix=".tmp", dir=target.parent))
    try:
        # No model card: it would record the training run's details, which the artifact does not need.
        model.save(str(tmp), create_model_card=False)
        try:
            tmp.rename(target)
        except OSError:
            if not target.is_dir():  # not a concurrent writer that got there first
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return sha


class TunedEmbedder:
    """A fine-tuned all-MiniLM-L6-v2 (384-d) from the model cache, checked against its weights hash.

    The model is loaded on the first non-empty `embed`; a folder that is missing, cannot be loaded,
    or whose weights hash to anything but `weights_sha256` raises `TunedWeightsError`.
    """

    def __init__(
        self, weights_sha256: str, *, cache: Path | None = None, batch_size: int = 64
    ) -> None:
        if not isinstance(weights_sha256, str) or not SHA256.fullmatch(weights_sha256):
            msg = (
                f"weights_sha256 must be 64 lower-case hex digits, received {weights_sha256!r}; "
                "pass the hash that `save_tuned` returned (the lock records it)"
            )
            raise ValueError(msg)
        if not is_int(batch_size) or batch_size < 1:
            msg = f"batch_size must be a positive int, received {batch_size!r}; use e.g. 64"
            raise ValueError(msg)
        self._sha = weights_sha256
        self._cache = cache
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        # Stored vectors are keyed by it: other weights are another embedder.
        return f"{ID_PREFIX}{self._sha[:12]}"

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def weights_sha256(self) -> str:
        return self._sha

    @property
    def folder(self) -> Path:
        """Where the weights are read from: `tuned_dir(weights_sha256, cache)`."""
        return tuned_dir(self._sha, self._cache)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed `texts` in batches; rows are L2-normalised float32 of length 384.

        Raises:
            TunedWeightsError: the folder is missing or unreadable, or holds other weights.
        """
        import numpy as np

        items = check_texts(texts, self.id)
        if not items:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        return st_encode(
            self._load(),
            items,
            self._batch_size,
            embedder_id=self.id,
            error=TunedWeightsError,
            fix=self._fix(),
        )

    def _load(self) -> Any:
        """Load and check the model once; later calls reuse it."""
        with self._lock:
            if self._model is None:
                self._model = self._build()
            return self._model

    def _build(self) -> Any:
        folder = self.folder
        if not (folder / "modules.json").is_file():
            msg = f"no fine-tuned weights {self._sha} in {folder}; {self._fix()}"
            raise TunedWeightsError(msg)
        try:
            model = load_sentence_transformer(folder)
        except Exception as exc:  # a damaged folder fails in torch, safetensors or transformers
            msg = f"the fine-tuned weights in {folder} cannot be loaded ({exc}); {self._fix()}"
            raise TunedWeightsError(msg) from exc
        model.eval()
        actual = weights_sha256(model)
        if actual != self._sha:
            msg = (
                f"Expected sha256 of the weights in {folder} to be {self._sha} but got {actual}; "
                f"{self._fix()}"
            )
            raise TunedWeightsError(msg)
        return model

    def _fix(self) -> str:
        return (
            "re-run `recallbench protocol register` (it fits the encoder again and writes this "
            f"folder), or delete {self.folder} and register again"
        )


def check_folder(folder: Path, embedder_id: str) -> None:
    """Refuse `folder` unless it holds the weights `embedder_id` names: the folder is named by a
    weights sha256 that starts with the id's 12 hex digits, and the weights it loads hash to it.

    Loads the model (torch); `engine.onnx_export` calls it before it exports fine-tuned weights.

    Raises:
        TunedWeightsError: the id, the folder's name or the weights in it do not agree.
    """
    match = TUNED_ID.fullmatch(embedder_id)
    sha = folder.name
    if match is None or not SHA256.fullmatch(sha) or not sha.startswith(match.group("sha12")):
        msg = (
            f"{folder} is not the folder of the weights of {embedder_id} "
            f"(<model cache>/{TUNED_DIR}/<weights sha256>)"
        )
        raise TunedWeightsError(msg)
    TunedEmbedder(sha, cache=folder.parent.parent)._load()  # refuses weights that hash otherwise

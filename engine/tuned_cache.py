"""Where fine-tuned encoders live in the model cache, and how one is served by its embedder id.

`engine.tuned_embed` fine-tunes nothing itself: `harness.tune` does, and `engine.tuned_embed.save_tuned`
writes the weights to ``<model cache>/tuned/<weights sha256>/``. An encoder's embedder id is
``minilm-l6-v2-tuned-<first 12 hex digits of that hash>``. This module finds the weights for an id
(`find_weights`) and builds the ONNX Runtime embedder that serves them without torch
(`onnx_embedder`), which `engine.embed.get_embedder` returns for such an id: so ``RECALLBENCH_EMBEDDER=
minilm-l6-v2-tuned-<12 hex>`` makes `serve`, the hooks and `recallbench search` embed with a shipped
fine-tuned encoder. It imports neither torch nor `engine.embed`.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from engine.onnx_embed import OnnxMiniLMEmbedder, model_cache_dir

__all__ = [
    "ID_PREFIX",
    "ONNX_DIR",
    "SHA256",
    "TUNED_DIR",
    "TUNED_ID",
    "TunedEncoder",
    "TunedWeightsError",
    "find_weights",
    "is_tuned_id",
    "onnx_embedder",
    "remove_tuned",
    "tuned_dir",
    "tuned_encoders",
]

TUNED_DIR = "tuned"
# Prefix of every embedder id of a fine-tuned MiniLM; the first 12 hex digits of its weights follow.
ID_PREFIX = "minilm-l6-v2-tuned-"
SHA256 = re.compile(r"[0-9a-f]{64}")
TUNED_ID = re.compile(rf"{re.escape(ID_PREFIX)}(?P<sha12>[0-9a-f]{{12}})")
# The ONNX exports of a fine-tuned encoder live inside its weights' folder (`onnx_embedder`).
ONNX_DIR = "onnx"


class TunedWeightsError(RuntimeError):
    """A fine-tuned encoder's folder is missing, unreadable, or holds other weights than expected."""


@dataclass(frozen=True, kw_only=True)
class TunedEncoder:
    """One fine-tuned encoder in the model cache: its embedder id, weights' hash, folder, the bytes of
    every file under the folder (weights, tokenizer, ONNX exports) and whether it was exported."""

    embedder_id: str
    weights_sha256: str
    folder: Path
    bytes: int
    exported: bool


def tuned_dir(weights_sha256: str, cache: Path | None = None) -> Path:
    """The folder of the fine-tuned weights with this hash: ``<cache>/tuned/<weights_sha256>``."""
    return (cache if cache is not None else model_cache_dir()) / TUNED_DIR / weights_sha256


def is_tuned_id(name: str) -> bool:
    """Whether `name` is the embedder id of a fine-tuned MiniLM (``minilm-l6-v2-tuned-<12 hex>``)."""
    return TUNED_ID.fullmatch(name) is not None


def find_weights(embedder_id: str, cache: Path | None = None) -> str:
    """The weights' sha256 of the fine-tuned encoder whose embedder id is `embedder_id`: the one
    folder of ``<cache>/tuned/`` whose name starts with the id's 12 hex digits.

    Raises:
        TunedWeightsError: the id is not a fine-tuned encoder's, or no folder (or more than one)
            in the cache holds its weights; the message says how to get them.
    """
    match = TUNED_ID.fullmatch(embedder_id)
    if match is None:
        msg = f"{embedder_id!r} is not the id of a fine-tuned encoder ({ID_PREFIX}<12 hex digits>)"
        raise TunedWeightsError(msg)
    root = (cache if cache is not None else model_cache_dir()) / TUNED_DIR
    found = (
        sorted(p.name for p in root.iterdir() if p.is_dir() and SHA256.fullmatch(p.name))
        if root.is_dir()
        else []
    )
    mine = [name for name in found if name.startswith(match.group("sha12"))]
    if len(mine) == 1:
        return mine[0]
    if not mine:
        msg = (
            f"no fine-tuned weights for {embedder_id} in {root}: they are fitted by `recallbench "
            "protocol register` and, on another machine, fitted again by `recallbench bench run` of "
            "the protocol that registered them (it refuses weights that do not reproduce)"
        )
        raise TunedWeightsError(msg)
    msg = f"{len(mine)} folders of {root} hold weights whose hash starts as {embedder_id}'s: {mine}"
    raise TunedWeightsError(msg)


def onnx_embedder(
    embedder_id: str, *, few_texts: bool = False, cache: Path | None = None
) -> OnnxMiniLMEmbedder:
    """The fine-tuned encoder `embedder_id` through ONNX Runtime (no torch), as `serve`, the hooks and
    `recallbench search` embed with it once it is shipped; building it loads no model.

    The weights are found in the model cache (`find_weights`). They are exported once into their
    folder (``<cache>/tuned/<sha256>/onnx/``) by `engine.onnx_export`, which first checks that they
    hash to the folder's name, and every later load checks the export against the weights' files as
    for the packaged model. The vectors are the torch encoder's (`TunedEmbedder`), under the same id.

    Raises:
        TunedWeightsError: see `find_weights`.
    """
    folder = tuned_dir(find_weights(embedder_id, cache), cache)
    return OnnxMiniLMEmbedder(
        "fp32",
        prepack=not few_texts,
        source=folder,
        embedder_id=embedder_id,
        cache_dir=folder / ONNX_DIR,
    )


def _folder_bytes(folder: Path) -> int:
    """The bytes of the regular files under `folder`; links are not followed (a link counts its own
    size)."""
    total = 0
    for root, _, files in os.walk(folder, followlinks=False):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
    return total


def tuned_encoders(cache: Path | None = None) -> list[TunedEncoder]:
    """Every fine-tuned encoder in the model cache (folders of ``<cache>/tuned/`` named by a sha256),
    by embedder id. Registration leaves several: the encoder it fitted, and one per cross-fitting fold
    (used only while registering)."""
    root = (cache if cache is not None else model_cache_dir()) / TUNED_DIR
    if not root.is_dir():
        return []
    found = [
        TunedEncoder(
            embedder_id=f"{ID_PREFIX}{p.name[:12]}",
            weights_sha256=p.name,
            folder=p,
            bytes=_folder_bytes(p),
            exported=(p / ONNX_DIR).is_dir(),
        )
        for p in root.iterdir()
        if SHA256.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    ]
    return sorted(found, key=lambda e: (e.embedder_id, e.weights_sha256))


def remove_tuned(encoder: TunedEncoder) -> None:
    """Delete the encoder's folder (weights and exports). A registered protocol's `bench run` fits it
    again from its training data when it needs it; nothing else can bring it back."""
    shutil.rmtree(encoder.folder)

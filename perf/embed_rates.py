"""Embedding cost of the MiniLM forms: torch vs ONNX fp32 vs ONNX int8 on the same chunk texts.

`measure_embed_rates` encodes one list of texts with each embedder in this process (batch 64, each sorted
by length; the ONNX ones with their default workers) and reports chunks/s and the cosine to the torch
vectors; `measure_query_load` starts a fresh process that imports and loads the ONNX model and embeds
queries one at a time, and reports the load time, the per-query latency and whether torch was imported. `chunk_texts` makes the texts from the synthetic
corpus. `measure_embed_forms` is what `python -m perf` reports (and judges against issue 17's targets);
`python -m perf.embed_rates` prints the same measures as JSON on their own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.embed import Embedder, MiniLMEmbedder
from engine.memory import Memory
from engine.onnx_embed import DEFAULT_BATCH, OnnxMiniLMEmbedder
from harness.synthetic import SyntheticConfig, generate
from perf.corpus import min_sessions
from perf.machine import loadavg
from perf.measures import summary

# Every tenth text joins three chunks, so that some run past the model's 256 word pieces.
JOINED_EVERY = 10
JOINED_PARTS = 3


def chunk_texts(work: Path, count: int = 1000, seed: int = 1234) -> list[str]:
    """`count` chunk texts of a small synthetic corpus (generated and imported under `work`).

    Texts are taken in content-hash order; every tenth is three consecutive chunks joined by a blank
    line, longer than the model's truncation.

    Raises:
        ValueError: the corpus has too few chunks for `count` texts.
    """
    base = SyntheticConfig()
    generate(work / "gen", replace(base, seed=seed, sessions=min_sessions(base)))
    memory = Memory(work / "memory.db", None)
    try:
        memory.import_paths([work / "gen" / "projects"], embed=False)
        pending = sorted(memory.pending_texts("perf-embed-rates"))
    finally:
        memory.close()
    texts = [text for _, text in pending]
    joined = count // JOINED_EVERY
    needed = count - joined + joined * JOINED_PARTS
    if len(texts) < needed:
        msg = f"the corpus under {work} has {len(texts)} chunks; {count} texts need {needed}"
        raise ValueError(msg)
    out: list[str] = []
    cursor = 0
    for position in range(count):
        parts = JOINED_PARTS if position % JOINED_EVERY == JOINED_EVERY - 1 else 1
        out.append("\n\n".join(texts[cursor : cursor + parts]))
        cursor += parts
    return out


# Passes over the texts per embedder, taken in turns (torch, fp32, int8, ..., then again), so that a
# burst of load on a shared machine falls on one pass of each form, not on one form's only pass. The
# rates are each form's median pass; a speed-up is the median of the per-pass ratios to torch's pass
# of the same turn.
RATE_ROUNDS = 3


_clock = time.perf_counter  # tests replace it


def _timed(embedder: Embedder, texts: Sequence[str]) -> tuple[np.ndarray[Any, Any], float]:
    started = _clock()
    vectors = embedder.embed(list(texts))
    return vectors, _clock() - started


def measure_embed_rates(
    texts: Sequence[str],
    batch_size: int = 64,
    rounds: int = RATE_ROUNDS,
    forms: Mapping[str, Embedder] | None = None,
) -> dict[str, Any]:
    """Chunks/s of torch, ONNX fp32 and ONNX int8 on `texts` (at `batch_size`, and the ONNX ones again
    at their default batch), their ratios to torch and cosines to the torch vectors, over `rounds`
    passes taken in turns (`RATE_ROUNDS`). `forms`: other embedders by name (one named "torch")."""
    if rounds < 1:
        msg = f"rounds must be at least 1, got {rounds}"
        raise ValueError(msg)
    embedders: Mapping[str, Embedder] = forms or {
        "torch": MiniLMEmbedder(batch_size=batch_size),
        "onnx_fp32": OnnxMiniLMEmbedder("fp32", batch_size=batch_size),
        "onnx_int8": OnnxMiniLMEmbedder("int8", batch_size=batch_size),
        # as `minilm` and `minilm-int8` run by default
        "onnx_fp32_default_batch": OnnxMiniLMEmbedder("fp32", batch_size=DEFAULT_BATCH),
        "onnx_int8_default_batch": OnnxMiniLMEmbedder("int8", batch_size=DEFAULT_BATCH),
    }
    out: dict[str, Any] = {
        "texts": len(texts),
        "batch_size": batch_size,
        "rounds": rounds,
        "loadavg": loadavg(),
    }
    for embedder in embedders.values():
        embedder.embed(list(texts[:8]))  # load (and export, once) outside the timing
    seconds: dict[str, list[float]] = {name: [] for name in embedders}
    first: dict[str, np.ndarray[Any, Any]] = {}
    for _ in range(rounds):
        for name, embedder in embedders.items():
            vectors, took = _timed(embedder, texts)
            seconds[name].append(took)
            first.setdefault(name, vectors)
    reference = first["torch"]
    for name, embedder in embedders.items():
        rates = [len(texts) / took for took in seconds[name]]
        entry: dict[str, Any] = {
            "embedder_id": embedder.id,
            "batch_size": getattr(embedder, "batch_size", None),
            "workers": getattr(embedder, "workers", None),
            "seconds": float(np.median(seconds[name])),
            "chunks_per_s": float(np.median(rates)),
            "chunks_per_s_rounds": rates,
        }
        if name != "torch":
            cosines = np.sum(first[name] * reference, axis=1)
            entry["cosine_to_torch"] = {"min": float(cosines.min()), "mean": float(cosines.mean())}
            entry["speedup_vs_torch"] = float(
                np.median(
                    [t / took for t, took in zip(seconds["torch"], seconds[name], strict=True)]
                )
            )
        out[name] = entry
    out["loadavg_after"] = loadavg()
    return out


# The embedder is built as `recallbench search` and the prompt hook build theirs (`few_texts`: a process
# that embeds a query and exits; `OnnxMiniLMEmbedder`'s `prepack` is off there).
_QUERY_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from engine.embed import get_embedder
embedder = get_embedder(sys.argv[1], few_texts=True)
embedder.load()
load_s = time.perf_counter() - t0
queries = json.loads(sys.stdin.read())
embedder.embed([queries[0]])
times = []
for query in queries:
    t = time.perf_counter()
    embedder.embed([query])
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"load_s": load_s, "ms": times, "torch_imported": "torch" in sys.modules}))
"""


def measure_query_load(queries: Sequence[str], variant: str = "fp32") -> dict[str, Any]:
    """In a fresh process: seconds to import and load the ONNX model, then per-query milliseconds,
    with the embedder a one-shot command uses for `variant` (`minilm` for fp32, `minilm-int8`).

    The export must exist already (run `measure_embed_rates` or any embedding first).

    Raises:
        ValueError: no queries, or no embedder runs `variant`.
        RuntimeError: the child process failed (its stderr is in the message).
    """
    if not queries:
        msg = "measure_query_load needs at least one query"
        raise ValueError(msg)
    names = {form: name for name, form in ONNX_VARIANTS.items()}
    if variant not in names:
        msg = f"no embedder runs the ONNX variant {variant!r}; choose one of {sorted(names)}"
        raise ValueError(msg)
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", _QUERY_SCRIPT, names[variant]],
        input=json.dumps(list(queries)),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        msg = f"the query-embedding process failed (exit {done.returncode}): {done.stderr[-2000:]}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(done.stdout)
    return {
        "variant": variant,
        "load_s": result["load_s"],
        "query_ms": summary(result["ms"]),
        "queries": len(queries),
        "torch_imported": result["torch_imported"],
    }


# The ONNX Runtime variant that each run embedder uses; another embedder's run measures fp32 (`minilm`).
ONNX_VARIANTS = {"minilm": "fp32", "minilm-int8": "int8"}
# Issue 17: encode rate against torch in the same run, and a fresh process's query embedding.
SPEEDUP_TARGETS = {"onnx_fp32_default_batch": 2.0, "onnx_int8_default_batch": 3.0}
QUERY_LOAD_TARGETS = {"load_s": 0.5, "p50_ms": 15.0}


def measure_embed_forms(
    work: Path,
    queries: Sequence[str],
    *,
    texts: int,
    seed: int,
    embedder: str,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """`perf.run`'s embedding figures: a fresh process's query embedding with the run embedder's ONNX
    variant (first, while no export is being written), then torch vs ONNX encode rates on `texts`
    chunk texts (0 skips them). Imports torch into this process; `perf.run` calls it last."""
    variant = ONNX_VARIANTS.get(embedder, "fp32")
    out: dict[str, Any] = {}
    if queries:
        OnnxMiniLMEmbedder(variant).embed(["export the model once, outside the timing"])
        query = measure_query_load(queries, variant)
        out["query_load"] = {**query, "targets": QUERY_LOAD_TARGETS}
        say(
            f"fresh-process query embedding ({variant}): load {query['load_s']:.2f} s, p50 "
            f"{query['query_ms']['p50_ms']:.1f} ms, torch imported: {query['torch_imported']}"
        )
    if texts:
        chunks = chunk_texts(work / "embed-rates", texts, seed)
        say(f"encode rates: torch, ONNX fp32 and int8 over {len(chunks)} chunk texts")
        rates = measure_embed_rates(chunks)
        out["rates"] = {**rates, "targets": SPEEDUP_TARGETS}
        say(
            "encode rates (chunks/s): "
            + ", ".join(f"{name} {rates[name]['chunks_per_s']:.1f}" for name in RATE_NAMES)
        )
    return out


RATE_NAMES = (
    "torch",
    "onnx_fp32",
    "onnx_int8",
    "onnx_fp32_default_batch",
    "onnx_int8_default_batch",
)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m perf.embed_rates [--texts N] [--queries N]`: print the measures as JSON."""
    parser = argparse.ArgumentParser(prog="python -m perf.embed_rates", description=__doc__)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument(
        "--queries", type=int, default=50, help="queries per fresh-process load (0: none)"
    )
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    if args.texts < 1 or args.queries < 0:
        parser.error(
            f"--texts must be at least 1 and --queries at least 0, got {args.texts}, {args.queries}"
        )
    with tempfile.TemporaryDirectory(prefix="embed-rates-") as work:
        texts = chunk_texts(Path(work), args.texts)
    report: dict[str, Any] = {"rates": measure_embed_rates(texts, args.batch_size)}
    queries = [" ".join(text.split()[:12]) for text in texts[: args.queries]]
    if queries:  # --queries 0: the encode rates alone
        report["query_fp32"] = measure_query_load(queries, "fp32")
        report["query_int8"] = measure_query_load(queries, "int8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

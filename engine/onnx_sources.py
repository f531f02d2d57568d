"""The model files an ONNX export is made from (`engine.onnx_embed`), and whether they changed since.

An export's sidecar records each source file's sha256 with the size and mtime it had when hashed. A load
trusts a file whose size and mtime are the recorded ones, and hashes any other.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from engine.embed_common import MINILM_PACKAGE, EmbedderUnavailableError
from engine.hashing import sha256_file

# What the exported graph depends on, relative to the package's model folder.
SOURCE_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)


def stat_key(path: Path) -> list[int]:
    """Size and modification time: when both are unchanged, the recorded sha256 is trusted."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def source_record(source: Path) -> dict[str, dict[str, Any]]:
    """Each source file's sha256 with the size and mtime it had when hashed.

    Raises:
        EmbedderUnavailableError: a source file is missing (the message says to reinstall the package).
    """
    out: dict[str, dict[str, Any]] = {}
    for rel in SOURCE_FILES:
        path = source / rel
        if not path.is_file():
            msg = (
                f"the model folder {source} has no {rel}, which the ONNX export needs; "
                f"reinstall {MINILM_PACKAGE}"
            )
            raise EmbedderUnavailableError(msg)
        out[rel] = {"sha256": sha256_file(path), "stat": stat_key(path)}
    return out


def sources_changed(recorded: object, source: Path, stamp: Path) -> list[str]:
    """The source files whose content differs from the record.

    A file is hashed only when its size and mtime are neither the record's nor those `stamp` holds
    from an earlier match. After a reinstall of the model package (same bytes, new mtimes) the
    first load hashes the sources and stamps their new stats, so later loads do not hash them again.
    """
    if not isinstance(recorded, dict) or sorted(recorded) != sorted(SOURCE_FILES):
        return list(SOURCE_FILES)
    try:
        seen = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        seen = {}
    if not isinstance(seen, dict):
        seen = {}
    changed, matched = [], {}
    for rel in SOURCE_FILES:
        entry, path = recorded[rel], source / rel
        if not isinstance(entry, dict) or not path.is_file():
            changed.append(rel)
            continue
        stat = stat_key(path)
        if entry.get("stat") == stat or seen.get(rel) == [*stat, entry.get("sha256")]:
            continue
        if entry.get("sha256") != sha256_file(path):
            changed.append(rel)
            continue
        matched[rel] = [*stat, entry.get("sha256")]
    if matched and not changed:
        with contextlib.suppress(OSError):  # a cache that cannot be written is hashed next time
            replace_bytes(stamp, json.dumps({**seen, **matched}, sort_keys=True).encode())
    return changed


def replace_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file renamed over it (readers never see half)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)

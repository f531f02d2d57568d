"""Build the frozen, masked copy of a transcript corpus that a masked-receipt benchmark runs on.

`mask_corpus(SRC, MASK, OUT)` copies every ``.jsonl`` file under SRC (a ``~/.claude/projects`` tree or a
flat folder with ``<session>/subagents/``; relative paths kept) into OUT, applying the mask list
(`harness.mask`) to every line of every file, not only to the authoring sessions:

* the ``git commit`` calls the mask names are removed: the ``tool_use`` block, the ``tool_result``
  block answering it, and the top-level ``toolUseResult`` of the line that held that result (Claude
  Code keeps git's stdout there a second time);
* every verbatim occurrence of a masked subject line, and of a masked hash (the full hash, and any hex
  token of 7 or more characters that starts one, or that extends a hash known only short), in every
  string of the line -- keys and values, at any depth -- becomes ``[masked]``.

Lines stay lines: a JSON line is parsed, changed and written back as one line of JSON (a line nothing
matched keeps its bytes exactly); a line that is not JSON gets the plain string replacement. Other files
(``tool-results/*.txt`` and the like) are left out and counted: the importer does not read them, and
they would carry the commit unmasked. The mask file is copied into ``OUT/MASK.json``, so the corpus
manifest records it. SRC is only ever read; OUT must be a new (or empty) folder outside SRC.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.mask import MASK_FILE, Mask, MaskError

__all__ = ["PLACEHOLDER", "REMOVED_KINDS", "MaskReport", "mask_corpus"]

PLACEHOLDER = "[masked]"
REMOVED_KINDS = ("tool_use", "tool_result", "tool_use_result", "subject", "hash")
_HEX_RUN = re.compile(r"(?<![0-9a-f])[0-9a-f]{7,}(?![0-9a-f])")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True, kw_only=True)
class MaskReport:
    """What building the masked copy did."""

    out: Path
    mask_sha256: str
    files: int
    files_changed: int
    lines: int
    lines_changed: int
    lines_not_json: int
    removed: Mapping[str, int]  # per kind in REMOVED_KINDS
    left_out: int  # files under SRC that are not transcripts

    def __post_init__(self) -> None:
        object.__setattr__(self, "removed", MappingProxyType(dict(self.removed)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "mask_sha256": self.mask_sha256,
            "files": self.files,
            "files_changed": self.files_changed,
            "lines": self.lines,
            "lines_changed": self.lines_changed,
            "lines_not_json": self.lines_not_json,
            "removed": {k: self.removed.get(k, 0) for k in REMOVED_KINDS},
            "left_out": self.left_out,
        }


def mask_corpus(
    src: Path, mask_file: Path, out: Path, *, on_file: Callable[[], None] | None = None
) -> MaskReport:
    """Write the masked copy of `src` into `out` (see the module docstring).

    Raises:
        MaskError: `src` is not a folder, `out` is not a new folder outside `src`, or the mask cannot
            be trusted.
    """
    src, out = Path(src), Path(out)
    mask = Mask.load(mask_file)
    _check_folders(src, out)
    files, left_out = _transcripts(src)
    masker = _Masker(mask)
    lines = changed_lines = changed_files = 0
    out.mkdir(parents=True, exist_ok=True)
    for rel in files:
        data = (src / rel).read_bytes()
        parts = data.split(b"\n")
        masked = [masker.line(p) for p in parts]
        n_changed = sum(1 for a, b in zip(parts, masked, strict=True) if a != b)
        lines += sum(1 for p in parts if p.strip())
        changed_lines += n_changed
        changed_files += n_changed > 0
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\n".join(masked))
        if on_file is not None:
            on_file()
    (out / MASK_FILE).write_bytes(Path(mask_file).read_bytes())
    return MaskReport(
        out=out,
        mask_sha256=mask.sha256,
        files=len(files),
        files_changed=changed_files,
        lines=lines,
        lines_changed=changed_lines,
        lines_not_json=masker.not_json,
        removed={k: masker.counts[k] for k in REMOVED_KINDS},
        left_out=left_out,
    )


def _check_folders(src: Path, out: Path) -> None:
    if not src.is_dir():
        msg = f"{src} is not a folder of transcripts; pass the folder to copy (e.g. ~/.claude/projects)"
        raise MaskError(msg)
    s, o = src.resolve(), out.resolve()
    if o == s or o.is_relative_to(s) or s.is_relative_to(o):
        msg = f"the masked copy {out} must be a new folder outside {src} (the source is never written)"
        raise MaskError(msg)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        msg = f"{out} already exists and is not empty; pick a new folder or remove it first"
        raise MaskError(msg)


def _transcripts(src: Path) -> tuple[list[Path], int]:
    """Relative paths of the ``.jsonl`` files under `src` (symlinked folders not followed), sorted."""
    found: list[Path] = []
    left_out = 0
    for folder, _, names in os.walk(src):
        for name in names:
            path = Path(folder, name)
            if name.endswith(".jsonl") and path.is_file():
                found.append(path.relative_to(src))
            else:
                left_out += 1
    return sorted(found, key=lambda p: p.as_posix()), left_out


class _Masker:
    """Applies one mask to lines, counting what it removed per kind."""

    def __init__(self, mask: Mask) -> None:
        self.ids = mask.call_ids()
        self.hashes = sorted(mask.hashes(), key=lambda h: (-len(h), h))
        subjects = sorted(mask.subjects(), key=lambda s: (-len(s), s))
        self.subject_re = re.compile("|".join(map(re.escape, subjects))) if subjects else None
        self.prefixes = sorted({h[:7] for h in self.hashes})
        # A line none of these occur in (in any JSON spelling) is passed through untouched.
        needles = {*self.ids, *self.prefixes}
        for s in subjects:
            needles.update({s, json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1]})
        self.any_re = re.compile("|".join(map(re.escape, sorted(needles)))) if needles else None
        self.counts: Counter[str] = Counter()
        self.not_json = 0

    def line(self, raw: bytes) -> bytes:
        body, cr = (raw[:-1], b"\r") if raw.endswith(b"\r") else (raw, b"")
        text = body.decode("utf-8", errors="surrogateescape")
        if self.any_re is None or not self.any_re.search(text):
            return raw
        try:
            obj = json.loads(text)
            new = self._line_object(obj)
        except (json.JSONDecodeError, RecursionError):
            self.not_json += 1
            return self.text(text).encode("utf-8", errors="surrogateescape") + cr
        try:
            dumped = json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: keep it escaped, as it was
            dumped = json.dumps(new, separators=(",", ":")).encode("ascii")
        return dumped + cr

    def _line_object(self, obj: Any) -> Any:
        if isinstance(obj, dict) and isinstance(obj.get("message"), dict):
            message, removed_result = self._drop_calls(obj["message"])
            obj = {**obj, "message": message}
            if removed_result and "toolUseResult" in obj:
                del obj["toolUseResult"]
                self.counts["tool_use_result"] += 1
        return self._walk(obj)

    def _drop_calls(self, message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        content = message.get("content")
        if not isinstance(content, list):
            return message, False
        kept: list[Any] = []
        removed_result = False
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in ("tool_use", "server_tool_use") and block.get("id") in self.ids:
                self.counts["tool_use"] += 1
            elif kind == "tool_result" and block.get("tool_use_id") in self.ids:
                self.counts["tool_result"] += 1
                removed_result = True
            else:
                kept.append(block)
        return {**message, "content": kept}, removed_result

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self._walk(v) for k, v in value.items()}
        return value

    def text(self, s: str) -> str:
        """`s` with every masked subject and hash replaced by the placeholder."""
        if self.subject_re is not None:
            s, n = self.subject_re.subn(PLACEHOLDER, s)
            self.counts["subject"] += n
        if _UUID.fullmatch(s) or not any(p in s for p in self.prefixes):
            return s
        s = _HEX_RUN.sub(self._hex, s)
        for h in self.hashes:  # whatever is glued to other letters or digits
            n = s.count(h)
            if n:
                s = s.replace(h, PLACEHOLDER)
                self.counts["hash"] += n
        return s

    def _hex(self, m: re.Match[str]) -> str:
        token = m.group()
        for h in self.hashes:
            names = (
                h.startswith(token) if len(h) == 40 else token.startswith(h) or h.startswith(token)
            )
            if names:
                self.counts["hash"] += 1
                return PLACEHOLDER
        return m.group()

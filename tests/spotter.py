"""The vendored spotter transcripts (tests/fixtures/spotter/), decompressed once per test session.

    @pytest.fixture(scope="session")
    def spotter(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return spotter_transcripts(tmp_path_factory)

`spotter_transcripts` returns the folder holding the 21 ``.jsonl`` files in their original layout
(``<session>.jsonl``, ``<session>/subagents/agent-*.jsonl``); every file's sha256 and size are checked
against ``SHA256SUMS`` (the originals'), so a damaged fixture fails loudly instead of skewing counts.
Treat the folder as read-only: other tests of the same session read it too.
"""

from __future__ import annotations

import hashlib
import lzma
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "spotter"
_extracted: dict[Path, Path] = {}  # pytest's base temp folder -> the extracted transcripts


class SpotterFixtureError(AssertionError):
    """A vendored file does not decompress to the original bytes."""


def expected_files() -> dict[str, tuple[str, int]]:
    """``relative path -> (sha256, size)`` of the original files, from SHA256SUMS."""
    out: dict[str, tuple[str, int]] = {}
    for line in (FIXTURE / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, size, rel = line.split("  ", 2)
        out[rel] = (digest, int(size))
    return out


def extract(dest: Path) -> Path:
    """Decompress every vendored file under `dest` and check it; return ``dest/transcripts``."""
    expected = expected_files()
    stored = sorted(FIXTURE.rglob("*.jsonl.xz"))
    names = {p.relative_to(FIXTURE).as_posix().removesuffix(".xz") for p in stored}
    if names != set(expected):
        msg = f"{FIXTURE}: the .xz files {sorted(names ^ set(expected))} do not match SHA256SUMS"
        raise SpotterFixtureError(msg)
    for path in stored:
        rel = path.relative_to(FIXTURE).as_posix().removesuffix(".xz")
        data = lzma.decompress(path.read_bytes())
        digest, size = expected[rel]
        if hashlib.sha256(data).hexdigest() != digest or len(data) != size:
            msg = f"{path} does not decompress to the original {rel} (sha256 {digest})"
            raise SpotterFixtureError(msg)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest / "transcripts"


def spotter_transcripts(factory: pytest.TempPathFactory) -> Path:
    """The extracted transcripts folder, made once per test session."""
    base = factory.getbasetemp()
    if base not in _extracted:
        _extracted[base] = extract(factory.mktemp("spotter"))
    return _extracted[base]

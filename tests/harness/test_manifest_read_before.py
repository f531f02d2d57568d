"""A lock whose manifest differs only because newer code reads the same bytes under a newer parser or
sanitizer version says so, instead of calling the snapshot another one (`Manifest.read_before`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import freeze
from harness.protocol.lock import register, verify
from tests.engine.fixtures_transcripts import user_line, write_jsonl
from tests.harness.test_protocol import MANIFEST, NOW, PROTOCOL, SEALS, _write

HINT = (
    "the corpus holds the bytes registered, but this code reads them under parser version 4, not 1 "
    "(a timestamp that is not a time leaves its message undated; a line after a byte order mark is "
    "read; the compaction agent's instructions are skipped; terminal control sequences are left out "
    "of the text): register the protocol again under a new name to run on what they now read as "
    '(docs/transcripts.md, "Versions")'
)


def _corpus(root: Path) -> freeze.Manifest:
    write_jsonl(root / "p" / "a.jsonl", [user_line("\x1b[0mWaiting for lock", uuid="u1")])
    return freeze.manifest(root)


def test_the_same_bytes_read_under_version_1_are_named_as_such(tmp_path: Path) -> None:
    manifest = _corpus(tmp_path / "corpus")
    data = (tmp_path / "corpus" / "p" / "a.jsonl").read_bytes()
    # Worked by hand: the body a freeze under parser version 1 (and sanitizer version 2) hashed
    body = {
        "files": [["p/a.jsonl", len(data), hashlib.sha256(data).hexdigest()]],
        "parser_version": "1",
        "sanitize_version": "2",
    }
    then = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())

    assert manifest.parser_version == "4"
    assert manifest.sha256_under("4", "2") == manifest.sha256
    assert manifest.sha256_under("1", "2") == then.hexdigest()
    assert manifest.read_before(then.hexdigest()) == HINT
    assert manifest.read_before("f" * 64) is None  # control: other bytes
    assert manifest.read_before(manifest.sha256) is None  # control: the same versions


def test_verify_gives_the_versions_hint_only_when_the_bytes_match(tmp_path: Path) -> None:
    manifest = _corpus(tmp_path / "corpus")
    then = manifest.sha256_under("1", "2")
    path = _write(tmp_path, PROTOCOL.replace(MANIFEST, then))
    register(path, manifest_sha256=then, seals=SEALS, now=NOW, git_commit=None)

    (hinted,) = verify(
        path, manifest_sha256=manifest.sha256, seals=SEALS, read_before=manifest.read_before
    )
    (plain,) = verify(path, manifest_sha256=manifest.sha256, seals=SEALS)

    assert hinted.message == (
        f"Expected sha256 of corpus manifest to be {then} but got {manifest.sha256}; {HINT}"
    )
    assert plain.hint == "the corpus snapshot is not the one registered"
    other = _corpus(tmp_path / "other")  # control: a snapshot of other bytes keeps the plain hint
    write_jsonl(tmp_path / "other" / "p" / "b.jsonl", [user_line("more", uuid="u2")])
    changed = freeze.manifest(tmp_path / "other")
    assert other.sha256 == manifest.sha256
    (moved,) = verify(
        path, manifest_sha256=changed.sha256, seals=SEALS, read_before=changed.read_before
    )
    assert moved.hint == "the corpus snapshot is not the one registered"

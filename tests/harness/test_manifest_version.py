"""The manifest records the sanitizer version a corpus is read under (`engine.sanitize.VersionScan`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import freeze
from tests.engine.test_read_notice import NOTICE


def _sha(files: list[list[object]], sanitize_version: str) -> str:
    body = {"files": files, "parser_version": "1", "sanitize_version": sanitize_version}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def test_a_corpus_without_the_notice_keeps_its_manifest_and_one_with_it_records_version_3(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    line = json.dumps({"type": "user", "content": "hi"}).encode() + b"\n"
    (corpus / "p").mkdir(parents=True)
    (corpus / "p" / "a.jsonl").write_bytes(line)

    before = freeze.manifest(corpus)

    # Worked by hand: {"files":[["p/a.jsonl",<len>,<sha>]],"parser_version":"1","sanitize_version":"2"}
    files: list[list[object]] = [["p/a.jsonl", len(line), hashlib.sha256(line).hexdigest()]]
    assert before.sanitize_version == "2"
    assert before.sha256 == _sha(files, "2")

    noticed = json.dumps({"type": "user", "content": NOTICE}).encode() + b"\n"
    (corpus / "p" / "b.jsonl").write_bytes(noticed)
    after = freeze.manifest(corpus)

    files.append(["p/b.jsonl", len(noticed), hashlib.sha256(noticed).hexdigest()])
    assert after.sanitize_version == "3"
    assert after.to_dict()["sanitize_version"] == "3"
    assert after.sha256 == _sha(files, "3")
    assert after.sha256 != _sha(files, "2")

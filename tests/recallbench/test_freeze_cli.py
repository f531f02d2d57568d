"""`recallbench corpus freeze` names the parser and sanitizer versions its manifest records: the
versions the corpus is read under, which its hash depends on (docs/transcripts.md, "Versions")."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from recallbench.cli import main
from tests.engine.fixtures_transcripts import SESSION, simple_session, write_jsonl

RUBYGEMS = "rubygems_c0ffee9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c"  # a version 5 format


def _freeze(root: Path) -> str:
    out = CliRunner().invoke(main, ["corpus", "freeze", str(root)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.stdout.splitlines()[0]


def test_the_manifest_line_names_both_versions(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_jsonl(plain / f"{SESSION}.jsonl", simple_session("Why does the deploy fail?"))
    holding = tmp_path / "holding"
    write_jsonl(holding / f"{SESSION}.jsonl", simple_session(f"Why does {RUBYGEMS} fail?"))
    line = _freeze(plain)
    assert re.fullmatch(
        r"manifest sha256 [0-9a-f]{64} \(1 files, \d+ bytes, parser 1, sanitizer 2\)", line
    ), line
    # a corpus holding a version 5 credential is read under version 5, and hashes differently
    other = _freeze(holding)
    assert other.endswith(", parser 1, sanitizer 5)"), other
    assert other.split()[2] != line.split()[2]

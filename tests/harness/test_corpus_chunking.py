"""A protocol's `[corpus] chunking`: the chunking version (`engine.chunking`) its corpus is read under.

Absent, it is 1, what every protocol registered before version 2 existed ran with, so their locks, fit
hashes, cached databases and results stay what they were; `chunking = 2` reads the corpus as
`recallbench import` does.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from harness import freeze
from harness.corpus_db import open_memory
from harness.protocol.load import load_protocol
from harness.protocol.lock import load_lock, register
from harness.protocol.model import FitSpec, ProtocolError
from harness.runner import run
from harness.seal import seal_roster
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.harness.test_corpus_decisions import SYNTHETIC
from tests.harness.test_protocol import PROTOCOL, _error, _write
from tests.harness.test_runner import NOW, A, build_repo, options
from tests.harness.test_runner import PROTOCOL as RUN_PROTOCOL

# 445 two-character words make 890 characters; the identifier then spans [890, 906), across the 900th:
# version 1 cuts it in two, version 2 ends the first chunk at 890.
ANSWER = "a " * 445 + "deadbeefcafe1234" + " was the container the deploy ran in" * 3
LONG = "44444444-0000-4000-8000-000000000077"


def test_chunking_loads_defaults_to_1_and_names_the_versions_when_wrong(tmp_path: Path) -> None:
    text = PROTOCOL.replace("size = 200\n", "size = 200\nchunking = 2\n")
    assert load_protocol(_write(tmp_path, text)).corpus.chunking == 2
    assert load_protocol(_write(tmp_path)).corpus.chunking == 1  # absent: what older protocols ran
    assert "$.corpus.chunking: 3 is not one of [1, 2]" in _error(
        tmp_path, PROTOCOL.replace("size = 200\n", "size = 200\nchunking = 3\n")
    )
    with pytest.raises(ProtocolError, match="1: a long message is cut at fixed lengths"):
        dataclasses.replace(SYNTHETIC, chunking=3)


def test_a_fit_entry_names_chunking_only_when_not_1() -> None:
    plain = FitSpec(arm="ltr()", seed=0, corpus=SYNTHETIC, rosters=()).to_dict()
    words = FitSpec(
        arm="ltr()", seed=0, corpus=dataclasses.replace(SYNTHETIC, chunking=2), rosters=()
    ).to_dict()
    assert "chunking" not in plain["corpus"]  # entries written before the field hash as they did
    assert words["corpus"]["chunking"] == 2


def test_the_cached_corpus_database_is_chunked_and_named_by_its_version(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    lines = simple_session("where did the deploy run?", session_id=LONG, cwd=A, answer=ANSWER)
    write_jsonl(corpus / "projects" / "-home-dev-alpha" / f"{LONG}.jsonl", lines)
    files = sorted(corpus.rglob("*.jsonl"))
    sha = "b" * 64
    old, old_path = open_memory(tmp_path / "cache", sha, corpus, files, [], HashEmbedder())
    new, new_path = open_memory(
        tmp_path / "cache", sha, corpus, files, [], HashEmbedder(), chunking=2
    )
    # version 1 keeps the name the database had before chunking had versions
    # (no exclusions: the sha256 of "" begins e3b0c442; then where the corpus folder is)
    where = hashlib.sha256(str(corpus.resolve()).encode()).hexdigest()[:8]
    assert old_path.name == f"{'b' * 16}-e3b0c442-{where}.db"
    assert new_path.name == old_path.name.removesuffix(".db") + "-c2.db"
    sql = "SELECT length(text) FROM chunks WHERE length(text) >= 890 ORDER BY length(text)"
    assert [n for (n,) in new.conn.execute(sql)] == [890]
    assert [n for (n,) in old.conn.execute(sql)] == [900]


def _protocol(root: Path, name: str, chunking: str, seal: str) -> Path:
    """A registered copy of the runner tests' protocol, over the corpus with the long answer."""
    corpus = root / "corpus"
    manifest = freeze.manifest(corpus).sha256
    text = (
        RUN_PROTOCOL.replace('id = "two"', f'id = "{name}"')
        .replace('path = "sealed/fixture"', 'path = "sealed/long"')
        .replace('path = "corpus"\n', f'path = "corpus"\n{chunking}')
        .format(manifest=manifest, seal=seal)
    )
    path = root / "protocols" / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    register(path, manifest_sha256=manifest, seals={"fixture": seal}, now=NOW, git_commit=None)
    return path


def _fts_recall(directory: Path, qid: str) -> float:
    with (directory / "per_query.csv").open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["qid"] == qid and r["arm"] == "fts"]
    return float(next(r["value"] for r in rows if r["metric"] == "recall@5"))


def test_a_run_reads_its_corpus_under_the_protocols_chunking(tmp_path: Path) -> None:
    root, _ = build_repo(tmp_path)
    lines = simple_session("where did the deploy run?", session_id=LONG, cwd=A, answer=ANSWER)
    write_jsonl(root / "corpus" / "projects" / "-home-dev-alpha" / f"{LONG}.jsonl", lines)
    draft = json.loads((root / "rosters" / "fixture.json").read_text())
    draft["questions"].append(
        {
            "qid": "container",
            "text": "deadbeefcafe1234",
            "scope": [A],
            "category": "recall",
            "tags": {"topic": "container"},
            "gold": {"relevant": {LONG: 1}, "forbidden": [], "control": None},
        }
    )
    (root / "rosters" / "fixture.json").write_text(json.dumps(draft))
    seal = seal_roster(root / "rosters" / "fixture.json", root / "sealed" / "long").seal
    words = run(_protocol(root, "words", "chunking = 2\n", seal), options(root)).directory
    fixed = run(_protocol(root, "fixed", "", seal), options(root)).directory
    assert json.loads((words / "summary.json").read_text())["corpus"]["chunking"] == 2
    assert "chunking" not in json.loads((fixed / "summary.json").read_text())["corpus"]
    assert _fts_recall(words, "container") == 1.0
    # control: a protocol that names no chunking cuts the identifier in two, as it always did
    assert _fts_recall(fixed, "container") == 0.0
    assert _fts_recall(fixed, "q0") == _fts_recall(words, "q0") == 1.0


def test_every_committed_protocol_reads_under_the_chunking_it_was_locked_with() -> None:
    root = Path(__file__).resolve().parents[2] / "protocols"
    locked = sorted(
        p.with_name(p.name.removesuffix(".lock.json") + ".toml") for p in root.glob("*.lock.json")
    )
    assert len(locked) >= 15
    read: dict[str, int] = {}
    for path in locked:
        protocol = load_protocol(path)
        lock = load_lock(path)
        assert lock is not None
        assert protocol.sha256 == lock.current_sha256, path  # the field changed no locked hash
        read[protocol.id] = protocol.corpus.chunking
        assert all(f.corpus.chunking == protocol.corpus.chunking for f in protocol.fits), path
    # registered before chunking had versions: 1; default-4 asks the same questions under 2
    assert {name for name, version in read.items() if version == 2} == {"default-4"}
    assert read["default-3"] == 1

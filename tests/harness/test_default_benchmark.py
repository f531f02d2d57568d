"""The shipped default benchmark: its lock, seals and corpus verify, and the scan finds what was planted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import freeze
from harness.protocol.load import load_protocol
from harness.protocol.lock import load_lock, verify
from harness.roster import load_questions
from harness.seal import verify_sealed
from harness.synthetic import SyntheticConfig, generate

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "protocols" / "default-2.toml"
# The first registration of the same benchmark, made with sanitizer version 1.
FIRST = ROOT / "protocols" / "default.toml"


@pytest.fixture(scope="module")
def default_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    protocol = load_protocol(PROTOCOL)
    out = tmp_path_factory.mktemp("default") / "corpus"
    assert protocol.corpus.seed is not None
    assert protocol.corpus.size is not None
    generate(out, SyntheticConfig(seed=protocol.corpus.seed, sessions=protocol.corpus.size))
    return out


def test_default_protocol_and_every_sealed_roster_match_the_committed_lock() -> None:
    protocol = load_protocol(PROTOCOL)
    lock = load_lock(PROTOCOL)
    assert lock is not None
    seals = {
        ref.name: verify_sealed(protocol.roster_dir(ref.name)).seal for ref in protocol.rosters
    }
    assert seals == dict(lock.current_seals)
    assert protocol.sha256 == lock.current_sha256
    assert verify(PROTOCOL, manifest_sha256=lock.current_manifest_sha256, seals=seals) == []


def test_regenerated_default_corpus_has_the_locked_manifest(default_corpus: Path) -> None:
    lock = load_lock(PROTOCOL)
    assert lock is not None
    assert freeze.manifest(default_corpus).sha256 == lock.current_manifest_sha256


def test_the_first_registration_no_longer_matches_the_corpus_the_sanitizer_now_makes(
    default_corpus: Path,
) -> None:
    first = load_lock(FIRST)
    current = load_lock(PROTOCOL)
    assert first is not None
    assert current is not None
    manifest = freeze.manifest(default_corpus)
    assert manifest.sanitize_version == "2"
    # same transcripts, same rosters: only the cleaning the manifest records differs
    assert dict(first.current_seals) == dict(current.current_seals)
    assert manifest.sha256 != first.current_manifest_sha256
    assert manifest.sha256 == current.current_manifest_sha256  # control: the new registration
    problems = verify(FIRST, manifest_sha256=manifest.sha256, seals=dict(first.current_seals))
    assert [(p.thing, p.expected, p.actual) for p in problems] == [
        ("manifest", first.current_manifest_sha256, manifest.sha256)
    ]


def test_roster_sizes_meet_the_issue_minimums() -> None:
    protocol = load_protocol(PROTOCOL)
    sizes = {
        ref.name: len(load_questions(protocol.roster_dir(ref.name))) for ref in protocol.rosters
    }
    assert sizes["receipts"] >= 150
    assert sizes["decisions"] >= 60
    assert sizes["multihop"] >= 40
    assert sizes["temporal"] >= 30
    negatives = [
        q for q in load_questions(protocol.roster_dir("negatives")) if q.category == "negative"
    ]
    assert len(negatives) >= 20


@pytest.mark.slow
def test_contamination_scan_finds_exactly_what_the_generator_planted(default_corpus: Path) -> None:
    planted = json.loads((default_corpus / "planted.json").read_text())
    protocol = load_protocol(PROTOCOL)
    questions = {
        ref.name: [(q.qid, q.text) for q in load_questions(protocol.roster_dir(ref.name))]
        for ref in protocol.rosters
    }
    report = freeze.scan(default_corpus, questions=questions, cutoff=protocol.corpus.cutoff)
    assert sorted(report.self_transcripts) == sorted(planted["self_transcripts"])
    assert report.scaffolding == {
        "injected_context": planted["context_blocks"],
        "own_mcp_call": planted["own_mcp"]["calls"],
        "own_mcp_result": planted["own_mcp"]["results"],
    }
    leaked = {(leak["qid"], sid) for leak in report.roster_leaks for sid in leak["sessions"]}
    expected = {(qid, sid) for sid, qids in planted["echo_sessions"].items() for qid in qids}
    assert leaked == expected
    assert report.after_cutoff == []
    assert len(report.self_transcripts) > 0  # the scan had something to find

"""protocols/default-3.toml: default-2 plus the corrections roster, its corpus and its seals check out.

Not registered here (the lead registers it once every branch is merged): these tests check what
registration will lock, the manifest hash and the seals, and that turning the corrections on left the
default corpus, and so the five rosters default-3 shares with default-2, byte for byte as they were.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness import freeze
from harness.corpus_db import materialise
from harness.protocol.load import load_protocol
from harness.roster import load_draft, load_questions
from harness.seal import seal_roster, verify_sealed
from harness.synthetic import SyntheticConfig, generate

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_2 = ROOT / "protocols" / "default-2.toml"
DEFAULT_3 = ROOT / "protocols" / "default-3.toml"
RETRIEVAL_ARMS = ("fts", "vector", "rrf", "fallback", "walk")


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """default-2's corpus and default-3's, each generated from its protocol's corpus section."""
    tmp = tmp_path_factory.mktemp("default3")
    two, three = load_protocol(DEFAULT_2), load_protocol(DEFAULT_3)
    assert two.corpus.seed is not None
    assert two.corpus.size is not None
    old = generate(tmp / "two", SyntheticConfig(seed=two.corpus.seed, sessions=two.corpus.size))
    new = materialise(dataclasses.replace(three.corpus, path=str(tmp / "three")), tmp, DEFAULT_3)
    return old.root, new


def test_default_3_keeps_default_2s_arms_rosters_and_gates_and_adds_the_corrections_ones() -> None:
    two, three = load_protocol(DEFAULT_2), load_protocol(DEFAULT_3)
    assert three.id == "default-3"
    assert three.arms == two.arms
    assert three.embedder == "minilm-l6-v2"
    assert three.rosters[:5] == two.rosters  # same sealed paths, seals, units and subsets
    assert three.gates[: len(two.gates)] == two.gates
    [corrections] = three.rosters[5:]
    assert (corrections.name, corrections.unit, corrections.path) == (
        "corrections",
        "message",
        "sealed/default-3/corrections",
    )
    added = {g.id: g for g in three.gates[len(two.gates) :]}
    assert sorted(added) == sorted(
        [f"CX-{a}" for a in RETRIEVAL_ARMS] + [f"CH-{a}" for a in RETRIEVAL_ARMS]
    )
    treatments = {g.treatment for g in added.values()}
    assert treatments == set(three.arms) - {"none()"}
    for arm in RETRIEVAL_ARMS:
        cx, ch = added[f"CX-{arm}"], added[f"CH-{arm}"]
        assert (cx.kind, cx.metric, cx.subset) == ("negative", "leak@10", None)
        assert (ch.kind, ch.metric, ch.subset) == ("every", "hit@1", "changed")
        assert ch.treatment == cx.treatment
    assert (three.corpus.corrected_facts, three.corpus.changed_facts) == (16, 16)
    assert (three.corpus.seed, three.corpus.size) == (two.corpus.seed, two.corpus.size)


def test_every_roster_of_default_3_matches_its_seal() -> None:
    protocol = load_protocol(DEFAULT_3)
    for ref in protocol.rosters:
        assert verify_sealed(protocol.roster_dir(ref.name)).seal == ref.seal
    questions = load_questions(protocol.roster_dir("corrections"))
    categories = [q.category for q in questions]
    assert (categories.count("corrected"), categories.count("corrected-control")) == (16, 16)
    assert categories.count("changed") == 16


@pytest.mark.slow
def test_the_regenerated_corpus_has_the_protocols_manifest_and_reseals_to_the_same_roster(
    corpora: tuple[Path, Path], tmp_path: Path
) -> None:
    _, three = corpora
    protocol = load_protocol(DEFAULT_3)
    manifest = freeze.manifest(three)
    assert manifest.sha256 == protocol.corpus.manifest_sha256
    assert manifest.settles_sha256 is not None  # the settles are part of what the hash commits to
    draft = three / "rosters" / "corrections.json"
    assert draft.read_bytes() == (ROOT / "rosters" / "default-3" / "corrections.json").read_bytes()
    resealed = seal_roster(draft, tmp_path / "sealed")
    assert resealed.seal == protocol.rosters[5].seal
    assert len(load_draft(draft).questions) == 48


@pytest.mark.slow
def test_the_corrections_option_left_every_default_file_byte_identical(
    corpora: tuple[Path, Path],
) -> None:
    two, three = corpora
    files = sorted(p.relative_to(two).as_posix() for p in two.rglob("*") if p.is_file())
    differ = [f for f in files if (two / f).read_bytes() != (three / f).read_bytes()]
    assert differ == ["planted.json"]  # it also records the planted corrections
    assert freeze.manifest(two).sha256 == load_protocol(DEFAULT_2).corpus.manifest_sha256
    added = {p.relative_to(three).as_posix() for p in three.rglob("*") if p.is_file()} - set(files)
    assert len(added) == 2 * 32 + 2  # two sessions per fact, settles.json, the corrections roster
    # the five shared rosters are the ones sealed under sealed/default/
    for name in ("receipts", "decisions", "multihop", "temporal", "negatives"):
        assert (three / "rosters" / f"{name}.json").read_bytes() == (
            ROOT / "rosters" / "default" / f"{name}.json"
        ).read_bytes()


@pytest.mark.slow
def test_the_contamination_scan_flags_none_of_the_correction_sessions(
    corpora: tuple[Path, Path],
) -> None:
    _, three = corpora
    protocol = load_protocol(DEFAULT_3)
    questions = {
        ref.name: [(q.qid, q.text) for q in load_questions(protocol.roster_dir(ref.name))]
        for ref in protocol.rosters
    }
    report = freeze.scan(three, questions=questions, cutoff=protocol.corpus.cutoff)
    flagged = report.flagged(protocol.corpus.exclude)
    planted = json.loads((three / "planted.json").read_text(encoding="utf-8"))
    ours = {s[k] for s in planted["settings"] for k in ("first_session", "second_session")}
    assert len(ours) == 64
    assert not ours & flagged
    assert flagged  # control: the scan does flag the planted self-transcripts and echo sessions

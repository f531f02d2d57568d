"""The miner and the mask on real Claude Code transcripts: the vendored spotter files.

The counts were read off the files by the plain scan (`tests.harness.plain_scan`, no engine code) and
by hand: 36 ``git commit`` calls, 22 printed git's ``[branch hash] subject`` line, 14 did not (a hook
refused them); two of the 22 share a subject (``--amend`` in fa812bfe...), so 21 questions.
"""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import pytest

from harness.mask import MASK_FILE, build_mask, mask_path
from harness.mask_corpus import mask_corpus
from harness.mine import MinedRoster, mine_receipts
from tests import spotter as spotter_fixture
from tests.harness import plain_scan


@pytest.fixture(scope="module")
def spotter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return spotter_fixture.spotter_transcripts(tmp_path_factory)


@pytest.fixture(scope="module")
def mined(spotter: Path) -> MinedRoster:
    return mine_receipts([spotter], name="spotter-receipts")


def test_the_vendored_files_decompress_to_the_originals_or_fail(
    spotter: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(p.relative_to(spotter.parent).as_posix() for p in spotter.rglob("*.jsonl"))
    assert files == sorted(spotter_fixture.expected_files())
    assert len(files) == 21
    assert sum(size for _, size in spotter_fixture.expected_files().values()) == 18_724_537
    licence = (spotter_fixture.FIXTURE / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 marot\n")
    # negative control: a damaged copy of the fixture is refused
    damaged = tmp_path / "fixture"
    shutil.copytree(spotter_fixture.FIXTURE, damaged)
    (damaged / "transcripts" / "short.jsonl.xz").write_bytes(lzma.compress(b"{}\n"))
    monkeypatch.setattr(spotter_fixture, "FIXTURE", damaged)
    with pytest.raises(spotter_fixture.SpotterFixtureError, match=r"short\.jsonl"):
        spotter_fixture.extract(tmp_path / "out")


def test_the_miner_counts_on_spotter(mined: MinedRoster) -> None:
    c = mined.counts
    assert (c["files"], c["sessions"]) == (21, 10)
    assert c["git_commit_calls"] == 36
    assert c["commits_with_hash"] == 22
    assert c["commits_without_hash"] == 14
    assert c["full_hash_resolved"] == 1  # 3114215, shown whole by a later git command
    assert c["merged_same_subject"] == 1  # the amend of 22450e1 into 3114215
    assert len(mined.receipts) == 21
    assert mined.skipped == ()
    assert dict(mined.citations) == {}
    assert c.get("duplicate_commit_lines", 0) == 0
    # every commit was made in a worktree that holds its one session (the three sessions of the main
    # checkout made none), so at the session unit every question is trivial: the summary says so
    assert {p for r in mined.receipts for p in r.projects} <= {
        f"/home/USER/projects/spotter-worktrees/spotter-{w}"
        for w in ("0rt", "0zw", "4te", "a0y", "dov", "fum", "gqc")
    }
    assert c["receipts_alone_in_scope"] == 21
    assert mined.summary()[-1].startswith("21 of 21 questions ask for the only session of their")


def test_the_miner_finds_exactly_the_commit_lines_a_plain_scan_finds(
    spotter: Path, mined: MinedRoster
) -> None:
    plain = plain_scan.commit_lines(spotter)
    assert len(plain) == 22
    found = {(c.session_id, c.short[:7]): c.printed for r in mined.receipts for c in r.commits}
    skipped = {(s.session_id, s.hash[:7]) for s in mined.skipped}
    assert set(found) | skipped == set(plain)
    assert found == plain  # and with the same subjects


def test_the_masked_spotter_copy_holds_no_masked_subject_or_hash(
    spotter: Path, mined: MinedRoster, tmp_path: Path
) -> None:
    roster, _ = mined.write(tmp_path / "rosters" / "spotter.json")
    mask = build_mask(mined)
    mask_file = mask.write(mask_path(roster))
    assert (len(mask.entries), len(mask.call_ids()), len(mask.hashes())) == (21, 29, 23)
    report = mask_corpus(spotter, mask_file, tmp_path / "masked")
    assert report.to_dict()["removed"] == {
        "tool_use": 29,  # 22 commits and 7 refused attempts with the same subject
        "tool_result": 29,
        "tool_use_result": 29,
        "subject": 52,
        "hash": 74,
    }
    assert (report.files, report.files_changed, report.lines_changed) == (21, 7, 78)
    src = {p: p.read_bytes() for p in spotter.rglob("*.jsonl")}
    out = {p: p.read_bytes() for p in (tmp_path / "masked").rglob("*.jsonl")}
    assert len(out) == 21
    assert (tmp_path / "masked" / MASK_FILE).is_file()
    for needle in sorted(mask.subjects() | mask.hashes()):
        forms = {needle.encode(), json.dumps(needle)[1:-1].encode()}
        assert sum(d.count(f) for d in src.values() for f in forms) > 0, needle  # control
        assert sum(d.count(f) for d in out.values() for f in forms) == 0, needle
    for data in out.values():
        for line in data.splitlines():
            json.loads(line)  # every line of every masked file still parses

"""Masked receipts: the mask list, the masked corpus copy, and the manifest that records the mask.

The corpus is written by the tests: an authoring session (an edit, a hook-refused commit, the commit,
`git log` showing the full hash, a sentence quoting both), a session that asks about the commit and
holds a line that is not JSON, and a subagent file of the author quoting a longer prefix of the hash.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from harness import freeze
from harness.mask import MASK_FILE, Mask, MaskError, build_mask, mask_path
from harness.mask_corpus import PLACEHOLDER, mask_corpus
from harness.mine import mine_receipts
from recallbench.cli import main
from tests.harness.transcript_builder import SessionBuilder

ALPHA = "/home/dev/alpha"
S_AUTH = "cccccccc-0000-4000-8000-000000000001"
S_ASKS = "cccccccc-0000-4000-8000-000000000002"
SUBJECT = "Stream uploads in resumable multipart chunks"
SHORT = "7c3d9e1"
FULL = "7c3d9e1ab2" + "0" * 30
WORK = "the bucket rejects parts under eight mebibytes"  # what the session did, in its own words


def _corpus(root: Path) -> Path:
    (
        SessionBuilder(S_AUTH, ALPHA)
        .user(f"Uploads fail: {WORK}; fix it.")
        .tool(
            "Edit",
            {
                "file_path": "src/upload.py",
                "old_string": "PART_SIZE = 4 * MiB",
                "new_string": "PART_SIZE = 8 * MiB  # smallest part the bucket takes",
            },
            "The file src/upload.py has been updated.",
        )
        .bash(f'git commit -am "{SUBJECT}"', "pre-commit hook failed: black reformatted upload.py")
        .bash(f'git commit -am "{SUBJECT}"', f"[main {SHORT}] {SUBJECT}\n 1 file changed")
        .bash("git log -1 --format=%H", FULL)
        .say(f"Committed {SHORT}: {SUBJECT}.")
        .write(root)
    )
    (
        SessionBuilder(S_ASKS, ALPHA)
        .user(f"Did {SHORT} ({SUBJECT}) land in main?")
        .say("Yes; the scheduler's flaky retry is still open.")
        .raw(f"{{broken line: {SUBJECT} at {FULL[:9]}")
        .write(root)
    )
    SessionBuilder(S_AUTH, ALPHA).say(f"Reviewed {FULL[:10]} for the upload change.").write_agent(
        root, S_AUTH, "a1"
    )
    return root / "projects"


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}  # fmt: skip


def _count(tree: dict[str, bytes], needle: str) -> int:
    """Occurrences in the transcripts (MASK.json quotes the subjects and hashes by design)."""
    forms = {needle.encode(), json.dumps(needle)[1:-1].encode()}
    return sum(data.count(form) for rel, data in tree.items() if rel != MASK_FILE for form in forms)


@pytest.fixture
def masked(tmp_path: Path) -> tuple[Path, Path, Path]:
    src = _corpus(tmp_path / "src")
    roster = tmp_path / "rosters" / "uploads.json"
    mined = mine_receipts([src])
    mined.write(roster)
    mask_file = build_mask(mined).write(mask_path(roster))
    return src, mask_file, tmp_path / "out"


def test_the_mask_lists_hashes_subject_and_every_commit_call_sorted(
    masked: tuple[Path, Path, Path],
) -> None:
    _, mask_file, _ = masked
    assert mask_file.name == "uploads.mask.json"
    mask = Mask.load(mask_file)
    assert [e.to_dict() for e in mask.entries] == [
        {
            "qid": f"receipt-{SHORT}",
            "hashes": [SHORT, FULL],
            "subjects": [SUBJECT],
            # the refused attempt (line 3) and the commit (line 5), both with this subject
            "calls": {S_AUTH: [f"toolu_{S_AUTH[-4:]}_3", f"toolu_{S_AUTH[-4:]}_5"]},
        }
    ]
    data = json.loads(mask_file.read_text(encoding="utf-8"))
    body = {k: v for k, v in data.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert data["sha256"] == hashlib.sha256(canonical).hexdigest() == mask.sha256


def test_a_mask_edited_by_hand_is_refused(masked: tuple[Path, Path, Path]) -> None:
    _, mask_file, _ = masked
    data = json.loads(mask_file.read_text(encoding="utf-8"))
    assert Mask.load(mask_file).entries  # control: the file as written loads
    data["entries"][0]["subjects"] = ["something else"]
    mask_file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MaskError, match="does not match its sha256"):
        Mask.load(mask_file)


def test_the_copy_holds_no_subject_nor_hash_and_keeps_the_work(
    masked: tuple[Path, Path, Path],
) -> None:
    src, mask_file, out = masked
    before = _tree_bytes(src)
    report = mask_corpus(src, mask_file, out)
    assert _tree_bytes(src) == before  # the source is never written
    copy = _tree_bytes(out)
    # positive controls: all of it was in the source
    assert (_count(before, SUBJECT), _count(before, SHORT)) == (7, 8)
    assert _count(before, WORK) == 1
    assert (_count(copy, SUBJECT), _count(copy, SHORT), _count(copy, "git commit")) == (0, 0, 0)
    assert _count(copy, WORK) == 1  # the work survives
    assert _count(copy, "PART_SIZE = 8 * MiB") == 1
    assert _count(copy, "flaky retry") == 1  # unrelated discussion survives
    assert copy[MASK_FILE] == mask_file.read_bytes()
    assert report.removed == {
        "tool_use": 2,
        "tool_result": 2,
        "tool_use_result": 2,
        "subject": 3,  # the author's sentence, the question, the broken line
        "hash": 6,  # git log's result and its toolUseResult, three sentences, the broken line
    }
    assert (report.files, report.files_changed, report.lines, report.lines_not_json) == (
        3,
        3,
        14,
        1,
    )
    assert report.lines_changed == 9  # author: 3, 4, 5, 6, 8, 9; asker: 0, 2; subagent: 0
    for rel, data in copy.items():
        if rel == MASK_FILE:
            continue
        lines = data.split(b"\n")
        assert len(lines) == len(before[rel].split(b"\n"))
        for line, old in zip(lines, before[rel].split(b"\n"), strict=True):
            if line != old and not old.startswith(b"{broken"):
                json.loads(line)  # every changed JSON line is still one line of JSON
    broken = next(x for x in copy[f"-home-dev-alpha/{S_ASKS}.jsonl"].split(b"\n") if b"broken" in x)
    assert broken == f"{{broken line: {PLACEHOLDER} at {PLACEHOLDER}".encode()


def test_the_engine_imports_the_copy_and_finds_the_work_not_the_subject(
    masked: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    src, mask_file, out = masked
    mask_corpus(src, mask_file, out)

    def sessions(root: Path, db: str, query: str) -> set[str]:
        memory = Memory(tmp_path / db, HashEmbedder(64))
        try:
            report = memory.import_paths([root], embed=False)
            assert report.files_failed == {}
            assert report.files_imported == 3
            hits = memory.lexical(query, Scope.everywhere(), 10)
            chunks = memory.chunks([h.chunk_id for h in hits], Scope.everywhere())
            return {c.session_id for c in chunks}
        finally:
            memory.close()

    assert S_AUTH in sessions(src, "src.db", "resumable multipart")  # control: raw history
    assert sessions(out, "out.db", "resumable multipart") == set()
    assert sessions(out, "out2.db", "mebibytes") == {S_AUTH}


def test_the_copy_goes_only_to_a_new_folder_outside_the_source(
    masked: tuple[Path, Path, Path],
) -> None:
    src, mask_file, out = masked
    before = _tree_bytes(src)
    with pytest.raises(MaskError, match="outside"):
        mask_corpus(src, mask_file, src / "masked")
    with pytest.raises(MaskError, match="outside"):
        mask_corpus(src, mask_file, src.parent)
    out.mkdir()
    (out / "keep.txt").write_text("x", encoding="utf-8")
    with pytest.raises(MaskError, match="not empty"):
        mask_corpus(src, mask_file, out)
    assert _tree_bytes(src) == before
    assert mask_corpus(src, mask_file, out.parent / "fresh").files == 3  # control


def _manifest_body(files: list[list[object]], **extra: str) -> str:
    body = {
        "files": files,
        # no line holds what a parser change after version 1 acts on (engine.parser_versions)
        "parser_version": "1",
        # no line holds the text of a rule newer than version 2 (engine.sanitize.VERSION_TRIGGERS)
        "sanitize_version": "2",
        **extra,
    }
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def test_the_manifest_records_the_mask_and_is_unchanged_without_one(
    masked: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.jsonl").write_bytes(b"{}\n")
    sha_a = hashlib.sha256(b"{}\n").hexdigest()
    # Worked by hand: the canonical body is
    # {"files":[["a.jsonl",3,"<sha of '{}\n'>"]],"parser_version":"1","sanitize_version":"2"}
    expected = _manifest_body([["a.jsonl", 3, sha_a]])
    unmasked = freeze.manifest(plain)
    assert unmasked.sha256 == expected
    assert unmasked.mask_sha256 is None
    assert "mask_sha256" not in unmasked.to_dict()
    _, mask_file, _ = masked
    mask = Mask.load(mask_file)
    (plain / MASK_FILE).write_bytes(mask_file.read_bytes())
    with_mask = freeze.manifest(plain)
    assert with_mask.sha256 == _manifest_body([["a.jsonl", 3, sha_a]], mask_sha256=mask.sha256)
    assert with_mask.sha256 != expected
    assert with_mask.to_dict()["mask_sha256"] == mask.sha256
    (plain / MASK_FILE).write_text('{"name": "x"}', encoding="utf-8")
    with pytest.raises(freeze.FreezeError, match="cannot be trusted"):
        freeze.manifest(plain)


def test_cli_mines_masked_receipts_then_builds_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _corpus(tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    mined = runner.invoke(
        main, ["roster", "mine", "--kind", "masked-receipts", str(src), "--out", "rosters/up.json"]
    )
    assert mined.exit_code == 0, mined.output
    assert "mask list rosters/up.mask.json (sha256 " in mined.output
    assert "2 calls, 1 subjects, 2 hashes" in mined.output
    result = runner.invoke(
        main,
        [
            "corpus",
            "mask",
            str(src),
            "--mask",
            "rosters/up.mask.json",
            "--out",
            "corpora/up-masked",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3 files (3 changed, 0 other files left out), 9 of 14 lines changed (1 not JSON)" in (
        result.output
    )
    assert (
        "removed: tool_use=2, tool_result=2, tool_use_result=2, subject=3, hash=6" in result.output
    )
    manifest = freeze.manifest(tmp_path / "corpora" / "up-masked")
    assert f"manifest sha256 {manifest.sha256}" in result.output
    again = runner.invoke(
        main,
        [
            "corpus",
            "mask",
            str(src),
            "--mask",
            "rosters/up.mask.json",
            "--out",
            "corpora/up-masked",
        ],
    )
    assert again.exit_code == 1
    assert "not empty" in again.output

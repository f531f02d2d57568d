"""Sealing rosters and verifying seals, with and without our own code."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.roster import load_questions
from harness.seal import SealError, load_sealed_key, seal_roster, verify_sealed


def _write_draft(tmp_path: Path) -> Path:
    draft: dict[str, Any] = {
        "name": "receipts",
        "unit": "session",
        "description": "receipt look-up",
        "questions": [
            {
                "qid": "r0001",
                "text": "commit: fix flaky retry — ünïcode",
                "scope": ["/home/u/proj-a"],
                "category": "receipt",
                "tags": {"hop": "single"},
                "gold": {"relevant": {"sess-gold-1": 1}, "forbidden": [], "control": None},
            },
            {
                "qid": "r0002",
                "text": "commit: bump parser",
                "scope": "*",
                "category": "receipt",
                "tags": {},
                "gold": {"relevant": {"sess-gold-2": 2}, "forbidden": [], "control": None},
            },
        ],
    }
    path = tmp_path / "receipts.json"
    path.write_text(json.dumps(draft), encoding="utf-8")
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _flip_last_content_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    # One byte near the end, same length: only the hash can tell.
    data[-3] = ord("X") if data[-3] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))


def test_seal_writes_canonical_questions_key_and_a_sha256sum_file(tmp_path: Path) -> None:
    out = tmp_path / "sealed" / "receipts"

    info = seal_roster(_write_draft(tmp_path), out)

    questions = (out / "questions.json").read_bytes()
    key = (out / "key.json").read_bytes()
    seal = (out / "SEAL.sha256").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["SEAL.sha256", "key.json", "questions.json"]
    assert questions.endswith(b"}\n")
    assert (
        questions.decode("utf-8")
        == json.dumps(json.loads(questions), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    )
    assert "ünïcode".encode() in questions
    assert json.loads(key) == {
        "unit": "session",
        "key": {
            "r0001": {"relevant": {"sess-gold-1": 1}, "forbidden": [], "control": None},
            "r0002": {"relevant": {"sess-gold-2": 2}, "forbidden": [], "control": None},
        },
    }
    assert seal == f"{_sha(questions)}  questions.json\n{_sha(key)}  key.json\n".encode()
    assert info.seal == _sha(seal)
    assert info.questions_sha256 == _sha(questions)
    assert info.key_sha256 == _sha(key)
    assert verify_sealed(out) == info


def test_sealed_questions_hold_no_gold_while_the_key_does(tmp_path: Path) -> None:
    out = tmp_path / "sealed" / "receipts"
    seal_roster(_write_draft(tmp_path), out)

    questions = (out / "questions.json").read_text(encoding="utf-8")
    key = (out / "key.json").read_text(encoding="utf-8")
    assert "sess-gold-1" not in questions
    assert "sess-gold-1" in key
    assert [q.qid for q in load_questions(out)] == ["r0001", "r0002"]
    assert load_sealed_key(out).gold["r0002"].relevant == {"sess-gold-2": 2}


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="sha256sum is not installed")
def test_real_sha256sum_accepts_the_seal_and_rejects_a_changed_file(tmp_path: Path) -> None:
    out = tmp_path / "sealed" / "receipts"
    seal_roster(_write_draft(tmp_path), out)
    sha256sum = shutil.which("sha256sum")
    assert sha256sum is not None

    ok = subprocess.run(
        [sha256sum, "-c", "SEAL.sha256"], cwd=out, capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "questions.json: OK" in ok.stdout
    assert "key.json: OK" in ok.stdout

    _flip_last_content_byte(out / "key.json")
    bad = subprocess.run(
        [sha256sum, "-c", "SEAL.sha256"], cwd=out, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert "key.json: FAILED" in bad.stdout


@pytest.mark.parametrize("name", ["questions.json", "key.json"])
def test_one_changed_byte_names_the_file_and_both_hashes(tmp_path: Path, name: str) -> None:
    out = tmp_path / "sealed" / "receipts"
    seal_roster(_write_draft(tmp_path), out)
    expected = _sha((out / name).read_bytes())
    assert verify_sealed(out).seal == _sha((out / "SEAL.sha256").read_bytes())

    _flip_last_content_byte(out / name)
    actual = _sha((out / name).read_bytes())

    assert actual != expected
    with pytest.raises(SealError) as err:
        verify_sealed(out)
    assert f"Expected sha256 of {name} to be {expected} but got {actual}" in str(err.value)


def test_a_changed_seal_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "sealed" / "receipts"
    seal_roster(_write_draft(tmp_path), out)
    seal_file = out / "SEAL.sha256"
    first_line = seal_file.read_text().splitlines()[0]
    seal_file.write_text(first_line + "\n")

    with pytest.raises(SealError, match=r"does not list \['key\.json'\]"):
        verify_sealed(out)


def test_missing_files_are_named(tmp_path: Path) -> None:
    out = tmp_path / "sealed" / "receipts"
    seal_roster(_write_draft(tmp_path), out)
    (out / "key.json").unlink()

    with pytest.raises(SealError, match=r"Missing key\.json .*pass the private key's location"):
        verify_sealed(out)
    (out / "SEAL.sha256").unlink()
    with pytest.raises(SealError, match=r"Missing SEAL\.sha256 in"):
        verify_sealed(out)


def test_key_kept_outside_the_repository_is_checked_against_the_seal(tmp_path: Path) -> None:
    repo_sealed = tmp_path / "repo" / "sealed" / "receipts"
    private_key = tmp_path / "private" / "receipts-key.json"

    info = seal_roster(_write_draft(tmp_path), repo_sealed, key_path=private_key)

    assert not (repo_sealed / "key.json").exists()
    assert verify_sealed(repo_sealed, key_path=private_key) == info
    assert load_sealed_key(private_key, sealed_dir=repo_sealed).gold["r0001"].relevant == {
        "sess-gold-1": 1
    }

    expected = _sha(private_key.read_bytes())
    _flip_last_content_byte(private_key)
    actual = _sha(private_key.read_bytes())
    with pytest.raises(SealError) as err:
        verify_sealed(repo_sealed, key_path=private_key)
    assert f"Expected sha256 of key.json ({private_key}) to be {expected} but got {actual}" in str(
        err.value
    )
    with pytest.raises(SealError):
        load_sealed_key(private_key, sealed_dir=repo_sealed)


def test_sealing_refuses_to_overwrite_a_sealed_folder_but_a_new_name_works(tmp_path: Path) -> None:
    draft = _write_draft(tmp_path)
    first = seal_roster(draft, tmp_path / "sealed" / "receipts")
    before = (tmp_path / "sealed" / "receipts" / "SEAL.sha256").read_bytes()

    with pytest.raises(
        SealError, match=r"Refusing to seal into .*append-only; seal under a new name"
    ):
        seal_roster(draft, tmp_path / "sealed" / "receipts")

    assert (tmp_path / "sealed" / "receipts" / "SEAL.sha256").read_bytes() == before
    second = seal_roster(draft, tmp_path / "sealed" / "receipts-v2")
    # Same draft, same bytes: the seal is a pure function of the roster.
    assert second.seal == first.seal


def test_a_qid_prefix_renames_every_question_and_control_reference(tmp_path: Path) -> None:
    from harness.roster import load_draft
    from harness.seal import seal_draft, with_qid_prefix

    gold: dict[str, Any] = {"relevant": {"s1": 1}, "forbidden": [], "control": None}
    negative = {"relevant": {}, "forbidden": ["s2"], "control": "q1"}
    draft_path = tmp_path / "d.json"
    draft_path.write_text(
        json.dumps(
            {
                "name": "t",
                "unit": "session",
                "description": "",
                "questions": [
                    {"qid": "q1", "text": "where", "scope": "*", "category": "c", "gold": gold},
                    {"qid": "n1", "text": "what", "scope": "*", "category": "c", "gold": negative},
                ],
            }
        )
    )
    draft = load_draft(draft_path)
    assert with_qid_prefix(draft, "") == draft  # control: no prefix, no change
    seal_draft(with_qid_prefix(draft, "train-"), tmp_path / "sealed")
    assert [q.qid for q in load_questions(tmp_path / "sealed")] == ["train-q1", "train-n1"]
    key = load_sealed_key(tmp_path / "sealed")
    assert sorted(key.gold) == ["train-n1", "train-q1"]
    assert key.gold["train-n1"].control == "train-q1"
    assert key.gold["train-q1"].control is None

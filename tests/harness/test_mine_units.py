"""Message-unit gold for mined receipts: the work each commit recorded, worked out line by line."""

from __future__ import annotations

import json
from pathlib import Path

from harness.mine import mine_receipts
from harness.roster import load_draft
from tests.harness.transcript_builder import SessionBuilder

SID = "bbbbbbbb-0000-4000-8000-000000000001"
CWD = "/home/dev/parser"


def _uuid(n: int) -> str:
    return f"{SID[:8]}-line-{n}"  # the builder's uuid for line n


def _corpus(root: Path) -> Path:
    (
        SessionBuilder(SID, CWD)
        .user("Make the parser accept tabs.")  # 0
        .say("Editing the tokenizer.")  # 1
        .bash('git commit -am "Accept tabs in the parser"', "[main 1111aaa] Accept tabs in the parser")  # 2, 3
        .user("Now document the tab handling.")  # 4
        .bash('git commit -m "Document tabs"', "nothing to commit, working tree clean")  # 5, 6: refused
        .say("Adding the docs first.")  # 7
        .bash('git commit -am "Document tab handling"', "[main 2222bbb] Document tab handling")  # 8, 9
        .say("Both are committed.")  # 10: after the last commit, gold for neither
        .write(root)
    )  # fmt: skip
    return root


def test_message_gold_is_the_work_since_the_previous_commit_through_the_result(
    tmp_path: Path,
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    mined = mine_receipts([corpus], unit="message")
    out, _ = mined.write(tmp_path / "rosters" / "r.json")
    draft = load_draft(out)
    assert draft.unit == "message"
    gold = {q.text: list(draft.key[q.qid].relevant) for q in draft.questions}
    # first commit: lines 0-3; second: 4-9, the refused call and its answer included; line 10 in none
    assert gold == {
        "Accept tabs in the parser": [_uuid(n) for n in range(4)],
        "Document tab handling": [_uuid(n) for n in range(4, 10)],
    }
    assert all(set(draft.key[q.qid].relevant.values()) == {1} for q in draft.questions)


def test_session_gold_stays_the_default(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    out, _ = mine_receipts([corpus]).write(tmp_path / "rosters" / "r.json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["unit"] == "session"
    assert [q["gold"]["relevant"] for q in data["questions"]] == [{SID: 1}, {SID: 1}]

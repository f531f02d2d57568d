"""The miner on the oddities of real transcripts: it never stops, it skips and counts.

The first test reproduces the crash real histories hit (`Session(s) [...] are listed both as author and
as citing <hash>`): a resumed session holds a copy of the commit call but not the full hash the
authoring session showed later. The corpus of the other tests holds, in four sessions, a compacted
subagent replaying the parent's commit, a continuation whose summary quotes the commit, an amend, a
rebase, the same subject committed in two projects, a hook-refused commit, lines that are not JSON, a
string `message`, a result whose call is missing and commit lines printed by `cat`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.mine import mine_receipts
from recallbench.cli import main
from tests.harness import plain_scan
from tests.harness.transcript_builder import SessionBuilder

ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
S1 = "bbbbbbbb-0000-4000-8000-000000000001"
S2 = "bbbbbbbb-0000-4000-8000-000000000002"
S3 = "bbbbbbbb-0000-4000-8000-000000000003"
S4 = "bbbbbbbb-0000-4000-8000-000000000004"
SHORT_1 = "1a2b3c4"
FULL_1 = SHORT_1 + "d5e6f708192a3b4c5d6e7f8091a2b3c4d"
FIX = "Fix flaky retry in uploader"
BUMP = "Bump the parser version to two"
ORPHAN = {  # a result whose call is not in the file
    "type": "tool_result",
    "tool_use_id": "toolu_gone",
    "content": "[main 9d9d9d9] Something from a call that is not in the file",
}


def _author() -> SessionBuilder:
    return (
        SessionBuilder(S1, ALPHA)
        .user("The uploader retry test is flaky; fix it and commit.")
        .bash('git commit -am "Fix flaky retry in uploader"', f"[main {SHORT_1}] {FIX}")
        .bash("git log -1 --format=%H", FULL_1)
    )


def _crash_corpus(root: Path) -> Path:
    author = _author().write(root)
    # A resumed session: a copy of the first three lines (the commit call and its result), no full hash.
    SessionBuilder(S2, ALPHA).copy_from(_author(), 3).user("go on with the docs").write(root)
    SessionBuilder(S3, ALPHA).user(f"Did {SHORT_1} fix the uploader for good?").write(root)
    return author.parent.parent


def test_a_resumed_copy_of_the_commit_is_an_author_not_a_citer(tmp_path: Path) -> None:
    # On the miner before this fix, this corpus raised MineError("Session(s) [S2] are listed both as
    # author and as citing 1a2b3c4d5e..."): S2 was keyed by the short hash, S1 by the full one.
    mined = mine_receipts([_crash_corpus(tmp_path / "c")])
    assert [(r.qid, r.hashes, r.authors) for r in mined.receipts] == [
        (f"receipt-{SHORT_1}", (FULL_1,), (S1, S2))
    ]
    # positive control: the session that only asks about the hash is a citation
    assert dict(mined.citations) == {FULL_1: (S3,)}
    assert mined.counts["full_hash_resolved"] == 1  # S1 shows the full hash itself
    assert mined.counts["full_hash_resolved_corpus"] == 1  # S2's short hash, resolved corpus-wide
    assert mined.counts["copied_commit_calls"] == 1


def test_a_short_hash_nobody_resolved_joins_the_longer_hash_it_prefixes(tmp_path: Path) -> None:
    root = tmp_path / "c"
    long_hash = SHORT_1 + "d5e"
    SessionBuilder(S1, ALPHA).bash("git commit -m 'Fix it'", f"[main {long_hash}] {FIX}").write(
        root
    )
    alone = mine_receipts([root])
    assert alone.counts.get("short_hash_merged", 0) == 0  # control: nothing to merge yet
    SessionBuilder(S2, BETA).bash(
        "git commit -m 'Port'", f"[main {SHORT_1}] Port the retry fix to beta"
    ).write(root)
    mined = mine_receipts([root])
    assert mined.counts["short_hash_merged"] == 1
    assert [(r.hashes, r.authors) for r in mined.receipts] == [((long_hash, SHORT_1), (S1, S2))]
    assert dict(mined.citations) == {}


def _odd_corpus(root: Path) -> Path:
    s1 = (
        _author()
        .raw("{not json at all")
        .raw({"type": "user", "uuid": "odd-1", "sessionId": S1, "message": "a string message"})
        .raw("[1, 2]")
        .bash(
            "git commit --amend --no-edit",
            f"[main 2b3c4d5] {FIX}\n Date: Mon Jan 5 09:00:00 2026 +0100",
        )
        .bash("git rebase -i HEAD~2", f"[detached HEAD 3c4d5e6] {FIX}\nSuccessfully rebased.")
        .bash('git commit -m "Add upload metrics dashboard"', "pre-commit hook failed: ruff")
    )
    s1.write(root)
    # Compaction replays the parent's messages into a subagent file: the same call, the same commit.
    SessionBuilder(S1, ALPHA).copy_from(_author(), 3).write_agent(root, S1, "acompact-1f2e3d")
    SessionBuilder(S2, ALPHA).copy_from(_author(), 3).user("go on with the docs").write(root)
    summary = f"This session is being continued. Earlier: [main {SHORT_1}] {FIX}"
    s3 = SessionBuilder(S3, ALPHA).user(summary)
    s3.lines[0]["isCompactSummary"] = True  # type: ignore[index]
    (
        s3.say(f"Since {SHORT_1} the uploader retries; now the parser.")
        .bash(f"git commit -m '{BUMP}'", f"[main 5f5f5f5] {BUMP}")
        .raw(
            {
                "type": "user",
                "uuid": "orphan-1",
                "sessionId": S3,
                "message": {"role": "user", "content": [ORPHAN]},
            }
        )
        .write(root)
    )
    (
        SessionBuilder(S4, BETA)
        .bash(f'git commit -m "{BUMP}"', [{"type": "text", "text": f"[main 4e4e4e4] {BUMP}"}])
        .bash("cat CHANGELOG", f"[main 4e4e4e4] {BUMP}")
        .write(root)
    )
    return root / "projects"


def test_every_oddity_is_skipped_and_counted_and_the_draft_is_still_made(tmp_path: Path) -> None:
    mined = mine_receipts([_odd_corpus(tmp_path / "c")])
    assert [(r.qid, r.text, r.hashes, r.authors, r.projects) for r in mined.receipts] == [
        (f"receipt-{SHORT_1}", FIX, (FULL_1, "2b3c4d5"), (S1, S2), (ALPHA,)),
        ("receipt-5f5f5f5", BUMP, ("5f5f5f5", "4e4e4e4"), (S3, S4), (ALPHA, BETA)),
    ]
    # S3's summary is skipped by the parser; its own later sentence cites the commit.
    assert dict(mined.citations) == {FULL_1: (S3,)}
    assert [(s.hash, s.session_id, s.reason) for s in mined.skipped] == [
        ("3c4d5e6", S1, "other_git_command"),
        ("9d9d9d9", S3, "no_call"),
        ("4e4e4e4", S4, "not_git_commit"),
    ]
    c = mined.counts
    # calls: S1 commit, amend, refused; the compacted replay; S2's copy; S3; S4
    assert c["git_commit_calls"] == 7
    assert c["commits_with_hash"] == 5  # 1a2b3c4 (S1), 2b3c4d5, 1a2b3c4 (S2), 5f5f5f5, 4e4e4e4
    assert c["duplicate_commit_lines"] == 1  # the replay in the compacted subagent file
    assert c["commits_without_hash"] == 1  # the hook-refused commit
    assert (c["full_hash_resolved"], c["full_hash_resolved_corpus"], c["full_hash_unknown"]) == (
        1,
        1,
        3,
    )
    assert c["merged_same_subject"] == 2  # the amend; the same subject in two projects
    assert c["multi_author_receipts"] == 2
    assert c["copied_commit_calls"] == 1
    assert (c["files"], c["sessions"], c["receipts"]) == (5, 4, 2)
    assert c["lines_skipped:malformed_json"] == 1
    assert c["lines_skipped:no_envelope"] == 1  # the string `message`
    assert c["lines_skipped:not_object"] == 1
    assert c["lines_skipped:compact_summary"] == 1


def test_the_miner_accounts_for_every_commit_line_a_plain_scan_finds(tmp_path: Path) -> None:
    root = _odd_corpus(tmp_path / "c")
    plain = set(plain_scan.commit_lines(root))
    mined = mine_receipts([root])
    found = {(c.session_id, c.short[:7]) for r in mined.receipts for c in r.commits}
    skipped = {(s.session_id, s.hash[:7]) for s in mined.skipped}
    assert found | skipped == plain
    assert len(plain) == 7  # 1a2b3c4 twice, 2b3c4d5, 3c4d5e6, 5f5f5f5, 9d9d9d9, 4e4e4e4


def test_cli_prints_what_it_found_and_skipped_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _odd_corpus(tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["roster", "mine", "--kind", "receipts", str(root), "--out", "rosters/odd.json"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "read 5 files of 4 sessions: 7 git commit calls, 5 commits with a hash" in out
    assert "drafted rosters/odd.json (receipts): 2 questions" in out
    assert "commit lines skipped: no_call=1, not_git_commit=1, other_git_command=1" in out
    assert "odd lines skipped: malformed_json=1, no_envelope=1, not_object=1" in out
    assert (tmp_path / "rosters" / "odd.mining.json").is_file()

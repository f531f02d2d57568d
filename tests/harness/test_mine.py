"""The receipt miner: authoring sessions, citations, self-transcripts and our own MCP results.

The corpus is written by the tests: two authoring sessions, one session that only cites the hashes,
one self-transcript that commits, and one session whose only mention of a hash is inside this
project's own MCP tool result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.markers import OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from harness.mine import (
    MineError,
    commit_lines,
    is_git_commit,
    message_from_command,
    mine_receipts,
)
from harness.roster import load_draft
from tests.harness.transcript_builder import SessionBuilder as _Session

ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
S_AUTHOR_1 = "aaaaaaaa-0000-4000-8000-000000000001"
S_AUTHOR_2 = "aaaaaaaa-0000-4000-8000-000000000002"
S_CITES = "aaaaaaaa-0000-4000-8000-000000000003"
S_SELF = "aaaaaaaa-0000-4000-8000-000000000004"
S_MCP = "aaaaaaaa-0000-4000-8000-000000000005"
SHORT_1 = "1a2b3c4"
FULL_1 = SHORT_1 + "d5e6f708192a3b4c5d6e7f8091a2b3c4d"
SHORT_2 = "9f8e7d6"
SHORT_SELF = "5555aaa"
SHORT_MCP = "7777bbb"


def _corpus(root: Path, *, self_marker: bool = True, mcp_server: str = "recallbench") -> Path:
    (
        _Session(S_AUTHOR_1, ALPHA)
        .user("The uploader retry test is flaky; fix it and commit.")
        .say("I'll fix the retry loop and commit.")
        .bash(
            'git add src/upload.py && git commit -m "Fix flaky retry in uploader"',
            f"[main {SHORT_1}] Fix flaky retry in uploader\n 1 file changed, 3 insertions(+)",
        )
        .bash('git commit --allow-empty -m "wip"', "[main 0bad0ff] wip")
        .bash("git log -1 --format=%H", FULL_1)
        .write(root)
    )
    (
        _Session(S_AUTHOR_2, BETA)
        .user("Add the weekly export and commit it.")
        .bash(
            "git commit -m \"$(cat <<'EOF'\nAdd export of weekly reports\n\nWrites CSV files.\nEOF\n)\"",
            f"[feature/export {SHORT_2}] Add export of weekly reports\n 2 files changed",
        )
        .write(root)
    )
    (
        _Session(S_CITES, ALPHA)
        .user(f"Was {SHORT_1} the commit that fixed the uploader?")
        .say(f"Yes, and {SHORT_2} in the other project added the export.")
        # A non-commit command whose output looks like git's commit line: still only a citation.
        .bash("cat notes/changelog.txt", f"[main {SHORT_1}] Fix flaky retry in uploader")
        .write(root)
    )
    first = f"{SELF_PROMPT_MARKER} summarise this session" if self_marker else "summarise this"
    (
        _Session(S_SELF, ALPHA)
        .user(first)
        .bash(
            'git commit -m "Self generated summary commit"',
            f"[main {SHORT_SELF}] Self generated summary commit",
        )
        .say(f"The session mentioned {SHORT_1}.")
        .write(root)
    )
    (
        _Session(S_MCP, ALPHA)
        .user("What did we change in the uploader last week?")
        .tool(
            f"mcp__{mcp_server}__search",
            {"query": "uploader retry"},
            f"[main {SHORT_1}] Fix flaky retry in uploader\n[main {SHORT_MCP}] Tune ranking weights",
        )
        .say("The retry loop was fixed last week.")
        .write(root)
    )
    return root


def test_miner_recovers_exactly_the_two_authoring_sessions(tmp_path: Path) -> None:
    mined = mine_receipts([_corpus(tmp_path / "corpus")])
    got = {r.qid: (r.text, r.authors, r.projects, r.hashes) for r in mined.receipts}
    assert got == {
        f"receipt-{SHORT_1}": ("Fix flaky retry in uploader", (S_AUTHOR_1,), (ALPHA,), (FULL_1,)),
        f"receipt-{SHORT_2}": ("Add export of weekly reports", (S_AUTHOR_2,), (BETA,), (SHORT_2,)),
    }
    assert mined.counts["git_commit_calls"] == 3  # the self-transcript's call is never parsed
    assert mined.counts["commits_with_hash"] == 3
    assert mined.counts["full_hash_resolved"] == 1
    assert mined.counts["skipped:short_subject"] == 1
    # Every other commit line is accounted for, with the reason it is not a receipt.
    assert [(s.hash, s.session_id, s.reason) for s in mined.skipped] == [
        ("0bad0ff", S_AUTHOR_1, "short_subject"),
        (SHORT_1, S_CITES, "not_git_commit"),  # `cat notes/changelog.txt`
        (SHORT_SELF, S_SELF, "self_transcript"),
        (SHORT_1, S_MCP, "own_mcp_result"),
        (SHORT_MCP, S_MCP, "own_mcp_result"),
    ]
    assert mined.skipped_by_reason() == {
        "not_git_commit": 1,
        "own_mcp_result": 2,
        "self_transcript": 1,
        "short_subject": 1,
    }


def test_citing_session_is_listed_apart_and_never_proposed_as_author(tmp_path: Path) -> None:
    mined = mine_receipts([_corpus(tmp_path / "corpus")])
    authors = {a for r in mined.receipts for a in r.authors}
    assert S_CITES not in authors
    # positive control: the same session is found, as a citation of both commits
    assert dict(mined.citations) == {FULL_1: (S_CITES,), SHORT_2: (S_CITES,)}
    assert mined.counts["citing_sessions"] == 1


def test_self_transcript_commits_are_never_mined_until_the_marker_is_gone(tmp_path: Path) -> None:
    flagged = mine_receipts([_corpus(tmp_path / "a")])
    assert flagged.counts["self_transcript_sessions"] == 1
    assert all(S_SELF not in r.authors for r in flagged.receipts)
    assert all(S_SELF not in c for c in flagged.citations.values())
    # positive control: without the marker the same session is an author and cites SHORT_1
    plain = mine_receipts([_corpus(tmp_path / "b", self_marker=False)])
    assert plain.counts["self_transcript_sessions"] == 0
    assert (S_SELF,) in [r.authors for r in plain.receipts]
    assert S_SELF in plain.citations[FULL_1]


def test_own_mcp_results_are_neither_receipts_nor_citations(tmp_path: Path) -> None:
    ours = mine_receipts([_corpus(tmp_path / "a")])
    assert ours.counts["own_mcp_result"] == 1
    assert S_MCP not in ours.citations[FULL_1]
    assert all(S_MCP not in r.authors for r in ours.receipts)
    assert OWN_TOOL_PREFIX == "mcp__recallbench__"
    # positive control: the same result from another server's tool is stored text, so it cites
    other = mine_receipts([_corpus(tmp_path / "b", mcp_server="othermem")])
    assert S_MCP in other.citations[FULL_1]
    assert all(S_MCP not in r.authors for r in other.receipts)


def test_written_draft_loads_as_a_session_roster_with_a_side_file(tmp_path: Path) -> None:
    mined = mine_receipts([_corpus(tmp_path / "corpus")], name="receipts-test")
    roster_path, side_path = mined.write(tmp_path / "rosters" / "receipts.json")
    assert side_path == tmp_path / "rosters" / "receipts.mining.json"
    draft = load_draft(roster_path)
    assert draft.name == "receipts-test"
    assert draft.unit == "session"
    assert [q.qid for q in draft.questions] == [f"receipt-{SHORT_1}", f"receipt-{SHORT_2}"]
    assert {q.category for q in draft.questions} == {"receipt"}
    assert [q.scope for q in draft.questions] == [(ALPHA,), (BETA,)]
    assert dict(draft.key[f"receipt-{SHORT_1}"].relevant) == {S_AUTHOR_1: 1}
    side = json.loads(side_path.read_text(encoding="utf-8"))
    assert side["citations"] == {FULL_1: [S_CITES], SHORT_2: [S_CITES]}
    assert side["counts"]["receipts"] == 2
    assert side["skipped"][0] == {
        "hash": "0bad0ff",
        "session_id": S_AUTHOR_1,
        "subject": "wip",
        "reason": "short_subject",
    }
    assert side["skipped_by_reason"]["short_subject"] == 1
    assert side["receipts"][0]["commits"] == [
        {"session_id": S_AUTHOR_1, "hash": SHORT_1, "call_id": f"toolu_{S_AUTHOR_1[-4:]}_2"}
    ]


def test_an_amended_commit_with_the_same_subject_is_one_question_with_both_hashes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    (
        _Session(S_AUTHOR_1, ALPHA)
        .user("commit it")
        .bash(
            'git commit -m "Wire the session list to live updates"',
            "[main abc1234] Wire the session list to live updates",
        )
        .bash(
            "git commit --amend --no-edit", "[main def5678] Wire the session list to live updates"
        )
        .write(root)
    )
    mined = mine_receipts([root])
    assert [(r.qid, r.hashes, r.authors) for r in mined.receipts] == [
        ("receipt-abc1234", ("abc1234", "def5678"), (S_AUTHOR_1,))
    ]
    assert mined.counts["merged_same_subject"] == 1


def test_quiet_commit_followed_by_rev_parse_takes_the_subject_from_the_command(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    full = "c0ffee" + "1" * 34
    (
        _Session(S_AUTHOR_2, BETA)
        .user("commit quietly")
        .bash("git commit -q -m 'Pin the parser version' && git rev-parse HEAD", full + "\n")
        .write(root)
    )
    mined = mine_receipts([root])
    assert [(r.qid, r.text, r.hashes, r.source) for r in mined.receipts] == [
        ("receipt-c0ffee1", "Pin the parser version", (full,), "command")
    ]


def test_a_corpus_without_commits_cannot_be_written(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    _Session(S_CITES, ALPHA).user("hello").say("hi there").write(root)
    mined = mine_receipts([root])
    assert mined.receipts == ()
    with pytest.raises(MineError, match="No receipts were mined"):
        mined.write(tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_git_commit_detection_and_commit_line_parsing() -> None:
    assert is_git_commit('git commit -m "x"')
    assert is_git_commit("git -C /repo commit -am 'x'")
    assert is_git_commit("cd a && git add . && git commit")
    assert not is_git_commit("git commit-tree HEAD^{tree}")
    assert not is_git_commit("git log --grep commit")
    assert commit_lines("[main (root-commit) 1234567] Initial import\n 3 files changed") == [
        ("main", "1234567", "Initial import")
    ]
    assert commit_lines("[detached HEAD abcdef1] Try it") == [
        ("detached HEAD", "abcdef1", "Try it")
    ]
    assert commit_lines("[FORMAT] Code is not formatted.") == []


def test_commit_message_is_read_from_every_command_spelling() -> None:
    heredoc = "git commit -m \"$(cat <<'EOF'\nfeat: add the thing\n\nBody.\nEOF\n)\""
    assert message_from_command(heredoc) == "feat: add the thing"
    assert message_from_command('git commit -m "Say \\"hi\\" twice"') == 'Say "hi" twice'
    assert message_from_command("git commit -am 'Single quoted'") == "Single quoted"
    assert message_from_command("git commit --message=bare-word") == "bare-word"
    assert message_from_command('git commit -m "First line\nsecond"') == "First line"
    assert message_from_command("git commit") is None


def test_a_roster_name_that_cannot_name_a_folder_is_refused(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "corpus")
    with pytest.raises(MineError, match="Roster name"):
        mine_receipts([root], name="../escape")
    assert mine_receipts([root], name="ok.name-1").name == "ok.name-1"


def test_miner_recovers_the_synthetic_generators_receipt_gold(tmp_path: Path) -> None:
    from harness.synthetic import SyntheticConfig, generate

    corpus = generate(tmp_path / "synthetic", SyntheticConfig.small(seed=7))
    roster = load_draft(corpus.rosters["receipts"])
    expected = sorted((tuple(roster.key[q.qid].relevant), q.scope) for q in roster.questions)
    mined = mine_receipts([corpus.projects_dir])
    # One mined receipt per planted commit, each with the generator's authoring session and scope.
    assert sorted((r.authors, r.projects) for r in mined.receipts) == expected
    assert len(expected) == SyntheticConfig.small(seed=7).commits
    planted = json.loads(corpus.planted_path.read_text(encoding="utf-8"))
    assert planted["citations"]
    for cite in planted["citations"]:
        hits = [h for h in mined.citations if h.startswith(cite["short_hash"])]
        assert len(hits) == 1
        assert cite["session"] in mined.citations[hits[0]]
        receipt = next(r for r in mined.receipts if hits[0] in r.hashes)
        assert receipt.authors == (cite["author"],)
        assert cite["session"] not in receipt.authors


def test_a_question_whose_project_holds_only_its_authors_session_is_counted_and_named(
    tmp_path: Path,
) -> None:
    """BETA holds one session, the author of SHORT_2's commit; ALPHA holds the author of SHORT_1's and
    two more live sessions (the one citing it and the one with our MCP result; the self-transcript
    does not count). So 1 of the 2 questions is found by any arm at the session unit."""
    corpus = _corpus(tmp_path / "corpus")
    mined = mine_receipts([corpus])
    assert mined.counts["receipts_alone_in_scope"] == 1
    assert mined.summary()[-1] == (
        "1 of 2 questions ask for the only session of their project (its scope holds no other), "
        "which every memory arm finds at the session unit; mine with --unit message to make the gold "
        "the commit's own work"
    )
    # at the message unit the gold is the work, so nothing is advised
    by_message = mine_receipts([corpus], unit="message")
    assert by_message.counts["receipts_alone_in_scope"] == 1
    assert not any("--unit message" in line for line in by_message.summary())

"""The synthetic corpus's planted features, counted straight from the files of `SyntheticConfig.small()`."""

from __future__ import annotations

import re
from typing import Any

import pytest

from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from harness.synthetic import CREDENTIAL_KINDS, GeneratedCorpus, SyntheticConfig, generate
from tests.harness.synthetic_reader import (
    blocks_of,
    by_session,
    content_strings,
    first_prompt,
    git_results,
    is_prompt,
    normalise,
    read_planted,
    read_rosters,
    read_tree,
    session_text,
)

CREDENTIAL_PATTERNS = {
    "anthropic_key": re.compile(r"sk-ant-api03-[A-Za-z0-9_\-]{93}AA"),
    "aws_access_key": re.compile(r"\bAKIA[A-Z2-7]{16}\b"),
    "github_token": re.compile(r"\bghp_[A-Za-z0-9]{36}\b"),
    "url_password": re.compile(r"postgres://[^:\s/]+:[^@\s]+@"),
    "env_secret": re.compile(r"SECRET_KEY=[0-9a-f]{48}"),
    "private_key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("small") / "corpus", SyntheticConfig.small())


@pytest.fixture(scope="module")
def small_tree(small: GeneratedCorpus) -> dict[str, list[dict[str, Any]]]:
    return read_tree(small.root)


def test_planted_scaffolding_counts_match_a_direct_count_over_the_files(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    planted = read_planted(small)
    context_in_user = 0
    sentinel_in_assistant = 0
    private_closed = 0
    private_unclosed = 0
    own_calls: set[str] = set()
    own_results = 0
    other_calls: set[str] = set()
    other_results = 0
    credentials = dict.fromkeys(CREDENTIAL_KINDS, 0)
    for lines in small_tree.values():
        for line in lines:
            for block in blocks_of(line):
                if block.get("type") == "tool_use":
                    if block["name"].startswith(OWN_TOOL_PREFIX):
                        own_calls.add(block["id"])
                    if block["name"] == "mcp__othermem__search_memory":
                        other_calls.add(block["id"])
            for block in blocks_of(line):
                if block.get("type") == "tool_result":
                    own_results += block["tool_use_id"] in own_calls
                    other_results += block["tool_use_id"] in other_calls
            texts = content_strings(line)
            joined = "\n".join(texts)
            if is_prompt(line):
                context_in_user += joined.count(CONTEXT_OPEN)
                assert joined.count(CONTEXT_OPEN) == joined.count(CONTEXT_CLOSE)
                for text in texts:
                    opened = text.count("<private>")
                    closed = text.count("</private>")
                    private_closed += closed
                    private_unclosed += opened - closed
            if line["type"] == "assistant":
                sentinel_in_assistant += joined.count(CONTEXT_OPEN)
            for kind, pattern in CREDENTIAL_PATTERNS.items():
                credentials[kind] += len(pattern.findall(joined))
    assert context_in_user == planted["context_blocks"] == 3
    assert sentinel_in_assistant == planted["assistant_sentinel_quotes"] == 1
    assert (
        len(own_calls)
        == own_results
        == planted["own_mcp"]["calls"]
        == planted["own_mcp"]["results"]
        == 3
    )
    assert len(other_calls) == other_results == planted["other_mcp"]["calls"] == 2
    assert private_closed == planted["private_spans"]["closed"] == 2
    assert private_unclosed == planted["private_spans"]["unclosed"] == 1
    assert credentials == planted["credentials"] == dict.fromkeys(CREDENTIAL_KINDS, 1)


def test_self_transcripts_are_exactly_the_sessions_opening_with_the_marker(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    flagged = sorted(
        sid for sid, lines in sessions.items() if first_prompt(lines).startswith(SELF_PROMPT_MARKER)
    )
    planted = read_planted(small)
    assert flagged == sorted(planted["self_transcripts"])
    assert len(flagged) == 1
    # The marker never opens an ordinary session's first prompt.
    assert len(sessions) - len(flagged) == 19


def test_roster_questions_appear_verbatim_only_in_their_echo_sessions(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = {
        sid: normalise(session_text(lines)) for sid, lines in by_session(small_tree).items()
    }
    echoes: dict[str, list[str]] = read_planted(small)["echo_sessions"]
    texts = {
        q["qid"]: normalise(q["text"]) for r in read_rosters(small).values() for q in r["questions"]
    }
    found: dict[str, set[str]] = {}
    for qid, text in texts.items():
        for sid, body in sessions.items():
            if text in body:
                found.setdefault(sid, set()).add(qid)
    assert found == {sid: set(qids) for sid, qids in echoes.items()}
    assert sum(len(q) for q in echoes.values()) == 2


def test_commit_hashes_live_in_the_authors_git_results_and_citations_only_in_prose(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    receipts = read_rosters(small)["receipts"]["questions"]
    planted = read_planted(small)
    for q in receipts:
        (author,) = q["gold"]["relevant"]
        git = "\n".join(git_results(sessions[author]))
        heads = re.findall(r"^\[[^\]\s]+ ([0-9a-f]{7})\] ", git, flags=re.MULTILINE)
        assert heads, q["qid"]
        assert any(re.search(rf"\b{h}[0-9a-f]{{33}}\b", git) for h in heads), q["qid"]
    authored = {
        m
        for q in receipts
        for m in re.findall(
            r"^\[[^\]\s]+ ([0-9a-f]{7})\] ",
            "\n".join(git_results(sessions[next(iter(q["gold"]["relevant"]))])),
            flags=re.MULTILINE,
        )
    }
    assert len(authored) == 8
    for cite in planted["citations"]:
        body = session_text(sessions[cite["session"]])
        assert cite["short_hash"] in body
        assert cite["short_hash"] in authored
        assert not any(cite["short_hash"] in r for r in git_results(sessions[cite["session"]]))
        assert cite["session"] != cite["author"]


def test_near_duplicate_attempt_repeats_the_work_but_its_commit_is_rejected(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    (pair,) = read_planted(small)["near_duplicates"]
    attempt, original = sessions[pair["attempt"]], sessions[pair["original"]]
    assert any(pair["short_hash"] in r for r in git_results(original))
    assert not any(pair["short_hash"] in r for r in git_results(attempt))
    commands = [
        b["input"]["command"]
        for line in attempt
        for b in blocks_of(line)
        if b.get("type") == "tool_use"
        and b["name"] == "Bash"
        and "git commit" in b["input"]["command"]
    ]
    assert len(commands) == 1
    assert any("Failed" in r for r in git_results(attempt))
    prompts_a = [normalise(first_prompt([x])) for x in attempt if is_prompt(x)]
    prompts_o = {normalise(first_prompt([x])) for x in original if is_prompt(x)}
    shared = [p for p in prompts_a if p in prompts_o]
    assert len(shared) >= len(prompts_a) // 2
    # The failed attempt happened first; the original redid the work later and committed.
    first = min(x["timestamp"] for x in attempt if "timestamp" in x)
    assert first < min(x["timestamp"] for x in original if "timestamp" in x)

"""The synthetic corpus's gold rosters: they load, their gold exists, and each category tests what it says."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from harness.roster import load_draft
from harness.synthetic import ROSTER_NAMES, GeneratedCorpus, SyntheticConfig, generate, jaccard
from tests.harness.synthetic_reader import (
    blocks_of,
    by_session,
    read_planted,
    read_rosters,
    read_tree,
    session_text,
)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("small") / "corpus", SyntheticConfig.small())


@pytest.fixture(scope="module")
def small_tree(small: GeneratedCorpus) -> dict[str, list[dict[str, Any]]]:
    return read_tree(small.root)


def test_rosters_load_as_drafts_with_unique_qids_and_existing_gold(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = set(by_session(small_tree))
    qids: list[str] = []
    for name in ROSTER_NAMES:
        draft = load_draft(small.rosters[name])
        assert draft.name == name
        assert draft.unit == "session"
        for q in draft.questions:
            qids.append(q.qid)
            gold = draft.key[q.qid]
            assert set(gold.relevant) <= sessions
            assert set(gold.forbidden) <= sessions
            assert q.scope != "*"
            assert len(q.scope) == 1
            assert set(q.scope) <= set(small.project_cwds)
    assert len(qids) == len(set(qids)) == sum(small.questions.values()) == 8 + 4 + 3 + 2 + 4


def test_gold_sessions_belong_to_the_project_their_question_is_scoped_to(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    project_of = {sid: lines[0]["cwd"] for sid, lines in by_session(small_tree).items()}
    for roster in read_rosters(small).values():
        for q in roster["questions"]:
            for sid in q["gold"]["relevant"]:
                assert project_of[sid] == q["scope"][0], q["qid"]
            for sid in q["gold"]["forbidden"]:
                assert project_of[sid] != q["scope"][0], q["qid"]


def test_each_negative_names_a_control_that_retrieves_the_forbidden_session_in_its_own_project(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    questions = {q["qid"]: q for q in read_rosters(small)["negatives"]["questions"]}
    negatives = [q for q in questions.values() if q["gold"]["forbidden"]]
    assert len(negatives) == 2
    sessions = by_session(small_tree)
    for neg in negatives:
        assert neg["gold"]["relevant"] == {}
        control = questions[neg["gold"]["control"]]
        assert control["text"] == neg["text"]
        assert list(control["gold"]["relevant"]) == neg["gold"]["forbidden"]
        assert control["scope"] != neg["scope"]
        # The forbidden session really holds the incident the query describes.
        (sid,) = neg["gold"]["forbidden"]
        trigger = neg["text"].rsplit(" after ", 1)[-1].rstrip("?")
        assert trigger in session_text(sessions[sid])


def test_decision_questions_paraphrase_with_little_word_overlap(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    questions = read_rosters(small)["decisions"]["questions"]
    overlaps = []
    for q in questions:
        (sid,) = q["gold"]["relevant"]
        decisions = re.findall(r"Decision for the [^\n]*?\.(?=\s|$)", session_text(sessions[sid]))
        assert decisions, q["qid"]
        overlaps.append(max(jaccard(q["text"], d) for d in decisions))
    mean = sum(overlaps) / len(overlaps)
    assert mean < 0.2
    assert mean == pytest.approx(small.decision_overlap)
    assert f"{small.decision_overlap:.3f}" in read_rosters(small)["decisions"]["description"]
    # Positive control for the measure: the decision sentence overlaps itself fully.
    assert jaccard(decisions[0], decisions[0]) == 1.0


def test_multihop_gold_is_reachable_only_through_the_shared_file(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    echo = set(read_planted(small)["echo_sessions"])
    edits: dict[str, Counter[str]] = {}
    for sid, lines in sessions.items():
        c: Counter[str] = Counter()
        for line in lines:
            for b in blocks_of(line):
                if b.get("type") == "tool_use" and b["name"] in ("Edit", "Write", "MultiEdit"):
                    c[b["input"]["file_path"]] += 1
        edits[sid] = c
    pairs = {p["qid"]: p for p in read_planted(small)["multihop_pairs"]}
    for q in read_rosters(small)["multihop"]["questions"]:
        assert q["tags"]["hop"] == "multi"
        ident = re.search(r"`([^`]+)`", q["text"])
        assert ident is not None
        holders = sorted(
            sid
            for sid, lines in sessions.items()
            if ident.group(1) in session_text(lines) and sid not in echo
        )
        assert len(holders) == 1, (q["qid"], holders)
        (a,) = holders
        (b,) = q["gold"]["relevant"]
        assert a != b
        shared = set(edits[a]) & set(edits[b])
        bridges = [f for f in shared if sum(1 for c in edits.values() if f in c) == 2]
        assert len(bridges) == 1, q["qid"]
        (bridge,) = bridges
        # The bridge file is the one A edited most, so a walk from A reaches it first.
        assert edits[a][bridge] > max(n for f, n in edits[a].items() if f != bridge)
        assert ident.group(1) not in session_text(sessions[b])
        pair = pairs[q["qid"]]
        assert (pair["a_session"], pair["b_session"], pair["ident"]) == (a, b, ident.group(1))
        assert bridge.endswith(pair["file"])
        # B states the value asked for.
        assert re.search(rf"to {pair['value']}\b", session_text(sessions[b]))


def test_temporal_gold_is_the_last_revision_and_earlier_sessions_hold_superseded_choices(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = by_session(small_tree)
    planted = read_planted(small)
    skip = set(planted["echo_sessions"]) | set(planted["self_transcripts"])
    starts = {
        sid: min(x["timestamp"] for x in lines if "timestamp" in x)
        for sid, lines in sessions.items()
    }
    questions = {q["qid"]: q for q in read_rosters(small)["temporal"]["questions"]}
    assert len(planted["temporal_chains"]) == len(questions) == 2
    for chain in planted["temporal_chains"]:
        q = questions[chain["qid"]]
        topic = f"the {chain['aspect']} for the {chain['component']}"
        assert chain["aspect"] in q["text"]
        assert chain["component"] in q["text"]
        # Found from the files alone: every session that states a decision on this topic.
        holders = sorted(
            (starts[sid], sid)
            for sid, lines in sessions.items()
            if sid not in skip
            and (
                f"Decision on {topic}:" in session_text(lines)
                or f"earlier call on {topic}:" in session_text(lines)
            )
        )
        ordered = [sid for _, sid in holders]
        assert ordered == chain["sessions"]
        assert len(ordered) == int(q["tags"]["revisions"]) + 1
        assert q["gold"]["relevant"] == {ordered[-1]: 1}
        latest = session_text(sessions[ordered[-1]])
        assert f"we now use {chain['options'][-1]} instead of {chain['options'][-2]}" in latest
        first = session_text(sessions[ordered[0]])
        assert f"Decision on {topic}: {chain['options'][0]}." in first
        assert "Reversing the earlier call" not in first

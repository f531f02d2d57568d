"""The synthetic corpus: determinism, line shapes, planted features and gold rosters.

Most tests use `SyntheticConfig.small()` (2 projects, 20 sessions, every feature present); the
default-size checks share one module-scoped corpus and are marked slow.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.chunking import chunk_stream
from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from engine.model import Author, CleanMessage
from harness.roster import load_draft
from harness.synthetic import (
    CREDENTIAL_KINDS,
    ROSTER_NAMES,
    GeneratedCorpus,
    SyntheticConfig,
    SyntheticError,
    encode_cwd,
    generate,
    jaccard,
    tree_sha256,
)

# sha256 over (sorted relative path, size, bytes) of the tree written for SyntheticConfig.small().
# Changing any template, table or draw order changes it: update it deliberately, never silently.
GOLDEN_SMALL_TREE = "6e1f0e9f7efcf93059b887241d981fe251e6681fe459156ff07794dfbbe82167"
GOLDEN_DEFAULT_TREE = "27aa977290c1578fe7c74e69efa927239b1732f67061dd0383cbbd32606d48ac"

ENVELOPE = (
    "type",
    "uuid",
    "parentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "timestamp",
)
NO_ENVELOPE = ("summary", "file-history-snapshot")
CREDENTIAL_PATTERNS = {
    "anthropic_key": re.compile(r"sk-ant-api03-[A-Za-z0-9_\-]{93}AA"),
    "aws_access_key": re.compile(r"\bAKIA[A-Z2-7]{16}\b"),
    "github_token": re.compile(r"\bghp_[A-Za-z0-9]{36}\b"),
    "url_password": re.compile(r"postgres://[^:\s/]+:[^@\s]+@"),
    "env_secret": re.compile(r"SECRET_KEY=[0-9a-f]{48}"),
    "private_key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


# ---------------------------------------------------------------------------------------------
# Reading the tree back (independently of the generator's own records)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _jsonl(root: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        p.relative_to(root).as_posix(): _lines(p)
        for p in sorted((root / "projects").rglob("*.jsonl"))
    }


def _sessions(tree: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Every line of every file grouped by sessionId (subagent lines join their parent)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for lines in tree.values():
        for line in lines:
            if "sessionId" in line:
                out.setdefault(line["sessionId"], []).append(line)
    return out


def _blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    content = line.get("message", {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _content_strings(line: dict[str, Any]) -> list[str]:
    """Strings of a line's message content: text, tool_use inputs, tool_result bodies."""
    return list(_strings(line.get("message", {}).get("content")))


def _session_text(lines: list[dict[str, Any]]) -> str:
    return "\n".join(s for line in lines for s in _content_strings(line))


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def _rosters(corpus: GeneratedCorpus) -> dict[str, dict[str, Any]]:
    return {
        name: json.loads(path.read_text(encoding="utf-8")) for name, path in corpus.rosters.items()
    }


def _planted(corpus: GeneratedCorpus) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(corpus.planted_path.read_text(encoding="utf-8"))
    return data


def _is_prompt(line: dict[str, Any]) -> bool:
    """A real human prompt, by the transcript spec's definition."""
    if line.get("type") != "user" or line.get("isSidechain") or line.get("isMeta"):
        return False
    if "toolUseResult" in line:
        return False
    blocks = _blocks(line)
    if any(b.get("type") == "tool_result" for b in blocks):
        return False
    text = "".join(b.get("text", "") for b in blocks)
    return not text.lstrip().startswith(("<command-", "<local-command"))


def _first_prompt(lines: list[dict[str, Any]]) -> str:
    for line in lines:
        if _is_prompt(line):
            return "".join(b.get("text", "") for b in _blocks(line))
    return ""


def _git_results(lines: list[dict[str, Any]]) -> list[str]:
    """Bodies of tool results answering a Bash call whose command starts with `git`."""
    git_ids = {
        b["id"]
        for line in lines
        if line.get("type") == "assistant"
        for b in _blocks(line)
        if b.get("type") == "tool_use" and b["name"] == "Bash" and "git " in b["input"]["command"]
    }
    return [
        s
        for line in lines
        if line.get("type") == "user"
        for b in _blocks(line)
        if b.get("type") == "tool_result" and b["tool_use_id"] in git_ids
        for s in _strings(b["content"])
    ]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("small") / "corpus", SyntheticConfig.small())


@pytest.fixture(scope="module")
def small_tree(small: GeneratedCorpus) -> dict[str, list[dict[str, Any]]]:
    return _jsonl(small.root)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("default") / "corpus")


# ---------------------------------------------------------------------------------------------
# Determinism


def test_same_seed_gives_byte_identical_trees_and_another_seed_differs(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", SyntheticConfig.small())
    b = generate(tmp_path / "b", SyntheticConfig.small())
    c = generate(tmp_path / "c", SyntheticConfig.small(seed=99))
    assert a.files == b.files
    assert tree_sha256(a.root) == tree_sha256(b.root)
    assert tree_sha256(a.root) != tree_sha256(c.root)
    assert a.files != c.files  # session ids are drawn from the seed too


def test_small_config_tree_matches_the_committed_golden_hash(small: GeneratedCorpus) -> None:
    assert tree_sha256(small.root) == GOLDEN_SMALL_TREE


def test_refuses_a_non_empty_out_dir_but_accepts_an_empty_one(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x", encoding="utf-8")
    with pytest.raises(SyntheticError, match="not empty"):
        generate(busy, SyntheticConfig.small())
    assert (busy / "keep.txt").read_text(encoding="utf-8") == "x"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert generate(empty, SyntheticConfig.small()).session_files == 20


def test_config_rejects_impossible_requests_with_a_useful_message() -> None:
    with pytest.raises(SyntheticError, match=r"projects must be between 1 and 6, got 7"):
        SyntheticConfig(projects=7)
    with pytest.raises(SyntheticError, match=r"negatives need at least 2 projects"):
        replace(SyntheticConfig.small(), projects=1)
    with pytest.raises(SyntheticError, match=r"commits must be >= 0, got -1"):
        replace(SyntheticConfig.small(), commits=-1)
    with pytest.raises(SyntheticError, match=r"too few work sessions"):
        replace(SyntheticConfig.small(), sessions=6)
    assert replace(SyntheticConfig.small(), sessions=30).sessions == 30


# ---------------------------------------------------------------------------------------------
# Line shapes


def test_every_line_is_json_and_every_enveloped_line_has_the_full_envelope(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    raw = list(small.projects_dir.rglob("*.jsonl"))
    for path in raw:
        data = path.read_bytes()
        assert data.endswith(b"\n")
        assert b"\r\n" not in data
    kinds: Counter[str] = Counter()
    for lines in small_tree.values():
        for line in lines:
            kinds[line["type"]] += 1
            if line["type"] in NO_ENVELOPE:
                continue
            missing = [k for k in ENVELOPE if k not in line]
            assert not missing, (line["type"], missing)
            assert TIMESTAMP.match(line["timestamp"]), line["timestamp"]
    assert set(kinds) == {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
    }


def test_both_transcript_generations_are_present_and_match_planted_counts(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    versions = Counter(
        lines[-1]["version"] for rel, lines in small_tree.items() if "agent-" not in rel
    )
    planted = _planted(small)
    assert versions == Counter(planted["formats"])
    assert versions["2.1.74"] > 0
    assert versions["1.0.108"] > 0
    # Older files open with a summary line; newer ones never carry one.
    for rel, lines in small_tree.items():
        if "agent-" in rel:
            continue
        has_summary = lines[0]["type"] == "summary"
        assert has_summary == (lines[-1]["version"] == "1.0.108"), rel


def test_subagent_files_exist_in_both_layouts_as_sidechains_of_their_parent(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    modern = [r for r in small_tree if "/subagents/agent-" in r]
    older = [r for r in small_tree if re.fullmatch(r"projects/[^/]+/agent-[0-9a-f]{8}\.jsonl", r)]
    assert modern
    assert older
    sessions = {
        r.rsplit("/", 1)[-1].removesuffix(".jsonl") for r in small_tree if "agent-" not in r
    }
    for rel in modern + older:
        lines = small_tree[rel]
        assert all(line["isSidechain"] is True for line in lines)
        assert {line["sessionId"] for line in lines} <= sessions
        agent = rel.rsplit("agent-", 1)[1].removesuffix(".jsonl")
        assert {line["agentId"] for line in lines} == {agent}
        assert lines[0]["parentUuid"] is None
    for rel in modern:
        parent = rel.split("/")[2]
        assert {line["sessionId"] for line in small_tree[rel]} == {parent}
        assert small_tree[rel][0]["version"] == "2.1.74"
    for rel in older:
        assert small_tree[rel][0]["version"] == "1.0.108"
    planted = _planted(small)
    assert planted["subagent_files"] == {"2.1.74": len(modern), "1.0.108": len(older)}
    assert small.subagent_files == len(modern) + len(older)
    # The main streams themselves never contain sidechain lines.
    for rel, lines in small_tree.items():
        if "agent-" not in rel:
            assert not any(line.get("isSidechain") for line in lines if "isSidechain" in line)


def test_assistant_messages_span_several_lines_with_one_block_each(
    small_tree: dict[str, list[dict[str, Any]]],
) -> None:
    per_message: Counter[str] = Counter()
    for lines in small_tree.values():
        for line in lines:
            if line["type"] == "assistant":
                assert len(line["message"]["content"]) == 1
                per_message[line["message"]["id"]] += 1
    assert max(per_message.values()) >= 3
    assert min(per_message.values()) == 1


def test_tool_results_are_user_lines_with_blocks_and_a_tool_use_result(
    small_tree: dict[str, list[dict[str, Any]]],
) -> None:
    uses: dict[str, str] = {}
    results: dict[str, dict[str, Any]] = {}
    for lines in small_tree.values():
        for line in lines:
            for block in _blocks(line):
                if block.get("type") == "tool_use":
                    uses[block["id"]] = block["name"]
                if block.get("type") == "tool_result":
                    assert line["type"] == "user"
                    assert "toolUseResult" in line
                    results[block["tool_use_id"]] = line
    assert set(results) == set(uses)
    names = Counter(uses.values())
    for name in (
        "Bash",
        "Read",
        "Edit",
        "Write",
        "MultiEdit",
        "Grep",
        "TodoWrite",
        "Agent",
        "Task",
    ):
        assert names[name] > 0, name
    errors = [line for line in results.values() if isinstance(line["toolUseResult"], str)]
    assert errors
    assert all(line["toolUseResult"].startswith("Error: ") for line in errors)


def test_noise_lines_the_importer_must_skip_are_present(
    small_tree: dict[str, list[dict[str, Any]]],
) -> None:
    kinds = Counter(line["type"] for lines in small_tree.values() for line in lines)
    meta = sum(1 for lines in small_tree.values() for line in lines if line.get("isMeta") is True)
    assert kinds["file-history-snapshot"] > 0
    assert kinds["summary"] > 0
    assert kinds["progress"] > 0
    assert meta > 0


def test_project_folders_are_encoded_cwds_and_match_the_cwd_of_their_lines(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    assert encode_cwd("/Users/mika/code/pixel_forge") == "-Users-mika-code-pixel-forge"
    folders = {encode_cwd(cwd): cwd for cwd in small.project_cwds}
    for rel, lines in small_tree.items():
        folder = rel.split("/")[1]
        cwds = {line["cwd"] for line in lines if "cwd" in line}
        assert cwds == {folders[folder]}, rel


def test_written_files_match_the_returned_list_and_the_planted_count(
    small: GeneratedCorpus,
) -> None:
    on_disk = sorted(
        p.relative_to(small.root).as_posix() for p in small.root.rglob("*") if p.is_file()
    )
    assert list(small.files) == on_disk
    expected = _planted(small)["expected_files"]
    assert expected["total"] == len(on_disk)
    assert expected["jsonl"] == sum(1 for f in on_disk if f.endswith(".jsonl"))
    assert expected["sessions"] == small.session_files == 20


# ---------------------------------------------------------------------------------------------
# Planted features, counted straight from the files


def test_planted_scaffolding_counts_match_a_direct_count_over_the_files(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    planted = _planted(small)
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
            for block in _blocks(line):
                if block.get("type") == "tool_use":
                    if block["name"].startswith(OWN_TOOL_PREFIX):
                        own_calls.add(block["id"])
                    if block["name"] == "mcp__othermem__search_memory":
                        other_calls.add(block["id"])
            for block in _blocks(line):
                if block.get("type") == "tool_result":
                    own_results += block["tool_use_id"] in own_calls
                    other_results += block["tool_use_id"] in other_calls
            texts = _content_strings(line)
            joined = "\n".join(texts)
            if _is_prompt(line):
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
    sessions = _sessions(small_tree)
    flagged = sorted(
        sid
        for sid, lines in sessions.items()
        if _first_prompt(lines).startswith(SELF_PROMPT_MARKER)
    )
    planted = _planted(small)
    assert flagged == sorted(planted["self_transcripts"])
    assert len(flagged) == 1
    # The marker never opens an ordinary session's first prompt.
    assert len(sessions) - len(flagged) == 19


def test_roster_questions_appear_verbatim_only_in_their_echo_sessions(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = {
        sid: _normalise(_session_text(lines)) for sid, lines in _sessions(small_tree).items()
    }
    echoes: dict[str, list[str]] = _planted(small)["echo_sessions"]
    texts = {
        q["qid"]: _normalise(q["text"]) for r in _rosters(small).values() for q in r["questions"]
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
    sessions = _sessions(small_tree)
    receipts = _rosters(small)["receipts"]["questions"]
    planted = _planted(small)
    for q in receipts:
        (author,) = q["gold"]["relevant"]
        git = "\n".join(_git_results(sessions[author]))
        heads = re.findall(r"^\[[^\]\s]+ ([0-9a-f]{7})\] ", git, flags=re.MULTILINE)
        assert heads, q["qid"]
        assert any(re.search(rf"\b{h}[0-9a-f]{{33}}\b", git) for h in heads), q["qid"]
    authored = {
        m
        for q in receipts
        for m in re.findall(
            r"^\[[^\]\s]+ ([0-9a-f]{7})\] ",
            "\n".join(_git_results(sessions[next(iter(q["gold"]["relevant"]))])),
            flags=re.MULTILINE,
        )
    }
    assert len(authored) == 8
    for cite in planted["citations"]:
        body = _session_text(sessions[cite["session"]])
        assert cite["short_hash"] in body
        assert cite["short_hash"] in authored
        assert not any(cite["short_hash"] in r for r in _git_results(sessions[cite["session"]]))
        assert cite["session"] != cite["author"]


def test_near_duplicate_attempt_repeats_the_work_but_its_commit_is_rejected(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = _sessions(small_tree)
    (pair,) = _planted(small)["near_duplicates"]
    attempt, original = sessions[pair["attempt"]], sessions[pair["original"]]
    assert any(pair["short_hash"] in r for r in _git_results(original))
    assert not any(pair["short_hash"] in r for r in _git_results(attempt))
    commands = [
        b["input"]["command"]
        for line in attempt
        for b in _blocks(line)
        if b.get("type") == "tool_use"
        and b["name"] == "Bash"
        and "git commit" in b["input"]["command"]
    ]
    assert len(commands) == 1
    assert any("Failed" in r for r in _git_results(attempt))
    prompts_a = [_normalise(_first_prompt([x])) for x in attempt if _is_prompt(x)]
    prompts_o = {_normalise(_first_prompt([x])) for x in original if _is_prompt(x)}
    shared = [p for p in prompts_a if p in prompts_o]
    assert len(shared) >= len(prompts_a) // 2
    # The failed attempt happened first; the original redid the work later and committed.
    first = min(x["timestamp"] for x in attempt if "timestamp" in x)
    assert first < min(x["timestamp"] for x in original if "timestamp" in x)


# ---------------------------------------------------------------------------------------------
# Rosters


def test_rosters_load_as_drafts_with_unique_qids_and_existing_gold(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = set(_sessions(small_tree))
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
    project_of = {sid: lines[0]["cwd"] for sid, lines in _sessions(small_tree).items()}
    for roster in _rosters(small).values():
        for q in roster["questions"]:
            for sid in q["gold"]["relevant"]:
                assert project_of[sid] == q["scope"][0], q["qid"]
            for sid in q["gold"]["forbidden"]:
                assert project_of[sid] != q["scope"][0], q["qid"]


def test_each_negative_names_a_control_that_retrieves_the_forbidden_session_in_its_own_project(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    questions = {q["qid"]: q for q in _rosters(small)["negatives"]["questions"]}
    negatives = [q for q in questions.values() if q["gold"]["forbidden"]]
    assert len(negatives) == 2
    sessions = _sessions(small_tree)
    for neg in negatives:
        assert neg["gold"]["relevant"] == {}
        control = questions[neg["gold"]["control"]]
        assert control["text"] == neg["text"]
        assert list(control["gold"]["relevant"]) == neg["gold"]["forbidden"]
        assert control["scope"] != neg["scope"]
        # The forbidden session really holds the incident the query describes.
        (sid,) = neg["gold"]["forbidden"]
        trigger = neg["text"].rsplit(" after ", 1)[-1].rstrip("?")
        assert trigger in _session_text(sessions[sid])


def test_decision_questions_paraphrase_with_little_word_overlap(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = _sessions(small_tree)
    questions = _rosters(small)["decisions"]["questions"]
    overlaps = []
    for q in questions:
        (sid,) = q["gold"]["relevant"]
        decisions = re.findall(r"Decision for the [^\n]*?\.(?=\s|$)", _session_text(sessions[sid]))
        assert decisions, q["qid"]
        overlaps.append(max(jaccard(q["text"], d) for d in decisions))
    mean = sum(overlaps) / len(overlaps)
    assert mean < 0.2
    assert mean == pytest.approx(small.decision_overlap)
    assert f"{small.decision_overlap:.3f}" in _rosters(small)["decisions"]["description"]
    # Positive control for the measure: the decision sentence overlaps itself fully.
    assert jaccard(decisions[0], decisions[0]) == 1.0


def test_multihop_gold_is_reachable_only_through_the_shared_file(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = _sessions(small_tree)
    echo = set(_planted(small)["echo_sessions"])
    edits: dict[str, Counter[str]] = {}
    for sid, lines in sessions.items():
        c: Counter[str] = Counter()
        for line in lines:
            for b in _blocks(line):
                if b.get("type") == "tool_use" and b["name"] in ("Edit", "Write", "MultiEdit"):
                    c[b["input"]["file_path"]] += 1
        edits[sid] = c
    pairs = {p["qid"]: p for p in _planted(small)["multihop_pairs"]}
    for q in _rosters(small)["multihop"]["questions"]:
        assert q["tags"]["hop"] == "multi"
        ident = re.search(r"`([^`]+)`", q["text"])
        assert ident is not None
        holders = sorted(
            sid
            for sid, lines in sessions.items()
            if ident.group(1) in _session_text(lines) and sid not in echo
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
        assert ident.group(1) not in _session_text(sessions[b])
        pair = pairs[q["qid"]]
        assert (pair["a_session"], pair["b_session"], pair["ident"]) == (a, b, ident.group(1))
        assert bridge.endswith(pair["file"])
        # B states the value asked for.
        assert re.search(rf"to {pair['value']}\b", _session_text(sessions[b]))


def test_temporal_gold_is_the_last_revision_and_earlier_sessions_hold_superseded_choices(
    small: GeneratedCorpus, small_tree: dict[str, list[dict[str, Any]]]
) -> None:
    sessions = _sessions(small_tree)
    planted = _planted(small)
    skip = set(planted["echo_sessions"]) | set(planted["self_transcripts"])
    starts = {
        sid: min(x["timestamp"] for x in lines if "timestamp" in x)
        for sid, lines in sessions.items()
    }
    questions = {q["qid"]: q for q in _rosters(small)["temporal"]["questions"]}
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
                f"Decision on {topic}:" in _session_text(lines)
                or f"earlier call on {topic}:" in _session_text(lines)
            )
        )
        ordered = [sid for _, sid in holders]
        assert ordered == chain["sessions"]
        assert len(ordered) == int(q["tags"]["revisions"]) + 1
        assert q["gold"]["relevant"] == {ordered[-1]: 1}
        latest = _session_text(sessions[ordered[-1]])
        assert f"we now use {chain['options'][-1]} instead of {chain['options'][-2]}" in latest
        first = _session_text(sessions[ordered[0]])
        assert f"Decision on {topic}: {chain['options'][0]}." in first
        assert "Reversing the earlier call" not in first


# ---------------------------------------------------------------------------------------------
# Default size (one shared corpus)


@pytest.mark.slow
def test_default_corpus_meets_the_size_and_roster_minimums(default: GeneratedCorpus) -> None:
    assert tree_sha256(default.root) == GOLDEN_DEFAULT_TREE
    planted = _planted(default)
    assert len(default.project_cwds) >= 4
    assert default.session_files >= 200
    assert default.questions["receipts"] >= 150
    assert default.questions["decisions"] >= 60
    assert default.questions["multihop"] >= 40
    assert default.questions["temporal"] >= 30
    negatives = [q for q in _rosters(default)["negatives"]["questions"] if q["gold"]["forbidden"]]
    assert len(negatives) >= 20
    assert default.decision_overlap < 0.2
    assert planted["decision_overlap"]["max"] < 0.2
    assert default.estimated_chunks >= 4000
    assert planted["formats"]["1.0.108"] > 0
    assert planted["formats"]["2.1.74"] > 0


def _approx_chunks(root: Path) -> int:
    """Chunks after a simple, independent rendering of the tree through the engine's packer."""
    total = 0
    for path in sorted((root / "projects").rglob("*.jsonl")):
        lines = _lines(path)
        if _first_prompt(lines).startswith(SELF_PROMPT_MARKER):
            continue
        own: set[str] = set()
        messages: list[CleanMessage] = []
        merged: dict[str, list[str]] = {}
        order: list[tuple[str, str]] = []
        for line in lines:
            if line.get("type") not in ("user", "assistant") or line.get("isMeta"):
                continue
            for b in _blocks(line):
                kind = b.get("type")
                if kind == "text":
                    text = b["text"]
                    if line["type"] == "user" and CONTEXT_OPEN in text:
                        text = re.sub(
                            re.escape(CONTEXT_OPEN) + ".*?" + re.escape(CONTEXT_CLOSE),
                            "",
                            text,
                            flags=re.S,
                        )
                    key = line["message"].get("id", line["uuid"])
                elif kind == "tool_use":
                    if b["name"].startswith(OWN_TOOL_PREFIX):
                        own.add(b["id"])
                        continue
                    text = f"[{b['name']}: {str(next(iter(b['input'].values()), ''))[:120]}]"
                    key = line["message"]["id"]
                elif kind == "tool_result":
                    if b["tool_use_id"] in own:
                        continue
                    text = "\n".join(_strings(b["content"]))[:4000]
                    key = line["uuid"]
                else:
                    continue
                if key not in merged:
                    merged[key] = []
                    order.append((key, line["type"]))
                merged[key].append(text)
        for i, (key, kind) in enumerate(order):
            author = Author.ASSISTANT if kind == "assistant" else Author.USER
            text = "\n".join(merged[key]).strip()
            if text:
                messages.append(
                    CleanMessage(
                        uuid=key,
                        session_id="s",
                        author=author,
                        text=text,
                        timestamp=None,
                        ordinal=i,
                    )
                )
        total += len(chunk_stream(path.name, "s", messages))
    return total


@pytest.mark.slow
def test_default_corpus_chunks_to_at_least_four_thousand_pieces(default: GeneratedCorpus) -> None:
    assert _approx_chunks(default.root) >= 4000


@pytest.mark.slow
def test_default_corpus_leaks_questions_only_in_echo_sessions_and_keeps_identifiers_private(
    default: GeneratedCorpus,
) -> None:
    sessions = {
        sid: _normalise(_session_text(lines))
        for sid, lines in _sessions(_jsonl(default.root)).items()
    }
    grams: dict[str, set[str]] = {}
    for sid, body in sessions.items():
        words = re.findall(r"[a-z0-9]+", body)
        grams[sid] = {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}
    echoes = {sid: set(q) for sid, q in _planted(default)["echo_sessions"].items()}
    found: dict[str, set[str]] = {}
    rosters = _rosters(default)
    for roster in rosters.values():
        for q in roster["questions"]:
            text = _normalise(q["text"])
            head = " ".join(re.findall(r"[a-z0-9]+", text)[:3])
            for sid, body in sessions.items():
                if head in grams[sid] and text in body:
                    found.setdefault(sid, set()).add(q["qid"])
    assert found == echoes
    assert sum(len(q) for q in echoes.values()) == 8
    for q in rosters["multihop"]["questions"]:
        ident = re.search(r"`([^`]+)`", q["text"])
        assert ident is not None
        needle = ident.group(1).casefold()
        holders = [sid for sid, body in sessions.items() if needle in body and sid not in echoes]
        assert len(holders) == 1, q["qid"]
        assert holders[0] not in q["gold"]["relevant"]

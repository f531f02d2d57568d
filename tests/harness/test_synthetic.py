"""The synthetic corpus: determinism, the config's checks, and the shapes of the lines it writes.

Planted features, rosters and the default-size corpus have their own `test_synthetic_*` modules; all
of them read the tree back through `synthetic_reader`, never through the generator's records.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.synthetic import GeneratedCorpus, SyntheticConfig, SyntheticError, encode_cwd, generate
from tests.harness.synthetic_reader import blocks_of, read_planted, read_tree, tree_sha256

# sha256 over (sorted relative path, size, bytes) of the tree written for SyntheticConfig.small().
# Changing any template, table or draw order changes it: update it deliberately, never silently.
GOLDEN_SMALL_TREE = "6e1f0e9f7efcf93059b887241d981fe251e6681fe459156ff07794dfbbe82167"

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
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("small") / "corpus", SyntheticConfig.small())


@pytest.fixture(scope="module")
def small_tree(small: GeneratedCorpus) -> dict[str, list[dict[str, Any]]]:
    return read_tree(small.root)


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
    planted = read_planted(small)
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
    planted = read_planted(small)
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
            for block in blocks_of(line):
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
    expected = read_planted(small)["expected_files"]
    assert expected["total"] == len(on_disk)
    assert expected["jsonl"] == sum(1 for f in on_disk if f.endswith(".jsonl"))
    assert expected["sessions"] == small.session_files == 20

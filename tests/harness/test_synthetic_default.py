"""The default-size synthetic corpus (one shared, module-scoped tree; every test here is slow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.chunking import chunk_stream
from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from engine.model import Author, CleanMessage
from harness.synthetic import GeneratedCorpus, generate
from tests.harness.synthetic_reader import (
    blocks_of,
    by_session,
    first_prompt,
    normalise,
    read_lines,
    read_planted,
    read_rosters,
    read_tree,
    session_text,
    strings_in,
    tree_sha256,
)

# sha256 over (sorted relative path, size, bytes) of the tree written for SyntheticConfig().
# Changing any template, table or draw order changes it: update it deliberately, never silently.
GOLDEN_DEFAULT_TREE = "27aa977290c1578fe7c74e69efa927239b1732f67061dd0383cbbd32606d48ac"


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return generate(tmp_path_factory.mktemp("default") / "corpus")


@pytest.mark.slow
def test_default_corpus_meets_the_size_and_roster_minimums(default: GeneratedCorpus) -> None:
    assert tree_sha256(default.root) == GOLDEN_DEFAULT_TREE
    planted = read_planted(default)
    assert len(default.project_cwds) >= 4
    assert default.session_files >= 200
    assert default.questions["receipts"] >= 150
    assert default.questions["decisions"] >= 60
    assert default.questions["multihop"] >= 40
    assert default.questions["temporal"] >= 30
    negatives = [
        q for q in read_rosters(default)["negatives"]["questions"] if q["gold"]["forbidden"]
    ]
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
        lines = read_lines(path)
        if first_prompt(lines).startswith(SELF_PROMPT_MARKER):
            continue
        own: set[str] = set()
        messages: list[CleanMessage] = []
        merged: dict[str, list[str]] = {}
        order: list[tuple[str, str]] = []
        for line in lines:
            if line.get("type") not in ("user", "assistant") or line.get("isMeta"):
                continue
            for b in blocks_of(line):
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
                    text = "\n".join(strings_in(b["content"]))[:4000]
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
        sid: normalise(session_text(lines))
        for sid, lines in by_session(read_tree(default.root)).items()
    }
    grams: dict[str, set[str]] = {}
    for sid, body in sessions.items():
        words = re.findall(r"[a-z0-9]+", body)
        grams[sid] = {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}
    echoes = {sid: set(q) for sid, q in read_planted(default)["echo_sessions"].items()}
    found: dict[str, set[str]] = {}
    rosters = read_rosters(default)
    for roster in rosters.values():
        for q in roster["questions"]:
            text = normalise(q["text"])
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

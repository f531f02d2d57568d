"""engine.sentence_sql and Memory.sentence_scores: which texts keep sentence vectors, how they are
split, stored, scored, scoped, and filled in for a store made before them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import sentence_sql
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.model import Author
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.recallbench.corpus import ALPHA, BETA

PROMPT = "We decided to use Postgres for the ledger. ok. Rename the flag to strict_mode!\nShip it?"
# Sentences of PROMPT that get a vector: "ok." (3 characters) and "Ship it?" (8) are too short.
PROMPT_SENTENCES = ["We decided to use Postgres for the ledger.", "Rename the flag to strict_mode!"]
# 24 sentences of 52 characters: 1,272 characters with the spaces, so the answer splits over two chunks.
LONG_ANSWER = " ".join(f"Sentence number {i:02d} of the long answer goes here." for i in range(24))


def test_split_keeps_long_enough_sentences_in_order_and_caps_them() -> None:
    assert sentence_sql.split(PROMPT) == PROMPT_SENTENCES
    assert sentence_sql.split("") == []
    assert sentence_sql.split("short. tiny!") == []
    many = " ".join(f"This is sentence number {i:03d} here." for i in range(40))  # 33 chars each
    got = sentence_sql.split(many)
    assert len(got) == sentence_sql.MAX_SENTENCES == 32
    assert got[0] == "This is sentence number 000 here."
    assert got[-1] == "This is sentence number 031 here."


def _session(root: Path, sid: str, cwd: str, folder: str, prompt: str) -> None:
    env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
    write_jsonl(
        root / folder / f"{sid}.jsonl",
        [
            user_line(prompt, uuid=f"{sid}-u", timestamp=ts(0), **env),
            *assistant_lines(
                [text_block(LONG_ANSWER)],
                message_id=f"msg-{sid}",
                uuids=[f"{sid}-a"],
                parent=f"{sid}-u",
                timestamp=ts(1),
                **env,
            ),
        ],
    )


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    root = tmp_path / "projects"
    _session(root, "aaaaaaaa-0000-4000-8000-0000000000a1", ALPHA, "-home-dev-alpha", PROMPT)
    _session(
        root,
        "bbbbbbbb-0000-4000-8000-0000000000b1",
        BETA,
        "-home-dev-beta",
        "We decided to use Postgres for the ledger. Nothing else changed today.",
    )
    mem = Memory(tmp_path / "memory.db", HashEmbedder())
    report = mem.import_paths([root])
    assert report.files_failed == {}
    return mem


def _rows(db: Path) -> dict[str, tuple[int, int]]:
    """Chunk id -> (author, sentence rows of its text), for every chunk (-1: no sentence row)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT c.id, c.author, COALESCE(s.count, -1) FROM chunks c "
            "LEFT JOIN sentence_vectors s ON s.sha256 = c.sha256 AND s.embedder = ?",
            (HashEmbedder().id,),
        ).fetchall()
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


def test_only_the_persons_chunks_keep_sentence_vectors(memory: Memory) -> None:
    rows = _rows(memory.db_path)
    user = {cid: n for cid, (author, n) in rows.items() if author == Author.USER}
    other = {cid: n for cid, (author, n) in rows.items() if author != Author.USER}
    assert len(user) == 2  # one prompt chunk per session
    assert len(other) >= 2  # and the answer's chunks
    assert all(n >= 1 for n in user.values())
    assert set(other.values()) == {-1}  # an assistant-only chunk is not split


def test_sentence_scores_are_the_best_sentence_cosine(memory: Memory) -> None:
    emb = HashEmbedder()
    everywhere = Scope.everywhere()
    query = memory.embed_query("Rename the flag to strict_mode!")
    hits = memory.nearest(query, everywhere, 50, -1.0)
    scores = memory.sentence_scores(query, [h.chunk_id for h in hits], everywhere)
    records = {r.id: r for r in memory.chunks(list(scores), everywhere)}
    assert len(scores) == 2  # the two prompt chunks; the answer chunks have no sentences
    for cid, score in scores.items():
        text = records[cid].text
        expected = float((emb.embed(sentence_sql.split(text)) @ query).max())
        assert score == pytest.approx(expected, abs=1e-6)
    alpha = next(cid for cid in scores if records[cid].project == ALPHA)
    # the query is one of alpha's sentences: cosine 1 with it, and above its whole chunk's cosine
    assert scores[alpha] == pytest.approx(1.0, abs=1e-5)
    chunk_cos = {h.chunk_id: h.score for h in hits}[alpha]
    assert chunk_cos < 0.9


def test_sentence_scores_keep_to_the_scope(memory: Memory) -> None:
    query = memory.embed_query("We decided to use Postgres for the ledger.")
    ids = [h.chunk_id for h in memory.nearest(query, Scope.everywhere(), 50, -1.0)]
    both = memory.sentence_scores(query, ids, Scope.everywhere())
    only_alpha = memory.sentence_scores(query, ids, Scope.of([ALPHA]))
    projects = {r.id: r.project for r in memory.chunks(list(both), Scope.everywhere())}
    assert sorted(projects.values()) == [ALPHA, BETA]  # control: beta's chunk scores everywhere
    assert {projects[cid] for cid in only_alpha} == {ALPHA}
    assert all(both[cid] == pytest.approx(only_alpha[cid], abs=1e-6) for cid in only_alpha)
    assert memory.sentence_scores(query, [], Scope.everywhere()) == {}


def test_a_store_without_sentence_vectors_catches_up(memory: Memory) -> None:
    before = _rows(memory.db_path)
    with sqlite3.connect(memory.db_path) as conn:
        conn.execute("DELETE FROM sentence_vectors")
    assert {n for _, n in _rows(memory.db_path).values()} == {-1}
    assert (
        memory.embed_pending() == 0
    )  # every chunk had its vector: only the sentences were missing
    assert _rows(memory.db_path) == before
    with sqlite3.connect(memory.db_path) as conn:
        stored = conn.execute(
            "SELECT s.count, s.vecs FROM sentence_vectors s JOIN chunks c ON c.sha256 = s.sha256 "
            "WHERE c.project = ? AND c.author = 3",
            (ALPHA,),
        ).fetchall()
    assert [n for n, _ in stored] == [2]  # alpha's prompt chunk: PROMPT_SENTENCES
    matrix = np.frombuffer(stored[0][1], dtype="<f4").reshape(2, -1)
    assert np.allclose(matrix, HashEmbedder().embed(PROMPT_SENTENCES), atol=1e-7)


def test_the_sentence_read_starts_from_the_asked_chunk_ids(memory: Memory) -> None:
    """The read looks up the asked ids by chunks' unique index and each text's row by key, never
    walking every sentence row (which made it linear in the store)."""
    with sqlite3.connect(memory.db_path) as conn:
        plan = [
            str(row[3])
            for row in conn.execute(
                "EXPLAIN QUERY PLAN " + sentence_sql.MATRICES_SQL, (HashEmbedder().id, "[]")
            )
        ]
    searches = [step for step in plan if step.startswith(("SEARCH", "SCAN"))]
    assert searches[0].startswith("SEARCH c USING INDEX sqlite_autoindex_chunks_1 (id=?)")
    assert any("SEARCH s USING INDEX" in s and "sha256=?" in s for s in searches)
    assert not any(step.startswith("SCAN s") for step in searches)

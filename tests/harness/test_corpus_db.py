"""The benchmark's cached corpus database: one per corpus location, so a moved corpus is never stored twice."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from engine.embed import HashEmbedder
from engine.memory import Memory
from harness import freeze
from harness.arm_memories import reads_sentences
from harness.corpus_db import open_memory
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

CWD = "/home/dev/alpha"


def corpus(folder: Path) -> Path:
    for i, prompt in enumerate(["Why does the retry test flake?", "How is the worker deployed?"]):
        sid = f"55555555-0000-4000-8000-{i:012d}"
        write_jsonl(
            folder / "projects" / "-home-dev-alpha" / f"{sid}.jsonl",
            simple_session(prompt, session_id=sid, cwd=CWD, answer="Done.", prefix=f"s{i}-"),
        )
    return folder


def chunk_ids(cache: Path, folder: Path) -> tuple[Path, list[str]]:
    files = sorted(folder.rglob("*.jsonl"))
    memory, db = open_memory(
        cache, freeze.manifest(folder).sha256, folder, files, (), HashEmbedder()
    )
    try:
        return db, sorted(str(row[1]) for row in memory.chunk_rows())
    finally:
        memory.close()


def test_the_same_corpus_in_two_folders_gets_two_databases_each_holding_it_once(
    tmp_path: Path,
) -> None:
    first = corpus(tmp_path / "a" / "corpus")
    second = tmp_path / "b" / "corpus"
    shutil.copytree(first, second)
    assert freeze.manifest(first).sha256 == freeze.manifest(second).sha256  # the same corpus
    cache = tmp_path / "cache"
    db_a, ids_a = chunk_ids(cache, first)
    db_b, ids_b = chunk_ids(cache, second)
    assert len(ids_a) > 0
    assert len(ids_b) == len(ids_a)  # stored once, not twice
    assert db_a != db_b
    again, ids_again = chunk_ids(cache, first)  # control: the same folder reuses its database
    assert again == db_a
    assert ids_again == ids_a
    # chunk ids come from paths below the corpus folder, so they are the same in both places ...
    assert ids_b == ids_a
    # ... where a plain import (paths resolved) gives other ids for the same files (the control)
    plain = Memory(tmp_path / "plain.db")
    try:
        plain.import_paths([second], embed=False)
        plain_ids = {str(row[1]) for row in plain.chunk_rows()}
    finally:
        plain.close()
    assert len(plain_ids) == len(ids_a)
    assert plain_ids.isdisjoint(ids_a)


def _sentence_rows(db: Path) -> tuple[int, int]:
    """(vectors, sentence-vector rows) stored in the database at `db`."""
    with sqlite3.connect(db) as conn:
        vectors = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        sentences = conn.execute("SELECT COUNT(*) FROM sentence_vectors").fetchone()[0]
    return int(vectors), int(sentences)


def test_a_benchmark_embeds_sentences_only_when_an_arm_reads_them(tmp_path: Path) -> None:
    folder = corpus(tmp_path / "corpus")
    files = sorted(folder.rglob("*.jsonl"))
    cache = tmp_path / "cache"
    args = (cache, freeze.manifest(folder).sha256, folder, files, (), HashEmbedder())
    memory, db = open_memory(*args, sentences=False)
    memory.close()
    assert _sentence_rows(db) == (2, 0)  # both chunk texts have their vector, no sentence row
    memory, again = open_memory(*args, sentences=True)  # the same cached database fills them in
    memory.close()
    assert again == db
    assert _sentence_rows(db) == (2, 2)  # one row per prompt chunk text


def test_which_arms_read_sentence_vectors() -> None:
    assert not reads_sentences(
        ["none()", "fts(pool=20,score='rank')", "rrf", "bridge(sentences=False)"]
    )
    assert reads_sentences(["rrf", "bridge(sentences=True,stem=True)"])
    assert reads_sentences(["rrf(sentences=True)@minilm-l6-v2-int8"])

"""The benchmark's cached corpus database: one per corpus location, so a moved corpus is never stored twice."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.embed import HashEmbedder
from harness import freeze
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


def chunk_count(cache: Path, folder: Path) -> tuple[Path, int]:
    files = sorted(folder.rglob("*.jsonl"))
    memory, db = open_memory(
        cache, freeze.manifest(folder).sha256, folder, files, (), HashEmbedder()
    )
    try:
        return db, len(memory.chunk_rows())
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
    db_a, n_a = chunk_count(cache, first)
    db_b, n_b = chunk_count(cache, second)
    assert n_a > 0
    assert n_b == n_a  # stored once, not n_a + n_b
    assert db_a != db_b
    again, n_again = chunk_count(
        cache, first
    )  # positive control: the same folder reuses its database
    assert again == db_a
    assert n_again == n_a

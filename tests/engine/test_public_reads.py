"""The numpy-free text reads and the vector/chunk listings that tools outside the engine use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from engine.text_reads import TextReads
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

A = "/home/dev/alpha"
B = "/home/dev/beta"
S1 = "22222222-0000-4000-8000-000000000001"
S3 = "22222222-0000-4000-8000-000000000003"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus" / "projects"
    write_jsonl(
        root / "alpha" / f"{S1}.jsonl",
        simple_session(
            "Why does the retry test flake?",
            session_id=S1,
            cwd=A,
            answer="The retry loop used a wall clock.",
        ),
    )
    write_jsonl(
        root / "beta" / f"{S3}.jsonl",
        simple_session(
            "Deploy the beta service",
            session_id=S3,
            cwd=B,
            answer="Deployed beta with the retry loop fixed.",
        ),
    )
    return root


def test_text_reads_answer_exactly_as_memory_does(tmp_path: Path, corpus: Path) -> None:
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([corpus])
    with TextReads(tmp_path / "m.db") as light:
        assert light.projects() == [A, B]
        for scope in (Scope.of(A), Scope.of(B), Scope.everywhere()):
            heavy = memory.lexical("retry loop", scope, 5)
            assert light.lexical("retry loop", scope, 5) == heavy
            ids = [s.chunk_id for s in heavy]
            assert light.chunks(ids, scope) == memory.chunks(ids, scope)
        # Scoped to A, only A's sessions answer; everywhere, B's session answers too (control).
        in_a = {
            r.session_id
            for r in light.chunks(
                [s.chunk_id for s in light.lexical("retry", Scope.of(A), 9)], Scope.of(A)
            )
        }
        everywhere = light.lexical("retry", Scope.everywhere(), 9)
        all_sessions = {
            r.session_id for r in light.chunks([s.chunk_id for s in everywhere], Scope.everywhere())
        }
        assert S3 not in in_a
        assert S1 in in_a
        assert S3 in all_sessions


def test_text_reads_import_neither_numpy_nor_the_vector_catalog() -> None:
    code = (
        "import sys; import engine.text_reads; "
        "print(sorted(m for m in ('numpy', 'engine.memory', 'engine.vectors', 'engine.catalog', "
        "'engine.lexical_index', 'engine.ingest', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    control = subprocess.run(
        [sys.executable, "-c", "import sys, engine.memory; print('numpy' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert control.stdout.strip() == "True"


def test_pending_texts_store_vectors_and_vector_matrix_round_trip(
    tmp_path: Path, corpus: Path
) -> None:
    memory = Memory(tmp_path / "m.db", None)
    memory.import_paths([corpus], embed=False)
    rows = memory.chunk_rows()
    pending = memory.pending_texts("toy")
    assert len(pending) == len({text for _, _, _, text in rows})
    labels, matrix = memory.vector_matrix("toy", 2)
    assert len(labels) == 0
    assert matrix.shape == (0, 2)
    first = pending[:1]
    memory.store_vectors(
        "toy", [sha for sha, _ in first], np.asarray([[0.6, 0.8]], dtype=np.float32)
    )
    assert len(memory.pending_texts("toy")) == len(pending) - 1
    labels, matrix = memory.vector_matrix("toy", 2)
    assert matrix.tolist() == [[np.float32(0.6), np.float32(0.8)]] * len(labels)
    assert len(labels) >= 1
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)


def test_a_lock_error_is_recognised_and_other_errors_are_not() -> None:
    import sqlite3

    from engine.text_reads import is_lock_error, is_lock_message

    assert is_lock_error(sqlite3.OperationalError("database is locked"))
    assert is_lock_error(sqlite3.OperationalError("database table is locked: chunks"))
    assert not is_lock_error(sqlite3.OperationalError("no such table: chunks"))
    assert not is_lock_error(RuntimeError("database is locked"))  # not the store's error
    assert is_lock_message("sqlite3.OperationalError: database is busy")
    assert not is_lock_message("file vanished")


def test_ids_starting_with_a_prefix_keep_to_the_scope_and_skip_the_whole_id(
    tmp_path: Path, corpus: Path
) -> None:
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([corpus])
    memory.close()
    with TextReads(tmp_path / "m.db") as reads:
        everywhere = Scope.everywhere()
        assert reads.ids_starting_with("session", "22222222", everywhere, 5) == ([S1, S3], 2)
        assert reads.ids_starting_with("session", "22222222", everywhere, 1) == ([S1], 2)
        assert reads.ids_starting_with("session", "22222222", Scope.of(B), 5) == ([S3], 1)
        assert reads.ids_starting_with("session", S1, everywhere, 5) == ([], 0)  # the id itself
        assert reads.ids_starting_with("session", "3", everywhere, 5) == ([], 0)
        chunk = reads.lexical("wall clock", Scope.of(A), 1)[0].chunk_id
        assert reads.ids_starting_with("chunk", chunk[:8], Scope.of(A), 5) == ([chunk], 1)
        assert reads.ids_starting_with("chunk", chunk[:8], Scope.of(B), 5)[1] == 0

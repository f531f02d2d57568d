"""Forget with the real MiniLM embedder: its vectors and index files keep nothing of the forgotten text."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine.embed import MiniLMEmbedder
from engine.forget import forget
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.forget_corpus import (
    KEPT,
    KEPT_QUERY,
    PLANTED,
    PLANTED_QUERY,
    TERM,
    byte_counts,
    scan_table,
    write_forget_corpus,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EVERYWHERE = Scope.everywhere()


def nearest_texts(memory: Memory, query: str) -> list[str]:
    hits = memory.nearest(memory.embed_query(query), EVERYWHERE, 10)
    return [r.text for r in memory.chunks([h.chunk_id for h in hits], EVERYWHERE)]


@pytest.mark.model
def test_forget_with_minilm_leaves_no_byte_of_the_text_and_no_vector_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("engine.catalog.EXACT_THRESHOLD", 0)  # so the hnswlib files are written
    write_forget_corpus(tmp_path / "projects")
    home = tmp_path / "home"
    memory = Memory(home / "memory.db", MiniLMEmbedder())
    assert memory.import_paths([tmp_path / "projects"]).files_failed == {}
    memory.ensure_index()
    # control: found first; the chunk says it 4 times (prompt, Bash call and result, answer)
    assert nearest_texts(memory, PLANTED_QUERY)[0].count(PLANTED) == 4
    before = {n: byte_counts(home, n) for n in (PLANTED.encode(), TERM)}
    assert sum(before[TERM].values()) > 0
    planted_vector = memory.embed_query(
        next(t for t in nearest_texts(memory, PLANTED_QUERY) if PLANTED in t)
    )
    assert any(".hnsw" in name for name in before[TERM])

    forget(home / "memory.db", Target(kind="match", value=PLANTED), now=NOW)

    after = {n: byte_counts(home, n) for n in (PLANTED.encode(), TERM)}
    with capsys.disabled():
        for n, counts in after.items():
            print("\n[MiniLM] " + scan_table(before[n], counts, n))
    assert sum(after[PLANTED.encode()].values()) == sum(after[TERM].values()) == 0
    assert memory.embed_pending() == 1  # the chunk rewritten from what its session kept
    memory.ensure_index()
    texts = nearest_texts(memory, PLANTED_QUERY)
    assert texts
    assert not any(PLANTED in t for t in texts)
    assert KEPT in nearest_texts(memory, KEPT_QUERY)[0]  # control: the kept text is still found
    # no stored vector is the forgotten chunk's
    stored = [memory.vector(h.chunk_id) for h in memory.nearest(planted_vector, EVERYWHERE, 10)]
    assert not any(v is not None and float(v @ planted_vector) > 0.9999 for v in stored)
    assert np.isclose(float(planted_vector @ planted_vector), 1.0, atol=1e-4)  # unit vectors

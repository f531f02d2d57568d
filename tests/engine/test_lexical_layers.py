"""`engine.lexical_layers.catch_up`: the in-memory lexical index brought up to date from the rows that
changed gives the ids, order and scores of a full rebuild and of FTS5 itself."""

from __future__ import annotations

import math
import random
import sqlite3
import threading
from pathlib import Path

import pytest

from engine import reads, store
from engine.lexical_index import LexicalIndex
from engine.lexical_layers import LayeredIndex, catch_up, max_delta_rows
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.test_lexical_index import (
    PROJECTS,
    A,
    B,
    C,
    add_chunks,
    allowed,
    lexical,
    random_corpus,
    random_text,
)


def rewrite(conn: sqlite3.Connection, cid: str, text: str, project: str | None = None) -> None:
    """Rewrite one chunk's text (and project) in place, as an import's upsert does (new sha256)."""
    with store.write(conn):
        conn.execute(
            "UPDATE chunks SET text = ?, sha256 = ?, project = coalesce(?, project) WHERE id = ?",
            (text, f"sha-{cid}-{text}", project, cid),
        )
        store.bump_generation(conn)


def delete(conn: sqlite3.Connection, cid: str) -> None:
    with store.write(conn):
        conn.execute("DELETE FROM chunks WHERE id = ?", (cid,))
        store.bump_generation(conn)


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "m.db")


def test_catch_up_worked_by_hand(mem: Memory) -> None:
    add_chunks(
        mem.conn,
        [
            ("r1", A, "apple banana"),
            ("r2", A, "banana cherry"),
            ("r3", A, "cherry date"),
            ("r4", A, "date elder"),
            ("r5", A, "elder fig"),
            ("r6", A, "fig grape"),
        ],
    )
    base = LexicalIndex.build(mem.conn)
    add_chunks(mem.conn, [("r7", A, "apple apple kiwi kiwi")])
    delete(mem.conn, "r2")
    rewrite(mem.conn, "r3", "cherry cherry")
    index = catch_up(mem.conn, base)
    assert isinstance(index, LayeredIndex)
    assert index.generation == store.generation(mem.conn)
    # Live rows r1, r3', r4, r5, r6 (2 tokens each) and r7 (4): N = 6, avgdl = 14 / 6.
    assert (index.n_rows, index.total_tokens) == (6, 14)
    norm2 = 1.2 * (0.25 + 0.75 * 2 / (14 / 6))  # 1.0714286
    norm4 = 1.2 * (0.25 + 0.75 * 4 / (14 / 6))  # 1.8428571
    # "apple": nHit 2 (r1, r7), idf = ln(4.5 / 2.5) = 0.5877867.
    idf2 = math.log(4.5 / 2.5)
    apple = index.search(["apple"], None, 10)
    assert [c for c, _ in apple] == ["r7", "r1"]
    assert apple[0][1] == pytest.approx(idf2 * 4.4 / (2 + norm4))
    assert apple[0][1] == pytest.approx(0.673005, abs=1e-6)
    assert apple[1][1] == pytest.approx(idf2 * 2.2 / (1 + norm2))
    assert apple[1][1] == pytest.approx(0.624270, abs=1e-6)  # 0.5877867 * 1.0620690
    # "banana": r2 is gone, so nHit 1 and idf = ln(5.5 / 1.5); the deleted row is not returned while
    # the live one is.
    banana = index.search(["banana"], None, 10)
    assert [c for c, _ in banana] == ["r1"]
    assert banana[0][1] == pytest.approx(1.379928, abs=1e-6)
    # "cherry": only the rewritten r3 (f = 2); the old text "cherry date" no longer matches "date".
    cherry = index.search(["cherry"], None, 10)
    assert [c for c, _ in cherry] == ["r3"]
    assert cherry[0][1] == pytest.approx(1.861299, abs=1e-6)
    assert [c for c, _ in index.search(["date"], None, 10)] == ["r4"]
    # The same answers as FTS5 and as a full rebuild, scores to the bit.
    rebuilt = LexicalIndex.build(mem.conn)
    for word in ("apple", "banana", "cherry", "date", "kiwi", "apple kiwi"):
        terms = reads.query_terms(word)
        assert index.search(terms, None, 10) == rebuilt.search(terms, None, 10), word
        got = index.search(terms, None, 10)
        want = lexical(mem, word, Scope.everywhere(), 10)
        assert [c for c, _ in got] == [c for c, _ in want], word


def test_nothing_changed_gives_the_same_index(mem: Memory) -> None:
    add_chunks(mem.conn, [("a", A, "apple"), ("b", A, "banana")])
    base = LexicalIndex.build(mem.conn)
    assert catch_up(mem.conn, base) is base
    add_chunks(mem.conn, [("c", A, "cherry")])  # positive control: a change gives a new index
    caught = catch_up(mem.conn, base)
    assert isinstance(caught, LayeredIndex)
    assert caught.search(["cherry"], None, 5)[0][0] == "c"


def test_only_deletions_leave_no_delta(mem: Memory) -> None:
    add_chunks(mem.conn, [("a", A, "apple pie"), ("b", A, "apple tart"), ("c", A, "plum")])
    base = LexicalIndex.build(mem.conn)
    delete(mem.conn, "b")
    index = catch_up(mem.conn, base)
    assert isinstance(index, LayeredIndex)
    assert index.delta is None
    assert [c for c, _ in index.search(["apple"], None, 5)] == ["a"]
    assert index.search(["apple"], None, 5) == LexicalIndex.build(mem.conn).search(
        ["apple"], None, 5
    )


def test_a_project_change_moves_the_row_between_scopes(mem: Memory) -> None:
    add_chunks(mem.conn, [("a", A, "apple"), ("b", B, "apple")])
    base = LexicalIndex.build(mem.conn)
    assert [c for c, _ in base.search(["apple"], frozenset({A}), 5)] == ["a"]
    rewrite(mem.conn, "b", "apple", project=A)  # same text, another project
    index = catch_up(mem.conn, base)
    assert index is not None
    assert [c for c, _ in index.search(["apple"], frozenset({A}), 5)] == ["a", "b"]
    assert index.search(["apple"], frozenset({B}), 5) == []


def test_too_many_changed_rows_ask_for_a_rebuild(mem: Memory) -> None:
    add_chunks(mem.conn, [(f"r{i}", A, f"word{i % 7} common") for i in range(20)])
    base = LexicalIndex.build(mem.conn)
    limit = max_delta_rows(base)
    add_chunks(mem.conn, [(f"n{i}", A, "new common") for i in range(limit)])
    assert catch_up(mem.conn, base) is not None  # positive control: at the limit it catches up
    add_chunks(mem.conn, [("one-more", A, "new common")])
    assert catch_up(mem.conn, base) is None


def test_an_fts_row_without_a_chunk_asks_for_a_rebuild(mem: Memory) -> None:
    add_chunks(mem.conn, [("a", A, "apple"), ("b", A, "banana")])
    base = LexicalIndex.build(mem.conn)
    add_chunks(mem.conn, [("c", A, "cherry")])
    assert catch_up(mem.conn, base) is not None  # positive control
    with store.write(mem.conn):  # an FTS5 row no chunk backs: the counts no longer agree
        mem.conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (999, 'orphan words')")
        store.bump_generation(mem.conn)
    assert catch_up(mem.conn, base) is None


@pytest.mark.parametrize("stem", [False, True])
def test_differential_after_imports_rewrites_and_deletions(mem: Memory, stem: bool) -> None:
    rng = random.Random(20261201 + stem)
    add_chunks(mem.conn, random_corpus(rng, 300))
    index: LexicalIndex = LexicalIndex.build(mem.conn, stem=stem)
    scopes = [Scope.everywhere(), Scope.of(A), Scope.of(B, C), Scope.of("/elsewhere")]
    changed = 0
    for round_ in range(3):  # each round catches up on top of the last (always from the same base)
        new = random_corpus(rng, 30)
        add_chunks(mem.conn, [(f"{cid}-new{round_}", p, t) for cid, p, t in new])
        ids = [str(r[0]) for r in mem.conn.execute("SELECT id FROM chunks ORDER BY rowid")]
        for cid in rng.sample(ids, 8):
            rewrite(mem.conn, cid, " ".join(random_text(rng).split()), rng.choice(PROJECTS))
        for cid in rng.sample(ids, 5):
            delete(mem.conn, cid)
        caught = catch_up(mem.conn, index)
        assert isinstance(caught, LayeredIndex)
        index = caught
        rebuilt = LexicalIndex.build(mem.conn, stem=stem)
        assert (index.n_rows, index.total_tokens) == (rebuilt.n_rows, rebuilt.total_tokens)
        for _ in range(120):
            text = random_text(rng)
            terms = reads.query_terms(text)
            for scope in scopes:
                got = index.search(terms, allowed(scope), 12)
                assert got == rebuilt.search(terms, allowed(scope), 12), (text, scope)
                want = [(s.chunk_id, s.score) for s in reads.lexical(
                    mem.conn, text, scope, 12, stem=stem
                )]  # fmt: skip
                assert [c for c, _ in got] == [c for c, _ in want], (text, scope)
                for (_, g), (_, w) in zip(got, want, strict=True):
                    assert g == pytest.approx(w, rel=0, abs=1e-9)
                changed += bool(got)
    assert changed > 300  # the comparison saw matches, not only empty answers


def test_memory_catches_its_snapshot_up_in_sync_mode(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m.db", lexical_index="sync")
    add_chunks(memory.conn, [("a", A, "apple pie"), ("b", A, "plum")])
    memory.warm_lexical()
    first = memory.lexical_snapshot()
    assert first is not None
    assert not isinstance(first, LayeredIndex)
    add_chunks(memory.conn, [("c", A, "apple crumble")])
    hits = memory.lexical("apple", Scope.everywhere(), 5)
    assert isinstance(memory.lexical_snapshot(), LayeredIndex)
    want = lexical(memory, "apple", Scope.everywhere(), 5)
    assert [(s.chunk_id, s.score) for s in hits] == want
    assert {s.chunk_id for s in hits} == {"a", "c"}


def test_background_mode_catches_up_in_its_thread(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m.db", lexical_index="background")
    add_chunks(memory.conn, [("a", A, "apple pie"), ("b", A, "plum")])
    memory.warm_lexical()
    add_chunks(memory.conn, [("c", A, "apple crumble")])
    memory.warm_lexical(wait=False)
    for thread in threading.enumerate():
        if thread.name.startswith("recallbench-lexical-index"):
            thread.join(timeout=30)
    snapshot = memory.lexical_snapshot()
    assert isinstance(snapshot, LayeredIndex)
    assert snapshot.is_current(memory.conn)
    got = [(s.chunk_id, s.score) for s in memory.lexical("apple", Scope.everywhere(), 5)]
    assert got == lexical(memory, "apple", Scope.everywhere(), 5)
    assert [c for c, _ in got] == ["a", "c"] or [c for c, _ in got] == ["c", "a"]


def test_await_lexical_waits_for_the_background_build(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m.db", lexical_index="background")
    add_chunks(memory.conn, [("a", A, "apple pie"), ("b", A, "plum")])
    assert memory.lexical_snapshot() is None
    assert memory.await_lexical(timeout=0.0) is False  # nothing is being built, nothing held
    memory.warm_lexical(wait=False)
    assert memory.await_lexical(timeout=30.0) is True
    snapshot = memory.lexical_snapshot()
    assert snapshot is not None
    assert snapshot.is_current(memory.conn)
    # Control: a memory that keeps no snapshot never holds one, however long it waits.
    off = Memory(tmp_path / "m.db")
    off.warm_lexical(wait=False)
    assert off.await_lexical(timeout=0.5) is False


def test_a_search_kept_to_some_chunks_scores_as_over_all_and_skips_replaced_rows(
    mem: Memory,
) -> None:
    """`chunks` (a time window's ids) only removes rows: the scores stay those of the whole store.
    On a layered snapshot, a rewritten chunk answers from its new row, never its replaced one."""
    add_chunks(mem.conn, [("a", A, "apple pie"), ("b", A, "apple tart"), ("c", A, "plum")])
    base = LexicalIndex.build(mem.conn)
    everything = dict(base.search(["apple"], None, 5))
    assert set(everything) == {"a", "b"}  # control: both match without the restriction
    assert base.search(["apple"], None, 5, chunks=["b", "c", "zz"]) == [("b", everything["b"])]
    assert base.search(["apple"], None, 5, chunks=[]) == []
    rewrite(mem.conn, "b", "plum tart")  # "b" no longer says apple
    index = catch_up(mem.conn, base)
    assert isinstance(index, LayeredIndex)
    assert [c for c, _ in index.search(["apple"], None, 5, chunks=["a", "b"])] == ["a"]
    assert [c for c, _ in index.search(["tart"], None, 5, chunks=["b"])] == ["b"]  # its new row
    assert index.search(["plum"], None, 5, chunks=["b"]) == LexicalIndex.build(mem.conn).search(
        ["plum"], None, 5, chunks=["b"]
    )

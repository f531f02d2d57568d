"""`engine.lexical_index.LexicalIndex` against FTS5 itself: worked examples, edge cases, a differential
test."""

from __future__ import annotations

import dataclasses
import math
import random
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from engine import reads, store
from engine.lexical_index import MIN_IDF, LexicalIndex
from engine.lexical_tokens import read_instances, varint_sum
from engine.memory import Memory
from engine.reads import PhraseTokenizer
from engine.scope import Scope

A = "/home/dev/alpha"
B = "/home/dev/beta"
C = "/home/dev/gamma"


def add_chunks(conn: sqlite3.Connection, rows: list[tuple[str, str, str]]) -> None:
    """Insert (id, project, text) rows as chunks (the trigger indexes them) in one write."""
    with store.write(conn):
        start = conn.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()[0]
        for n, (cid, project, text) in enumerate(rows, start=start + 1):
            conn.execute(
                "INSERT INTO chunks(rowid, id, session_id, stream, idx, project, text, author, "
                "message_uuids, ts_start, ts_end, sha256) "
                "VALUES (?, ?, 's', 'stream', ?, ?, ?, 0, '[]', NULL, NULL, ?)",
                (n, cid, n, project, text, f"sha-{n}"),
            )
        store.bump_generation(conn)


def fts5(
    conn: sqlite3.Connection, terms: Sequence[str], limit: int = 10
) -> list[tuple[str, float]]:
    """engine.reads.lexical's SQL on the FTS5 query of `terms`, each a quoted phrase (no scope)."""
    query = reads.match_query(terms)
    if query is None:
        return []
    rows = conn.execute(
        "SELECT c.id, bm25(chunks_fts) AS r FROM chunks_fts "
        "JOIN chunks c ON c.rowid = chunks_fts.rowid "
        "WHERE chunks_fts MATCH ? ORDER BY r, c.id LIMIT ?",
        (query, limit),
    ).fetchall()
    return [(str(r[0]), -float(r[1])) for r in rows]


def lexical(mem: Memory, text: str, scope: Scope, limit: int) -> list[tuple[str, float]]:
    """What FTS5 answers for `Memory.lexical` (engine.reads.lexical), whatever Memory's mode."""
    return [(s.chunk_id, s.score) for s in reads.lexical(mem.conn, text, scope, limit)]


def allowed(scope: Scope) -> frozenset[str] | None:
    return None if scope.all_projects else scope.projects


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "m.db")


@pytest.fixture
def fruit(mem: Memory) -> Memory:
    # 3 rows, 9 tokens: avgdl = 3.
    add_chunks(
        mem.conn,
        [
            ("c1", A, "apple banana apple"),  # D = 3
            ("c2", A, "Banana cherry"),  # D = 2
            ("c3", B, "cherry date elderberry fig"),  # D = 4
        ],
    )
    return mem


# --- worked by hand ------------------------------------------------------------------------------


def test_single_term_score_worked_by_hand(fruit: Memory) -> None:
    # "apple": N = 3 rows, nHit = 1, idf = log((3 - 1 + 0.5) / (1 + 0.5)) = log(5/3).
    # c1: f = 2, D = 3, avgdl = 9/3 = 3, so k1 * (1 - b + b * D / avgdl) = 1.2 * (0.25 + 0.75) = 1.2
    # and the term is idf * (2 * 2.2) / (2 + 1.2) = log(5/3) * 1.375 = 0.70238523267823...
    by_hand = math.log(5 / 3) * 1.375
    assert by_hand == pytest.approx(0.7023852326782372, rel=1e-15)
    index = LexicalIndex.build(fruit.conn)
    assert (index.n_rows, index.total_tokens, index.avgdl) == (3, 9, 3.0)
    [(sql_id, sql_score)] = fts5(fruit.conn, ["apple"])
    [(our_id, our_score)] = index.search(["apple"], None, 10)
    assert sql_id == our_id == "c1"
    assert sql_score == pytest.approx(by_hand, rel=1e-12)
    assert our_score == sql_score


def test_idf_floor_and_phrase_sum_worked_by_hand(fruit: Memory) -> None:
    # "banana" is in 2 of 3 rows: log((3 - 2 + 0.5) / 2.5) = log(0.6) < 0, so FTS5 uses 1e-6.
    # c2: f = 1, D = 2: norm = 1.2 * (0.25 + 0.75 * 2 / 3) = 0.9, term = 1e-6 * 2.2 / 1.9.
    # c1: apple 0.7023852326782372 (above) + banana 1e-6 * 2.2 / (1 + 1.2) = + 1e-6.
    index = LexicalIndex.build(fruit.conn)
    assert index.idf(2) == MIN_IDF
    query = reads.query_terms("apple banana")
    assert query == ("apple", "banana")
    expected = [("c1", math.log(5 / 3) * 1.375 + 1e-6), ("c2", 1e-6 * 2.2 / 1.9)]
    sql = fts5(fruit.conn, query)
    ours = index.search(query, None, 10)
    assert [i for i, _ in sql] == [i for i, _ in ours] == ["c1", "c2"]
    for (_, want), (_, got_sql), (_, got) in zip(expected, sql, ours, strict=True):
        assert got_sql == pytest.approx(want, rel=1e-12)
        assert got == got_sql


def test_multi_token_phrase_worked_by_hand(fruit: Memory) -> None:
    # "apple-banana" is the phrase apple banana: only c1, once (offsets 0-1; "banana apple" is not
    # it). idf = log(5/3), f = 1, norm = 1.2, so the score is log(5/3) * 2.2 / 2.2 = log(5/3).
    index = LexicalIndex.build(fruit.conn)
    query = reads.query_terms("apple-banana")
    assert query == ("apple-banana",)
    [(sql_id, sql_score)] = fts5(fruit.conn, query)
    assert sql_id == "c1"
    assert sql_score == pytest.approx(math.log(5 / 3), rel=1e-12)
    assert index.search(query, None, 10) == fts5(fruit.conn, query)
    # The reversed phrase occurs in c1 as well ("banana apple", offsets 1-2) and not in c2.
    reversed_query = ["banana apple"]
    assert [i for i, _ in index.search(reversed_query, None, 10)] == ["c1"]
    assert index.search(reversed_query, None, 10) == fts5(fruit.conn, reversed_query)


def test_overlapping_phrase_instances_count_like_fts5(mem: Memory) -> None:
    add_chunks(mem.conn, [("r1", A, "la la la"), ("r2", A, "la la"), ("r3", A, "la di la")])
    index = LexicalIndex.build(mem.conn)
    query = ["la-la"]
    sql = fts5(mem.conn, query)
    assert index.search(query, None, 10) == sql
    assert [i for i, _ in sql] == ["r1", "r2"]  # r3 has la twice but never adjacent
    # r1 holds the phrase twice (offsets 0 and 1): f = 2 with N = 3, nHit = 2 (idf floored).
    d1, avgdl = 3, 8 / 3
    assert sql[0][1] == pytest.approx(MIN_IDF * (2 * 2.2) / (2 + 1.2 * (0.25 + 0.75 * d1 / avgdl)))


def test_duplicate_phrases_after_case_folding_count_twice(fruit: Memory) -> None:
    index = LexicalIndex.build(fruit.conn)
    once = index.search(["apple"], None, 10)
    query = reads.query_terms("Apple apple")
    assert query == ("Apple", "apple")
    twice = index.search(query, None, 10)
    assert twice == fts5(fruit.conn, query)
    assert twice == [("c1", 2 * once[0][1])]


# --- edge cases ---------------------------------------------------------------------------------


def test_unknown_and_empty_phrases_match_nothing(fruit: Memory) -> None:
    index = LexicalIndex.build(fruit.conn)
    assert index.search(["apple"], None, 10) != []  # positive control
    for query in (["zebra"], ["--"], ["apple-zebra"], ["fig apple"]):
        assert fts5(fruit.conn, query) == []
        assert index.search(query, None, 10) == []
    # A phrase without tokens beside a real one changes nothing (FTS5 adds 0 for it).
    assert index.search(["--", "apple"], None, 10) == fts5(fruit.conn, ["--", "apple"])
    assert index.search(["--", "apple"], None, 10) == index.search(["apple"], None, 10)
    assert index.search([], None, 10) == []
    assert index.search((), None, 10) == []
    with pytest.raises(TypeError, match="sequence of query terms"):
        index.search("apple", None, 10)  # one string is not a list of terms


def test_limit_below_one_returns_nothing(fruit: Memory) -> None:
    index = LexicalIndex.build(fruit.conn)
    assert [i for i, _ in index.search(["cherry"], None, 1)] == ["c2"]  # positive control
    assert index.search(["cherry"], None, 0) == []
    assert index.search(["cherry"], None, -3) == []


def test_empty_table(mem: Memory) -> None:
    index = LexicalIndex.build(mem.conn)
    assert (index.n_rows, index.total_tokens, index.avgdl) == (0, 0, 0.0)
    assert index.search(["apple"], None, 10) == []
    add_chunks(mem.conn, [("c1", A, "apple")])
    assert LexicalIndex.build(mem.conn).search(["apple"], None, 10) != []  # control


def test_scope_filters_rows_before_the_top_k(fruit: Memory) -> None:
    index = LexicalIndex.build(fruit.conn)
    query = ["cherry"]
    assert [i for i, _ in index.search(query, None, 1)] == ["c2"]
    # c2 (project A) ranks first everywhere; scoped to B, c3 is the top 1, not an empty list.
    assert [i for i, _ in index.search(query, frozenset({B}), 1)] == ["c3"]
    for scope in (Scope.of(B), Scope.of(A), Scope.of(A, B), Scope.everywhere()):
        assert index.search(query, allowed(scope), 10) == lexical(fruit, "cherry", scope, 10)
    assert index.search(query, frozenset({C}), 10) == []
    assert index.search(query, frozenset(), 10) == []


def test_ties_are_broken_by_chunk_id_at_the_limit(mem: Memory) -> None:
    # Five rows with the same text score the same; the limit keeps the smallest ids, in id order,
    # whatever their rowid order.
    add_chunks(mem.conn, [(cid, A, "kiwi lime") for cid in ("t5", "t1", "t4", "t2", "t3")])
    add_chunks(mem.conn, [("t0", A, "lime"), ("u9", A, "kiwi kiwi")])
    index = LexicalIndex.build(mem.conn)
    query = ["kiwi", "lime"]
    for limit in (1, 2, 3, 5, 6, 7, 10):
        got = index.search(query, None, limit)
        assert got == fts5(mem.conn, query, limit)
    everything = index.search(query, None, 10)
    assert len(everything) == 7
    tie = dict(everything)["t1"]
    assert [i for i, s in everything if s == tie] == ["t1", "t2", "t3", "t4", "t5"]
    for limit in range(1, 8):
        cut = [i for i, s in index.search(query, None, limit) if s == tie]
        assert cut == ["t1", "t2", "t3", "t4", "t5"][: len(cut)]  # the smallest ids survive the cut


def test_fts_row_without_a_chunk_counts_in_statistics_but_is_not_returned(mem: Memory) -> None:
    add_chunks(mem.conn, [("c1", A, "apple pie"), ("c2", A, "plum")])
    with store.write(mem.conn):  # an FTS5 row that chunks does not hold
        mem.conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (99, 'apple apple tart')")
    index = LexicalIndex.build(mem.conn)
    assert index.n_rows == 3
    got = index.search(["apple"], None, 10)
    assert [i for i, _ in got] == ["c1"]  # row 99 matches apple too, but has no chunk
    assert got == fts5(mem.conn, ["apple"])
    assert got == lexical(mem, "apple", Scope.everywhere(), 10)


def test_row_lengths_are_fts5s_including_long_rows(mem: Memory) -> None:
    long_text = " ".join(f"w{i % 17}" for i in range(300))  # a 2-byte varint in docsize
    add_chunks(
        mem.conn, [("c1", A, long_text), ("c2", A, "Straße my_var foo-bar x"), ("c3", A, "")]
    )
    index = LexicalIndex.build(mem.conn)
    # 300 + 6 ("straße", "my", "var", "foo", "bar", "x") + 0 tokens over 3 rows.
    assert (index.n_rows, index.total_tokens) == (3, 306)
    assert index.avgdl == 102.0
    # Each score reads its row's length D: equal scores mean equal lengths, row by row.
    for terms in (["w3"], ["x"], ["w3", "Straße"], ["my_var"]):
        got = index.search(terms, None, 10)
        assert got != []  # positive control: something matched
        assert got == fts5(mem.conn, terms)


def test_docsize_records_are_summed_as_sqlite_varints() -> None:
    assert varint_sum(b"") == 0
    assert varint_sum(b"\x06") == 6
    assert varint_sum(bytes([0x82, 0x2C])) == 300  # (0x02 << 7) | 0x2C, as in the long row above
    assert varint_sum(bytes([0x82, 0x2C, 0x05])) == 305  # one size per column, summed
    # The ninth byte of a varint carries 8 bits, not 7: eight 7-bit ones, then the byte 0x01.
    nine_bytes = (sum(1 << (7 * j) for j in range(8)) << 8) | 1
    assert varint_sum(bytes([0x81] * 8 + [0x01])) == nine_bytes == 145_249_953_336_295_681


def test_generation_tells_when_the_snapshot_is_stale(fruit: Memory) -> None:
    index = LexicalIndex.build(fruit.conn)
    assert index.generation == store.generation(fruit.conn)
    assert index.is_current(fruit.conn)
    add_chunks(fruit.conn, [("c4", C, "apple apple apple")])
    assert not index.is_current(fruit.conn)
    assert [i for i, _ in index.search(["apple"], None, 10)] == ["c1"]  # the old snapshot
    fresh = LexicalIndex.build(fruit.conn)
    assert fresh.is_current(fruit.conn)
    assert fresh.search(["apple"], None, 10) == fts5(fruit.conn, ["apple"])
    assert "c4" in [i for i, _ in fresh.search(["apple"], None, 10)]


def test_build_inside_a_callers_read_transaction(fruit: Memory) -> None:
    conn = fruit.conn
    conn.execute("BEGIN")
    try:
        index = LexicalIndex.build(conn)
        assert conn.in_transaction  # the caller's transaction is left open
    finally:
        conn.execute("COMMIT")
    assert index.search(["fig"], None, 10) == fts5(conn, ["fig"])


def test_instances_out_of_order_are_sorted_before_use(mem: Memory) -> None:
    # fts5vocab yields (term, doc, offset) in order; should a SQLite ever concatenate a term's
    # instances in another order, the build sorts them rather than misreading positions.
    rng = random.Random(3)
    add_chunks(mem.conn, random_corpus(rng, 60))
    index = LexicalIndex.build(mem.conn)
    conn = mem.conn
    sizes = reads.fts_docsizes(conn)
    rowids = np.asarray([r for r, _ in sizes], np.int64)
    lengths = np.asarray([varint_sum(sz) for _, sz in sizes], np.int64)
    chunk_rows = reads.chunk_projects(conn)
    reads.open_fts_vocab(conn)
    instances = read_instances(conn, rowids)
    rows = instances.rows
    order = np.arange(rows.size)
    shuffle = np.random.default_rng(3).shuffle
    start = 0
    for n in instances.counts.tolist():  # shuffle within each term
        shuffle(order[start : start + n])
        start += n
    assert not np.array_equal(rows[order], rows)  # positive control: the order really changed
    shuffled_instances = dataclasses.replace(
        instances, rows=rows[order], offsets=instances.offsets[order]
    )
    shuffled = LexicalIndex.from_snapshot(
        index.generation, rowids, lengths, chunk_rows, shuffled_instances
    )
    for text in ("alpha", "ledger-api the", "a-a data", "end-to-end Café"):
        query = reads.query_terms(text)
        assert shuffled.search(query, None, 20) == index.search(query, None, 20)
        assert index.search(query, None, 20) == fts5(conn, query, 20)


# --- query parsing and tokenizing ---------------------------------------------------------------


def test_search_takes_the_query_terms_each_as_one_phrase(fruit: Memory) -> None:
    text = "Apple-banana, cherry! apple-banana"
    terms = reads.query_terms(text)
    assert terms == ("Apple-banana", "cherry", "apple-banana")  # case differs: both are kept
    index = LexicalIndex.build(fruit.conn)
    got = index.search(terms, None, 10)
    assert got == fts5(fruit.conn, terms)
    assert got == lexical(fruit, text, Scope.everywhere(), 10)
    # c1 holds the phrase "apple banana" (counted twice, once per term); cherry is in c2 and c3
    # (idf floored: 2 of 3 rows), and c2 is shorter than c3 (D 2 against 4).
    assert [i for i, _ in got] == ["c1", "c2", "c3"]
    assert got[0][1] == pytest.approx(2 * math.log(5 / 3), rel=1e-12)
    assert got[1][1] == pytest.approx(1e-6 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 3)), rel=1e-12)
    assert got[2][1] == pytest.approx(1e-6 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 4 / 3)), rel=1e-12)


def test_phrases_are_tokenized_by_unicode61_itself() -> None:
    tokenizer = PhraseTokenizer()
    phrases = ["foo-bar", "my_var", "Café", "NAÏVE", "Straße", "end-to-end", "--"]
    assert tokenizer.tokens_of(phrases) == [
        ("foo", "bar"),
        ("my", "var"),
        ("cafe",),
        ("naive",),
        ("straße",),
        ("end", "to", "end"),
        (),
    ]
    tokenizer.close()


def test_phrases_are_tokenized_together_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = PhraseTokenizer()
    batch = ["a-b", "--", "Éclair", "a-b", "x_y_z", "ÉCLAIR"]
    want = [("a", "b"), (), ("eclair",), ("a", "b"), ("x", "y", "z"), ("eclair",)]
    assert tokenizer.tokens_of(batch) == want
    assert tokenizer.tokens_of(batch) == want  # from the cache
    monkeypatch.setattr(reads, "_PHRASE_CACHE", 3)  # a full cache is emptied, answers stay right
    assert tokenizer.tokens_of(["new-one", *batch]) == [("new", "one"), *want]
    assert tokenizer.tokens_of(batch[:2]) == want[:2]


# --- differential test against FTS5 -------------------------------------------------------------

VOCAB = [
    "alpha", "Alpha", "ALPHA", "beta", "gamma", "delta", "the", "The", "of", "a", "a-a", "data",
    "api", "ledger", "ledger-api", "ledger_api", "foo-bar", "foo", "bar", "my_var", "snake_case_name",
    "x-ray", "end-to-end", "to", "end", "café", "Café", "cafe", "naïve", "Straße", "STRASSE",
    "v2", "42", "1", "zeta", "zeta", "data", "the",
]  # fmt: skip
QUERY_ONLY = ["zebra", "qq-zz", "alpha-omega", "unknown_word", "--", "a-b-c"]
PROJECTS = [A, B, C]


def random_corpus(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for i in range(n):
        cid = f"c{rng.randrange(1000):03d}-{i}"  # id order differs from insertion order
        if rows and rng.random() < 0.1:
            text = rng.choice(rows)[2]  # identical texts tie
        else:
            words = [rng.choice(VOCAB) for _ in range(rng.randint(0, 25))]
            if words and rng.random() < 0.3:
                words += [words[0]] * rng.randint(1, 4)  # repeated words
            text = " ".join(words)
        rows.append((cid, rng.choice(PROJECTS), text))
    return rows


def random_text(rng: random.Random) -> str:
    words = [rng.choice(VOCAB + QUERY_ONLY) for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.2:
        words.append(words[0].upper())  # the same phrase again after case folding
    return " ".join(words)


def test_differential_random_corpus_and_queries(mem: Memory) -> None:
    rng = random.Random(20240607)
    add_chunks(mem.conn, random_corpus(rng, 250))
    add_chunks(mem.conn, random_corpus(rng, 150))  # a second write: FTS5 holds two segments
    index = LexicalIndex.build(mem.conn)
    scopes = [
        Scope.everywhere(),
        Scope.of(A),
        Scope.of(B),
        Scope.of(A, C),
        Scope.of("/elsewhere"),
    ]
    tokenizer = PhraseTokenizer()
    compared = nonempty = multi_token = boundary_ties = 0
    for _ in range(400):
        text = random_text(rng)
        phrases = reads.query_terms(text)
        for scope in scopes:
            # ORDER BY r, c.id is a total order, so LIMIT n is the first n of LIMIT 21.
            ranked = lexical(mem, text, scope, 21)
            for limit in (1, 3, 20):
                want = ranked[:limit]
                got = index.search(phrases, allowed(scope), limit)
                assert [i for i, _ in got] == [i for i, _ in want], (text, scope, limit)
                for (_, g), (_, w) in zip(got, want, strict=True):
                    assert g == pytest.approx(w, rel=0, abs=1e-9)
                compared += 1
                nonempty += bool(want)
                if want and any(len(t) > 1 for t in tokenizer.tokens_of(phrases)):
                    multi_token += 1
                if len(ranked) > limit and ranked[limit][1] == ranked[limit - 1][1]:
                    boundary_ties += 1
            assert lexical(mem, text, scope, 3) == ranked[:3]
    # The comparison exercised what it is meant to: matches, phrases, ties cut by the limit.
    assert compared == 400 * len(scopes) * 3
    assert nonempty > compared // 3
    assert multi_token > 20
    assert boundary_ties > 20


def test_concurrent_searches_agree_with_serial_ones(mem: Memory) -> None:
    rng = random.Random(7)
    add_chunks(mem.conn, random_corpus(rng, 200))
    index = LexicalIndex.build(mem.conn)
    queries = [q for q in (reads.query_terms(random_text(rng)) for _ in range(60)) if q]
    serial = [index.search(q, None, 5) for q in queries]
    assert any(serial)  # positive control: the queries find something
    shared = LexicalIndex.build(mem.conn)  # caches start empty and fill from four threads
    results: dict[int, list[list[tuple[str, float]]]] = {}

    def work(n: int) -> None:
        results[n] = [shared.search(q, frozenset({A, B}) if n % 2 else None, 5) for q in queries]

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    scoped = [index.search(q, frozenset({A, B}), 5) for q in queries]
    assert all(results[n] == (scoped if n % 2 else serial) for n in range(4))

"""The Porter-stemmed lexical index (`lexical(stem=True)`): migration and back-fill, triggers, worked
scores, and the in-memory snapshot against FTS5's porter index (differential, synthetic and real)."""

from __future__ import annotations

import math
import random
import sqlite3
from pathlib import Path

import pytest

from engine import reads, store
from engine.lexical_index import LexicalIndex
from engine.memory import Memory
from engine.reads import PhraseTokenizer
from engine.scope import Scope
from engine.text_reads import TextReads
from tests import spotter as spotter_fixture
from tests.engine.test_lexical_index import A, B, C, add_chunks, allowed

EVERYWHERE = Scope.everywhere()


def fts5_porter(conn: sqlite3.Connection, text: str, limit: int = 10) -> list[tuple[str, float]]:
    """The porter index queried directly with engine.reads's query (no scope, no snapshot)."""
    query = reads.fts_query(text)
    if query is None:
        return []
    rows = conn.execute(
        "SELECT c.id, bm25(chunks_fts_porter) AS r FROM chunks_fts_porter "
        "JOIN chunks c ON c.rowid = chunks_fts_porter.rowid "
        "WHERE chunks_fts_porter MATCH ? ORDER BY r, c.id LIMIT ?",
        (query, limit),
    ).fetchall()
    return [(str(r[0]), -float(r[1])) for r in rows]


def fts(mem: Memory, text: str, scope: Scope, limit: int, stem: bool) -> list[tuple[str, float]]:
    """What FTS5 answers (engine.reads.lexical), whatever the memory's lexical mode."""
    return [(s.chunk_id, s.score) for s in reads.lexical(mem.conn, text, scope, limit, stem=stem)]


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in hits]


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "m.db")


@pytest.fixture
def runners(mem: Memory) -> Memory:
    # 7 rows, 15 tokens (stemming never changes a row's token count): avgdl = 15 / 7.
    add_chunks(
        mem.conn,
        [
            ("r1", A, "run fast"),  # run fast
            ("r2", A, "running late"),  # run late
            ("r3", B, "she runs daily"),  # she run daili
            ("r4", A, "walk home"),
            ("r5", A, "cook dinner"),
            ("r6", A, "read book"),
            ("r7", A, "plan trip"),
        ],
    )
    return mem


# --- worked by hand ------------------------------------------------------------------------------


def test_running_and_runs_match_run_only_when_stemmed(runners: Memory) -> None:
    # Without stemming each word matches itself (the positive control: exact terms are found).
    assert ids(fts(runners, "run", EVERYWHERE, 10, stem=False)) == ["r1"]
    assert ids(fts(runners, "running", EVERYWHERE, 10, stem=False)) == ["r2"]
    assert ids(fts(runners, "runs", EVERYWHERE, 10, stem=False)) == ["r3"]
    # Stemmed, all three are "run": found in r1, r2, r3 (nHit = 3 of N = 7).
    for word in ("run", "running", "runs", "RUNNING"):
        assert ids(fts(runners, word, EVERYWHERE, 10, stem=True)) == ["r1", "r2", "r3"]
    # Words with no shared stem still match nothing: "ran" is not stemmed to "run".
    assert fts(runners, "ran", EVERYWHERE, 10, stem=True) == []


def test_stemmed_scores_worked_by_hand(runners: Memory) -> None:
    # avgdl = 15/7. A 2-token row: norm = 1.2 * (0.25 + 0.75 * 2 * 7 / 15) = 1.2 * 0.95 = 1.14;
    # the 3-token r3: 1.2 * (0.25 + 0.75 * 3 * 7 / 15) = 1.2 * 1.3 = 1.56.
    # Stemmed "running" = "run": nHit 3, idf = log((7 - 3 + 0.5) / 3.5) = log(9/7); f = 1 each.
    idf = math.log(9 / 7)
    want = [("r1", idf * 2.2 / 2.14), ("r2", idf * 2.2 / 2.14), ("r3", idf * 2.2 / 2.56)]
    got = fts(runners, "running", EVERYWHERE, 10, stem=True)
    assert ids(got) == ["r1", "r2", "r3"]  # r1 and r2 tie; the chunk id breaks the tie
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)
    # Plain "running": only r2, nHit 1, idf = log(6.5 / 1.5) = log(13/3).
    [(plain_id, plain_score)] = fts(runners, "running", EVERYWHERE, 10, stem=False)
    assert plain_id == "r2"
    assert plain_score == pytest.approx(math.log(13 / 3) * 2.2 / 2.14, rel=1e-12)
    # The in-memory snapshot of each index answers the same, to the last bit.
    for stem in (False, True):
        index = LexicalIndex.build(runners.conn, stem=stem)
        assert index.stem is stem
        assert index.search(["running"], None, 10) == fts(runners, "running", EVERYWHERE, 10, stem)


def test_stem_false_is_the_plain_index_unchanged(runners: Memory) -> None:
    # The default reads chunks_fts with the query it always ran, whatever the porter index holds.
    for text in ("running", "run fast", "she runs daily", "zebra"):
        plain = reads.lexical(runners.conn, text, EVERYWHERE, 10)
        assert plain == reads.lexical(runners.conn, text, EVERYWHERE, 10, stem=False)
        query = reads.fts_query(text)
        rows = runners.conn.execute(
            "SELECT c.id, bm25(chunks_fts) AS r FROM chunks_fts "
            "JOIN chunks c ON c.rowid = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? ORDER BY r, c.id LIMIT 10",
            (query,),
        ).fetchall()
        assert [(s.chunk_id, s.score) for s in plain] == [(str(r[0]), -float(r[1])) for r in rows]


def test_phrases_are_stemmed_by_sqlites_porter_tokenizer() -> None:
    # Examples from Porter (1980), "An algorithm for suffix stripping", Program 14(3): the original
    # algorithm, as SQLite's porter tokenizer (ext/fts5/fts5_tokenize.c) implements it, after unicode61.
    words = {
        "caresses": "caress",
        "ponies": "poni",
        "ties": "ti",
        "cats": "cat",
        "feed": "feed",
        "agreed": "agre",
        "plastered": "plaster",
        "motoring": "motor",
        "sing": "sing",
        "conflated": "conflat",
        "hopping": "hop",
        "falling": "fall",
        "filing": "file",
        "happy": "happi",
        "relational": "relat",
        "generalization": "gener",
        "hopeful": "hope",
        "adjustable": "adjust",
        "Café": "cafe",  # unicode61 first: case and diacritics folded
    }
    stemmed = PhraseTokenizer(stem=True)
    plain = PhraseTokenizer()
    try:
        assert stemmed.tokens_of(list(words)) == [(w,) for w in words.values()]
        assert stemmed.tokens_of(["end-to-end", "running-late"]) == [
            ("end", "to", "end"),
            ("run", "late"),
        ]
        # Control: the plain tokenizer folds case and diacritics but keeps the suffixes.
        assert plain.tokens_of(["caresses", "Café"]) == [("caresses",), ("cafe",)]
    finally:
        stemmed.close()
        plain.close()


# --- schema: migration, back-fill, triggers -------------------------------------------------------


def version_1_store(path: Path) -> None:
    """A store as the first schema left it (no porter index), holding two chunks."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in store._statements(store.MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    conn = sqlite3.connect(path, isolation_level=None)
    add_chunks(conn, [("old1", A, "running late again"), ("old2", B, "walk home")])
    conn.close()


def tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}


def test_a_version_1_store_is_migrated_and_its_chunks_back_filled(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    version_1_store(db)
    with sqlite3.connect(db) as raw:
        assert "chunks_fts_porter" not in tables(raw)  # control: the old schema lacks it
    conn = store.connect(db)
    assert int(conn.execute("PRAGMA user_version").fetchone()[0]) == len(store.MIGRATIONS)
    assert {"chunks_fts_porter", "chunks_porter_ai", "chunks_porter_ad", "chunks_porter_au"} <= (
        tables(conn)
    )
    # The rows stored before the migration are in the new index.
    assert [s.chunk_id for s in reads.lexical(conn, "run", EVERYWHERE, 5, stem=True)] == ["old1"]
    assert reads.lexical(conn, "run", EVERYWHERE, 5) == []  # control: the plain index has "running"
    reads.check_fts(conn)  # both indexes agree with the chunks
    conn.close()


def test_a_failing_migration_leaves_the_store_at_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "old.db"
    version_1_store(db)
    broken = store.MIGRATIONS[1] + "\nSELECT * FROM no_such_table;\n"
    monkeypatch.setattr(store, "MIGRATIONS", (store.MIGRATIONS[0], broken))
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        store.connect(db)
    with sqlite3.connect(db) as raw:  # rolled back whole: no table, no trigger, version 1
        assert int(raw.execute("PRAGMA user_version").fetchone()[0]) == 1
        assert not {t for t in tables(raw) if "porter" in t}
    monkeypatch.undo()
    conn = store.connect(db)  # positive control: the real migration then succeeds
    assert "chunks_fts_porter" in tables(conn)
    conn.close()


def test_triggers_keep_the_porter_index_in_sync(mem: Memory) -> None:
    conn = mem.conn
    add_chunks(conn, [("c1", A, "connecting pipes"), ("c2", A, "walk home")])
    assert ids(fts(mem, "connection", EVERYWHERE, 5, stem=True)) == ["c1"]
    with store.write(conn):
        conn.execute("UPDATE chunks SET text = 'connected wires' WHERE id = 'c2'")
        conn.execute("UPDATE chunks SET text = 'pipes only' WHERE id = 'c1'")
    assert ids(fts(mem, "connection", EVERYWHERE, 5, stem=True)) == ["c2"]
    assert ids(fts(mem, "pipe", EVERYWHERE, 5, stem=True)) == ["c1"]
    with store.write(conn):
        conn.execute("DELETE FROM chunks WHERE id = 'c2'")
    assert fts(mem, "connection", EVERYWHERE, 5, stem=True) == []
    assert ids(fts(mem, "pipe", EVERYWHERE, 5, stem=True)) == ["c1"]  # control: the rest stays
    reads.check_fts(conn)
    # The porter index holds exactly the rows chunks holds (rowids and lengths alike).
    assert reads.fts_docsizes(conn, stem=True) == reads.fts_docsizes(conn)


def test_the_integrity_check_covers_the_porter_index(mem: Memory) -> None:
    add_chunks(mem.conn, [("c1", A, "apple pie")])
    reads.check_fts(mem.conn)  # control: sound
    with store.write(mem.conn):  # a porter row that chunks does not hold
        mem.conn.execute("INSERT INTO chunks_fts_porter(rowid, text) VALUES (99, 'tart')")
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        reads.check_fts(mem.conn)


# --- the read facades --------------------------------------------------------------------------


def test_memory_and_text_reads_pass_stem_through(tmp_path: Path, runners: Memory) -> None:
    db = tmp_path / "m.db"
    for stem, want in ((False, ["r2"]), (True, ["r1", "r2", "r3"])):
        assert [s.chunk_id for s in runners.lexical("running", EVERYWHERE, 10, stem=stem)] == want
        with TextReads(db) as light:
            assert light.lexical("running", EVERYWHERE, 10, stem=stem) == runners.lexical(
                "running", EVERYWHERE, 10, stem=stem
            )
    snap = Memory(db, lexical_index="sync")
    assert [s.chunk_id for s in snap.lexical("running", Scope.of(A), 10, stem=True)] == ["r1", "r2"]
    assert snap._lexical.snapshot(stem=True) is not None
    assert snap._lexical.snapshot(stem=False) is None  # only the index asked for is built
    assert [s.chunk_id for s in snap.lexical("running", Scope.of(A), 10)] == ["r2"]
    assert snap._lexical.snapshot(stem=False) is not None


def test_background_mode_builds_the_stemmed_snapshot_on_its_own(runners: Memory) -> None:
    memory = Memory(runners.db_path, lexical_index="background")
    want = fts(runners, "runs", EVERYWHERE, 10, stem=True)
    first = memory.lexical("runs", EVERYWHERE, 10, stem=True)  # FTS5 answers; a build starts
    assert [(s.chunk_id, s.score) for s in first] == want
    builder = memory._lexical._builder.get(True)
    assert builder is not None
    builder.join(timeout=30)
    assert memory._lexical.snapshot(stem=True) is not None
    assert memory._lexical.snapshot(stem=False) is None
    got = memory.lexical("runs", EVERYWHERE, 10, stem=True)  # now the snapshot answers
    assert [(s.chunk_id, s.score) for s in got] == want


# --- differential tests against FTS5's porter index ---------------------------------------------

VOCAB = [
    "run", "runs", "running", "Running", "RUNS", "ran", "runner", "connect", "connected",
    "connecting", "connection", "connections", "general", "generalization", "generate", "caresses",
    "ponies", "happy", "happiness", "relational", "relate", "hopping", "hop", "hoped", "café",
    "naïve", "foo-bar", "my_var", "end-to-end", "the", "a", "of", "data", "v2", "42", "Straße",
]  # fmt: skip
QUERY_ONLY = ["connects", "relating", "generals", "zebra", "runners-up", "--", "hopeful"]


def stem_corpus(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for i in range(n):
        cid = f"s{rng.randrange(1000):03d}-{i}"
        if rows and rng.random() < 0.1:
            text = rng.choice(rows)[2]  # identical texts tie
        else:
            text = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 20)))
        rows.append((cid, rng.choice([A, B, C]), text))
    return rows


def test_differential_stemmed_random_corpus_and_queries(mem: Memory) -> None:
    rng = random.Random(1980)
    add_chunks(mem.conn, stem_corpus(rng, 250))
    add_chunks(mem.conn, stem_corpus(rng, 150))  # a second write: two FTS5 segments
    index = LexicalIndex.build(mem.conn, stem=True)
    scopes = [EVERYWHERE, Scope.of(A), Scope.of(B, C), Scope.of("/elsewhere")]
    compared = nonempty = stem_mattered = 0
    for _ in range(300):
        text = " ".join(rng.choice(VOCAB + QUERY_ONLY) for _ in range(rng.randint(1, 4)))
        terms = reads.query_terms(text)
        for scope in scopes:
            ranked = fts(mem, text, scope, 21, stem=True)
            for limit in (1, 5, 20):
                got = index.search(terms, allowed(scope), limit)
                assert got == ranked[:limit], (text, scope, limit)
                compared += 1
                nonempty += bool(ranked)
            stem_mattered += ids(ranked) != ids(fts(mem, text, scope, 21, stem=False))
    assert compared == 300 * len(scopes) * 3
    assert nonempty > compared // 2
    assert stem_mattered > 300  # most comparisons differ from the plain index's answer


def test_differential_stemmed_on_the_real_transcripts(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Every distinct word of the vendored spotter transcripts, each a query on its own, then
    # pairs of them: FTS5's porter index and the snapshot give the same ids and scores.
    memory = Memory(tmp_path / "spotter.db")
    memory.import_paths([spotter_fixture.spotter_transcripts(tmp_path_factory)], embed=False)
    conn = memory.conn
    words = sorted({t for _, _, _, text in reads.chunk_rows(conn) for t in reads.query_terms(text)})
    assert len(words) > 5000
    index = LexicalIndex.build(conn, stem=True)
    for word in words:
        assert index.search([word], None, 5) == fts5_porter(conn, word, 5), word
    rng = random.Random(14)
    for _ in range(500):
        pair = rng.sample(words, 2)
        assert index.search(pair, None, 10) == fts5_porter(conn, " ".join(pair), 10), pair
    # Control: stemming merges words here (fewer distinct stemmed terms than plain ones).
    assert index.n_rows == LexicalIndex.build(conn).n_rows > 1000
    assert len(index._terms) < len(LexicalIndex.build(conn)._terms)

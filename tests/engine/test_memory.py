"""The Memory facade end to end: import (incremental, idempotent, resumable) and the scoped reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import ingest, store, transcripts
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.reads import fts_query, match_query, query_terms
from engine.scope import Scope, ScopeError
from engine.vectors import VectorIndex
from tests.engine.fixtures_transcripts import (
    append_jsonl,
    assistant_lines,
    simple_session,
    text_block,
    tool_use_block,
    ts,
    user_line,
    write_jsonl,
)

A = "/home/dev/alpha"
B = "/home/dev/beta"
S1 = "11111111-0000-4000-8000-000000000001"
S2 = "11111111-0000-4000-8000-000000000002"
S3 = "11111111-0000-4000-8000-000000000003"


def session_file(root: Path, cwd: str, sid: str) -> Path:
    return root / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl"


def edit_session(
    sid: str, cwd: str, minute: int, prompt: str, files: list[str]
) -> list[dict[str, Any]]:
    env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
    lines: list[dict[str, Any]] = [user_line(prompt, uuid=f"{sid}-u", timestamp=ts(minute), **env)]
    blocks = [tool_use_block(f"{sid}-t{i}", "Edit", {"file_path": f}) for i, f in enumerate(files)]
    uuids = [f"{sid}-a{i}" for i in range(len(blocks))]
    lines += assistant_lines(
        blocks,
        message_id=f"{sid}-m",
        uuids=uuids,
        parent=f"{sid}-u",
        timestamp=ts(minute, 5),
        **env,
    )
    return lines


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write_jsonl(
        session_file(root, A, S1),
        simple_session(
            "Why does the retry test flake?",
            session_id=S1,
            cwd=A,
            answer="The retry loop used a wall clock.",
        ),
    )
    write_jsonl(
        session_file(root, A, S2),
        edit_session(
            S2, A, 10, "Refactor the store module", ["src/store.py", "src/store.py", "src/cli.py"]
        ),
    )
    write_jsonl(
        session_file(root, B, S3),
        simple_session(
            "Deploy the beta service",
            session_id=S3,
            cwd=B,
            answer="Deployed beta with the retry loop fixed.",
        ),
    )
    return root


def open_memory(tmp_path: Path, name: str = "m.db") -> Memory:
    return Memory(tmp_path / name, HashEmbedder(64))


def all_chunks(memory: Memory) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in memory.conn.execute("SELECT id, text FROM chunks ORDER BY id")]


def test_import_stores_sessions_chunks_vectors_and_counts(tmp_path: Path, corpus: Path) -> None:
    memory = open_memory(tmp_path)
    report = memory.import_paths([corpus])
    assert report.files_seen == 3
    assert report.files_imported == 3
    assert report.files_failed == {}
    info = memory.status()
    assert info["sessions"] == 3
    assert info["projects"] == 2
    # each file is short enough for exactly one chunk
    assert info["chunks"] == 3
    assert info["vectors"] == 3
    assert memory.projects() == [A, B]


def test_reimport_is_idempotent(tmp_path: Path, corpus: Path) -> None:
    memory = open_memory(tmp_path)
    memory.import_paths([corpus])
    before = all_chunks(memory)
    generation = store.generation(memory.conn)
    again = memory.import_paths([corpus])
    assert again.files_unchanged == 3
    assert again.files_imported == 0
    assert again.chunks_written == 0
    assert all_chunks(memory) == before
    assert store.generation(memory.conn) == generation


def test_incremental_import_reads_only_new_bytes_and_matches_a_fresh_import(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = session_file(root, A, S1)
    env: dict[str, Any] = {"session_id": S1, "cwd": A}
    first = [
        user_line(f"question {i} " + "alpha " * 60, uuid=f"u{i}", timestamp=ts(i), **env)
        for i in range(6)
    ]
    write_jsonl(path, first)
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    offset = store.get_file(memory.conn, str(path.resolve()))
    assert offset is not None
    assert offset.offset == path.stat().st_size
    early = dict(all_chunks(memory))
    more = [
        user_line(f"later {i} " + "beta " * 70, uuid=f"v{i}", timestamp=ts(20 + i), **env)
        for i in range(5)
    ]
    append_jsonl(path, more)
    report = memory.import_paths([root])
    assert report.files_imported == 1
    assert report.messages == 5  # only the appended lines were parsed
    fresh = open_memory(tmp_path, "fresh.db")
    fresh.import_paths([root])
    assert all_chunks(memory) == all_chunks(fresh)
    # chunks that were complete before the append kept their ids and text
    grown = dict(all_chunks(memory))
    kept = [cid for cid in early if early[cid] == grown.get(cid)]
    assert len(kept) >= len(early) - 1


def test_assistant_message_split_across_imports_is_merged(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = session_file(root, A, S1)
    env: dict[str, Any] = {"session_id": S1, "cwd": A}
    lines = assistant_lines(
        [text_block("part one of the answer"), text_block("part two of the answer")],
        message_id="msg_x",
        uuids=["a1", "a2"],
        timestamp=ts(1),
        **env,
    )
    write_jsonl(
        path, [user_line("explain the answer", uuid="u1", timestamp=ts(0), **env), lines[0]]
    )
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    append_jsonl(path, [lines[1]])
    memory.import_paths([root])
    texts = [r[0] for r in memory.conn.execute("SELECT text FROM messages ORDER BY ordinal")]
    assert texts == ["explain the answer", "part one of the answer\npart two of the answer"]


def test_truncated_last_line_is_picked_up_once_completed(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = session_file(root, A, S1)
    env: dict[str, Any] = {"session_id": S1, "cwd": A}
    complete = user_line("the first complete prompt", uuid="u1", timestamp=ts(0), **env)
    tail = user_line("the prompt still being written", uuid="u2", timestamp=ts(1), **env)
    from tests.engine.fixtures_transcripts import encode

    half = encode(tail)[:25]
    path.parent.mkdir(parents=True)
    path.write_bytes(encode(complete) + b"\n" + half)
    memory = open_memory(tmp_path)
    report = memory.import_paths([root])
    assert report.skipped["truncated_tail"] == 1
    assert [r[0] for r in memory.conn.execute("SELECT text FROM messages")] == [
        "the first complete prompt"
    ]
    path.write_bytes(encode(complete) + b"\n" + encode(tail) + b"\n")
    memory.import_paths([root])
    texts = [r[0] for r in memory.conn.execute("SELECT text FROM messages ORDER BY ordinal")]
    assert texts == ["the first complete prompt", "the prompt still being written"]


def test_rewritten_or_shrunk_file_is_reimported_cleanly(tmp_path: Path, corpus: Path) -> None:
    memory = open_memory(tmp_path)
    memory.import_paths([corpus])
    path = session_file(corpus, A, S1)
    write_jsonl(path, simple_session("A completely new prompt", session_id=S1, cwd=A, answer="ok"))
    report = memory.import_paths([corpus])
    assert report.files_reimported == 1
    texts = " ".join(t for _, t in all_chunks(memory))
    assert "A completely new prompt" in texts  # positive control: the new text is there
    assert "Why does the retry test flake?" not in texts
    assert memory.status()["chunks"] == 3


def test_import_killed_mid_file_loses_nothing_and_resumes(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = open_memory(tmp_path)
    real = store.add_file_edits
    calls = {"n": 0}

    def dying(*args: Any, **kwargs: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the process is killed inside the second file's transaction
        real(*args, **kwargs)

    monkeypatch.setattr(store, "add_file_edits", dying)
    with pytest.raises(KeyboardInterrupt):
        memory.import_paths([corpus])
    monkeypatch.setattr(store, "add_file_edits", real)
    assert memory.status()["files"] == 1  # the first file committed whole, the second not at all
    report = memory.import_paths([corpus])
    assert report.files_unchanged == 1
    assert report.files_imported == 2
    ids = [cid for cid, _ in all_chunks(memory)]
    assert len(ids) == len(set(ids)) == 3


def test_every_read_requires_a_scope(tmp_path: Path, corpus: Path) -> None:
    memory = open_memory(tmp_path)
    memory.import_paths([corpus])
    with pytest.raises(ScopeError):
        memory.lexical("retry", None, 5)  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        memory.chunks(["x"], "everything")  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        Scope.of()
    assert memory.lexical("retry", Scope.everywhere(), 5)  # positive control


def test_scoped_reads_never_return_another_project(tmp_path: Path, corpus: Path) -> None:
    memory = open_memory(tmp_path)
    memory.import_paths([corpus])
    beta_chunk = memory.lexical("Deploy beta service", Scope.of(B), 5)[0].chunk_id
    for hits in (
        memory.lexical("retry loop", Scope.of(A), 10),
        memory.nearest(memory.embed_query("Deploy the beta service"), Scope.of(A), 10, -1.0),
    ):
        assert beta_chunk not in [h.chunk_id for h in hits]
        assert hits  # the read itself works
    assert memory.chunks([beta_chunk], Scope.of(A)) == []
    # positive controls: the same chunk is returned when B is in scope
    assert beta_chunk in [h.chunk_id for h in memory.lexical("retry loop", Scope.of(A, B), 10)]
    near = memory.nearest(memory.embed_query("Deploy the beta service"), Scope.of(B), 10, -1.0)
    assert near[0].chunk_id == beta_chunk
    assert [r.id for r in memory.chunks([beta_chunk], Scope.of(B))] == [beta_chunk]


@pytest.mark.parametrize(
    "hostile",
    [
        '"unbalanced quote',
        "retry*",
        "NEAR(retry flake)",
        "text:retry",
        "retry AND",
        "AND OR NOT",
        "(",
        "^retry",
    ],
)
def test_fts_syntax_in_a_query_is_searched_as_plain_words(
    tmp_path: Path, corpus: Path, hostile: str
) -> None:
    memory = open_memory(tmp_path)
    memory.import_paths([corpus])
    hits = memory.lexical(hostile, Scope.everywhere(), 5)
    if any(w in hostile.lower() for w in ("retry", "flake")):
        assert hits  # the plain word still matches
    else:
        assert hits == [] or all(h.chunk_id for h in hits)


def test_fts_query_quotes_tokens_and_drops_short_ones() -> None:
    assert fts_query('NEAR(a "b" col:value x') == '"NEAR" OR "col" OR "value"'
    assert fts_query("a b") is None


def test_query_terms_are_the_words_once_each_and_match_query_quotes_them() -> None:
    text = "Ledger-API my_var ledger_api naïve (x) 42 my_var"
    assert query_terms(text) == ("Ledger-API", "my_var", "ledger_api", "naïve", "42")
    assert query_terms("a b --") == ("--",)  # a run of dashes is a term; FTS5 finds no token in it
    assert query_terms("a b") == ()
    assert match_query(query_terms(text)) == fts_query(text)
    assert match_query(['say "hi"', "x"]) == '"say ""hi""" OR "x"'  # a quote is doubled
    assert match_query([]) is None


def test_graph_reads_follow_file_edits_and_session_order(tmp_path: Path) -> None:
    root = tmp_path / "c"
    s = [f"22222222-0000-4000-8000-00000000000{i}" for i in range(1, 5)]
    write_jsonl(
        session_file(root, A, s[0]), edit_session(s[0], A, 1, "first", ["a.py", "b.py", "a.py"])
    )
    write_jsonl(session_file(root, A, s[1]), edit_session(s[1], A, 2, "second", ["b.py"]))
    write_jsonl(session_file(root, A, s[2]), edit_session(s[2], A, 3, "third", ["a.py"]))
    write_jsonl(session_file(root, B, s[3]), edit_session(s[3], B, 4, "other project", ["a.py"]))
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    everywhere = Scope.everywhere()
    assert memory.files_for_session(s[0], Scope.of(A), 4) == ["a.py", "b.py"]  # 2 edits, then 1
    assert memory.sessions_for_file("a.py", Scope.of(A), 12, exclude=s[0]) == [s[2]]
    # positive control: the other project's session appears when its project is in scope
    assert memory.sessions_for_file("a.py", everywhere, 12, exclude=s[0]) == [s[3], s[2]]
    assert memory.previous_session(s[2], Scope.of(A)) == s[1]
    assert memory.previous_session(s[0], Scope.of(A)) is None
    assert memory.files_for_session(s[3], Scope.of(A), 4) == []
    best = memory.best_in_session(memory.embed_query("third"), s[2], Scope.of(A))
    assert best is not None
    assert memory.chunks([best.chunk_id], Scope.of(A))[0].session_id == s[2]


def test_hnsw_index_agrees_with_an_exact_scan(tmp_path: Path) -> None:
    root = tmp_path / "c"
    words = [
        "alpha",
        "store",
        "retry",
        "vector",
        "index",
        "session",
        "parser",
        "commit",
        "deploy",
        "cache",
    ]
    rng = np.random.default_rng(7)
    for i in range(60):
        sid = f"33333333-0000-4000-8000-{i:012d}"
        env: dict[str, Any] = {"session_id": sid, "cwd": A}
        lines = [
            user_line(" ".join(rng.choice(words, size=150)), uuid=f"u{j}", timestamp=ts(j), **env)
            for j in range(6)
        ]
        write_jsonl(session_file(root, A, sid), lines)
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    n = memory.status()["chunks"]
    assert isinstance(n, int)
    assert n > 256  # beyond the exact-scan threshold, so hnswlib answers
    emb = memory.embedder
    assert emb is not None
    labels, matrix = memory.vector_matrix(emb.id, emb.dim)
    recalls = []
    for _ in range(20):
        vec = memory.embed_query(" ".join(rng.choice(words, size=5)))
        approx = {h.chunk_id for h in memory.nearest(vec, Scope.everywhere(), 10, -1.0)}
        exact_rows = np.argsort(-(matrix @ vec), kind="stable")[:10]
        ids = {
            r.id
            for r in memory.chunks(
                [_id_of(memory, int(labels[i])) for i in exact_rows], Scope.everywhere()
            )
        }
        recalls.append(len(approx & ids) / 10)
    assert memory.index_state() == "current"
    assert float(np.mean(recalls)) >= 0.98


def _id_of(memory: Memory, rowid: int) -> str:
    return str(memory.conn.execute("SELECT id FROM chunks WHERE rowid = ?", (rowid,)).fetchone()[0])


def test_locked_database_is_reported_and_nothing_is_lost(tmp_path: Path, corpus: Path) -> None:
    db = tmp_path / "m.db"
    memory = Memory(db, HashEmbedder(64), busy_timeout_ms=50)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    report = memory.import_paths([corpus], embed=False)
    assert len(report.files_failed) == 3
    assert all("locked" in why for why in report.files_failed.values())
    blocker.execute("ROLLBACK")
    blocker.close()
    report = memory.import_paths([corpus])
    assert report.files_imported == 3
    assert memory.status()["chunks"] == 3


LEXICAL_QUERIES = ("retry loop", "Deploy beta service", "store module refactor", "wall clock")


def lexical_answers(memory: Memory, scope: Scope) -> list[list[tuple[str, float]]]:
    return [[(h.chunk_id, h.score) for h in memory.lexical(q, scope, 10)] for q in LEXICAL_QUERIES]


def test_the_in_memory_lexical_snapshot_answers_exactly_what_fts5_answers(
    tmp_path: Path, corpus: Path
) -> None:
    plain = open_memory(tmp_path)
    plain.import_paths([corpus])
    snap = Memory(tmp_path / "m.db", HashEmbedder(64), lexical_index="sync")
    for scope in (Scope.everywhere(), Scope.of(A), Scope.of(B)):
        want = lexical_answers(plain, scope)
        assert any(want)  # positive control: the queries find something
        got = lexical_answers(snap, scope)
        assert [[c for c, _ in hits] for hits in got] == [[c for c, _ in hits] for hits in want]
        for g, w in zip(got, want, strict=True):
            assert [s for _, s in g] == pytest.approx([s for _, s in w], rel=1e-12, abs=1e-12)
    assert snapshot_of(snap) is not None  # the snapshot, not FTS5, answered
    assert snapshot_of(plain) is None


def test_the_lexical_snapshot_is_rebuilt_after_the_store_changes(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_jsonl(
        session_file(root, A, S1),
        simple_session("Why does the retry test flake?", session_id=S1, cwd=A, answer="Clock."),
    )
    memory = Memory(tmp_path / "m.db", HashEmbedder(64), lexical_index="sync")
    memory.import_paths([root])
    assert memory.lexical("kubernetes", Scope.everywhere(), 5) == []
    first = snapshot_of(memory)
    assert first is not None
    write_jsonl(
        session_file(root, A, S2),
        simple_session("Move the deploy to kubernetes", session_id=S2, cwd=A, answer="Done."),
    )
    memory.import_paths([root])
    hits = memory.lexical("kubernetes", Scope.everywhere(), 5)
    assert len(hits) == 1  # the new chunk is found: the stale snapshot was not used
    assert snapshot_of(memory) is not first
    assert [h.chunk_id for h in hits] == [
        h.chunk_id for h in Memory(tmp_path / "m.db").lexical("kubernetes", Scope.everywhere(), 5)
    ]


def test_background_mode_answers_from_fts5_until_its_snapshot_is_built(
    tmp_path: Path, corpus: Path
) -> None:
    open_memory(tmp_path).import_paths([corpus])
    want = lexical_answers(Memory(tmp_path / "m.db"), Scope.everywhere())
    memory = Memory(tmp_path / "m.db", HashEmbedder(64), lexical_index="background")
    assert snapshot_of(memory) is None
    first = memory.lexical(
        LEXICAL_QUERIES[0], Scope.everywhere(), 10
    )  # FTS5 answers; a build starts
    assert [(h.chunk_id, h.score) for h in first] == want[0]
    builder = memory._lexical._builder.get(False)
    assert builder is not None
    builder.join(timeout=30)
    assert snapshot_of(memory) is not None
    got = lexical_answers(memory, Scope.everywhere())
    assert [[c for c, _ in hits] for hits in got] == [[c for c, _ in hits] for hits in want]


def snapshot_of(memory: Memory) -> object:
    return memory._lexical.snapshot()


def test_an_unknown_lexical_mode_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="off, sync, background"):
        Memory(tmp_path / "m.db", lexical_index="always")  # type: ignore[arg-type]
    assert Memory(tmp_path / "m.db", lexical_index="off")._lexical._mode == "off"


def _many_sessions(root: Path, cwd: str, first: int, count: int, seed: int) -> None:
    words = ["alpha", "store", "retry", "vector", "index", "session", "parser", "commit", "deploy"]
    rng = np.random.default_rng(seed)
    for i in range(first, first + count):
        sid = f"44444444-0000-4000-8000-{i:012d}"
        env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
        lines = [
            user_line(
                " ".join(rng.choice(words, size=150)), uuid=f"{sid}-u{j}", timestamp=ts(j), **env
            )
            for j in range(6)
        ]
        write_jsonl(session_file(root, cwd, sid), lines)


def test_a_grown_partition_is_extended_not_rebuilt_and_answers_the_new_chunks(
    tmp_path: Path,
) -> None:
    root = tmp_path / "c"
    _many_sessions(root, A, 0, 50, seed=3)
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    parts = memory.ensure_index()
    before = len(parts[A])
    assert before > 256  # a real hnswlib partition
    calls: list[str] = []
    original_build = VectorIndex.build

    def counting_build(self: VectorIndex, *args: Any, **kwargs: Any) -> None:
        calls.append(self.path.name)
        original_build(self, *args, **kwargs)

    _many_sessions(root, A, 50, 2, seed=4)
    memory.import_paths([root])
    grown = int(memory.status()["chunks"])  # type: ignore[call-overload]
    VectorIndex.build = counting_build  # type: ignore[method-assign]
    try:
        parts = memory.ensure_index()
    finally:
        VectorIndex.build = original_build  # type: ignore[method-assign]
    assert calls == []  # extended in place
    assert len(parts[A]) == grown > before
    assert memory.index_state() == "current"
    # the added chunks are searchable: each finds itself first
    new_rows = memory.conn.execute(
        "SELECT rowid, id FROM chunks WHERE session_id LIKE '44444444-%-000000000050' ORDER BY rowid"
    ).fetchall()
    assert new_rows
    for rowid, chunk in new_rows:
        vec = memory.vector(str(chunk))
        assert vec is not None
        assert memory.nearest(vec, Scope.of(A), 1, -1.0)[0].chunk_id == chunk, rowid


def test_a_partition_whose_chunks_were_removed_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "c"
    _many_sessions(root, A, 0, 50, seed=3)
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    before = len(memory.ensure_index()[A])
    # rewrite one file shorter: its chunks are replaced, so the old graph holds removed labels
    path = session_file(root, A, "44444444-0000-4000-8000-000000000000")
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    memory.import_paths([root])
    calls: list[str] = []
    original_build = VectorIndex.build

    def counting_build(self: VectorIndex, *args: Any, **kwargs: Any) -> None:
        calls.append(self.path.name)
        original_build(self, *args, **kwargs)

    VectorIndex.build = counting_build  # type: ignore[method-assign]
    try:
        parts = memory.ensure_index()
    finally:
        VectorIndex.build = original_build  # type: ignore[method-assign]
    assert calls == [memory.partition_path(A).name]
    assert len(parts[A]) == int(memory.status()["chunks"]) < before  # type: ignore[call-overload]


def test_an_import_that_loses_a_race_for_the_same_file_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process stores the file between our parse and our write: nothing is counted twice."""
    root = tmp_path / "c"
    write_jsonl(
        session_file(root, A, S2),
        edit_session(S2, A, 10, "Refactor the store module", ["src/store.py", "src/cli.py"]),
    )
    fresh = open_memory(tmp_path, "fresh.db")
    fresh.import_paths([root])
    want_edits = fresh.conn.execute("SELECT path, n FROM file_edits ORDER BY path").fetchall()
    assert want_edits == [("src/cli.py", 1), ("src/store.py", 1)]  # positive control

    ours, theirs = open_memory(tmp_path), open_memory(tmp_path)
    real_parse = transcripts.parse_file
    raced: list[bool] = []

    def parse_then_lose_the_race(*args: Any, **kwargs: Any) -> Any:
        parsed = real_parse(*args, **kwargs)
        if not raced:
            raced.append(True)
            theirs.import_paths([root])  # the other process writes first
        return parsed

    monkeypatch.setattr(ingest, "parse_file", parse_then_lose_the_race)
    report = ours.import_paths([root])
    assert raced == [True]
    assert report.files_failed == {}
    assert report.files_unchanged == 1  # the retry found the file already imported
    edits = ours.conn.execute("SELECT path, n FROM file_edits ORDER BY path").fetchall()
    assert edits == want_edits
    assert all_chunks(ours) == all_chunks(fresh)

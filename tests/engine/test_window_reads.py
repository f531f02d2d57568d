"""A scope narrowed to a time window (`Scope.within`) is honoured by every read of the engine's API,
and a read that cannot honour it refuses it. Corpus: `tests.engine.window_corpus` (chunks 1, 2, 3 of
project P written on 2026-01-10, -20, -30 at 09:00 UTC; chunk 4 of project Q on 2026-01-20)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from engine import reads, window_reads
from engine.api import Scored
from engine.embed import HashEmbedder
from engine.lexical_reads import LexicalMode
from engine.memory import Memory
from engine.reads import WINDOW_OVERFETCH
from engine.scope import Scope, ScopeError
from engine.window_reads import nearest_in_window
from tests.engine.fixtures_transcripts import user_line, write_jsonl
from tests.engine.window_corpus import QUERY, P, Q, chunk_of, session_id, window_memory

JAN = datetime(2026, 1, 1, tzinfo=UTC)
MID = Scope.of(P).within(JAN + timedelta(days=14), JAN + timedelta(days=24))  # Jan 15 .. Jan 25


def ids(found: list[Scored]) -> list[str]:
    return [s.chunk_id for s in found]


def same_hits(a: list[Scored], b: list[Scored]) -> bool:
    """The same chunks in the same order, with the same scores (to float rounding)."""
    return ids(a) == ids(b) and [s.score for s in a] == pytest.approx([s.score for s in b])


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return window_memory(tmp_path)


def test_lexical_reads_only_the_window_and_scores_as_without_it(memory: Memory) -> None:
    c1, c2, c3 = (chunk_of(memory, n) for n in (1, 2, 3))
    everything = memory.lexical(QUERY, Scope.of(P), 10)
    assert ids(everything)[0] == c1  # control: the best match lies before the window
    assert set(ids(everything)) == {c1, c2, c3}
    windowed = memory.lexical(QUERY, MID, 10)
    assert ids(windowed) == [c2]
    # BM25's statistics are the whole index's: the window only removes rows
    assert windowed[0].score == pytest.approx({s.chunk_id: s.score for s in everything}[c2])
    # the window does not widen the projects: Q's chunk of the same day answers only with Q in scope
    c4 = chunk_of(memory, 4)
    both = Scope.everywhere().within(MID.since, MID.until)
    assert set(ids(memory.lexical(QUERY, both, 10))) == {c2, c4}


def test_the_in_memory_lexical_snapshot_answers_a_window_as_fts5_does(tmp_path: Path) -> None:
    memory = window_memory(tmp_path, lexical_index="sync")
    memory.warm_lexical()
    c1, c2 = chunk_of(memory, 1), chunk_of(memory, 2)
    assert ids(memory.lexical(QUERY, Scope.of(P), 1)) == [c1]  # control: the snapshot answers
    windowed = memory.lexical(QUERY, MID, 10)
    assert ids(windowed) == [c2]
    fts5 = Memory(tmp_path / "w.db", HashEmbedder(64)).lexical(QUERY, MID, 10)  # FTS5 itself
    assert same_hits(fts5, windowed)


def test_the_bounds_are_at_or_after_since_and_before_until_in_any_zone(memory: Memory) -> None:
    c2 = chunk_of(memory, 2)
    written = datetime(2026, 1, 20, 9, tzinfo=UTC)
    plus_two = timezone(timedelta(hours=2))
    at = Scope.of(P).within(written.astimezone(plus_two), None)  # 11:00+02:00 is 09:00Z
    assert c2 in ids(memory.lexical(QUERY, at, 10))
    before = Scope.of(P).within(None, written)
    assert c2 not in ids(memory.lexical(QUERY, before, 10))
    assert len(ids(memory.lexical(QUERY, before, 10))) == 1  # chunk 1 (Jan 10) alone
    just_after = Scope.of(P).within(None, written + timedelta(milliseconds=1))
    assert c2 in ids(memory.lexical(QUERY, just_after, 10))


def test_nearest_scans_the_window_exactly(memory: Memory) -> None:
    c1, c2 = chunk_of(memory, 1), chunk_of(memory, 2)
    query = memory.embed_query(QUERY)
    everything = memory.nearest(query, Scope.of(P), 10, min_score=-1.0)
    assert set(ids(everything)) == {c1, c2, chunk_of(memory, 3)}  # control
    windowed = memory.nearest(query, MID, 10, min_score=-1.0)
    assert ids(windowed) == [c2]
    assert windowed[0].score == pytest.approx({s.chunk_id: s.score for s in everything}[c2])
    # the floor still applies: above chunk 2's cosine, nothing is left
    assert memory.nearest(query, MID, 10, min_score=windowed[0].score + 1e-3) == []


def test_chunks_sentences_and_sessions_keep_to_the_window(memory: Memory) -> None:
    c1, c2 = chunk_of(memory, 1), chunk_of(memory, 2)
    assert [r.id for r in memory.chunks([c1, c2], Scope.of(P))] == [c1, c2]  # control
    assert [r.id for r in memory.chunks([c1, c2], MID)] == [c2]
    query = memory.embed_query(QUERY)
    assert set(memory.sentence_scores(query, [c1, c2], Scope.of(P))) == {c1, c2}  # control
    assert set(memory.sentence_scores(query, [c1, c2], MID)) == {c2}
    recent = [row["session_id"] for row in memory.recent_sessions(Scope.of(P), 10)]
    assert recent == [session_id(3), session_id(2), session_id(1)]  # control
    assert [row["session_id"] for row in memory.recent_sessions(MID, 10)] == [session_id(2)]


def test_the_sessions_that_edited_a_file_are_those_with_a_chunk_in_the_window(
    memory: Memory,
) -> None:
    edited = f"{P}/src/gateway.py"
    assert memory.sessions_for_file(edited, Scope.of(P), 10) == [
        session_id(3),
        session_id(2),
        session_id(1),
    ]  # control: P's three sessions edited it
    assert memory.sessions_for_file(edited, MID, 10) == [session_id(2)]


def test_a_sessions_best_chunk_is_none_when_it_lies_outside_the_window(memory: Memory) -> None:
    query = memory.embed_query(QUERY)
    best = memory.best_in_session(query, session_id(1), Scope.of(P))
    assert best is not None
    assert best.chunk_id == chunk_of(memory, 1)
    assert memory.best_in_session(query, session_id(1), MID) is None
    inside = memory.best_in_session(query, session_id(2), MID)
    assert inside is not None
    assert inside.chunk_id == chunk_of(memory, 2)


def test_a_read_that_cannot_honour_a_window_refuses_it(memory: Memory) -> None:
    c2 = chunk_of(memory, 2)
    found, count = reads.ids_starting_with(memory.conn, "chunk", c2[:8], Scope.of(P), 5)
    assert (found, count) == ([c2], 1)  # control: the read works without a window
    with pytest.raises(ScopeError, match="cannot honour a time window"):
        reads.ids_starting_with(memory.conn, "chunk", c2[:8], MID, 5)
    catalog = memory._require_vectors()
    assert catalog.nearest(memory.embed_query(QUERY), Scope.of(Q), 5)  # control
    with pytest.raises(ScopeError, match="holds no times"):
        catalog.nearest(memory.embed_query(QUERY), MID, 5)


def test_a_window_needs_zoned_bounds_in_order() -> None:
    assert Scope.of(P).within(JAN, None).windowed
    assert not Scope.of(P).windowed
    with pytest.raises(ScopeError, match="needs a time zone"):
        Scope.of(P).within(datetime(2026, 1, 1), None)
    with pytest.raises(ScopeError, match="window is empty"):
        Scope.of(P).within(JAN, JAN)
    assert MID.window_bounds() == ("2026-01-15T00:00:00.000Z", "2026-01-25T00:00:00.000Z")
    assert MID.window_label() == "2026-01-15 00:00 .. 2026-01-25 00:00"
    assert Scope.everywhere().within(None, JAN).window_label() == ".. 2026-01-01 00:00"
    assert str(MID) == P  # the projects part is unchanged


def test_a_window_whose_best_lie_beyond_the_overfetch_is_scanned_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten chunks written in January match the query better than the two of February; asked for
    one February hit, the read takes 8 hits without the window, finds none of February's among them,
    and scans February's vectors instead. Asked for one January hit, the 8 hold it."""
    assert WINDOW_OVERFETCH == 8
    memory = overfetch_memory(tmp_path)
    query = memory.embed_query(QUERY)
    top8 = memory.nearest(query, Scope.of(P), 8, min_score=-1.0)
    days = {r.id: r.ts_start for r in memory.chunks(ids(top8), Scope.of(P))}
    assert all(str(t).startswith("2026-01") for t in days.values())  # February is not among them
    exact = nearest_in_window(memory.conn, "hash-64-v1", query, february, 1, -1.0)
    assert len(exact) == 1
    assert ids(memory.nearest(query, february, 1, min_score=-1.0)) == ids(exact)
    # control: January's best is among the 8, so no scan is made (a scan would raise here)
    monkeypatch.setattr(window_reads, "nearest_in_window", _no_scan)
    assert ids(memory.nearest(query, january, 1, min_score=-1.0)) == ids(top8[:1])
    with pytest.raises(AssertionError, match="scanned"):
        memory.nearest(query, february, 1, min_score=-1.0)


def test_a_windowed_lexical_read_from_the_snapshot_is_fts5s_and_falls_back_to_the_windows_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same corpus: BM25's 8 best for the query are January's, so one February hit is read from
    the snapshot over February's chunks alone, and one January hit from the snapshot's 8; both are
    FTS5's answer with the window in its SQL (same ids, order and scores)."""
    snapshot = overfetch_memory(tmp_path, lexical_index="sync")
    snapshot.warm_lexical()
    fts5 = Memory(tmp_path / "o.db", HashEmbedder(64))  # lexical_index "off": FTS5 itself
    for window in (january, february):
        for limit in (1, 2, 5):
            assert same_hits(
                fts5.lexical(QUERY, window, limit), snapshot.lexical(QUERY, window, limit)
            )
    assert len(snapshot.lexical(QUERY, february, 5)) == 2  # February holds two chunks
    asked: list[str] = []
    fts5_lexical, window_ids = reads.lexical, window_reads.ids_in_window

    def counted_fts5(*args: Any, **kwargs: Any) -> list[Scored]:
        asked.append("fts5")
        return fts5_lexical(*args, **kwargs)

    def counted_ids(*args: Any, **kwargs: Any) -> list[str]:
        asked.append("window ids")
        return window_ids(*args, **kwargs)

    monkeypatch.setattr(reads, "lexical", counted_fts5)
    monkeypatch.setattr(window_reads, "ids_in_window", counted_ids)
    assert len(snapshot.lexical(QUERY, january, 1)) == 1
    assert asked == []  # the snapshot's 8 hold January's best
    assert len(snapshot.lexical(QUERY, february, 1)) == 1
    assert asked == ["window ids"]  # the snapshot over February's chunks, not FTS5
    assert len(fts5.lexical(QUERY, february, 1)) == 1
    assert asked == ["window ids", "fts5"]  # control: without a snapshot, FTS5 answers


february = Scope.of(P).within(datetime(2026, 2, 1, tzinfo=UTC), None)
january = Scope.of(P).within(None, datetime(2026, 2, 1, tzinfo=UTC))


def overfetch_memory(tmp_path: Path, lexical_index: LexicalMode = "off") -> Memory:
    """Ten chunks of January that match the query better (lexically and by cosine) than the two of
    February."""
    texts = {n: f"deploy gateway deploy gateway attempt {n}" for n in range(1, 11)}
    texts |= {11: "the gateway answered", 12: "deploy notes for later"}
    for n, text in texts.items():
        day = f"2026-01-{n:02d}" if n <= 10 else f"2026-02-0{n - 10}"
        sid = f"99999999-0000-4000-8000-{n:012d}"
        line = user_line(
            text, uuid=f"o{n}", timestamp=f"{day}T09:00:00.000Z", session_id=sid, cwd=P
        )
        write_jsonl(tmp_path / "c" / "projects" / "p" / f"{sid}.jsonl", [line])
    memory = Memory(tmp_path / "o.db", HashEmbedder(64), lexical_index=lexical_index)
    memory.import_paths([tmp_path / "c"])
    return memory


def _no_scan(*_args: object) -> list[Scored]:
    raise AssertionError("the window was scanned")

"""A resumed or forked session's copies, as every registered arm answers them over the real engine.

Claude Code writes a resumed or forked session to a new file under a new session id, starting with a
copy of the earlier lines under the same line uuids. Here ORIG holds three prompts of 600 characters
(so one per chunk: two would pass the 900-character budget), each one marker word said over and over;
FORK holds the same three lines and a fourth of its own; OTHER asks about the first marker once, in
a short chunk of its own. So the first two chunks of FORK are exact copies of ORIG's (same text, same messages),
and a search for the first marker reaches ORIG's chunk, FORK's copy of it and OTHER's chunk, in that
order of score but for the tie between the copies (equal BM25, equal vectors: broken by chunk id).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from arms.base import Query
from arms.ltr import hand_model
from arms.registry import build, entry, names
from arms.settled import SettledArm
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import user_line, write_jsonl

ALPHA = "/home/dev/alpha"
ORIG = "c0c0c0c0-0000-4000-8000-000000000001"
FORK = "c0c0c0c0-0000-4000-8000-000000000002"
OTHER = "c0c0c0c0-0000-4000-8000-000000000003"
MARKERS = ["alphaquartz", "betaquokka", "gammaquill"]
OWN = "deltaquasar"  # the fork's own line
NOW = datetime(2026, 6, 1, tzinfo=UTC)
AGENT = "agent:5e551011-0000-4000-8000-0000000000aa"
SEARCHING = [n for n in names() if n != "none"]


def prompt(marker: str) -> str:
    """600 characters: the marker said over and over (so both words and vectors rank it first)."""
    return (f"{marker} " * 60)[:600]


def write_corpus(root: Path) -> None:
    folder = root / "-home-dev-alpha"

    def lines(sid: str) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        parent = None
        for i, marker in enumerate(MARKERS):
            out.append(
                user_line(
                    prompt(marker),
                    uuid=f"orig-u{i}",
                    parent=parent,
                    timestamp=f"2026-01-01T09:0{i}:00Z",
                    session_id=sid,
                    cwd=ALPHA,
                )
            )
            parent = f"orig-u{i}"
        return out

    write_jsonl(folder / f"{ORIG}.jsonl", lines(ORIG))
    fork = [
        *lines(FORK),
        user_line(
            prompt(OWN),
            uuid="fork-u9",
            parent="orig-u2",
            timestamp="2026-01-02T09:00:00Z",
            session_id=FORK,
            cwd=ALPHA,
        ),
    ]
    write_jsonl(folder / f"{FORK}.jsonl", fork)
    other = user_line(
        f"Is {MARKERS[0]} still pinned in the lockfile?",
        uuid="other-u1",
        timestamp="2026-01-03T09:00:00Z",
        session_id=OTHER,
        cwd=ALPHA,
    )
    write_jsonl(folder / f"{OTHER}.jsonl", [other])


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    root = tmp_path / "projects"
    write_corpus(root)
    memory = Memory(tmp_path / "home" / "memory.db", HashEmbedder())
    assert memory.import_paths([root]).files_failed == {}
    return memory


def chunk_of(memory: Memory, session: str, index: int) -> str:
    row = memory.conn.execute(
        "SELECT id FROM chunks WHERE session_id = ? AND idx = ?", (session, index)
    ).fetchone()
    return str(row[0])


def arm(name: str, memory: Memory) -> SettledArm:
    return build(name, memory, hand_model({"rrf": 1.0}) if entry(name).fitted else None)


def search(searcher: object, text: str, k: int) -> list[str]:
    query = Query(text=text, scope=Scope.of(ALPHA), now=NOW, k=k)
    return [h.chunk_id for h in searcher.search(query)]  # type: ignore[attr-defined]


def test_the_corpus_holds_exact_copies(memory: Memory) -> None:
    rows = memory.conn.execute(
        "SELECT session_id, idx, sha256, message_uuids FROM chunks ORDER BY session_id, idx"
    ).fetchall()
    by = {(r[0], r[1]): (r[2], r[3]) for r in rows}
    assert len(rows) == 3 + 4 + 1
    for i in range(3):
        assert by[(ORIG, i)] == by[(FORK, i)]  # same text, same messages
    assert by[(FORK, 3)][1] == '["fork-u9"]'


def test_fts_shows_one_of_two_copies_and_fills_the_answer_from_below(memory: Memory) -> None:
    fts = arm("fts", memory)
    pair = {chunk_of(memory, ORIG, 0), chunk_of(memory, FORK, 0)}
    other = chunk_of(memory, OTHER, 0)
    inner = search(fts.inner, MARKERS[0], 2)
    assert set(inner) == pair  # control: the arm itself ranks both copies first
    shown = search(fts, MARKERS[0], 2)
    assert shown == [inner[0], other]  # the first copy, then the refill
    assert search(fts, MARKERS[0], 5) == [inner[0], other]  # nothing else says the marker
    assert search(fts, OWN, 5) == [chunk_of(memory, FORK, 3)]  # the fork's own line is found


@pytest.mark.parametrize("name", SEARCHING)
def test_no_arm_shows_both_copies(memory: Memory, name: str) -> None:
    pair = {chunk_of(memory, ORIG, 0), chunk_of(memory, FORK, 0)}
    searching = arm(name, memory)
    inner = search(searching.inner, MARKERS[0], 8)
    assert pair <= set(inner)  # control: without the stage, the arm returns both
    shown = search(searching, MARKERS[0], 8)
    assert len(pair & set(shown)) == 1
    assert chunk_of(memory, OTHER, 0) in shown  # and still what else says the marker


def test_a_correction_hides_the_exact_copies_of_the_corrected_chunk(memory: Memory) -> None:
    fts = arm("fts", memory)
    orig, fork, other = (chunk_of(memory, s, 0) for s in (ORIG, FORK, OTHER))
    note = memory.add_note(ALPHA, f"{MARKERS[0]} was never used here", now=NOW)
    done = memory.settle(orig, by=note, kind="corrected", reason="wrong", actor=AGENT, now=NOW)
    shown = search(fts, MARKERS[0], 5)
    assert orig not in shown
    assert fork not in shown
    assert set(shown) == {other, note}  # controls: the bystander and the note are found
    # The fork's second chunk, a copy of an uncorrected chunk, is still found.
    assert search(fts, MARKERS[1], 5)[0] in {chunk_of(memory, ORIG, 1), chunk_of(memory, FORK, 1)}
    memory.undo_settle(done.id, actor=AGENT, now=NOW)
    assert len({orig, fork} & set(search(fts, MARKERS[0], 5))) == 1  # undone: one copy is back

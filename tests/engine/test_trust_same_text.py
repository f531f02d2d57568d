"""A corrected statement stays hidden when another session stored the same words: the same file read
in two sessions (or two worktrees) is the same text under other line uuids, not a copy by uuid.

READ_A and READ_B (project ALPHA) and READ_C (project BETA, another worktree) each hold one prompt, the
same 160 characters; SHORT_A and SHORT_B say the same 32 characters, under MIN_SAME_TEXT (100); NOTE
is a bystander that also names the marker. Every chunk is one session's only chunk.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from engine.api import MIN_SAME_TEXT
from engine.embed import HashEmbedder
from engine.forget import forget
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import user_line, write_jsonl

ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
LONG = ("zanzibarite config says the retry budget is nine " * 4)[:160]
SHORT = "zanzibarite: yes, ship it today."
SESSIONS = {  # name: (session id, project, text)
    "read_a": ("5a5a0000-0000-4000-8000-000000000001", ALPHA, LONG),
    "read_b": ("5a5a0000-0000-4000-8000-000000000002", ALPHA, LONG),
    "read_c": ("5a5a0000-0000-4000-8000-000000000003", BETA, LONG),
    "short_a": ("5a5a0000-0000-4000-8000-000000000004", ALPHA, SHORT),
    "short_b": ("5a5a0000-0000-4000-8000-000000000005", ALPHA, SHORT),
    "note": ("5a5a0000-0000-4000-8000-000000000006", ALPHA, "zanzibarite budget is three now"),
}
BOTH = Scope.of(ALPHA, BETA)


def memory_of(tmp_path: Path, db: Path | None = None) -> tuple[Memory, dict[str, str]]:
    """The six sessions imported (into `db`, default under tmp_path), and each one's chunk id."""
    root = tmp_path / "projects"
    for i, (name, (sid, project, text)) in enumerate(SESSIONS.items()):
        line = user_line(
            text,
            uuid=f"{name}-u1",
            timestamp=f"2026-01-0{i + 1}T09:00:00Z",
            session_id=sid,
            cwd=project,
        )
        write_jsonl(root / project.strip("/").replace("/", "-") / f"{sid}.jsonl", [line])
    memory = Memory(db or tmp_path / "home" / "memory.db", HashEmbedder())
    assert memory.import_paths([root]).files_failed == {}
    ids = {
        name: str(
            memory.conn.execute("SELECT id FROM chunks WHERE session_id = ?", (sid,)).fetchone()[0]
        )
        for name, (sid, _, _) in SESSIONS.items()
    }
    return memory, ids


def found(memory: Memory) -> set[str]:
    lexical = {s.chunk_id for s in memory.lexical("zanzibarite", BOTH, 10)}
    vector = memory.embed_query(LONG)
    nearest = {s.chunk_id for s in memory.nearest(vector, BOTH, 10, min_score=-1.0)}
    assert lexical == nearest  # every chunk names the marker: both reads see all six
    return lexical


def test_correcting_a_read_hides_the_same_words_in_every_session_and_marks_them(
    tmp_path: Path,
) -> None:
    memory, ids = memory_of(tmp_path)
    assert found(memory) == set(ids.values())  # control: all six before any settle
    assert len(LONG) == 160 >= MIN_SAME_TEXT > len(SHORT) == 32
    done = memory.settle(
        ids["read_a"], by=ids["note"], kind="corrected", reason="nine was a typo", actor="person",
        now=NOW,
    )  # fmt: skip
    assert memory.same_text_ids(ids["read_a"]) == sorted([ids["read_b"], ids["read_c"]])
    assert found(memory) == {ids["short_a"], ids["short_b"], ids["note"]}
    # read by id, each says it is corrected, by the settle of the chunk whose words it repeats
    for name in ("read_a", "read_b", "read_c"):
        (record,) = memory.chunks([ids[name]], BOTH)
        assert record.corrected, name
        assert record.status is not None
        assert (record.status.settlement, record.status.other) == (done.id, ids["note"])
    # undone, all three are back and unmarked
    memory.undo_settle(done.id, actor="person", now=NOW)
    assert found(memory) == set(ids.values())
    assert all(r.settled == () for r in memory.chunks(list(ids.values()), BOTH))


def test_a_short_text_said_twice_is_two_statements(tmp_path: Path) -> None:
    memory, ids = memory_of(tmp_path)
    memory.settle(
        ids["short_a"], by=ids["note"], kind="corrected", reason="not today", actor="person",
        now=NOW,
    )  # fmt: skip
    assert memory.same_text_ids(ids["short_a"]) == []
    assert found(memory) == set(ids.values()) - {ids["short_a"]}  # short_b is still found
    (record,) = memory.chunks([ids["short_b"]], BOTH)
    assert not record.corrected


def forgotten(memory: Memory, tmp_path: Path, name: str) -> Memory:
    """`memory` reopened after `forget` of session `name` (closed first: forget opens the file)."""
    memory.close()
    db = tmp_path / "home" / "memory.db"
    forget(db, Target(kind="session", value=SESSIONS[name][0]), now=NOW)
    return Memory(db, HashEmbedder())


def test_forgetting_the_corrected_read_moves_its_settle_to_a_chunk_that_says_the_same(
    tmp_path: Path,
) -> None:
    memory, ids = memory_of(tmp_path)
    done = memory.settle(
        ids["read_a"], by=ids["note"], kind="corrected", reason="a typo", actor="person", now=NOW
    )
    memory = forgotten(memory, tmp_path, "read_a")
    # the same words stay hidden in the two sessions that still hold them
    assert found(memory) == {ids["short_a"], ids["short_b"], ids["note"]}
    (moved,) = memory.settlements(BOTH)
    first = min(ids["read_b"], ids["read_c"])
    assert (moved.id, moved.old, moved.new, moved.undone) == (done.id, first, ids["note"], None)
    # control: a corrected short text has no twin to move to, so forgetting it undoes its settle
    short = memory.settle(
        ids["short_a"], by=ids["note"], kind="corrected", reason="r", actor="person", now=NOW
    )
    memory = forgotten(memory, tmp_path, "short_a")
    assert [s.id for s in memory.settlements(BOTH)] == [done.id]
    undone = [s for s in memory.settlements(BOTH, include_undone=True) if s.id == short.id]
    assert undone[0].undone is not None

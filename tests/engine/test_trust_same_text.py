"""A settle applies to the same words another session stored: the same file read in two sessions (or
two worktrees) is the same text under other line uuids, not a copy by uuid. A corrected statement
stays hidden there, a changed one ranks below its replacement, an open one is shown with the other.

READ_A and READ_B (project ALPHA) and READ_C (project BETA, another worktree) each hold one prompt, the
same 160 characters; SHORT_A and SHORT_B say the same 32 characters, under MIN_SAME_TEXT (100); NOTE
is a bystander that also names the marker. Every chunk is one session's only chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.api import MIN_SAME_TEXT, Settlement
from engine.embed import HashEmbedder
from engine.forget import forget
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from engine.trust import TrustError
from engine.trust_order import settle_ranked
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


def settle(memory: Memory, ids: dict[str, str], old: str, new: str, kind: str) -> Settlement:
    """The person settles the chunk of session `old` against that of `new` (names), now."""
    return memory.settle(ids[old], by=ids[new], kind=kind, reason="r", actor="person", now=NOW)


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
    done = settle(memory, ids, "read_a", "note", "corrected")
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
    settle(memory, ids, "short_a", "note", "corrected")
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


@pytest.mark.parametrize("kind", ["corrected", "changed"])
def test_forgetting_the_settled_read_moves_its_settle_to_a_chunk_that_says_the_same(
    tmp_path: Path, kind: str
) -> None:
    memory, ids = memory_of(tmp_path)
    done = settle(memory, ids, "read_a", "note", kind)
    memory = forgotten(memory, tmp_path, "read_a")
    (moved,) = memory.settlements(BOTH)
    first = min(ids["read_b"], ids["read_c"])
    assert (moved.id, moved.old, moved.new, moved.undone) == (done.id, first, ids["note"], None)
    if kind == "corrected":  # the same words stay hidden in the two sessions that still hold them
        assert found(memory) == {ids["short_a"], ids["short_b"], ids["note"]}
    else:  # and rank below the note there
        assert arranged(memory, ids, ["read_c", "read_b"], BOTH)[0] == "note+"
    # control: a settled short text has no twin to move to, so forgetting it undoes its settle
    short = settle(memory, ids, "short_a", "note", kind)
    memory = forgotten(memory, tmp_path, "short_a")
    assert [s.id for s in memory.settlements(BOTH)] == [done.id]
    undone = [s for s in memory.settlements(BOTH, include_undone=True) if s.id == short.id]
    assert undone[0].undone is not None


@dataclass(frozen=True)
class Item:
    """A ranked item as `engine.trust_order` takes one."""

    chunk_id: str
    via: str = "arm"


def arranged(memory: Memory, ids: dict[str, str], names: list[str], scope: Scope) -> list[str]:
    """The names of `names`' chunks (best first), and of any brought in, once the settles apply."""
    by_id = {v: k for k, v in ids.items()}
    out = settle_ranked([Item(ids[n]) for n in names], memory, scope)
    return [by_id[i.chunk_id] + ("+" if i.via != "arm" else "") for i in out]


def test_a_changed_read_ranks_below_its_replacement_in_every_session_that_says_it(
    tmp_path: Path,
) -> None:
    memory, ids = memory_of(tmp_path)
    # control: before the settle the arm's order stands
    assert arranged(memory, ids, ["read_b", "short_a"], BOTH) == ["read_b", "short_a"]
    done = settle(memory, ids, "read_a", "note", "changed")
    # read_b says what read_a said: the note is brought in above it, as above read_a itself
    assert arranged(memory, ids, ["read_b", "short_a"], BOTH) == ["note+", "read_b", "short_a"]
    assert arranged(memory, ids, ["read_a", "short_a"], BOTH) == ["note+", "read_a", "short_a"]
    # the note found below both copies moves directly above the first
    assert arranged(memory, ids, ["read_c", "read_a", "note"], BOTH) == ["note", "read_c", "read_a"]
    # read by id, each copy is marked changed by the same settle; a scope without BETA gives read_c
    # no settle (the rule reads settles within the query's scope), read_b in it one
    for name in ("read_a", "read_b", "read_c"):
        (record,) = memory.chunks([ids[name]], BOTH)
        assert [(s.settlement, s.kind, s.role, s.other) for s in record.settled] == [
            (done.id, "changed", "old", ids["note"])
        ], name
    alpha = Scope.of(ALPHA)
    assert [s.old for s in memory.settlements_of([ids["read_b"], ids["read_c"]], alpha)] == [
        ids["read_b"]
    ]
    # a short text said twice is two statements: short_b keeps its place when short_a is changed
    settle(memory, ids, "short_a", "note", "changed")
    assert arranged(memory, ids, ["short_b", "read_b"], BOTH) == ["short_b", "note+", "read_b"]


def test_an_open_read_is_shown_with_the_other_one_wherever_it_is_said(tmp_path: Path) -> None:
    memory, ids = memory_of(tmp_path)
    settle(memory, ids, "read_a", "note", "open")
    assert arranged(memory, ids, ["read_c", "short_a"], BOTH) == ["read_c", "note+", "short_a"]
    # control: the note itself is not a copy of anything; short_a stands alone
    assert arranged(memory, ids, ["short_a"], BOTH) == ["short_a"]


def test_a_settle_refuses_a_replacement_that_says_what_the_old_chunk_says(tmp_path: Path) -> None:
    memory, ids = memory_of(tmp_path)
    with pytest.raises(TrustError, match=f"{ids['read_b']} says what {ids['read_a']} says"):
        settle(memory, ids, "read_a", "read_b", "changed")
    assert memory.settlements(BOTH) == []  # nothing written
    # control: a short text said twice is two statements, so one may replace the other
    done = settle(memory, ids, "short_a", "short_b", "changed")
    assert [s.id for s in memory.settlements(BOTH)] == [done.id]


def test_an_open_settle_applies_to_what_either_side_says(tmp_path: Path) -> None:
    memory, ids = memory_of(tmp_path)
    b, c = ids["read_b"], ids["read_c"]
    done = settle(memory, ids, "note", "read_a", "open")
    # read_c says what the new side says: the old side (the note) is brought in below it
    assert arranged(memory, ids, ["read_c", "short_a"], BOTH) == ["read_c", "note+", "short_a"]
    (record,) = memory.chunks([c], BOTH)
    assert [(s.settlement, s.role, s.other) for s in record.settled] == [
        (done.id, "new", ids["note"])
    ]
    assert memory.settled_with(done) == sorted([b, c])
    # control: a changed settle's replacement said again is the replacement, not in dispute
    memory.undo_settle(done.id, actor="person", now=NOW)
    changed = settle(memory, ids, "note", "read_a", "changed")
    assert memory.settled_with(changed) == []
    assert arranged(memory, ids, ["read_c", "short_a"], BOTH) == ["read_c", "short_a"]


def test_forgetting_an_open_settles_new_side_moves_it_to_a_chunk_that_says_the_same(
    tmp_path: Path,
) -> None:
    memory, ids = memory_of(tmp_path)
    done = settle(memory, ids, "note", "read_a", "open")
    short = settle(memory, ids, "note", "short_a", "open")
    memory = forgotten(memory, tmp_path, "read_a")
    first = min(ids["read_b"], ids["read_c"])
    (moved,) = [s for s in memory.settlements(BOTH) if s.id == done.id]
    assert (moved.old, moved.new, moved.undone) == (ids["note"], first, None)
    # control: the short text has no twin to move to, so forgetting it undoes its settle
    memory = forgotten(memory, tmp_path, "short_a")
    assert [s.id for s in memory.settlements(BOTH)] == [done.id]
    undone = [s for s in memory.settlements(BOTH, include_undone=True) if s.id == short.id]
    assert undone[0].undone is not None

"""engine.forget and resumed or forked sessions: a forgotten message goes from every session holding a copy.

Claude Code writes a resumed or forked session to a new file under a new session id, and that file
starts with a copy of every earlier line under the same line uuid (and API message id). Here a fork is
the planted session's six messages written again under another session id, followed by a line of its
own; a later fork is the same again under a third id. The planted session stores six messages (p-u1;
p-a1 with p-a2, merged under their API message; p-r1; p-a3; p-u2; p-a4), four of which hold the
planted string (p-u1, p-a1's Bash call, p-r1's rendered command, p-a3).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from engine.forget import forget, preview
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import user_line, write_jsonl
from tests.engine.forget_corpus import (
    KEPT,
    KEPT_ELSEWHERE,
    PLANTED,
    SID_K,
    SID_P,
    planted_session,
    write_forget_corpus,
)
from tests.recallbench.corpus import ALPHA

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
FORK = "eeeeeeee-0000-4000-8000-000000000001"
LATER_FORK = "eeeeeeee-0000-4000-8000-000000000002"
OWN = {FORK: "qnheron-lattice-2207", LATER_FORK: "vbotter-quarry-3314"}  # each fork's own line


def write_fork(root: Path, sid: str) -> Path:
    """The planted session copied under `sid`, then one line of the fork's own."""
    lines = [
        *planted_session(sid=sid),
        user_line(
            f"In this branch, try {OWN[sid]} instead",
            uuid=f"{sid[:8]}-u9",
            parent="p-a4",
            timestamp="2026-01-01T10:00:00Z",
            session_id=sid,
            cwd=ALPHA,
        ),
    ]
    return write_jsonl(root / "-home-dev-alpha" / f"{sid}.jsonl", lines)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    projects = tmp_path / "projects"
    write_forget_corpus(projects)
    write_fork(projects, FORK)
    return projects


@pytest.fixture
def db(tmp_path: Path, root: Path) -> Path:
    path = tmp_path / "home" / "memory.db"
    memory = Memory(path, HashEmbedder())
    assert memory.import_paths([root]).files_failed == {}
    memory.close()
    return path


def messages_holding(db: Path, text: str) -> dict[str, int]:
    """Stored messages whose text holds `text`, per session."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT session_id, COUNT(*) FROM messages WHERE instr(text, ?) GROUP BY session_id",
            (text,),
        ).fetchall()
    return {str(s): int(n) for s, n in rows}


def session_texts(db: Path, session_id: str) -> str:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT text FROM chunks WHERE session_id = ? ORDER BY stream, idx", (session_id,)
        ).fetchall()
    return "\n".join(str(r[0]) for r in rows)


def import_again(db: Path, root: Path) -> dict[str, int]:
    memory = Memory(db, HashEmbedder())
    try:
        report = memory.import_paths([root])
    finally:
        memory.close()
    assert report.files_failed == {}
    return dict(report.skipped)


def test_forgetting_a_string_takes_the_copies_a_fork_holds_and_keeps_a_later_fork_copy_out(
    db: Path, root: Path
) -> None:
    assert messages_holding(db, PLANTED) == {SID_P: 4, FORK: 4}  # the copy is stored as such
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    assert messages_holding(db, PLANTED) == {}
    # controls: what the fork wrote itself, and the kept string in both sessions, stay
    assert OWN[FORK] in session_texts(db, FORK)
    assert messages_holding(db, KEPT) == {SID_P: 2, FORK: 2}
    # A fork written after the forget copies the lines again, under a third session id.
    write_fork(root, LATER_FORK)
    skipped = import_again(db, root)
    assert skipped["forgotten"] == 4  # the four messages that held the string, not the other two
    assert messages_holding(db, PLANTED) == {}
    assert OWN[LATER_FORK] in session_texts(db, LATER_FORK)
    assert messages_holding(db, KEPT) == {SID_P: 2, FORK: 2, LATER_FORK: 2}


def test_forgetting_a_chunk_takes_its_messages_copies_and_the_fork_keeps_its_own_lines(
    db: Path, root: Path
) -> None:
    with sqlite3.connect(db) as conn:
        (chunk_id,) = conn.execute(
            "SELECT id FROM chunks WHERE session_id = ? AND instr(text, ?)", (SID_P, PLANTED)
        ).fetchone()
    plan = preview(db, Target(kind="chunk", value=chunk_id))
    # the chunk packs all six messages of the short planted session; the fork holds the same six
    assert {(c.session_id, c.messages, c.whole) for c in plan.counts} == {
        (SID_P, 6, False),
        (FORK, 6, False),
    }
    forget(db, Target(kind="chunk", value=chunk_id), now=NOW)
    assert session_texts(db, SID_P) == ""
    fork_text = session_texts(db, FORK)
    assert PLANTED not in fork_text
    assert KEPT not in fork_text
    assert OWN[FORK] in fork_text  # control: the fork's own line stays
    assert KEPT_ELSEWHERE in session_texts(db, SID_K)  # control: another session is untouched
    write_fork(root, LATER_FORK)
    assert import_again(db, root)["forgotten"] == 6
    assert session_texts(db, LATER_FORK).count("\n") == 0  # one chunk: the later fork's own line
    assert OWN[LATER_FORK] in session_texts(db, LATER_FORK)


def test_forgetting_a_session_whole_takes_the_copies_of_its_messages_from_its_forks(
    db: Path, root: Path
) -> None:
    plan = preview(db, Target(kind="session", value=SID_P))
    assert plan.sessions == (SID_P,)
    # the fork is not forgotten whole: it loses the six copied messages and keeps its own
    assert {(c.session_id, c.messages, c.whole) for c in plan.counts} == {
        (SID_P, 6, True),
        (FORK, 6, False),
    }
    forget(db, Target(kind="session", value=SID_P), now=NOW)
    assert session_texts(db, SID_P) == ""
    assert messages_holding(db, PLANTED) == {}
    assert messages_holding(db, KEPT) == {}
    assert OWN[FORK] in session_texts(db, FORK)  # control
    assert KEPT_ELSEWHERE in session_texts(db, SID_K)  # control
    write_fork(root, LATER_FORK)
    assert import_again(db, root)["forgotten"] == 6
    assert messages_holding(db, PLANTED) == {}
    assert messages_holding(db, KEPT) == {}
    memory = Memory(db, HashEmbedder())
    hits = memory.lexical(OWN[LATER_FORK], Scope.everywhere(), 5)
    assert [
        r.session_id for r in memory.chunks([h.chunk_id for h in hits], Scope.everywhere())
    ] == [LATER_FORK]
    memory.close()

"""engine.forget with `--before`: every message written before a time goes, sessions left empty go,
and the horizon keeps such lines out of every later import (and of a rebuild).

The corpus (tests/engine/forget_corpus.py, times from `ts`, minutes after 10:00 on 2026-03-01): the
sessions A1 and B1 write at minutes 0-3, A2 at 20-21, the planted session at 40-45 (the string
PLANTED at 40-43, KEPT at 44-45), the kept session at 50-51. The time ts(44) is between the planted
session's fourth and fifth message.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine import forget_sql, store, tombstone_sql
from engine.embed import HashEmbedder
from engine.forget import carry_tombstones, forget, preview
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.engine.forget_corpus import KEPT, KEPT_ELSEWHERE, PLANTED, SID_K, SID_P
from tests.engine.forget_corpus import write_forget_corpus as write_corpus
from tests.recallbench.corpus import SID_A1, SID_A2, SID_B1

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CUT = "2026-03-01T10:44:00Z"  # ts(44), to the second
SID_G = "eeeeeeee-0000-4000-8000-000000000001"  # a session of a project imported after the forget
GAMMA = "/home/dev/gamma"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    folder = tmp_path / "projects"
    write_corpus(folder)
    return folder


@pytest.fixture
def db(tmp_path: Path, projects: Path) -> Path:
    path = tmp_path / "home" / "memory.db"
    memory = Memory(path, HashEmbedder())
    assert memory.import_paths([projects]).files_failed == {}
    memory.close()
    return path


def before(at: str) -> Target:
    return Target(kind="before", value=at)


def stored(db: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql, args).fetchall())


def holding(db: Path, text: str) -> int:
    """Messages and chunks holding `text`."""
    return sum(
        int(str(stored(db, f"SELECT COUNT(*) FROM {t} WHERE instr(text, ?)", text)[0][0]))
        for t in ("messages", "chunks")
    )


def gamma_session(minutes: tuple[int, int]) -> list[dict[str, Any]]:
    """A prompt at the first minute and its answer at the second, in a project never imported."""
    env: dict[str, Any] = {"session_id": SID_G, "cwd": GAMMA}
    return [
        user_line(
            "Which port does the gamma proxy use?", uuid="g-u1", timestamp=ts(minutes[0]), **env
        ),
        *assistant_lines(
            [text_block("The gamma proxy listens on port 8443.")],
            message_id="g-msg_1",
            uuids=["g-a1"],
            parent="g-u1",
            timestamp=ts(minutes[1]),
            **env,
        ),
    ]


def import_into(db: Path, folder: Path) -> dict[str, int]:
    memory = Memory(db, HashEmbedder())
    try:
        report = memory.import_paths([folder])
    finally:
        memory.close()
    assert report.files_failed == {}
    return dict(report.skipped)


def test_every_message_written_before_the_time_goes_and_the_rest_stays(db: Path) -> None:
    assert holding(db, PLANTED) > 0  # controls: both strings are stored before the forget
    assert holding(db, KEPT) > 0
    assert stored(db, "SELECT COUNT(*) FROM messages") == [(18,)]  # A1, B1 4 each; A2 2; P 6; K 2
    forget(db, before(CUT), now=NOW)
    assert holding(db, PLANTED) == 0  # minutes 40-43
    assert holding(db, KEPT) > 0  # minute 44 is not before 10:44:00
    assert holding(db, KEPT_ELSEWHERE) > 0  # minutes 50-51
    # Left: the planted session's last prompt and answer, and the kept session's two messages.
    assert stored(db, "SELECT session_id, COUNT(*) FROM messages GROUP BY session_id") == [
        (SID_P, 2),
        (SID_K, 2),
    ]
    # The sessions left empty go; the planted one now starts at its first message left.
    assert stored(db, "SELECT id, started, ended FROM sessions ORDER BY id") == [
        (SID_P, ts(44), ts(45)),
        (SID_K, ts(50), ts(51)),
    ]
    assert stored(db, "SELECT value FROM meta WHERE key = 'forgotten_before'") == [(CUT,)]
    memory = Memory(db, HashEmbedder())
    try:  # the lexical read agrees: the kept string is found, the planted one is not
        assert memory.lexical(KEPT, Scope.everywhere(), 5)
        assert memory.lexical(PLANTED, Scope.everywhere(), 5) == []
        assert [s["session_id"] for s in memory.recent_sessions(Scope.everywhere(), 10)] == [
            SID_K,
            SID_P,
        ]
    finally:
        memory.close()


def test_the_plan_counts_what_goes_per_session_without_changing_anything(db: Path) -> None:
    plan = preview(db, before(CUT))
    # A1 and B1: prompt, answer with its Bash call, tool result, answer (4 messages); A2: 2; the
    # planted session's first 4.
    assert {c.session_id: c.messages for c in plan.counts} == {
        SID_A1: 4,
        SID_A2: 2,
        SID_B1: 4,
        SID_P: 4,
    }
    assert holding(db, PLANTED) > 0  # nothing moved
    assert preview(db, before("2026-03-01T09:00:00Z")).counts == ()  # before everything: nothing


def test_an_import_after_it_drops_lines_written_before_the_horizon_in_any_transcript(
    tmp_path: Path, db: Path
) -> None:
    forget(db, before(CUT), now=NOW)
    later = tmp_path / "later"
    write_jsonl(later / "-home-dev-gamma" / f"{SID_G}.jsonl", gamma_session((30, 60)))
    skipped = import_into(db, later)
    assert skipped.get("forgotten") == 1  # the prompt at minute 30
    texts = [str(r[0]) for r in stored(db, "SELECT text FROM messages WHERE session_id = ?", SID_G)]
    assert len(texts) == 1
    assert "port 8443" in texts[0]  # the answer at minute 60 is imported
    assert stored(db, "SELECT started FROM sessions WHERE id = ?", SID_G) == [(ts(60),)]


def test_a_reimport_from_the_start_brings_nothing_back(
    tmp_path: Path, projects: Path, db: Path
) -> None:
    forget(db, before(CUT), now=NOW)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM files")  # as if the files were new: read from byte 0
    import_into(db, projects)
    assert holding(db, PLANTED) == 0
    assert holding(db, KEPT) > 0
    assert stored(db, "SELECT COUNT(*) FROM messages")[0][0] == 4


def test_the_horizon_only_moves_forward(db: Path) -> None:
    forget(db, before(CUT), now=NOW)
    forget(db, before("2026-03-01T10:10:00Z"), now=NOW)  # earlier: the horizon stays
    assert stored(db, "SELECT value FROM meta WHERE key = 'forgotten_before'") == [(CUT,)]
    forget(db, before("2026-03-01T10:50:30Z"), now=NOW)  # later: it moves, and minute 50 goes
    assert stored(db, "SELECT value FROM meta WHERE key = 'forgotten_before'") == [
        ("2026-03-01T10:50:30Z",)
    ]
    # The prompt at 10:50 went; the answer at 10:51 and the chunk it packs into stay.
    assert stored(db, "SELECT uuid FROM messages WHERE instr(text, ?)", KEPT_ELSEWHERE) == [
        ("k-a1",)
    ]
    assert holding(db, KEPT_ELSEWHERE) == 2


def test_an_undated_message_is_never_before_the_time(tmp_path: Path) -> None:
    lines = gamma_session((30, 31))
    del lines[1]["timestamp"]  # the answer carries no time
    folder = tmp_path / "projects"
    write_jsonl(folder / "-home-dev-gamma" / f"{SID_G}.jsonl", lines)
    db = tmp_path / "memory.db"
    import_into(db, folder)
    assert stored(db, "SELECT COUNT(*) FROM messages")[0][0] == 2  # control: both stored
    forget(db, before(CUT), now=NOW)
    texts = [str(r[0]) for r in stored(db, "SELECT text FROM messages")]
    assert len(texts) == 1
    assert "port 8443" in texts[0]


def test_a_rebuild_carries_the_horizon(tmp_path: Path, projects: Path, db: Path) -> None:
    forget(db, before(CUT), now=NOW)
    fresh = tmp_path / "fresh.db"
    carry_tombstones(db, fresh)
    assert stored(fresh, "SELECT value FROM meta WHERE key = 'forgotten_before'") == [(CUT,)]
    import_into(fresh, projects)
    assert holding(fresh, PLANTED) == 0
    assert stored(fresh, "SELECT session_id, COUNT(*) FROM messages GROUP BY session_id") == [
        (SID_P, 2),
        (SID_K, 2),
    ]
    unforgotten = tmp_path / "control.db"  # control: the same import without the horizon
    import_into(unforgotten, projects)
    assert holding(unforgotten, PLANTED) > 0


def test_a_session_left_without_messages_by_any_target_goes(db: Path) -> None:
    chunk_ids = [str(r[0]) for r in stored(db, "SELECT id FROM chunks WHERE session_id = ?", SID_K)]
    assert len(chunk_ids) == 1  # the kept session's two messages pack into one chunk
    assert stored(db, "SELECT COUNT(*) FROM sessions WHERE id = ?", SID_K) == [(1,)]
    forget(db, Target(kind="chunk", value=chunk_ids[0]), now=NOW)
    assert stored(db, "SELECT COUNT(*) FROM sessions WHERE id = ?", SID_K) == [(0,)]
    assert stored(db, "SELECT COUNT(*) FROM sessions WHERE id = ?", SID_P) == [(1,)]  # control


def test_the_horizon_rule_and_the_target_check() -> None:
    horizon = tombstone_sql.instant(CUT)
    assert tombstone_sql.written_before("2026-03-01T10:43:59.999Z", horizon)
    assert not tombstone_sql.written_before("2026-03-01T10:44:00.000Z", horizon)
    assert tombstone_sql.written_before("2026-03-01T12:43:00+02:00", horizon)  # 10:43 UTC
    assert not tombstone_sql.written_before("2026-03-01T10:43:00", None)
    assert not tombstone_sql.written_before(None, horizon)
    assert not tombstone_sql.written_before("not a time", horizon)
    with pytest.raises(ValueError, match="ISO-8601 time"):
        Target(kind="before", value="last week")
    assert Target(kind="before", value=CUT).audit_label == f"before:{CUT}"


def test_set_horizon_reports_whether_it_moved(tmp_path: Path) -> None:
    conn = store.connect(tmp_path / "m.db")
    try:
        with store.write(conn):
            assert forget_sql.set_horizon(conn, CUT)
            assert not forget_sql.set_horizon(conn, "2026-03-01T10:00:00Z")
            assert forget_sql.set_horizon(conn, "2026-03-01T11:00:00+00:00")
        assert tombstone_sql.horizon(conn) == datetime(2026, 3, 1, 11, tzinfo=UTC)
    finally:
        conn.close()

"""engine.forget: what each target removes, from every table and index, and what the tombstones keep out."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine import forget_sql, store
from engine.embed import HashEmbedder
from engine.forget import ForgetError, forget, preview
from engine.forget_parts import Target
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import append_jsonl, assistant_lines, text_block, ts
from tests.engine.forget_corpus import (
    KEPT,
    KEPT_ELSEWHERE,
    PLANTED,
    SID_K,
    SID_P,
    TERM,
    write_forget_corpus,
)
from tests.recallbench.corpus import ALPHA, BETA, SID_A1, SID_A2, SID_B1

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EVERYWHERE = Scope.everywhere()


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    return write_forget_corpus(tmp_path / "projects")


@pytest.fixture
def db(tmp_path: Path, corpus: dict[str, Path]) -> Path:
    path = tmp_path / "home" / "memory.db"
    memory = Memory(path, HashEmbedder())
    report = memory.import_paths([tmp_path / "projects"])
    assert report.files_failed == {}
    memory.close()
    return path


def raw(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db)


def found(db: Path, text: str, *, stem: bool = False) -> list[str]:
    """Texts of the chunks the lexical read finds for `text`, everywhere."""
    memory = Memory(db)
    hits = memory.lexical(text, EVERYWHERE, 10, stem=stem)
    return [r.text for r in memory.chunks([h.chunk_id for h in hits], EVERYWHERE)]


def holding(db: Path, text: str) -> dict[str, int]:
    """Rows holding `text` per table (chunks, messages, stream states, FTS5 terms)."""
    with raw(db) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.v1 USING fts5vocab(main, chunks_fts, 'row')")
        conn.execute("CREATE VIRTUAL TABLE temp.v2 USING fts5vocab(main, chunks_fts_porter, 'row')")
        term = TERM.decode()
        return {
            "chunks": conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE instr(text, ?)", (text,)
            ).fetchone()[0],
            "messages": conn.execute(
                "SELECT COUNT(*) FROM messages WHERE instr(text, ?)", (text,)
            ).fetchone()[0],
            "states": conn.execute(
                "SELECT COUNT(*) FROM files WHERE instr(state, ?)", (text,)
            ).fetchone()[0],
            "fts_terms": conn.execute(
                "SELECT COUNT(*) FROM temp.v1 WHERE term = ?", (term,)
            ).fetchone()[0]
            + conn.execute("SELECT COUNT(*) FROM temp.v2 WHERE term = ?", (term,)).fetchone()[0],
            "fts_data_blocks": sum(
                conn.execute(
                    f"SELECT COUNT(*) FROM {t}_data WHERE instr(block, ?)", (TERM,)
                ).fetchone()[0]
                for t in ("chunks_fts", "chunks_fts_porter")
            ),
        }


def chunk_rows(db: Path, session_id: str) -> list[tuple[str, str]]:
    with raw(db) as conn:
        rows = conn.execute(
            "SELECT id, text FROM chunks WHERE session_id = ? ORDER BY stream, idx", (session_id,)
        ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


# --- --match ---------------------------------------------------------------------------------------


def test_forget_match_removes_the_string_from_every_table_and_both_fts_indexes(db: Path) -> None:
    assert holding(db, PLANTED) == {
        "chunks": 1,  # the planted session is one chunk
        # the prompt, the Bash call and its result (both render the command), the answer
        "messages": 4,
        "states": 1,  # the Bash command, kept for the tool result
        "fts_terms": 2,  # the plain and the Porter index
        "fts_data_blocks": 2,
    }
    assert any(PLANTED in t for t in found(db, "zqvortex marmalade"))
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    assert holding(db, PLANTED) == {
        "chunks": 0,
        "messages": 0,
        "states": 0,
        "fts_terms": 0,
        "fts_data_blocks": 0,
    }
    assert found(db, "zqvortex marmalade") == []
    assert found(db, "zqvortex marmalade", stem=True) == []
    # positive control: what the same session said besides, and another session, stay found
    assert any(KEPT in t for t in found(db, "yxpelican harbinger"))
    assert any(KEPT in t for t in found(db, "yxpelican harbinger", stem=True))
    assert any(KEPT_ELSEWHERE in t for t in found(db, "wbquasar tangerine"))
    assert holding(db, KEPT)["messages"] == 2


def test_forget_match_removes_only_the_messages_holding_it_and_rewrites_their_chunk(
    db: Path,
) -> None:
    before = chunk_rows(db, SID_P)
    assert len(before) == 1
    assert PLANTED in before[0][1]
    assert KEPT in before[0][1]
    plan = preview(db, Target(kind="match", value=PLANTED))
    assert sorted(m.uuid for m in plan.messages) == ["p-a1", "p-a3", "p-r1", "p-u1"]
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    after = chunk_rows(db, SID_P)
    # the same chunk id, now packing the 2 messages that stay: the kept exchange
    assert [cid for cid, _ in after] == [before[0][0]]
    assert PLANTED not in after[0][1]
    assert KEPT in after[0][1]
    with raw(db) as conn:
        uuids = json.loads(
            conn.execute(
                "SELECT message_uuids FROM chunks WHERE session_id = ?", (SID_P,)
            ).fetchone()[0]
        )
    assert uuids == ["p-u2", "p-a4"]


def test_vectors_of_removed_texts_go_and_shared_or_kept_ones_stay(db: Path) -> None:
    with raw(db) as conn:
        old_sha = conn.execute(
            "SELECT sha256 FROM chunks WHERE session_id = ?", (SID_P,)
        ).fetchone()[0]
        assert (
            conn.execute("SELECT COUNT(*) FROM vectors WHERE sha256 = ?", (old_sha,)).fetchone()[0]
            == 1
        )  # positive control: the planted chunk's text had its vector
        total = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        # and its sentence vectors (the chunk holds a user line, so it has sentence rows)
        assert conn.execute(
            "SELECT count > 0 FROM sentence_vectors WHERE sha256 = ?", (old_sha,)
        ).fetchall() == [(1,)]
        sentence_rows = conn.execute("SELECT COUNT(*) FROM sentence_vectors").fetchone()[0]
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    with raw(db) as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM vectors WHERE sha256 = ?", (old_sha,)).fetchone()[0]
            == 0
        )
        # exactly one vector went; the rewritten chunk is embedded by the next import
        assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == total - 1
        assert (
            conn.execute(
                "SELECT COUNT(*) FROM sentence_vectors WHERE sha256 = ?", (old_sha,)
            ).fetchone()[0]
            == 0
        )
        assert conn.execute("SELECT COUNT(*) FROM sentence_vectors").fetchone()[0] == (
            sentence_rows - 1
        )
    memory = Memory(db, HashEmbedder())
    assert memory.embed_pending() == 1
    with raw(db) as conn:  # the rewritten text's sentences are embedded with its vector
        assert conn.execute("SELECT COUNT(*) FROM sentence_vectors").fetchone()[0] == sentence_rows
    vector = memory.embed_query("yxpelican harbinger 8830")
    top = memory.nearest(vector, EVERYWHERE, 1)
    assert KEPT in memory.chunks([top[0].chunk_id], EVERYWHERE)[0].text


# --- tombstones and re-import ------------------------------------------------------------------------


def test_a_reimport_from_the_start_keeps_the_forgotten_messages_out(
    db: Path, corpus: dict[str, Path], tmp_path: Path
) -> None:
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    forgotten_state = chunk_rows(db, SID_P)
    path = corpus[SID_P]
    # Rewriting the file's head changes its fingerprint: the next import starts it over from byte 0.
    path.write_bytes(path.read_bytes().replace(b"for the deploy job", b"for the deploy run"))
    memory = Memory(db, HashEmbedder())
    report = memory.import_paths([tmp_path / "projects"])
    assert report.files_reimported == 1
    assert report.skipped["forgotten"] == 4  # p-u1, p-a1 (with p-a2), p-r1 and p-a3
    # neither the messages nor the Bash command the stream state keeps for its result came back
    assert holding(db, PLANTED) == {
        "chunks": 0,
        "messages": 0,
        "states": 0,
        "fts_terms": 0,
        "fts_data_blocks": 0,
    }
    assert found(db, "zqvortex marmalade") == []
    assert any(KEPT in t for t in found(db, "yxpelican harbinger"))  # control: the rest came back
    # the re-import stores exactly what the forget left
    assert chunk_rows(db, SID_P) == forgotten_state


def test_new_lines_of_a_file_still_import_after_a_match_was_forgotten(
    db: Path, corpus: dict[str, Path], tmp_path: Path
) -> None:
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    env = {"session_id": SID_P, "cwd": ALPHA}
    append_jsonl(
        corpus[SID_P],
        assistant_lines(
            [text_block("Later: the qlmarigold rotation runs weekly.")],
            message_id="p-msg_9",
            uuids=["p-a9"],
            parent="p-a4",
            timestamp=ts(46),
            **env,
        ),
    )
    report = Memory(db, HashEmbedder()).import_paths([tmp_path / "projects"])
    assert (report.files_imported, report.messages) == (1, 1)
    assert any("qlmarigold" in t for t in found(db, "qlmarigold rotation"))
    assert found(db, "zqvortex marmalade") == []


def test_tombstones_hold_ids_and_byte_ranges_never_text(db: Path, corpus: dict[str, Path]) -> None:
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    with raw(db) as conn:
        rows = conn.execute(
            "SELECT kind, session_id, ref, api_message_id, path, start_offset, end_offset "
            "FROM tombstones ORDER BY kind, ref"
        ).fetchall()
        chunk_id = conn.execute("SELECT id FROM chunks WHERE session_id = ?", (SID_P,)).fetchone()[
            0
        ]
    size = corpus[SID_P].stat().st_size
    where = (str(corpus[SID_P].resolve()), 0, size)
    assert rows == [
        ("chunk", SID_P, chunk_id, None, *where),
        ("message", SID_P, "p-a1", "p-msg_1", *where),
        ("message", SID_P, "p-a3", "p-msg_2", *where),
        ("message", SID_P, "p-r1", None, *where),
        ("message", SID_P, "p-u1", None, *where),
    ]
    assert not any(PLANTED in str(v) or "zqvortex" in str(v) for row in rows for v in row)


# --- --session, --project, --chunk -------------------------------------------------------------------


def test_forget_session_removes_it_whole_and_its_later_lines_stay_out(
    db: Path, corpus: dict[str, Path], tmp_path: Path
) -> None:
    assert chunk_rows(db, SID_A1)
    assert chunk_rows(db, SID_A2)
    plan = preview(db, Target(kind="session", value=SID_A1))
    assert (plan.sessions, [c.session_id for c in plan.counts]) == ((SID_A1,), [SID_A1])
    forget(db, Target(kind="session", value=SID_A1), now=NOW)
    assert chunk_rows(db, SID_A1) == []
    assert chunk_rows(db, SID_A2)  # control: the project's other session stays
    listed = [r["session_id"] for r in Memory(db).recent_sessions(Scope.of(ALPHA), 10)]
    assert SID_A1 not in listed
    assert SID_A2 in listed
    append_jsonl(
        corpus[SID_A1],
        assistant_lines(
            [text_block("One more note on the retry decorator.")],
            message_id="a1-msg_9",
            uuids=["a1-a9"],
            parent="a1-a3",
            timestamp=ts(9),
            session_id=SID_A1,
            cwd=ALPHA,
        ),
    )
    report = Memory(db, HashEmbedder()).import_paths([tmp_path / "projects"])
    assert report.skipped["forgotten"] == 1
    assert chunk_rows(db, SID_A1) == []
    with raw(db) as conn:
        kinds = conn.execute(
            "SELECT kind, ref FROM tombstones WHERE session_id = ? ORDER BY kind, ref", (SID_A1,)
        ).fetchall()
    # the session; a tombstone per message it held (four stored: u1, a1 with a2 merged under their
    # API message, r1, a3), for a resumed or forked copy of them; and the id of its one chunk
    assert kinds == [
        ("chunk", plan.chunks[0].id),
        ("message", "a1-a1"),
        ("message", "a1-a3"),
        ("message", "a1-r1"),
        ("message", "a1-u1"),
        ("session", ""),
    ]


def test_forget_project_removes_every_session_of_it_and_no_other(db: Path) -> None:
    alpha = {SID_A1, SID_A2, SID_P, SID_K}
    plan = preview(db, Target(kind="project", value=ALPHA))
    assert set(plan.sessions) == alpha
    forget(db, Target(kind="project", value=ALPHA), now=NOW)
    memory = Memory(db)
    assert memory.projects() == [BETA]
    assert memory.lexical("retry", Scope.of(ALPHA), 10) == []
    assert memory.lexical("retry", Scope.of(BETA), 10)  # control: beta's retry queue stays
    assert chunk_rows(db, SID_B1)


def test_forget_chunk_removes_the_messages_it_packs_and_keeps_earlier_chunk_ids(
    tmp_path: Path,
) -> None:
    from tests.recallbench.corpus import chat_session

    sid = "eeeeeeee-0000-4000-8000-000000000001"
    turns = [(f"Step {n}: " + f"migrate table{n} carefully " * 30, f"Done {n}.") for n in range(3)]
    from tests.engine.fixtures_transcripts import write_jsonl

    write_jsonl(tmp_path / "p" / "-x" / f"{sid}.jsonl", chat_session(sid, ALPHA, turns))
    db = tmp_path / "home" / "memory.db"
    Memory(db, HashEmbedder()).import_paths([tmp_path / "p"])
    before = chunk_rows(db, sid)
    assert len(before) == 3
    assert "table1" in before[1][1]
    forget(db, Target(kind="chunk", value=before[1][0]), now=NOW)
    after = chunk_rows(db, sid)
    assert after[0] == before[0]  # the chunk before it is untouched
    assert not any("table1" in text for _, text in after)
    assert any("table2" in text for _, text in after)  # control: the turn after it stays
    assert len(after) == 2


def test_a_target_that_names_nothing_plans_nothing(db: Path) -> None:
    for target in (
        Target(kind="session", value="no-such-session"),
        Target(kind="project", value="/nowhere"),
        Target(kind="chunk", value="no-such-chunk"),
        Target(kind="match", value="qqqq-never-said"),
    ):
        assert not preview(db, target).in_database
    assert preview(db, Target(kind="match", value=PLANTED)).in_database  # control


def test_a_target_is_refused_when_empty_unknown_or_a_too_short_string() -> None:
    with pytest.raises(ValueError, match="unknown forget target 'file'"):
        Target(kind="file", value="x")
    with pytest.raises(ValueError, match="the session to forget is empty"):
        Target(kind="session", value=" ")
    with pytest.raises(ValueError, match="at least 4 characters"):
        Target(kind="match", value="ok!")
    assert Target(kind="match", value="ok!!").value == "ok!!"


# --- stages, failure, resume, audit -------------------------------------------------------------------


def test_a_failed_stage_says_what_is_left_and_running_again_finishes(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    optimize = forget_sql.optimize_fts
    monkeypatch.setattr(forget_sql, "optimize_fts", broken)
    with pytest.raises(ForgetError, match="stopped at stage 'fts'") as caught:
        forget(db, Target(kind="match", value=PLANTED), now=NOW)
    assert (caught.value.done, caught.value.left) == (
        ("rows",),
        ("fts", "index", "backups", "vacuum"),
    )
    assert "Run the same `recallbench forget --match ...` again" in str(caught.value)
    # the rows are gone, but until the merge runs, each index's old segment still holds the term,
    # and so does the segment of delete entries that cancels it
    assert holding(db, PLANTED)["messages"] == 0
    assert holding(db, PLANTED)["fts_data_blocks"] == 2 * 2
    monkeypatch.setattr(forget_sql, "optimize_fts", optimize)
    report = forget(db, Target(kind="match", value=PLANTED), now=NOW)
    assert list(report.stages) == ["rows", "fts", "index", "backups", "vacuum"]
    assert holding(db, PLANTED)["fts_data_blocks"] == 0
    with raw(db) as conn:
        reasons = [r[0].split(":")[0] for r in conn.execute("SELECT reason FROM audit ORDER BY id")]
    assert reasons == [
        "begin",
        "done rows",
        "failed fts",
        "begin",
        "done rows",
        "done fts",
        "done index",
        "done backups",
        "done vacuum",
    ]


def test_the_begin_stage_is_recorded_before_anything_moves(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(conn: sqlite3.Connection, streams: object) -> int:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(forget_sql, "delete_streams", broken)
    with pytest.raises(ForgetError, match="stage 'rows'"):
        forget(db, Target(kind="session", value=SID_P), now=NOW)
    with raw(db) as conn:
        reasons = [r[0] for r in conn.execute("SELECT reason FROM audit ORDER BY id")]
        tombstones = conn.execute("SELECT COUNT(*) FROM tombstones").fetchone()[0]
    assert reasons[0].startswith("begin: 1 whole sessions, 1 chunks, 6 messages")
    assert reasons[1] == ("failed rows: OperationalError; left: rows, fts, index, backups, vacuum")
    # the rows stage is one transaction: nothing of it stayed, not even its tombstones
    assert tombstones == 0
    assert chunk_rows(db, SID_P)


def test_the_audit_records_every_stage_with_ids_and_counts_never_the_text(db: Path) -> None:
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    with raw(db) as conn:
        rows = conn.execute("SELECT time, actor, action, targets, reason FROM audit").fetchall()
        chunk_id = conn.execute("SELECT id FROM chunks WHERE session_id = ?", (SID_P,)).fetchone()[
            0
        ]
    assert [r[2] for r in rows] == ["forget.stage"] * 6
    assert {r[1] for r in rows} == {"person"}
    assert {r[0] for r in rows} == {"2026-06-01T12:00:00Z"}
    assert json.loads(rows[0][3]) == ["match:(text not recorded)", f"chunk:{chunk_id}"]
    # The stages after `begin` name the target alone: the ids are in the begin row.
    assert {r[3] for r in rows[1:]} == {json.dumps(["match:(text not recorded)"])}
    assert [r[4].split(":")[0] for r in rows] == [
        "begin",
        "done rows",
        "done fts",
        "done index",
        "done backups",
        "done vacuum",
    ]
    text = json.dumps(rows)
    assert PLANTED not in text
    assert "zqvortex" not in text
    assert "marmalade" not in text
    assert SID_K not in text  # only the ids the target covers


# --- what a running process holds ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "background"])
def test_a_running_memory_stops_answering_from_its_lexical_snapshot(db: Path, mode: str) -> None:
    running = Memory(db, HashEmbedder(), lexical_index=mode)  # type: ignore[arg-type]
    running.warm_lexical(wait=True)
    running.warm_lexical(wait=True, stem=True)
    snapshot = running._lexical.snapshot()
    assert snapshot is not None
    generation = snapshot.generation
    assert running.lexical("zqvortex marmalade", EVERYWHERE, 5)  # control: the snapshot answers it
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    with raw(db) as conn:
        assert int(store.generation(conn)) > generation
    for stem in (False, True):
        hits = running.lexical("zqvortex marmalade", EVERYWHERE, 5, stem=stem)
        assert [
            h for h in hits if PLANTED in running.chunks([h.chunk_id], EVERYWHERE)[0].text
        ] == []
        assert running.lexical("yxpelican harbinger", EVERYWHERE, 5, stem=stem)  # control


def test_the_hnsw_partition_files_are_removed_and_no_file_keeps_the_forgotten_vector(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.catalog.EXACT_THRESHOLD", 0)  # so every project gets a graph
    memory = Memory(db, HashEmbedder())
    parts = memory.ensure_index()
    assert set(parts) == {ALPHA, BETA}
    files = sorted(p.name for p in db.parent.iterdir() if ".hnsw" in p.name)
    assert len(files) == 5  # the manifest, and a graph with its sidecar per project
    with raw(db) as conn:
        rowid = conn.execute("SELECT rowid FROM chunks WHERE session_id = ?", (SID_P,)).fetchone()[
            0
        ]
    vector = parts[ALPHA].vectors(np.array([rowid], dtype=np.int64))[0]
    needle = np.ascontiguousarray(vector, dtype="<f4").tobytes()

    def files_holding() -> list[str]:
        return sorted(p.name for p in db.parent.iterdir() if needle in p.read_bytes())

    assert any(name.endswith(".hnsw") for name in files_holding())  # control: the graph holds it
    forget(db, Target(kind="match", value=PLANTED), now=NOW)
    assert [p.name for p in db.parent.iterdir() if ".hnsw" in p.name] == []
    assert memory.embed_pending() == 1  # the rewritten chunk, under the same rowid
    rebuilt = memory.ensure_index()
    assert rowid in set(rebuilt[ALPHA].labels().tolist())
    assert not np.allclose(rebuilt[ALPHA].vectors(np.array([rowid], dtype=np.int64))[0], vector)
    assert files_holding() == []
    assert len([p for p in db.parent.iterdir() if ".hnsw" in p.name]) == 5  # control: rebuilt

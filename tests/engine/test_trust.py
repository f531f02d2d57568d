"""Typed corrections in the engine: settle and undo with their audit rows, the reads that hide a
corrected chunk (and still fill `limit`), the read by id that shows its status, and the person's notes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import audit, store, trust_sql
from engine.api import SettledAs, Settlement
from engine.memory import Memory
from engine.scope import Scope
from engine.text_reads import TextReads
from engine.trust import TrustError
from tests.engine.old_store import store_at_version
from tests.engine.trust_fixtures import BLOG, SHOP, T0, T1, shop_memory

AGENT = "agent:5e551011-0000-4000-8000-0000000000aa"
OTHER_AGENT = "agent:5e551011-0000-4000-8000-0000000000bb"
QUERY = "orders database port"


def lexical_ids(memory: Memory, limit: int = 10) -> list[str]:
    return [s.chunk_id for s in memory.lexical(QUERY, Scope.of(SHOP), limit)]


def nearest_ids(memory: Memory, limit: int = 10) -> list[str]:
    vector = memory.embed_query(QUERY)
    return [s.chunk_id for s in memory.nearest(vector, Scope.of(SHOP), limit, min_score=-1.0)]


def test_settle_returns_the_settlement_and_records_an_audit_row_of_ids_only(
    tmp_path: Path,
) -> None:
    memory, ids = shop_memory(tmp_path)
    done = memory.settle(
        ids["old"], by=ids["new"], kind="changed", reason="the port moved", actor="person", now=T0
    )
    assert done == Settlement(
        id=1,
        old=ids["old"],
        new=ids["new"],
        kind="changed",
        reason="the port moved",
        actor="person",
        time="2026-05-01T09:30:00Z",
    )
    assert done.active
    rows = audit.entries(memory.conn)
    assert [(r.action, r.actor, r.targets, r.reason) for r in rows] == [
        ("settle", "person", ("settlement:1", ids["old"], ids["new"]), "changed: the port moved")
    ]
    # No chunk text reaches the audit.
    assert all("5432" not in r.reason and "orders" not in r.reason for r in rows)


def test_settle_refuses_unknown_kinds_ids_actors_and_empty_reasons_with_what_to_do(
    tmp_path: Path,
) -> None:
    memory, ids = shop_memory(tmp_path)
    old, new = ids["old"], ids["new"]
    with pytest.raises(TrustError, match=r"unknown settle kind 'wrong'; choose one of: corrected"):
        memory.settle(old, by=new, kind="wrong", reason="r", actor="person", now=T0)
    with pytest.raises(TrustError, match=r"no chunk nope in the memory"):
        memory.settle(old, by="nope", kind="changed", reason="r", actor="person", now=T0)
    with pytest.raises(TrustError, match=r"cannot settle against itself"):
        memory.settle(old, by=old, kind="changed", reason="r", actor="person", now=T0)
    with pytest.raises(TrustError, match=r"needs a reason"):
        memory.settle(old, by=new, kind="changed", reason="  ", actor="person", now=T0)
    with pytest.raises(TrustError, match=r"unknown audit actor 'root'"):
        memory.settle(old, by=new, kind="changed", reason="r", actor="root", now=T0)
    assert memory.settlements(Scope.everywhere(), include_undone=True) == []
    assert audit.entries(memory.conn) == []
    # Control: the same call with a known kind, ids, actor and reason is recorded.
    memory.settle(old, by=new, kind="changed", reason="r", actor="person", now=T0)
    assert len(memory.settlements(Scope.everywhere())) == 1


def test_a_pair_settled_once_is_refused_again_either_way_round_until_undone(
    tmp_path: Path,
) -> None:
    memory, ids = shop_memory(tmp_path)
    old, new = ids["old"], ids["new"]
    first = memory.settle(old, by=new, kind="open", reason="unsure", actor="person", now=T0)
    with pytest.raises(TrustError, match=r"already settled as open .*--undo 1"):
        memory.settle(new, by=old, kind="changed", reason="r", actor="person", now=T0)
    memory.undo_settle(first.id, actor="person", now=T1)
    second = memory.settle(new, by=old, kind="changed", reason="r", actor="person", now=T1)
    assert second.id == 2


def test_a_corrected_chunk_cannot_replace_another(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    memory.settle(ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0)
    with pytest.raises(TrustError, match=rf"{ids['old']} is itself corrected \(settle 1\)"):
        memory.settle(
            ids["pool"], by=ids["old"], kind="changed", reason="r", actor="person", now=T0
        )
    # Control: the replacement that corrected it can replace another.
    memory.settle(ids["pool"], by=ids["new"], kind="changed", reason="r", actor="person", now=T0)


@pytest.mark.parametrize("mode", ["off", "sync", "background"])
def test_corrected_memory_never_surfaces_in_searches_but_is_readable_by_id(
    tmp_path: Path, mode: str
) -> None:
    memory, ids = shop_memory(tmp_path, lexical_index=mode)  # type: ignore[arg-type]
    memory.warm_lexical()
    assert ids["old"] in lexical_ids(memory)  # control: found before the settle
    assert ids["old"] in nearest_ids(memory)
    four = set(lexical_ids(memory))
    assert four == {ids["old"], ids["new"], ids["backup"], ids["pool"]}
    done = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="wrong port", actor=AGENT, now=T0
    )
    assert ids["old"] not in lexical_ids(memory)
    assert ids["old"] not in [
        s.chunk_id for s in memory.lexical(QUERY, Scope.of(SHOP), 9, stem=True)
    ]
    assert ids["old"] not in nearest_ids(memory)
    assert ids["new"] in lexical_ids(memory)
    assert ids["new"] in nearest_ids(memory)
    # limit still fills from the other chunks: three asked, three of the four remaining answer.
    assert len(lexical_ids(memory, limit=3)) == 3 == len(nearest_ids(memory, limit=3))
    with TextReads(memory.db_path) as light:
        assert ids["old"] not in [s.chunk_id for s in light.lexical(QUERY, Scope.of(SHOP), 10)]
        assert light.chunks([ids["old"]], Scope.of(SHOP))[0].corrected
    # By id it still answers, with its status and what replaced it.
    (record,) = memory.chunks([ids["old"]], Scope.of(SHOP))
    assert record.corrected
    assert record.status == SettledAs(
        settlement=done.id,
        kind="corrected",
        role="old",
        other=ids["new"],
        time="2026-05-01T09:30:00Z",
    )
    assert (
        record.status.describe() == f"corrected on 2026-05-01 (replaced by {ids['new']}, settle 1)"
    )
    (replacement,) = memory.chunks([ids["new"]], Scope.of(SHOP))
    assert replacement.supersedes
    assert not replacement.corrected
    # Undone, it is found again (the same reads, positive control).
    memory.undo_settle(done.id, actor=AGENT, now=T1)
    assert ids["old"] in lexical_ids(memory)
    assert ids["old"] in nearest_ids(memory)
    assert memory.chunks([ids["old"]], Scope.of(SHOP))[0].settled == ()


def test_best_in_session_skips_a_corrected_chunk(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    old_session = memory.chunks([ids["old"]], Scope.of(SHOP))[0].session_id
    vector = memory.embed_query(QUERY)
    best = memory.best_in_session(vector, old_session, Scope.of(SHOP))
    assert best is not None
    assert best.chunk_id == ids["old"]
    memory.settle(ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0)
    # The session's only chunk is hidden, so nothing answers for it.
    assert memory.best_in_session(vector, old_session, Scope.of(SHOP)) is None


def test_the_brief_listing_quotes_no_corrected_opening_chunk(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)

    def openings() -> set[object]:
        return {s["opening_chunk_id"] for s in memory.recent_sessions(Scope.of(SHOP), 10)}

    assert ids["old"] in openings()  # control
    memory.settle(ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0)
    assert ids["old"] not in openings()
    assert ids["new"] in openings()


def test_changed_and_open_chunks_stay_searchable(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    memory.settle(ids["old"], by=ids["new"], kind="changed", reason="moved", actor="person", now=T0)
    memory.settle(ids["backup"], by=ids["pool"], kind="open", reason="?", actor="person", now=T0)
    assert set(lexical_ids(memory)) == {ids["old"], ids["new"], ids["backup"], ids["pool"]}
    old, backup = memory.chunks([ids["old"], ids["backup"]], Scope.of(SHOP))
    assert old.status is not None
    assert old.status.describe().startswith("changed on 2026-05-01")
    assert backup.status is not None
    assert backup.status.kind == "open"


def test_an_agent_may_undo_only_its_own_settles_and_the_person_any(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    mine = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="r", actor=AGENT, now=T0
    )
    theirs = memory.settle(
        ids["backup"], by=ids["pool"], kind="corrected", reason="r", actor=OTHER_AGENT, now=T0
    )
    by_person = memory.settle(
        ids["pool"], by=ids["new"], kind="open", reason="r", actor="person", now=T0
    )
    for settled in (theirs, by_person):
        with pytest.raises(TrustError, match=rf"{AGENT} may undo only the settles it made"):
            memory.undo_settle(settled.id, actor=AGENT, now=T1)
    undone = memory.undo_settle(mine.id, actor=AGENT, now=T1, reason="my mistake")
    assert (undone.undone, undone.undone_by) == ("2026-05-02T08:00:00Z", AGENT)
    assert memory.undo_settle(theirs.id, actor="person", now=T1).undone_by == "person"
    with pytest.raises(TrustError, match=r"settle 1 was already undone at 2026-05-02T08:00:00Z"):
        memory.undo_settle(mine.id, actor="person", now=T1)
    with pytest.raises(TrustError, match=r"no settle with id 99"):
        memory.undo_settle(99, actor="person", now=T1)
    actions = [(e.action, e.actor, e.targets[0]) for e in audit.entries(memory.conn)]
    assert actions[3:] == [
        ("undo", AGENT, "settlement:1"),
        ("undo", "person", "settlement:2"),
    ]
    assert [s.id for s in memory.settlements(Scope.everywhere())] == [by_person.id]
    everything = memory.settlements(Scope.everywhere(), include_undone=True)
    assert [s.id for s in everything] == [1, 2, 3]


def test_settlements_are_listed_by_the_scope_of_their_chunks(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    memory.settle(ids["old"], by=ids["new"], kind="changed", reason="r", actor="person", now=T0)
    memory.settle(ids["blog"], by=ids["pool"], kind="open", reason="r", actor="person", now=T0)
    assert [s.id for s in memory.settlements(Scope.of(SHOP))] == [1, 2]
    assert [s.id for s in memory.settlements(Scope.of(BLOG))] == [2]
    assert [s.id for s in memory.settlements(Scope.of("/elsewhere"))] == []
    with pytest.raises(ValueError, match="Scope"):
        memory.settlements(None)  # type: ignore[arg-type]


def test_a_settlement_is_only_ever_marked_undone_once(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    memory.settle(ids["old"], by=ids["new"], kind="changed", reason="r", actor="person", now=T0)
    conn = memory.conn
    with pytest.raises(sqlite3.IntegrityError, match="only ever marked undone, once"):
        conn.execute("UPDATE settlements SET kind = 'corrected' WHERE id = 1")
    conn.execute(
        "UPDATE settlements SET undone = 'x', undone_by = 'person' WHERE id = 1"
    )  # control
    with pytest.raises(sqlite3.IntegrityError, match="only ever marked undone, once"):
        conn.execute("UPDATE settlements SET undone = NULL, undone_by = NULL WHERE id = 1")


def test_a_version_3_store_gains_the_settlements_table(tmp_path: Path) -> None:
    db = tmp_path / "v3.db"
    store_at_version(db, 3)
    conn = sqlite3.connect(db)
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "settlements" not in names  # control: the old schema lacks it
    conn.close()
    migrated = store.connect(db)
    names = {str(r[0]) for r in migrated.execute("SELECT name FROM sqlite_master")}
    assert {"settlements", "settlements_old", "settlements_undo_once"} <= names
    migrated.close()


def test_a_note_is_a_memory_of_its_own_that_every_read_finds_sanitized(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    text = "Correction: the orders database port is 6543 since May. <private>pager 1234</private>"
    assert memory.lexical("May", Scope.of(SHOP), 5) == []  # control: no chunk says May yet
    note = memory.add_note(SHOP, text, now=T0)
    (record,) = memory.chunks([note], Scope.of(SHOP))
    assert record.text == "Correction: the orders database port is 6543 since May. [private]"
    assert record.session_id.startswith("note-")
    assert record.author.label == "User"
    assert [s.chunk_id for s in memory.lexical("May", Scope.of(SHOP), 5)] == [note]
    assert note in nearest_ids(memory)
    assert memory.lexical("May", Scope.of(BLOG), 5) == []  # scoped like any chunk
    # The same note at the same time is stored once; it can replace a chunk.
    assert memory.add_note(SHOP, text, now=T0) == note
    memory.settle(ids["old"], by=note, kind="corrected", reason="r", actor="person", now=T0)
    assert ids["old"] not in lexical_ids(memory)
    assert note in lexical_ids(memory)
    with pytest.raises(TrustError, match=r"no sessions are recorded for project '/nowhere'"):
        memory.add_note("/nowhere", "a fact", now=T0)
    with pytest.raises(TrustError, match=r"the note is empty"):
        memory.add_note(SHOP, "   ", now=T0)
    with pytest.raises(TrustError, match=r"a note holds at most 900"):
        memory.add_note(SHOP, "x" * 901, now=T0)


def test_a_reason_is_stored_and_audited_with_its_credentials_redacted(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    done = memory.settle(
        ids["old"], by=ids["new"], kind="changed", reason=f"rotated {token}", actor=AGENT, now=T0
    )
    assert token not in done.reason
    assert done.reason.startswith("rotated [redacted:")
    undone = memory.undo_settle(done.id, actor=AGENT, now=T1, reason=f"again {token} <private>x")
    rows = audit.entries(memory.conn)
    assert all(token not in e.reason for e in rows)
    assert rows[1].reason.startswith("again [redacted:")
    assert rows[1].reason.endswith("[private]")
    assert undone.undone is not None
    # Control: a reason without a secret is kept word for word.
    plain = memory.settle(
        ids["old"], by=ids["new"], kind="open", reason="port moved", actor=AGENT, now=T1
    )
    assert plain.reason == "port moved"


def test_a_scoped_read_counts_only_its_own_projects_hidden_chunks(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    assert trust_sql.corrected_ids(memory.conn) == frozenset()  # control: nothing hidden yet
    memory.settle(ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0)
    assert trust_sql.corrected_ids(memory.conn) == {ids["old"]}
    assert trust_sql.corrected_ids(memory.conn, [SHOP]) == {ids["old"]}
    assert trust_sql.corrected_ids(memory.conn, [BLOG]) == frozenset()
    blog = memory.embed_query("blog database port")
    assert [s.chunk_id for s in memory.nearest(blog, Scope.of(BLOG), 5, -1.0)] == [ids["blog"]]

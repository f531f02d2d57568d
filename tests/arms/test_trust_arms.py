"""Typed corrections as every registered arm answers them, over the real engine: a corrected chunk
never surfaces, a changed chunk ranks below its replacement, an open pair is shown together, and a
memory without settles gets exactly the answers it got before (the final stage changes nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arms.base import Hit, Query
from arms.ltr import LtrArm, LtrParams, gather, hand_model
from arms.registry import build, entry, names
from arms.settled import SettledArm, settle_hits
from engine.api import SETTLEMENT_KINDS, Settlement, SettlementKind
from engine.memory import Memory
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory
from tests.engine.trust_fixtures import SHOP, T0, T1, shop_memory

QUERY = "orders database port"
SEARCHING = [n for n in names() if n != "none"]
AGENT = "agent:5e551011-0000-4000-8000-0000000000aa"


def arm(name: str, memory: Memory) -> SettledArm:
    model = hand_model({"rrf": 1.0}) if entry(name).fitted else None
    return build(name, memory, model)


def found(name: str, memory: Memory, k: int = 4) -> list[str]:
    query = Query(text=QUERY, scope=Scope.of(SHOP), now=T1, k=k)
    return [h.chunk_id for h in arm(name, memory).search(query)]


def test_every_arm_but_none_is_covered_here() -> None:
    assert sorted([*SEARCHING, "none"]) == names()


@pytest.mark.parametrize("name", SEARCHING)
def test_corrected_memory_never_surfaces_in_any_arm_but_is_readable_by_id(
    tmp_path: Path, name: str
) -> None:
    memory, ids = shop_memory(tmp_path)
    assert ids["old"] in found(name, memory)  # control: every arm finds the old port before
    done = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="wrong port", actor=AGENT, now=T0
    )
    after = found(name, memory)
    assert ids["old"] not in after
    assert ids["new"] in after  # the replacement is found
    assert len(after) == 3  # the three other SHOP chunks fill the answer
    assert memory.chunks([ids["old"]], Scope.of(SHOP))[0].corrected  # by id it answers
    memory.undo_settle(done.id, actor=AGENT, now=T1)
    assert ids["old"] in found(name, memory)  # control: undone, it is back


@pytest.mark.parametrize("name", SEARCHING)
def test_a_changed_memory_ranks_below_its_replacement_in_every_arm(
    tmp_path: Path, name: str
) -> None:
    memory, _ = shop_memory(tmp_path)
    before = found(name, memory)
    # The arm's first hit is settled as changed by its last one (arm-agnostic, so the control holds
    # by construction: before the settle the old one ranks above its replacement).
    assert len(before) == 4
    old, new = before[0], before[-1]
    memory.settle(old, by=new, kind="changed", reason="moved", actor="person", now=T0)
    after = found(name, memory)
    assert after == [new, old, *before[1:-1]]  # both shown, the replacement directly above
    (record,) = memory.chunks([old], Scope.of(SHOP))
    assert record.status is not None
    assert record.status.describe() == f"changed on 2026-05-01 (replaced by {new}, settle 1)"


@pytest.mark.parametrize("name", SEARCHING)
def test_an_open_pair_is_shown_together_in_every_arm(tmp_path: Path, name: str) -> None:
    memory, ids = shop_memory(tmp_path)
    first, *_, last = found(name, memory)
    assert found(name, memory, k=1) == [first]  # control: alone at k=1 before the settle
    memory.settle(first, by=ids["blog"], kind="open", reason="?", actor="person", now=T0)
    assert found(name, memory, k=1) == [first]  # a partner outside the scope is never brought in
    memory.settle(first, by=last, kind="open", reason="?", actor="person", now=T0)
    assert found(name, memory, k=2) == [first, last]  # the lowest-ranked partner sits beside it


@pytest.mark.parametrize("name", names())
def test_an_empty_or_all_undone_settlements_table_leaves_every_arm_answer_unchanged(
    tmp_path: Path, name: str
) -> None:
    memory, ids = shop_memory(tmp_path)
    built = arm(name, memory)
    query = Query(text=QUERY, scope=Scope.of(SHOP), now=T1, k=4)
    plain = built.inner.search(query)  # the arm without the final stage
    assert built.search(query) == plain
    # The arm's last hit settled against its first: each kind changes the answer while active.
    first, last = (plain[0].chunk_id, plain[-1].chunk_id) if plain else (ids["old"], ids["new"])
    for kind in SETTLEMENT_KINDS:
        done = memory.settle(first, by=last, kind=kind, reason="r", actor="person", now=T0)
        if name != "none":
            assert built.search(query) != plain  # control: an active settle does change it
        memory.undo_settle(done.id, actor="person", now=T1)
    assert built.search(query) == plain
    assert built.inner.search(query) == plain


def test_ltr_features_do_not_change_on_a_memory_whose_settles_are_undone(tmp_path: Path) -> None:
    memory, ids = shop_memory(tmp_path)
    query = Query(text=QUERY, scope=Scope.of(SHOP), now=T1, k=4)

    def features() -> tuple[list[str], list[list[float]]]:
        found = gather(memory, LtrParams(), query)
        return [r.id for r in found.records], found.matrix.tolist()

    before = features()
    done = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="r", actor="person", now=T0
    )
    assert features() != before  # control: the pools change while the settle is active
    memory.undo_settle(done.id, actor="person", now=T1)
    assert features() == before
    assert isinstance(arm("ltr", memory).inner, LtrArm)


def _fake() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s", project="/p", start="2025-01-01T00:00:00Z")
    for cid in ("a", "b", "c", "d", "e"):
        mem.add_chunk(cid, session="s", text=f"chunk {cid}")
    mem.add_session("t", project="/other", start="2025-01-01T00:00:00Z")
    mem.add_chunk("x", session="t", text="elsewhere")
    return mem


def _settle(sid: int, old: str, new: str, kind: SettlementKind) -> Settlement:
    return Settlement(
        id=sid, old=old, new=new, kind=kind, reason="r", actor="person", time="2026-05-01T09:30:00Z"
    )


HITS = [Hit(chunk_id=c, score=s, via="fts") for c, s in (("a", 0.9), ("b", 0.8), ("c", 0.7))]


def test_the_final_stage_orders_hits_by_hand_worked_rules() -> None:
    mem = _fake()
    query = Query(text="chunk", scope=Scope.of("/p"), now=T1, k=3)
    assert settle_hits(HITS, mem, query) is HITS  # no settles: the very same list
    # a changed by c: c moves directly above a.
    mem.settles = [_settle(1, "a", "c", "changed")]
    assert [h.chunk_id for h in settle_hits(HITS, mem, query)] == ["c", "a", "b"]
    # a changed by e (not a hit): e is brought in above a with a's score, b falls off at k=3.
    mem.settles = [_settle(1, "a", "e", "changed")]
    assert settle_hits(HITS, mem, query) == [
        Hit(chunk_id="e", score=0.9, via="replaces"),
        HITS[0],
        HITS[1],
    ]
    # a changed by x, which lies outside the scope: nothing is brought in.
    mem.settles = [_settle(1, "a", "x", "changed")]
    assert settle_hits(HITS, mem, query) == HITS
    # c changed by a: a already ranks above c, nothing moves (the fake lists it anyway).
    mem.settles = [_settle(1, "c", "a", "changed")]
    assert settle_hits(HITS, mem, query) == HITS
    # a open with c: c moves directly below a; b corrected: it is dropped.
    mem.settles = [_settle(1, "a", "c", "open"), _settle(2, "b", "d", "corrected")]
    assert [h.chunk_id for h in settle_hits(HITS, mem, query)] == ["a", "c"]
    # a open with d (not a hit): d is brought in below a, via "open".
    mem.settles = [_settle(1, "a", "d", "open")]
    assert [(h.chunk_id, h.via) for h in settle_hits(HITS, mem, query)] == [
        ("a", "fts"),
        ("d", "open"),
        ("b", "fts"),
    ]
    # A replacement that is itself corrected is never brought in.
    mem.settles = [_settle(1, "a", "e", "changed"), _settle(2, "e", "d", "corrected")]
    assert settle_hits(HITS, mem, query) == HITS

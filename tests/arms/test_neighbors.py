"""The `neighbors` stage and arm: a chunk gains λ × the best score of its adjacent chunks in its stream."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arms.base import Hit, Query
from arms.cc import CCArm
from arms.neighbors import NeighborsArm, NeighborsParams, propagate
from arms.registry import build, full_canonical
from arms.spec import SpecError, canonical, parse_spec
from engine.chunking import chunk_id
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    text_block,
    ts,
    user_line,
    write_jsonl,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")
AB = Scope.of("/a", "/b")
TOL = 1e-6


def cid(stream: str, index: int) -> str:
    """The id the engine gives chunk `index` of `stream` (the fake's stream is the session id)."""
    return chunk_id(stream, index)


C0, C1, C2, C3, C4 = (cid("s1", i) for i in range(5))
D0, D1 = cid("s2", 0), cid("s2", 1)


def stage_memory() -> FakeMemory:
    """Session s1 (project /a) holds c0..c4 at stream indexes 0..4; session s2 (project /b) d0, d1."""
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    for i, chunk in enumerate((C0, C1, C2, C3, C4)):
        mem.add_chunk(chunk, session="s1", text=f"turn {i}", vector=toward(0.5, 1))
    mem.add_session("s2", project="/b", start="2025-02-01T00:00:00Z")
    mem.add_chunk(D0, session="s2", text="turn 0", vector=toward(0.5, 1))
    mem.add_chunk(D1, session="s2", text="turn 1", vector=toward(0.5, 1))
    return mem


def hit(chunk: str, score: float, via: str = "x") -> Hit:
    return Hit(chunk_id=chunk, score=score, via=via)


# Candidates: c1 0.9, c2 0.5, c4 0.4 (s1) and d0 0.6 (s2, index 0: next to c1's index, another stream).
CANDIDATES = [hit(C1, 0.9), hit(C2, 0.5), hit(C4, 0.4), hit(D0, 0.6)]


def test_each_candidate_gains_lambda_times_its_best_adjacent_candidate() -> None:
    # c1: neighbours c0 (not a candidate) and c2 0.5 -> 0.9 + 0.3·0.5 = 1.05
    # c2: neighbours c1 0.9 and c3 (not a candidate) -> 0.5 + 0.3·0.9 = 0.77
    # c4: neighbour c3 is no candidate -> 0.4; d0: index 0 of s2, c1 sits in s1 -> 0.6 unchanged
    out = propagate(stage_memory(), CANDIDATES, AB, lam=0.3)
    assert [(h.chunk_id, h.via) for h in out] == [
        (C1, "x + neighbor"),
        (C2, "x + neighbor"),
        (D0, "x"),
        (C4, "x"),
    ]
    assert [h.score for h in out] == pytest.approx([1.05, 0.77, 0.6, 0.4], abs=1e-12)


def test_scores_are_read_before_any_gain_so_input_order_does_not_matter() -> None:
    forward = propagate(stage_memory(), CANDIDATES, AB, lam=0.3)
    backward = propagate(stage_memory(), list(reversed(CANDIDATES)), AB, lam=0.3)
    assert forward == backward
    # c2 gains from c1's base 0.9, not from c1's propagated 1.05
    assert {h.chunk_id: h.score for h in forward}[C2] == pytest.approx(0.5 + 0.3 * 0.9)


def test_lambda_zero_leaves_every_score_and_via_unchanged() -> None:
    out = propagate(stage_memory(), CANDIDATES, AB, lam=0.0)
    assert out == sorted(CANDIDATES, key=lambda h: (-h.score, h.chunk_id))


def test_a_negative_neighbour_score_adds_nothing_but_a_positive_one_still_lifts() -> None:
    # z-scores can be negative: c1 -0.5 and c2 0.2 are adjacent. c2 gains 0.3·max(0, -0.5) = 0;
    # c1 gains 0.3·0.2 = 0.06 -> -0.44 (control: propagation still works in the other direction)
    out = propagate(stage_memory(), [hit(C1, -0.5), hit(C2, 0.2)], A, lam=0.3)
    assert [(h.chunk_id, h.via) for h in out] == [(C2, "x"), (C1, "x + neighbor")]
    assert [h.score for h in out] == pytest.approx([0.2, -0.44], abs=1e-12)


def test_expand_lets_an_adjacent_non_candidate_enter_with_the_gain_alone() -> None:
    # c0: next to c1 0.9 -> 0.27; c3: next to c2 0.5 and c4 0.4 -> 0.3·0.5 = 0.15; c5 does not
    # exist; d1: next to d0 0.6 -> 0.18 (project /b, in scope here)
    out = propagate(stage_memory(), CANDIDATES, AB, lam=0.3, expand=True)
    scores = {h.chunk_id: (h.score, h.via) for h in out}
    assert scores[C0] == pytest.approx((0.27, "neighbor"))
    assert scores[C3] == pytest.approx((0.15, "neighbor"))
    assert scores[D1] == pytest.approx((0.18, "neighbor"))
    assert len(out) == 7
    without = propagate(stage_memory(), CANDIDATES, AB, lam=0.3)
    assert C0 not in [h.chunk_id for h in without]  # control: without expand only candidates return
    assert len(without) == 4


def test_a_derived_id_counts_only_where_its_record_really_sits() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_chunk(C0, session="s1", text="turn 0", vector=toward(0.5, 1))
    mem.add_chunk(C1, session="s1", text="turn 1", vector=toward(0.5, 1))
    # An impostor stored under c2's id but at index 0 of another stream: not c1's neighbour.
    mem.add_session("s9", project="/a", start="2025-01-02T00:00:00Z")
    mem.add_chunk(C2, session="s9", text="turn 0", vector=toward(0.5, 1))
    out = propagate(mem, [hit(C1, 1.0)], A, lam=0.5, expand=True)
    assert [(h.chunk_id, h.score) for h in out] == [(C1, 1.0), (C0, 0.5)]  # c0 is the control


def test_the_stage_never_returns_a_chunk_outside_the_scope() -> None:
    only_a = [h.chunk_id for h in propagate(stage_memory(), CANDIDATES, A, lam=0.3, expand=True)]
    assert D0 not in only_a  # a /b candidate handed in is dropped
    assert D1 not in only_a  # and its neighbour never enters
    assert C0 in only_a  # control: an /a neighbour enters under the same call
    both = [h.chunk_id for h in propagate(stage_memory(), CANDIDATES, AB, lam=0.3, expand=True)]
    assert {D0, D1} <= set(both)  # control: with /b in scope both are returned


# --- the arm ------------------------------------------------------------------------------------

Q = "deploy port"


def arm_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    # chunk  text                                   fts  cosine
    # c0     the question                            2    0.7
    # c1     the answer: no query word               0    0.3
    # c2     notes                                   1    0.5
    # c3     unrelated                               0    0.1 (below the floor)
    mem.add_chunk(C0, session="s1", text="what deploy port should we use", vector=toward(0.7, 1))
    mem.add_chunk(C1, session="s1", text="we settled on 8443 after review", vector=toward(0.3, 2))
    mem.add_chunk(C2, session="s1", text="deploy notes", vector=toward(0.5, 3))
    mem.add_chunk(C3, session="s1", text="unrelated", vector=toward(0.1, 4))
    mem.add_query(Q, e0())
    return mem


def run(params: NeighborsParams, mem: FakeMemory | None = None, k: int = 10) -> list[Hit]:
    arm = NeighborsArm(mem if mem is not None else arm_memory(), params)
    return arm.search(Query(text=Q, scope=A, now=NOW, k=k))


def test_the_arm_lifts_the_answer_next_to_the_question_over_cc() -> None:
    # cc: vector min-max over 0.7, 0.5, 0.3 -> c0 1, c2 0.5, c1 0; fts over 2, 1 -> c0 1, c2 0
    # fused (weight 0.5): c0 1.0, c2 0.25, c1 0.0
    base = CCArm(arm_memory()).search(Query(text=Q, scope=A, now=NOW))
    assert [h.chunk_id for h in base] == [C0, C2, C1]
    # λ 0.3: c1 gains 0.3·max(c0 1.0, c2 0.25) = 0.3; c0 gains 0.3·c1's 0 = 0; c2 gains 0.3·0 = 0
    hits = run(NeighborsParams())
    assert [(h.chunk_id, h.via) for h in hits] == [
        (C0, "cc (fts+vector)"),
        (C1, "cc (vector) + neighbor"),
        (C2, "cc (fts+vector)"),
    ]
    assert [h.score for h in hits] == pytest.approx([1.0, 0.3, 0.25], abs=TOL)


def test_the_arm_with_lambda_zero_is_its_base() -> None:
    base = CCArm(arm_memory()).search(Query(text=Q, scope=A, now=NOW))
    assert run(NeighborsParams(lam=0.0)) == base


def test_the_arm_over_rrf_uses_the_rrf_scores() -> None:
    # rrf: vector ranks c0 1, c2 2, c1 3; fts ranks c0 1, c2 2 -> c0 2/61, c2 2/62, c1 1/63
    # λ 0.3: c0 + 0.3·(1/63) = 0.037549; c2 + 0.3·(1/63) = 0.037020; c1 + 0.3·(2/61) = 0.025709
    hits = run(NeighborsParams(base="rrf"))
    assert [(h.chunk_id, h.via) for h in hits] == [
        (C0, "rrf (fts+vector) + neighbor"),
        (C2, "rrf (fts+vector) + neighbor"),
        (C1, "rrf (vector) + neighbor"),
    ]
    expected = [2 / 61 + 0.3 / 63, 2 / 62 + 0.3 / 63, 1 / 63 + 0.3 * 2 / 61]
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-12)


def test_the_arm_with_expand_brings_in_a_neighbour_no_channel_found() -> None:
    # c3 is in no pool; next to c2 (0.25) and no c4 -> 0.3·0.25 = 0.075
    hits = run(NeighborsParams(expand=True))
    assert [h.chunk_id for h in hits] == [C0, C1, C2, C3]
    assert hits[-1].score == pytest.approx(0.075, abs=TOL)
    assert hits[-1].via == "neighbor"
    assert C3 not in [h.chunk_id for h in run(NeighborsParams())]  # control: not without expand


def test_the_pool_is_taken_whole_before_the_cut_to_k() -> None:
    mem = arm_memory()
    hits = run(NeighborsParams(), mem=mem, k=2)
    assert [h.chunk_id for h in hits] == [C0, C1]  # c1 was third in cc's own top 3
    assert mem.calls_to("nearest")[0][2:] == (20, 0.2)
    assert mem.calls_to("lexical")[0][2] == 20
    assert len(mem.calls_to("chunks")) == 1  # candidates' records fetched once


@pytest.mark.parametrize("base", ["cc", "rrf"])
def test_a_deep_pool_of_one_hundred_reaches_the_stage(base: str) -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    for i in range(130):
        mem.add_chunk(cid("s1", i), session="s1", text="key", vector=toward(0.3 + 0.005 * i, 1))
    mem.add_query("key", e0())
    arm = NeighborsArm(mem, NeighborsParams(pool=100, base=base))  # type: ignore[arg-type]
    hits = arm.search(Query(text="key", scope=A, now=NOW, k=300))
    assert mem.calls_to("nearest")[0][2] == 100
    assert mem.calls_to("lexical")[0][2] == 100
    # vector pool: the 100 highest cosines (29..129); fts pool: 100 tied hits, by id; union > 100
    pools = {s.chunk_id for s in mem.nearest(mem.embed_query("key"), A, 100, 0.2)} | {
        s.chunk_id for s in mem.lexical("key", A, 100)
    }
    assert len(pools) > 100
    assert {h.chunk_id for h in hits} == pools
    assert len(mem.calls_to("chunks")) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("neighbors(lam=1.5)", "neighbors: lam must be <= 1.0, got 1.5"),
        ("neighbors(lam=-0.1)", "neighbors: lam must be >= 0.0, got -0.1"),
        ("neighbors(base='walk')", "neighbors: base must be 'cc' or 'rrf', got 'walk'"),
        ("neighbors(pool=0)", "neighbors: pool must be >= 1, got 0"),
        ("neighbors(min_score=-2)", "neighbors: min_score must be >= -1.0, got -2.0"),
        ("neighbors(expand=1)", "neighbors: expand must be bool, got 1"),
    ],
)
def test_bad_parameters_are_refused_naming_the_arm_and_parameter(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(spec, FakeMemory())
    ok = build("neighbors(lam=1,base='rrf',expand=True,pool=100)", FakeMemory())  # control
    assert isinstance(ok.inner, NeighborsArm)


def test_the_params_class_itself_refuses_a_non_bool_expand_and_an_unknown_base() -> None:
    with pytest.raises(SpecError, match="neighbors: expand must be True or False, got 1"):
        NeighborsParams(expand=1)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="neighbors: base must be one of cc, rrf, got 'fts'"):
        NeighborsParams(base="fts")  # type: ignore[arg-type]
    assert NeighborsParams(expand=True, base="rrf").expand is True  # control


def test_the_canonical_spec_spells_every_default_and_round_trips() -> None:
    text = full_canonical("neighbors(lam=0)")
    assert text == "neighbors(base='cc',expand=False,lam=0.0,min_score=0.2,pool=20,stem=False)"
    assert canonical(parse_spec(text)) == text
    assert full_canonical(text) == text


def test_on_the_real_engine_the_next_chunk_of_a_stream_enters_with_expand(tmp_path: Path) -> None:
    # One session of three ~600-character messages: each is its own chunk (900-character budget), at
    # stream indexes 0, 1, 2. Only chunk 0 has the query's words; the vector channel is shut (floor 1).
    project = "/home/dev/proj"
    sid = "88888888-0000-4000-8000-000000000001"
    env: dict[str, Any] = {"session_id": sid, "cwd": project}
    pad = " ".join(["lorem"] * 100)
    lines = [user_line(f"which gateway port for staging? {pad}", uuid="u", timestamp=ts(1), **env)]
    lines += assistant_lines(
        [text_block(f"We settled on 8443. {pad}")],
        message_id="m",
        uuids=["a"],
        parent="u",
        timestamp=ts(2),
        **env,
    )
    lines.append(
        user_line(f"thanks, moving on. {pad}", uuid="u2", parent="a", timestamp=ts(3), **env)
    )
    write_jsonl(tmp_path / "c" / "projects" / "-home-dev-proj" / f"{sid}.jsonl", lines)
    memory = Memory(tmp_path / "m.db", HashEmbedder(256))
    memory.import_paths([tmp_path / "c"])
    scope = Scope.of(project)
    query = Query(text="gateway port", scope=scope, now=NOW)
    # cc: one lexical hit (no spread) -> 1, vector channel empty -> 0; weight 0.5 -> 0.5.
    # expand: its successor enters with 0.3·0.5 = 0.15; it has no predecessor.
    hits = build("neighbors(expand=True,min_score=1.0)", memory).search(query)
    records = {r.id: r for r in memory.chunks([h.chunk_id for h in hits], scope)}
    assert [(records[h.chunk_id].index, h.via) for h in hits] == [(0, "cc (fts)"), (1, "neighbor")]
    assert [h.score for h in hits] == pytest.approx([0.5, 0.15])
    assert "8443" in records[hits[1].chunk_id].text
    plain = build("neighbors(min_score=1.0)", memory).search(query)
    assert len(plain) == 1  # control: without expand only the lexical hit is returned

"""The `cc` arm: convex combination of per-query min-max or z-score normalised vector and BM25 scores."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arms.base import Query
from arms.cc import CCArm, CCParams, normalise
from arms.registry import build, full_canonical
from arms.spec import SpecError, canonical, parse_spec
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
TEXT = "commit deadbeef"
TOL = 1e-6  # the fake's vectors are float32: cosines match the hand numbers to about 1e-7


def memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    # chunk   lexical tokens   cosine   in which pools (floor 0.2)
    # a       3                0.8      both
    # b       1                0.0      fts only
    # c       0                0.9      vector only
    # d       1                0.5      both
    # e       0                0.1      neither
    mem.add_chunk("a", session="s1", text="commit deadbeef commit", vector=toward(0.8, 1))
    mem.add_chunk("b", session="s1", text="deadbeef", vector=toward(0.0, 2))
    mem.add_chunk("c", session="s1", text="unrelated", vector=toward(0.9, 3))
    mem.add_chunk("d", session="s1", text="commit notes", vector=toward(0.5, 4))
    mem.add_chunk("e", session="s1", text="unrelated", vector=toward(0.1, 5))
    mem.add_query(TEXT, e0())
    return mem


def search(params: CCParams, k: int = 10, mem: FakeMemory | None = None) -> list[Any]:
    arm = CCArm(mem if mem is not None else memory(), params)
    return [
        (h.chunk_id, h.score, h.via) for h in arm.search(Query(text=TEXT, scope=A, now=NOW, k=k))
    ]


def test_min_max_fusion_matches_the_hand_worked_scores() -> None:
    # vector pool 0.9 (c), 0.8 (a), 0.5 (d): min-max c 1, a (0.8-0.5)/0.4 = 0.75, d 0; b absent -> 0
    # fts pool 3 (a), 1 (b), 1 (d): min-max a (3-1)/2 = 1, b 0, d 0; c absent -> 0
    # weight 0.5: a 0.5·0.75 + 0.5·1 = 0.875, c 0.5·1 = 0.5, b 0, d 0 (b before d by id)
    hits = search(CCParams())
    assert [(cid, via) for cid, _, via in hits] == [
        ("a", "cc (fts+vector)"),
        ("c", "cc (vector)"),
        ("b", "cc (fts)"),
        ("d", "cc (fts+vector)"),
    ]
    assert [score for _, score, _ in hits] == pytest.approx([0.875, 0.5, 0.0, 0.0], abs=TOL)
    assert "e" not in [cid for cid, _, _ in hits]  # below the floor and no word: in no pool


def test_the_weight_moves_the_ranking_between_the_channels() -> None:
    # weight 1: vector only, c 1 > a 0.75 > b = d = 0.  weight 0: fts only, a 1 > b = c = d = 0.
    vector_only = search(CCParams(weight=1.0))
    assert [cid for cid, _, _ in vector_only] == ["c", "a", "b", "d"]
    assert [s for _, s, _ in vector_only] == pytest.approx([1.0, 0.75, 0.0, 0.0], abs=TOL)
    words_only = search(CCParams(weight=0.0))
    assert [cid for cid, _, _ in words_only] == ["a", "b", "c", "d"]
    assert [s for _, s, _ in words_only] == pytest.approx([1.0, 0.0, 0.0, 0.0], abs=TOL)
    # weight 0.2: a 0.2·0.75 + 0.8·1 = 0.95, c 0.2·1 = 0.2
    assert [s for _, s, _ in search(CCParams(weight=0.2), k=2)] == pytest.approx(
        [0.95, 0.2], abs=TOL
    )


def test_z_score_fusion_matches_hand_worked_scores_and_absent_gets_the_channel_minimum() -> None:
    # vector pool 0.9, 0.8, 0.5: mean 2.2/3, deviations 0.5/3, 0.2/3, -0.7/3, population variance
    # (0.25 + 0.04 + 0.49) / 9 / 3 = 0.78/27, so z = deviation·3 · sqrt(3/0.78) / 3:
    # c 0.5·√(3/0.78) = 0.98058, a 0.2·√(3/0.78) = 0.39223, d -0.7·√(3/0.78) = -1.37281 = min
    # fts pool 3, 1, 1: mean 5/3, variance (16/9 + 4/9 + 4/9) / 3 = 8/9, z: a √2, b = d = -1/√2 = min
    root = math.sqrt(3 / 0.78)
    z_c, z_a, z_d = 0.5 * root, 0.2 * root, -0.7 * root
    z_fts_a, z_fts_low = math.sqrt(2), -1 / math.sqrt(2)
    # b is absent from the vector pool and gets its minimum z_d; c is absent from fts and gets z_fts_low.
    # Had absence scored 0 (the mean), b would sit at 0.5·0 + 0.5·(-0.707) = -0.354, above d.
    hits = search(CCParams(norm="zscore"))
    assert [cid for cid, _, _ in hits] == ["a", "c", "b", "d"]
    expected = [
        0.5 * z_a + 0.5 * z_fts_a,  # 0.90322
        0.5 * z_c + 0.5 * z_fts_low,  # 0.13674
        0.5 * z_d + 0.5 * z_fts_low,  # -1.03996
        0.5 * z_d + 0.5 * z_fts_low,  # -1.03996, the same: b before d by id
    ]
    assert [s for _, s, _ in hits] == pytest.approx(expected, abs=TOL)
    assert expected[0] == pytest.approx(0.90322, abs=1e-5)


def test_normalise_by_hand_including_a_pool_with_no_spread_and_an_empty_pool() -> None:
    assert normalise([4.0, 2.0, 1.0], "minmax") == ({4.0: 1.0, 2.0: 1 / 3, 1.0: 0.0}, 0.0)
    # [4, 2, 0]: mean 2, population sd √(8/3) = 1.63299; z 1.22474, 0, -1.22474; absent -1.22474
    z, absent = normalise([4.0, 2.0, 0.0], "zscore")
    assert z == pytest.approx({4.0: 1.22474, 2.0: 0.0, 0.0: -1.22474}, abs=1e-5)
    assert absent == z[0.0]
    # one hit, or all tied: nothing to normalise; found counts 1, absent 0, in both modes
    assert normalise([7.5], "zscore") == ({7.5: 1.0}, 0.0)
    assert normalise([3.0, 3.0], "minmax") == ({3.0: 1.0}, 0.0)
    assert normalise([], "minmax") == ({}, 0.0)


def test_a_single_lexical_hit_still_counts_as_its_channels_best() -> None:
    mem = memory()
    mem.add_chunk("k", session="s1", text="zzkey", vector=toward(0.3, 6))
    mem.add_query("zzkey", e0())
    # vector pool 0.9 (c), 0.8 (a), 0.5 (d), 0.3 (k): min-max over 0.6: c 1, a 5/6, d 1/3, k 0
    # fts pool k alone: no spread, so k gets 1.  weight 0.4: k 0.6·1 = 0.6, c 0.4, a 1/3, d 2/15
    hits = CCArm(mem, CCParams(weight=0.4)).search(Query(text="zzkey", scope=A, now=NOW))
    assert [h.chunk_id for h in hits] == ["k", "c", "a", "d"]
    assert [h.score for h in hits] == pytest.approx([0.6, 0.4, 1 / 3, 2 / 15], abs=TOL)
    # control: with all the weight on vectors the key chunk drops to last (its min-max cosine is 0)
    vector_only = CCArm(mem, CCParams(weight=1.0)).search(Query(text="zzkey", scope=A, now=NOW))
    assert [h.chunk_id for h in vector_only][-1] == "k"


def test_bm25_from_the_real_engine_is_higher_for_the_better_match(tmp_path: Path) -> None:
    # FTS5's bm25() is negative with lower better; the engine returns -bm25. If cc read it the other
    # way round, lexical-only fusion would put the weaker match first.
    project = "/home/dev/proj"
    root = tmp_path / "c"
    for n, answer in (
        (1, "gateway gateway gateway timeout."),
        (2, "The gateway was mentioned once among many other ordinary words in this reply."),
    ):
        sid = f"77777777-0000-4000-8000-{n:012d}"
        env: dict[str, Any] = {"session_id": sid, "cwd": project}
        lines = [user_line("status?", uuid=f"{n}-u", timestamp=ts(n), **env)]
        lines += assistant_lines(
            [text_block(answer)],
            message_id=f"{n}-m",
            uuids=[f"{n}-a"],
            parent=f"{n}-u",
            timestamp=ts(n, 30),
            **env,
        )
        write_jsonl(root / "projects" / "-home-dev-proj" / f"{sid}.jsonl", lines)
    memory = Memory(tmp_path / "m.db", HashEmbedder(256))
    memory.import_paths([root])
    scope = Scope.of(project)
    raw = memory.lexical("gateway", scope, 10)
    assert len(raw) == 2
    assert raw[0].score > raw[1].score > 0  # higher is better, and positive
    strong = memory.chunks([raw[0].chunk_id], scope)[0]
    assert "gateway gateway gateway" in strong.text
    hits = CCArm(memory, CCParams(weight=0.0, min_score=1.0)).search(
        Query(text="gateway", scope=scope, now=NOW)
    )
    assert [(h.chunk_id, h.score) for h in hits] == [
        (raw[0].chunk_id, 1.0),
        (raw[1].chunk_id, 0.0),
    ]


def test_scope_keeps_other_projects_out_of_both_the_hits_and_the_normalisation() -> None:
    mem = memory()
    mem.add_session("sb", project="/b", start="2025-02-01T00:00:00Z")
    # best in both channels; in scope it would become each channel's maximum
    mem.add_chunk("z", session="sb", text="commit deadbeef commit deadbeef", vector=toward(0.95, 6))
    only_a = search(CCParams(), mem=mem)
    assert "z" not in [cid for cid, _, _ in only_a]
    assert only_a == search(CCParams())  # same scores as with no project B at all
    both = CCArm(mem).search(Query(text=TEXT, scope=Scope.of("/a", "/b"), now=NOW))
    assert both[0].chunk_id == "z"  # control: with B in scope it is the first hit
    assert both[0].score == pytest.approx(1.0, abs=TOL)


def test_pools_are_pool_deep_whatever_k_and_the_result_is_cut_to_k() -> None:
    mem = memory()
    hits = search(CCParams(), k=2, mem=mem)
    assert [cid for cid, _, _ in hits] == ["a", "c"]
    assert mem.calls_to("nearest")[0][2:] == (20, 0.2)
    assert mem.calls_to("lexical")[0][2] == 20
    # pool 1: vector c alone, fts a alone, each with no spread: c 0.5·1, a 0.5·1, tie by id
    assert search(CCParams(pool=1)) == [
        ("a", 0.5, "cc (fts)"),
        ("c", 0.5, "cc (vector)"),
    ]


def deep_memory() -> FakeMemory:
    """150 chunks: cosine rises with the number, lexical matches fall (6 for n000-n024 ... 1)."""
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    for i in range(150):
        words = " ".join(["key"] * (6 - i // 25))
        mem.add_chunk(f"n{i:03d}", session="s1", text=words, vector=toward(0.3 + 0.004 * i, 1))
    mem.add_query("key", e0())
    return mem


def test_a_deep_pool_of_one_hundred_fuses_the_union_of_both_channels() -> None:
    mem = deep_memory()
    arm = CCArm(mem, CCParams(pool=100, weight=0.6))
    hits = arm.search(Query(text="key", scope=A, now=NOW, k=200))
    assert mem.calls_to("nearest")[0][2] == 100
    assert mem.calls_to("lexical")[0][2] == 100
    # vector pool n050-n149, fts pool n000-n099 (6, 5, 4, 3 matches): the union is all 150
    assert len(hits) == 150
    # n149: vector max (1) and no word hit in the pool -> 0.6; n148: 0.6·(0.892-0.5)/(0.896-0.5)
    assert hits[0].chunk_id == "n149"
    assert hits[0].score == pytest.approx(0.6, abs=TOL)
    assert hits[1].chunk_id == "n148"
    assert hits[1].score == pytest.approx(0.6 * 98 / 99, abs=1e-5)
    # n000: fts max (1), absent from the vector pool (0) -> 0.4; control against a shallow pool
    assert {h.chunk_id: h.score for h in hits}["n000"] == pytest.approx(0.4, abs=TOL)
    shallow = CCArm(deep_memory(), CCParams(pool=20)).search(
        Query(text="key", scope=A, now=NOW, k=200)
    )
    assert len(shallow) == 40


def test_the_same_query_gives_the_same_hits_and_ties_fall_by_chunk_id() -> None:
    mem = memory()
    first = CCArm(mem).search(Query(text=TEXT, scope=A, now=NOW))
    second = CCArm(mem).search(Query(text=TEXT, scope=A, now=NOW))
    assert first == second
    # b and d tie at 0 in min-max (see the first test): id order, whatever the insertion order
    assert [h.chunk_id for h in first][2:] == ["b", "d"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cc(weight=1.5)", "cc: weight must be <= 1.0, got 1.5"),
        ("cc(weight=-0.1)", "cc: weight must be >= 0.0, got -0.1"),
        ("cc(norm='l2')", "cc: norm must be 'minmax' or 'zscore', got 'l2'"),
        ("cc(pool=0)", "cc: pool must be >= 1, got 0"),
        ("cc(min_score=2)", "cc: min_score must be <= 1.0, got 2.0"),
        ("cc(weight=True)", "cc: weight must be float, got True"),
    ],
)
def test_bad_parameters_are_refused_naming_the_arm_and_parameter(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(spec, FakeMemory())
    ok = build("cc(weight=1,norm='zscore',pool=100)", FakeMemory())  # control
    assert isinstance(ok.inner, CCArm)


def test_the_params_class_itself_refuses_an_unknown_norm() -> None:
    with pytest.raises(SpecError, match="cc: norm must be one of minmax, zscore, got 'max'"):
        CCParams(norm="max")  # type: ignore[arg-type]
    assert CCParams(norm="zscore").norm == "zscore"  # control


def test_the_canonical_spec_spells_every_default_and_round_trips() -> None:
    text = full_canonical("cc(weight=1)")
    assert text == "cc(min_score=0.2,norm='minmax',pool=20,stem=False,weight=1.0)"
    assert canonical(parse_spec(text)) == text
    assert full_canonical(text) == text
    assert full_canonical("cc") == "cc(min_score=0.2,norm='minmax',pool=20,stem=False,weight=0.5)"

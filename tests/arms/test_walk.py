"""The `walk` arm: hop 1, echo rule, seeds, blend, graph spread, episode hop, fusion, known failure."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from arms.base import Hit, Query
from arms.rrf import RRFArm
from arms.walk import WalkArm, WalkParams
from engine.model import Author
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")
NO_BLEND = WalkParams(blend_k=0)


def jan(day: int) -> str:
    return f"2025-01-{day:02d}T00:00:00Z"


def q(text: str, k: int = 10, scope: Scope = A) -> Query:
    return Query(text=text, scope=scope, now=NOW, k=k)


def triples(hits: list[Hit]) -> list[tuple[str, float, str]]:
    return [(h.chunk_id, round(h.score, 6), h.via) for h in hits]


# --- echo rule ---------------------------------------------------------------------------------


def test_the_echo_rule_needs_at_least_fifteen_characters() -> None:
    arm = WalkArm(FakeMemory())
    text = "log: ABCDEFGHIJKLMNOP seen"
    assert not arm.is_echo(text, "abcdefghijklmn")  # 14 characters
    assert arm.is_echo(text, "abcdefghijklmno")  # 15 characters, case-insensitive
    assert not arm.is_echo("log: nothing", "abcdefghijklmno")  # 15, but not contained


def echo_memory(query_text: str) -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk("echo", session="s1", text="ran ABCDEFGHIJKLMNO ok", vector=toward(0.9, 1))
    mem.add_chunk("plain", session="s1", text="other words", vector=toward(0.7, 2))
    mem.add_query(query_text, e0())
    return mem


def test_a_fifteen_character_query_contained_in_a_chunk_demotes_it_by_0_35() -> None:
    hits = WalkArm(echo_memory("abcdefghijklmno"), NO_BLEND).search(q("abcdefghijklmno"))
    # echo: 0.9 - 0.35 = 0.55 < plain 0.7. Returned scores stay raw.
    assert triples(hits) == [("plain", 0.7, "seed"), ("echo", 0.9, "seed")]


def test_a_fourteen_character_query_is_never_an_echo() -> None:
    hits = WalkArm(echo_memory("abcdefghijklmn"), NO_BLEND).search(q("abcdefghijklmn"))
    assert triples(hits) == [("echo", 0.9, "seed"), ("plain", 0.7, "seed")]


# --- seeds -------------------------------------------------------------------------------------


def test_seeds_are_the_first_three_non_echo_hits_with_echoes_only_filling() -> None:
    query_text = "find the thing please"  # 21 characters
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk("e1", session="s1", text=f"x {query_text} y", vector=toward(0.95, 1))
    mem.add_chunk("a", session="s1", text="a", vector=toward(0.9, 2))
    mem.add_chunk("e2", session="s1", text=f"{query_text}!", vector=toward(0.85, 3))
    mem.add_chunk("b", session="s1", text="b", vector=toward(0.8, 4))
    mem.add_query(query_text, e0())
    hits = WalkArm(mem, NO_BLEND).search(q(query_text))
    via = {h.chunk_id: h.via for h in hits}
    # Two non-echo hits (a, b), so the first echo in score order (e1) fills the third seat.
    assert via == {"a": "seed", "b": "seed", "e1": "seed", "e2": "vector"}
    # Fused order: a 0.9, b 0.8, e1 0.95-0.35=0.60, e2 0.85-0.35=0.50.
    assert [h.chunk_id for h in hits] == ["a", "b", "e1", "e2"]
    # Hop 1 asked for 2k neighbours at the 0.20 floor.
    assert mem.calls_to("nearest")[0][2:] == (2 * 10, 0.20)


# --- blend -------------------------------------------------------------------------------------


def blend_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk("seed", session="s1", text="s", vector=[0.6, 0.8, 0, 0, 0, 0, 0, 0])
    mem.add_chunk("side", session="s1", text="x", vector=[0, 1.0, 0, 0, 0, 0, 0, 0])
    mem.add_query("blend me", e0())
    return mem


def test_the_blend_vector_is_normalized_0_65_query_plus_0_35_seed() -> None:
    mem = blend_memory()
    WalkArm(mem).search(q("blend me"))
    blend_call = mem.calls_to("nearest")[1]
    # 0.65 * (1, 0) + 0.35 * (0.6, 0.8) = (0.86, 0.28), then normalised.
    expected = np.array([0.86, 0.28, 0, 0, 0, 0, 0, 0]) / math.hypot(0.86, 0.28)
    assert np.asarray(blend_call[0]) == pytest.approx(expected, abs=1e-6)
    assert blend_call[2:] == (5, 0.20)


def test_blend_hits_enter_the_pool_with_their_cosine_to_the_blend_vector() -> None:
    hits = WalkArm(blend_memory()).search(q("blend me"))
    norm = math.hypot(0.86, 0.28)
    assert triples(hits) == [
        # The seed's blend cosine (0.86*0.6 + 0.28*0.8)/norm beats its hop-1 0.6: max wins, via blend.
        ("seed", round((0.86 * 0.6 + 0.28 * 0.8) / norm, 6), "blend"),
        ("side", round(0.28 / norm, 6), "blend"),  # cosine 0 to q: reachable only by blend
    ]
    without = WalkArm(blend_memory(), NO_BLEND).search(q("blend me"))
    assert triples(without) == [("seed", 0.6, "seed")]  # control: no blend, no side chunk


# --- graph spread ------------------------------------------------------------------------------


def graph_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s0", project="/a", start=jan(1))
    mem.add_chunk("seed", session="s0", text="s", vector=toward(0.9, 1))
    mem.add_edit("s0", "src/app.py", count=3)
    for i in range(8):  # eight later sessions edited the same file
        sid = f"g{i}"
        mem.add_session(sid, project="/a", start=jan(10 + i))
        mem.add_edit(sid, "src/app.py")
        # Cosines 0.05 .. 0.12: below the hop-1 floor, so only the graph can reach them.
        mem.add_chunk(f"c{i}", session=sid, text="t", vector=toward(0.05 + 0.01 * i, 2 + i % 6))
    mem.add_query("graph me", e0())
    return mem


def test_graph_spread_keeps_the_best_six_per_seed_boosted_by_1_10() -> None:
    mem = graph_memory()
    hits = WalkArm(mem, NO_BLEND).search(q("graph me"))
    assert triples(hits) == [("seed", 0.9, "seed")] + [
        (f"c{i}", round((0.05 + 0.01 * i) * 1.10, 6), "graph") for i in (7, 6, 5, 4, 3, 2)
    ]
    assert mem.calls_to("files_for_session")[0][::2] == ("s0", 4)
    assert mem.calls_to("sessions_for_file")[0][2:] == (12, "s0")
    # Control: with a cap of 8 the two weakest come back too.
    wide = WalkArm(graph_memory(), WalkParams(blend_k=0, graph_cap=8)).search(q("graph me"))
    assert {h.chunk_id for h in wide} == {"seed"} | {f"c{i}" for i in range(8)}


# --- episode hop -------------------------------------------------------------------------------


def episode_memory(previous_project: str) -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project=previous_project, start=jan(1))
    mem.add_chunk("prev", session="s1", text="p", vector=toward(0.10, 1))
    mem.add_chunk("prev-weak", session="s1", text="p", vector=toward(0.05, 2))
    mem.add_session("s2", project="/a", start=jan(2))
    mem.add_chunk("seed", session="s2", text="s", vector=toward(0.9, 3))
    mem.add_session("s3", project="/a", start=jan(3))
    mem.add_chunk("later", session="s3", text="l", vector=toward(0.15, 4))
    mem.add_query("episode", e0())
    return mem


def test_the_episode_hop_adds_the_previous_sessions_best_chunk_boosted_by_1_10() -> None:
    everywhere = Scope.everywhere()
    hits = WalkArm(episode_memory("/a"), NO_BLEND).search(q("episode", scope=everywhere))
    # The later session s3 is not the previous one, so its chunk is not reached.
    assert triples(hits) == [("seed", 0.9, "seed"), ("prev", round(0.10 * 1.10, 6), "episode")]
    # Control: the same earlier session in another project is not this session's previous one.
    other = WalkArm(episode_memory("/b"), NO_BLEND).search(q("episode", scope=everywhere))
    assert triples(other) == [("seed", 0.9, "seed")]


# --- fusion ------------------------------------------------------------------------------------


def test_fusion_applies_the_provenance_rerank_to_the_pool() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk(
        "scaf", session="s1", text="<command-args>x</command-args>", vector=toward(0.9, 1)
    )
    mem.add_chunk("tool", session="s1", text="ok", vector=toward(0.8, 2), author=Author.TOOL_RESULT)
    mem.add_chunk("user", session="s1", text="u", vector=toward(0.5, 3), author=Author.USER)
    mem.add_chunk("mech", session="s1", text="[Bash: ls]", vector=toward(0.4, 4))
    mem.add_query("fuse", e0())
    hits = WalkArm(mem, NO_BLEND).search(q("fuse"))
    # scaf 0.9-0.30=0.60, tool 0.8, user 0.5+0.15 primacy=0.65, mech 0.4 (no mechanic penalty here).
    assert [h.chunk_id for h in hits] == ["tool", "user", "scaf", "mech"]
    assert [h.score for h in hits] == pytest.approx([0.8, 0.5, 0.9, 0.4], abs=1e-6)


# --- the two fixtures the benchmark's authors measured -------------------------------------------

HASH = "9f3c2a1b7e4d5f6071829304a5b6c7d8e9f0a1b2"


def known_failure_memory() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk(
        "u1",
        session="s1",
        text="we should fix the login race",
        vector=toward(0.45, 2),
        author=Author.USER,
    )
    mem.add_chunk("a1", session="s1", text="looking at the refresh path", vector=toward(0.40, 3))
    mem.add_chunk("a2", session="s1", text="tests pass now", vector=toward(0.35, 4))
    mem.add_session("s2", project="/a", start=jan(2))
    # The answer: the only chunk holding the hash verbatim, so it is an echo of the query.
    mem.add_chunk(
        "gold",
        session="s2",
        text=f"commit {HASH}\n    fix login race",
        vector=toward(0.80, 1),
        author=Author.TOOL_RESULT,
    )
    mem.add_query(HASH, e0())
    return mem


def test_known_failure_walk_ranks_the_verbatim_hash_chunk_below_where_rrf_puts_it() -> None:
    mem = known_failure_memory()
    rrf = [h.chunk_id for h in RRFArm(mem).search(q(HASH))]
    walk = [h.chunk_id for h in WalkArm(mem).search(q(HASH))]
    assert rrf.index("gold") == 0  # vector rank 1 and the only lexical hit
    # Walk: gold (0.80) is an echo, 0.80 - 0.35 = 0.45, below the three seeds' blend scores (~0.69 to
    # ~0.74), and the User seed u1 gains +0.15 primacy on top: gold falls to last.
    assert walk.index("gold") == 3
    assert walk.index("gold") > rrf.index("gold")
    # Control: without the echo demotion gold would sit second, behind only the primacy-boosted u1.
    no_echo = [h.chunk_id for h in WalkArm(mem, WalkParams(echo_penalty=0.0)).search(q(HASH))]
    assert no_echo[:2] == ["u1", "gold"]
    # At k = 3 the answer is pushed out of walk's list entirely, while rrf still returns it first.
    assert "gold" not in [h.chunk_id for h in WalkArm(mem).search(q(HASH, k=3))]
    assert RRFArm(mem).search(q(HASH, k=3))[0].chunk_id == "gold"


def graph_only_memory(*, shared_edit: bool) -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=jan(1))
    mem.add_chunk("q1", session="s1", text="why did token refresh break", vector=toward(0.8, 1))
    mem.add_edit("s1", "src/auth.py", count=2)
    mem.add_session("s2", project="/a", start=jan(5))
    # The answer: cosine 0.15 (below every floor) and no query word, reachable only via the file.
    mem.add_chunk(
        "answer", session="s2", text="Decided: sliding expiry stays", vector=toward(0.15, 2)
    )
    mem.add_edit("s2", "src/auth.py" if shared_edit else "docs/notes.md")
    mem.add_query("why did token refresh break", e0())
    return mem


def test_an_answer_reachable_only_through_a_shared_file_edit_is_found_by_walk_not_rrf() -> None:
    query = q("why did token refresh break")
    mem = graph_only_memory(shared_edit=True)
    walk = WalkArm(mem).search(query)
    assert ("answer", round(0.15 * 1.10, 6), "graph") in triples(walk)
    rrf = [h.chunk_id for h in RRFArm(mem).search(query)]
    assert rrf == ["q1"]  # control: rrf works on this memory, it just cannot reach the answer
    # Control: without the shared file the walk cannot reach it either.
    unlinked = WalkArm(graph_only_memory(shared_edit=False)).search(query)
    assert [h.chunk_id for h in unlinked] == ["q1"]

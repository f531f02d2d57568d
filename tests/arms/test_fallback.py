"""The `fallback` arm: decayed vector hits, a lexical top-up below the 0.5 gate, `recall` rerank."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from arms.base import Query
from arms.fallback import FallbackArm, FallbackParams
from engine.model import Author
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 6, 1, tzinfo=UTC)
A = Scope.of("/a")


def _ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def memory(best_cosine: float, *, vector_ts: str | None = None) -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=None)
    mem.add_chunk("v", session="s1", text="alpha beta", vector=toward(best_cosine, 1), ts=vector_ts)
    mem.add_chunk("lex", session="s1", text="needle here", vector=toward(0.0, 2), ts=None)
    mem.add_query("needle", e0())
    return mem


def result(mem: FakeMemory, k: int = 10) -> list[tuple[str, float, str]]:
    hits = FallbackArm(mem).search(Query(text="needle", scope=A, now=NOW, k=k))
    # Rounded so that float32 cosines compare equal to the hand-worked decimals.
    return [(h.chunk_id, round(h.score, 6), h.via) for h in hits]


def test_a_best_cosine_of_0_49_opens_the_gate_and_lexical_hits_enter() -> None:
    got = result(memory(0.49))
    assert got == [
        ("v", 0.49, "vector"),
        ("lex", 0.40, "fallback-fts"),
    ]


def test_a_best_cosine_of_0_51_keeps_the_gate_shut() -> None:
    mem = memory(0.51)
    got = result(mem)
    assert got == [("v", 0.51, "vector")]
    assert mem.calls_to("lexical") == []  # the lexical channel did not even run
    # Control: the same lexical chunk is found once the vector channel is weak.
    assert "lex" in [cid for cid, _, _ in result(memory(0.49))]


def test_lexical_hits_enter_at_0_45_decayed_or_0_40_undated() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=None)
    mem.add_chunk("v", session="s1", text="alpha", vector=toward(0.3, 1), ts=None)
    mem.add_chunk("dated", session="s1", text="needle", vector=toward(0.0, 2), ts=_ago(90))
    mem.add_chunk("undated", session="s1", text="needle", vector=toward(0.0, 3), ts=None)
    mem.add_chunk("broken", session="s1", text="needle", vector=toward(0.0, 4), ts="last tuesday")
    mem.add_chunk("future", session="s1", text="needle", vector=toward(0.0, 5), ts=_ago(-10))
    mem.add_query("needle", e0())
    assert result(mem) == [
        ("future", 0.45, "fallback-fts"),  # parses, in the future: no decay
        ("broken", 0.40, "fallback-fts"),
        ("undated", 0.40, "fallback-fts"),
        ("dated", round(0.45 * (0.7 + 0.3 * 0.5), 6), "fallback-fts"),
        ("v", 0.3, "vector"),
    ]


def test_the_gate_reads_decayed_scores() -> None:
    # 0.6 raw, 180 days old: 0.6 * (0.7 + 0.3 * 0.25) = 0.465 < 0.5, so lexical runs.
    old = result(memory(0.6, vector_ts=_ago(180)))
    assert old == [
        ("v", round(0.6 * (0.7 + 0.3 * 0.25), 6), "vector"),
        ("lex", 0.40, "fallback-fts"),
    ]
    # Control: the same chunk undated keeps 0.6 and the gate stays shut.
    assert result(memory(0.6)) == [("v", 0.6, "vector")]


def test_a_chunk_found_by_both_channels_keeps_its_vector_score() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=None)
    mem.add_chunk("both", session="s1", text="needle", vector=toward(0.3, 1), ts=None)
    mem.add_chunk("lex", session="s1", text="needle", vector=toward(0.0, 2), ts=None)
    mem.add_query("needle", e0())
    assert result(mem) == [
        ("lex", 0.40, "fallback-fts"),
        ("both", 0.3, "vector"),
    ]


def test_an_empty_vector_channel_falls_back_to_lexical() -> None:
    mem = memory(0.1)  # below the 0.20 floor: nearest returns nothing
    assert result(mem) == [("lex", 0.40, "fallback-fts")]


def test_recall_rerank_lifts_user_chunks_and_sinks_mechanics() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=None)
    mem.add_chunk("a", session="s1", text="plain", vector=toward(0.4, 1), ts=None)
    mem.add_chunk("m", session="s1", text="[Bash: ls]", vector=toward(0.45, 2), ts=None)
    mem.add_chunk(
        "u", session="s1", text="mine", vector=toward(0.3, 3), ts=None, author=Author.USER
    )
    mem.add_query("zz", e0())
    hits = FallbackArm(mem).search(Query(text="zz", scope=A, now=NOW))
    assert [(h.chunk_id, h.via) for h in hits] == [
        ("u", "vector"),
        ("a", "vector"),
        ("m", "vector"),
    ]
    # u: +0.50 User, +0.15 primacy (the only User chunk, so its session is the origin); m: -0.50.
    assert [round(h.score, 6) for h in hits] == [
        round(0.3 + 0.50 + 0.15, 6),
        0.4,
        round(0.45 - 0.50, 6),
    ]


def test_fetch_is_k_plus_max_k_20_capped_at_three_k() -> None:
    arm = FallbackArm(FakeMemory())
    assert [arm.fetch(k) for k in (1, 5, 10, 30)] == [
        min(1 + 20, 3 * 1),
        min(5 + 20, 3 * 5),
        min(10 + 20, 3 * 10),
        min(30 + 30, 3 * 30),
    ]
    assert [arm.fetch(k) for k in (1, 5, 10, 30)] == [3, 15, 30, 60]
    mem = memory(0.49)
    result(mem, k=5)
    assert mem.calls_to("nearest")[0][2:] == (15, 0.20)
    assert mem.calls_to("lexical")[0][2] == 15


def test_the_top_up_is_truncated_to_k() -> None:
    assert [cid for cid, _, _ in result(memory(0.49), k=1)] == ["v"]
    assert FallbackParams().gate == 0.5


def test_stem_reaches_the_lexical_top_up() -> None:
    mem = memory(0.49)  # the gate opens
    mem.add_chunk("lex2", session="s1", text="needles", vector=toward(0.0, 3), ts=None)
    plain = FallbackArm(mem).search(Query(text="needle", scope=A, now=NOW))
    assert "lex2" not in [h.chunk_id for h in plain]  # control: "needles" is not "needle"
    params = FallbackParams(stem=True)
    stemmed = FallbackArm(mem, params).search(Query(text="needle", scope=A, now=NOW))
    # Both lexical hits enter at the undated 0.40 and tie; the chunk id orders them.
    assert [(h.chunk_id, round(h.score, 6), h.via) for h in stemmed] == [
        ("v", 0.49, "vector"),
        ("lex", 0.40, "fallback-fts"),
        ("lex2", 0.40, "fallback-fts"),
    ]
    assert [args[3] for args in mem.calls_to("lexical")] == [False, True]

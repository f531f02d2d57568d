"""`stop=True`: the lexical channel of `fts`, `rrf` and `ltr` reads a question without its function
words (`engine.function_words`), on the fake memory and on the real engine's BM25."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from arms.base import Query
from arms.ltr import LtrParams, gather
from arms.registry import build
from engine.embed import HashEmbedder
from engine.function_words import FUNCTION_WORDS, without_function_words
from engine.memory import Memory
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory
from tests.arms.test_real_engine_fixtures import P, session

NOW = datetime(2026, 6, 1, tzinfo=UTC)
A = Scope.of("/a")
QUESTION = "When did the zebra arrive?"


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # "when", "did", "the" go; "go" and "to" are not on the list (it has no word under 3 letters)
        ("When did Caroline go to the LGBTQ support group?", "Caroline go to LGBTQ support group"),
        (QUESTION, "zebra arrive"),
        ("what_is the retry-policy", "what_is retry-policy"),  # the engine's words: `_`, `-` kept
        ("What did they do there?", "do"),
        ("What did they say?", "What did they say?"),  # nothing but function words: the question
        ("", ""),
    ],
)
def test_a_question_without_its_function_words(text: str, read: str) -> None:
    assert without_function_words(text) == read


def test_the_list_is_the_prompt_hooks_and_has_no_short_words() -> None:
    assert {"when", "did", "the", "what", "about"} <= FUNCTION_WORDS
    assert len(FUNCTION_WORDS) == 93
    assert min(len(w) for w in FUNCTION_WORDS) == 3


def fake() -> FakeMemory:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_chunk("c1", session="s1", text="when did when did when did")
    mem.add_chunk("c2", session="s1", text="the zebra arrived")
    mem.add_query(QUESTION, [1.0, 0.0])
    return mem


def _lexical_texts(mem: FakeMemory) -> list[tuple[str, bool]]:
    return [(str(args[0]), bool(args[3])) for name, args in mem.calls if name == "lexical"]


def test_fts_with_stop_reads_the_question_without_its_function_words() -> None:
    ask = Query(text=QUESTION, scope=A, now=NOW, k=10)
    # fake scores: c1 holds "when" and "did" 3 times each (6), c2 "the" and "zebra" (2)
    plain = fake()
    assert [h.chunk_id for h in build("fts", plain).search(ask)] == ["c1", "c2"]
    assert _lexical_texts(plain) == [(QUESTION, False)]
    stopped = fake()
    assert [h.chunk_id for h in build("fts(stop=True)", stopped).search(ask)] == ["c2"]
    assert _lexical_texts(stopped) == [("zebra arrive", False)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("rrf(stop=True,stem=True)", [("zebra arrive", True)]),
        ("rrf(stop=True)", [("zebra arrive", False)]),
        ("rrf()", [(QUESTION, False)]),
    ],
)
def test_rrf_with_stop_reads_the_question_without_its_function_words(
    spec: str, expected: list[tuple[str, bool]]
) -> None:
    mem = fake()
    build(spec, mem).search(Query(text=QUESTION, scope=A, now=NOW, k=10))
    assert _lexical_texts(mem) == expected


def test_ltr_with_stop_reads_both_lexical_pools_without_function_words() -> None:
    ask = Query(text=QUESTION, scope=A, now=NOW, k=10)
    stopped, plain = fake(), fake()
    found = gather(stopped, LtrParams(stop=True), ask)
    assert _lexical_texts(stopped) == [("zebra arrive", False), ("zebra arrive", True)]
    control = gather(plain, LtrParams(), ask)
    assert _lexical_texts(plain) == [(QUESTION, False), (QUESTION, True)]
    # the fake's chunks have no vectors: c1 was a candidate for its function words alone
    assert [r.id for r in control.records] == ["c1", "c2"]
    assert [r.id for r in found.records] == ["c2"]
    # the features are read as before: `term_share` counts the question's own terms
    assert LtrParams(stop=True).features == LtrParams().features


def test_on_bm25_the_function_words_outrank_the_answer_until_they_are_left_out(
    tmp_path: Path,
) -> None:
    filler = [session(tmp_path, n, n, f"filler alpha {n}", "beta gamma delta") for n in range(8)]
    noise = session(tmp_path, 8, 8, "When did we say when? When did it happen?", "did did did")
    answer = session(tmp_path, 9, 9, "The zebra arrived on Monday.", "Noted.")
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    memory.import_paths([tmp_path / "projects"])
    scope = Scope.of(P)

    def sessions(spec: str) -> list[str]:
        hits = build(spec, memory).search(Query(text=QUESTION, scope=scope, now=NOW, k=10))
        return [r.session_id for r in memory.chunks([h.chunk_id for h in hits], scope)]

    # BM25 over 10 chunks: "when" and "did" occur in one chunk only, so each weighs as much as
    # "zebra" (idf log(9.5 / 1.5)), and that chunk holds them 3 and 5 times
    assert sessions("fts") == [noise, answer]
    assert sessions("fts(stop=True)") == [answer]
    assert not set(filler) & set(sessions("fts"))
    memory.close()

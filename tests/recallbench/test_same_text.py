"""An answer shows each text once (`recallbench.same_text`): `recallbench search`, `search_memory`
and the prompt hook; the arms themselves still return every hit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from arms.base import Query
from arms.registry import build
from engine.api import ChunkRecord, SettledAs
from engine.chunking import text_sha256
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.model import Author
from engine.scope import Scope
from recallbench.cli import main
from recallbench.mcp_server import SESSION_ENV, build_server
from recallbench.same_text import (
    GRAM,
    MIN_INSIDE,
    NEAR,
    RETRIES,
    Shown,
    fill,
    nearly_same,
    once_each,
)
from tests.engine.fixtures_transcripts import write_jsonl
from tests.recallbench.corpus import ALPHA, chat_session
from tests.recallbench.test_hooks import run, sample
from tests.recallbench.test_mcp_server import call

FIRST = "aaaaaaaa-0000-4000-8000-0000000000d1"
AGAIN = "aaaaaaaa-0000-4000-8000-0000000000d2"  # says FIRST's turn word for word
OTHER = "aaaaaaaa-0000-4000-8000-0000000000d3"
TURN = ("Show me the zebra cache loader", "The zebra cache loader reads every shard serially.")
ELSE = ("Where else is the zebra cache used?", "The zebra cache backs the tile server.")
QUERY = "zebra cache loader"
SAID = "reads every shard serially"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def record(
    rid: str, text: str, *, settled: bool = False, settle: int = 1, ts: str | None = None
) -> ChunkRecord:
    """A record with `text`: all the rule reads of it, with whether it is the old chunk of open
    settle `settle`, and when it was written (`ts`)."""
    return ChunkRecord(
        id=rid,
        session_id="s",
        stream="s",
        index=0,
        project=ALPHA,
        text=text,
        author=Author.USER,
        message_uuids=(rid,),
        ts_start=ts,
        ts_end=ts,
        session_start=None,
        sha256=text_sha256(text),
        settled=(SettledAs(settlement=settle, kind="open", role="old", other="z", time="t"),)
        if settled
        else (),
    )


@dataclass(frozen=True)
class Hit:
    chunk_id: str


def test_a_text_is_shown_once_under_the_highest_hit_that_has_it() -> None:
    a, b, c, d, e = (
        record("a", "x"),
        record("b", "y"),
        record("c", "x"),
        record("d", "x"),
        record("e", "x", settled=True),
    )
    shown = once_each([a, b, c, d, e])
    # c and d repeat a; e takes part in a settle, so it stays, and nothing is listed under it
    assert [r.id for r in shown.records] == ["a", "b", "e"]
    assert shown.same_text == {"a": ("c", "d")}
    # what the running session holds in context is left out by its text (b), not by its id
    held = once_each([a, b, c], held=[record("h", "y")])
    assert [r.id for r in held.records] == ["a"]
    assert held.same_text == {"a": ("c",)}
    assert held.first(0) == Shown([], {})


def test_hits_in_the_same_settle_that_say_the_same_show_one_status_line() -> None:
    # a settle applies to every chunk that says what its old chunk says: the same file read in three
    # sessions is one hit with its status, not three
    a, b, c = (record(i, "x", settled=True) for i in "abc")
    other = record("o", "x", settled=True, settle=2)
    plain = record("p", "x")
    shown = once_each([a, plain, b, other, c])
    assert [r.id for r in shown.records] == ["a", "p", "o"]
    assert shown.same_text == {"a": ("b", "c")}
    # control: another text in the same settle is a hit of its own
    assert [r.id for r in once_each([a, record("y", "y", settled=True)]).records] == ["a", "y"]


def test_a_text_inside_a_longer_one_is_its_words_from_a_hundred_characters() -> None:
    read = "1→defmodule Spotter.Message do\n" * 4  # 4 × 31 = 124 characters
    assert (len(read), MIN_INSIDE) == (124, 100)
    short = "Done." + " " * 94  # 99 characters, and inside `fuller` too
    fuller = short + read + "\n[Read: message.ex]"  # the same read, with the call after it
    a, b, c, d = record("a", read), record("b", "other"), record("c", fuller), record("d", short)
    # c holds a's text and more: it takes a's place; d is too short to be c's words
    shown = once_each([a, b, c, d])
    assert [r.id for r in shown.records] == ["c", "b", "d"]
    assert shown.same_text == {"c": ("a",)}
    assert shown.hits_of([Hit("a"), Hit("b"), Hit("c"), Hit("d")]) == [Hit("c"), Hit("b"), Hit("d")]
    # the other way round, a's text lies in c's, which is shown above it
    assert once_each([c, a]).same_text == {"c": ("a",)}
    # c holds two hits shown above it: it takes the higher place, both listed under it, best first
    x = record("x", read[:110])
    shown = once_each([x, b, a, c])  # a holds x: a takes x's place; then c holds a
    assert [r.id for r in shown.records] == ["c", "b"]
    assert shown.same_text == {"c": ("x", "a")}
    # in context: a text inside what the session holds is left out, one that holds more is not
    assert [r.id for r in once_each([a, c], held=[record("h", fuller)]).records] == []
    assert [r.id for r in once_each([a, c], held=[record("h", read)]).records] == ["c"]


def test_fill_asks_again_for_as_many_hits_as_were_left_out() -> None:
    # ranked texts: x x x y x z ...; each answer is the first n of them
    texts = ["x", "x", "x", "y", "x", "z", "w"]
    asked: list[int] = []

    def ask(n: int) -> list[Hit]:
        asked.append(n)
        return [Hit(f"r{i}") for i in range(min(n, len(texts)))]

    def records_of(hits: list[Hit]) -> list[ChunkRecord]:
        return [record(h.chunk_id, texts[int(h.chunk_id[1:])]) for h in hits]

    hits, shown = fill(ask, records_of, once_each, 3)
    # 3 hits show 1 text (x): ask 3 + 2 = 5; 5 show 2 (x, y): ask 5 + 1 = 6, which show x, y, z
    assert asked == [3, 5, 6]
    assert [r.id for r in shown.records] == ["r0", "r3", "r5"]
    assert shown.same_text == {"r0": ("r1", "r2", "r4")}
    assert hits == [Hit("r0"), Hit("r3"), Hit("r5")]
    # at most RETRIES more asks
    asked.clear()
    fill(ask, records_of, lambda records: Shown(records[:1]), 3)
    assert RETRIES == 2
    assert asked == [3, 5, 7]
    # and none once the hits run out: 4 texts, so the ask for 5 gets 4
    del texts[4:]
    asked.clear()
    hits, shown = fill(ask, records_of, once_each, 3)
    assert asked == [3, 5]
    assert [r.id for r in shown.records] == ["r0", "r3"]


@pytest.fixture
def db(tmp_path: Path, home: Path) -> Path:
    """FIRST and AGAIN say the same turn word for word; OTHER says something else about it."""
    root = tmp_path / "projects" / "-home-dev-alpha"
    for minute, (sid, turn) in enumerate(((FIRST, TURN), (AGAIN, TURN), (OTHER, ELSE))):
        write_jsonl(root / f"{sid}.jsonl", chat_session(sid, ALPHA, [turn], minute * 30))
    memory = Memory(home / "memory.db", HashEmbedder())
    memory.import_paths([tmp_path / "projects"])
    memory.close()
    return home / "memory.db"


def _arm_sessions(db: Path, k: int) -> list[str]:
    memory = Memory(db, HashEmbedder())
    arm = build("fts", memory)
    hits = arm.search(Query(text=QUERY, scope=Scope.everywhere(), now=NOW, k=k))
    records = memory.chunks([h.chunk_id for h in hits], Scope.everywhere())
    memory.close()
    return [r.session_id for r in records]


def test_search_shows_the_repeated_text_once_and_fills_the_answer(db: Path) -> None:
    # control: the arm ranks both copies of the turn first (a tie, broken by chunk id)
    top, second = _arm_sessions(db, 2)
    assert {top, second} == {FIRST, AGAIN}
    found = CliRunner().invoke(
        main, ["search", QUERY, "--all-projects", "--arm", "fts", "--limit", "2", "--json"]
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    assert [(h["rank"], h["session_id"]) for h in hits] == [(1, top), (2, OTHER)]
    memory = Memory(db, HashEmbedder())
    (repeat,) = memory.chunks(hits[0]["same_text"], Scope.everywhere())
    memory.close()
    assert repeat.session_id == second
    assert hits[1]["same_text"] == []
    plain = CliRunner().invoke(main, ["search", QUERY, "--all-projects", "--arm", "fts"])
    assert plain.stdout.count(SAID) == 1
    assert "the same text in 1 more hit" in plain.stdout


def _tool_sessions(db: Path) -> list[tuple[str, int]]:
    server = build_server(Memory(db, HashEmbedder()), "fts", project_dir=Path(ALPHA))
    (result,) = call(server, "legacy", ("search_memory", {"query": QUERY, "limit": 5}))
    return [(hit["session_id"], len(hit["same_text"])) for hit in result["hits"]]


def test_search_memory_shows_a_text_once_and_not_at_all_when_the_session_holds_it(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SESSION_ENV, raising=False)
    top = _arm_sessions(db, 1)[0]
    assert _tool_sessions(db) == [(top, 1), (OTHER, 0)]
    # the running session said the turn: its own chunk is in context, and the other says the same
    for running in (FIRST, AGAIN):
        monkeypatch.setenv(SESSION_ENV, running)
        assert _tool_sessions(db) == [(OTHER, 0)]
    # control: a running session that holds neither
    monkeypatch.setenv(SESSION_ENV, OTHER)
    assert _tool_sessions(db) == [(top, 1)]


def test_the_prompt_hook_injects_a_repeated_text_once(db: Path) -> None:
    prompt = "where is the zebra cache loader that reads every shard"
    elsewhere = sample("user_prompt_submit", prompt=prompt, cwd=ALPHA)
    assert run("UserPromptSubmit", json.dumps(elsewhere)).stdout.count(SAID) == 1
    for running in (FIRST, AGAIN):  # the running session said it: not injected again
        held = dict(elsewhere, session_id=running)
        assert SAID not in run("UserPromptSubmit", json.dumps(held)).stdout


# 200 characters, each once: 196 distinct 5-grams
BASE = "".join(chr(0x4E00 + i) for i in range(200))


def _fresh(n: int) -> str:
    """`n` characters found nowhere in BASE."""
    return "".join(chr(0x5000 + i) for i in range(n))


def test_nearly_same_is_ninety_percent_of_five_grams_in_common() -> None:
    assert (GRAM, NEAR) == (5, 0.9)
    # the last 10 characters changed: 186 of 196 grams shared, 2 × 186 / 392 = 0.949
    assert nearly_same(BASE, BASE[:190] + _fresh(10))
    # the last 30 changed: 166 shared, 2 × 166 / 392 = 0.847
    assert not nearly_same(BASE, BASE[:170] + _fresh(30))
    # the last 20: 176 shared, 352 / 392 = 0.898, just under
    assert not nearly_same(BASE, BASE[:180] + _fresh(20))
    # whitespace runs read as one space: the same text laid out again
    assert nearly_same(BASE, BASE[:100] + "\n\n    " + BASE[100:]) == nearly_same(BASE, BASE)
    # a text under MIN_INSIDE characters is never nearly another (99 of 100 the same)
    assert MIN_INSIDE == 100
    assert not nearly_same(BASE[:99], BASE[:98] + _fresh(1))
    assert nearly_same(BASE[:150], BASE[:149] + _fresh(1))  # control: 146 grams, 145 shared


def test_a_text_nearly_the_same_is_shown_once_as_the_later() -> None:
    early = record("early", BASE, ts="2026-02-12T14:55:07Z")
    late = record("late", BASE[:190] + _fresh(10), ts="2026-02-12T15:01:01Z")
    other = record("other", BASE[:170] + _fresh(30), ts="2026-02-12T16:00:00Z")
    # the earlier ranked first: the later takes its place; the one 0.85 alike is its own hit
    shown = once_each([early, other, late])
    assert [r.id for r in shown.records] == ["late", "other"]
    assert (shown.nearly_same, shown.same_text) == ({"late": ("early",)}, {})
    assert shown.hits_of([Hit("early"), Hit("other"), Hit("late")]) == [Hit("late"), Hit("other")]
    # the later ranked first: the earlier is listed under it
    shown = once_each([late, other, early])
    assert [r.id for r in shown.records] == ["late", "other"]
    assert shown.nearly_same == {"late": ("early",)}
    # the same text as the earlier one goes with it, under the later, best first
    twin = record("twin", BASE, ts="2026-02-12T14:00:00Z")
    shown = once_each([early, twin, late])
    assert [r.id for r in shown.records] == ["late"]
    assert (shown.nearly_same, shown.same_text) == ({"late": ("early", "twin")}, {})
    assert shown.first(1) == shown
    # a settled hit keeps the exact rule: its status line stays in sight
    settled = record("settled", BASE[:190] + _fresh(10), settled=True)
    assert [r.id for r in once_each([early, settled]).records] == ["early", "settled"]
    # control: the same two unsettled are one hit
    assert [r.id for r in once_each([early, record("x", BASE[:190] + _fresh(10))]).records] == [
        "early"
    ]


NEAR_FIRST = "aaaaaaaa-0000-4000-8000-0000000000e1"
NEAR_LATER = "aaaaaaaa-0000-4000-8000-0000000000e2"
READ = (
    "The walrus cache loader reads the shard list from disk, opens each shard in turn, checks the "
    "header checksum, decodes the tile index, and keeps the decoded index in memory until the "
    "process exits; a shard with a bad checksum is skipped with a warning. Limit: {} shards."
)


@pytest.fixture
def near_db(tmp_path: Path, home: Path) -> Path:
    """NEAR_FIRST and NEAR_LATER (half an hour on) answer with READ, one number apart; OTHER with
    something else."""
    root = tmp_path / "projects" / "-home-dev-alpha"
    sessions = (
        (NEAR_FIRST, ("Explain the walrus cache loader", READ.format(8))),
        (NEAR_LATER, ("Explain the walrus cache loader", READ.format(16))),
        (
            OTHER,
            ("Where else is the walrus cache used?", "The walrus cache backs the tile server."),
        ),
    )
    for minute, (sid, turn) in enumerate(sessions):
        write_jsonl(root / f"{sid}.jsonl", chat_session(sid, ALPHA, [turn], minute * 30))
    memory = Memory(home / "memory.db", HashEmbedder())
    memory.import_paths([tmp_path / "projects"])
    memory.close()
    return home / "memory.db"


def test_search_and_search_memory_show_the_later_of_two_nearly_same_texts(near_db: Path) -> None:
    query = "walrus cache loader shard checksum"
    memory = Memory(near_db, HashEmbedder())
    hits = build("fts", memory).search(Query(text=query, scope=Scope.everywhere(), now=NOW, k=3))
    records = memory.chunks([h.chunk_id for h in hits], Scope.everywhere())
    memory.close()
    # control: the arm returns both readings, then the other session
    assert {r.session_id for r in records[:2]} == {NEAR_FIRST, NEAR_LATER}
    assert nearly_same(records[0].text, records[1].text)
    first_id = next(r.id for r in records if r.session_id == NEAR_FIRST)
    found = CliRunner().invoke(
        main, ["search", query, "--all-projects", "--arm", "fts", "--limit", "2", "--json"]
    )
    assert found.exit_code == 0, found.output
    rows = json.loads(found.stdout)["hits"]
    assert [(h["session_id"], h["nearly_same"]) for h in rows] == [
        (NEAR_LATER, [first_id]),
        (OTHER, []),
    ]
    assert "Limit: 16 shards" in rows[0]["text"]
    plain = CliRunner().invoke(main, ["search", query, "--all-projects", "--arm", "fts"])
    assert "nearly the same text in 1 more hit" in plain.stdout
    assert len(re.findall(r"^#\d+ via fts", plain.stdout, re.MULTILINE)) == 2
    server = build_server(Memory(near_db, HashEmbedder()), "fts", project_dir=Path(ALPHA))
    (result,) = call(server, "legacy", ("search_memory", {"query": query, "limit": 2}))
    assert [(h["session_id"], h["nearly_same"]) for h in result["hits"]] == [
        (NEAR_LATER, [first_id]),
        (OTHER, []),
    ]


def test_the_prompt_hook_injects_the_later_of_two_nearly_same_texts(near_db: Path) -> None:
    prompt = "how does the walrus cache loader treat a shard checksum"
    out = run(
        "UserPromptSubmit", json.dumps(sample("user_prompt_submit", prompt=prompt, cwd=ALPHA))
    )
    assert out.stdout.count("walrus cache loader reads the shard list") == 1
    assert "Limit: 16 shards" in out.stdout
    # control: run by the later session, which holds its own reading, the earlier one is injected
    later = sample("user_prompt_submit", prompt=prompt, cwd=ALPHA, session_id=NEAR_LATER)
    held = run("UserPromptSubmit", json.dumps(later)).stdout
    assert "Limit: 8 shards" in held
    assert "Limit: 16 shards" not in held

"""An empty `search_memory` answer says what to try, as `recallbench search` does on stderr: the other
projects (only when the person allows the model to search them), the whole time, or that the query
holds no word (`recallbench.empty_answer`)."""

from __future__ import annotations

from pathlib import Path

from tests.recallbench.corpus import ALPHA
from tests.recallbench.test_mcp_server import allow, call, db, server_for

__all__ = ["db"]  # the fixture

ELSEWHERE = "postgres backup cron job"  # said in BETA only
NO_WORD = (
    "nothing relevant found: the query holds no word to look for (two letters or digits or more)"
)


def test_an_empty_answer_says_what_to_try(db: Path) -> None:
    ask = ("search_memory", {"query": ELSEWHERE})
    windowed = ("search_memory", {"query": ELSEWHERE, "until": "2000-01-01"})
    wordless = ("search_memory", {"query": '" * ?'})
    scoped, in_window, no_word = call(
        server_for(db, ALPHA, "fts"), "legacy", ask, windowed, wordless
    )
    # the model may not search other projects: widening is not offered
    assert (scoped["hits"], scoped["message"]) == ([], "nothing relevant found")
    assert in_window["message"] == (
        "nothing relevant found (leave out since and until to search every time)"
    )
    assert no_word["message"] == NO_WORD

    allow("mcp.all_projects")
    scoped, everywhere, no_word = call(
        server_for(db, ALPHA, "fts"),
        "legacy",
        ask,
        ("search_memory", {"query": ELSEWHERE, "all_projects": True}),
        wordless,
    )
    assert scoped["message"] == "nothing relevant found (all_projects=true searches every project)"
    assert no_word["message"] == NO_WORD  # no scope finds a query without a word
    # control: every project holds it, and a full answer says nothing more
    assert len(everywhere["hits"]) >= 1
    assert everywhere["message"] is None


def test_the_no_memory_arm_says_it_holds_none(db: Path) -> None:
    allow("mcp.all_projects")
    (answer,) = call(
        server_for(db, ALPHA, "none"), "legacy", ("search_memory", {"query": ELSEWHERE})
    )
    assert answer["hits"] == []
    assert answer["message"] == (
        "nothing relevant found: the arm this server runs is none(), which holds no memory"
    )  # not a wider scope to try: no scope finds anything

"""Hit rows: one set of field names for the command line, the MCP tools and the prompt hook."""

from __future__ import annotations

from pathlib import Path

from arms.base import Hit
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench.mcp_tools import SearchHit
from recallbench.present import (
    HitRow,
    clip,
    counted,
    header,
    hit_rows,
    ids_that_start,
    megabytes,
    minute,
    one_line,
    snippet,
)
from tests.recallbench.corpus import ALPHA, BETA, SID_A1, SID_B1, write_corpus


def test_rows_follow_the_hits_order_rank_from_one_and_leave_out_hits_without_a_record(
    tmp_path: Path,
) -> None:
    write_corpus(tmp_path / "projects")
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    memory.import_paths([tmp_path / "projects"])
    both = Scope.of(ALPHA, BETA)
    ids = [s.chunk_id for s in memory.lexical("retry", both, 10)]
    records = {r.session_id: r for r in memory.chunks(ids, both)}
    alpha, beta = records[SID_A1], records[SID_B1]
    hits = [
        Hit(chunk_id=beta.id, score=0.123456789, via="fts"),
        Hit(chunk_id="no-such-chunk", score=0.9, via="fts"),  # e.g. outside the scope
        Hit(chunk_id=alpha.id, score=0.05, via="vector"),
    ]
    rows = hit_rows(hits, [alpha, beta])
    assert [(r.rank, r.chunk_id, r.via) for r in rows] == [
        (1, beta.id, "fts"),
        (2, alpha.id, "vector"),
    ]
    first = rows[0]
    assert first == HitRow(
        rank=1,
        chunk_id=beta.id,
        score=0.123457,
        via="fts",
        session_id=SID_B1,
        project=BETA,
        author="User",
        timestamp=beta.ts_start,
        text=beta.text,
    )
    memory.close()


def test_the_row_fields_are_the_mcp_search_hit_fields() -> None:
    row = HitRow(
        rank=1,
        chunk_id="c",
        score=1.0,
        via="rrf",
        session_id="s",
        project="/p",
        author="Claude",
        timestamp=None,
        text="t",
    )
    assert list(row.to_dict()) == list(SearchHit.model_fields)
    assert SearchHit.model_validate(row.to_dict()).session_id == "s"


def test_text_helpers_collapse_clip_and_show_minutes() -> None:
    assert one_line("a\n  b\tc ") == "a b c"
    # what a terminal would act on is left out: colours, a window title, a link, other controls
    shown = (
        "\x1b[2mCompacted\x1b[22m\r\n\x1b]0;title\x07done \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    )
    assert one_line(shown + "\x00\x7f\x9b31mred") == "Compacted done linkred"
    assert (
        one_line("[2m is text without its ESC; naïve ✓") == "[2m is text without its ESC; naïve ✓"
    )
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abc def", 5) == "abc…"
    assert len(clip("x" * 50, 10)) == 10
    assert minute("2026-03-01T10:00:59.000Z") == "2026-03-01 10:00"
    assert minute(None) == "unknown time"


def test_the_header_shows_rank_and_channel_not_the_raw_score() -> None:
    row = HitRow(
        rank=1,
        chunk_id="c",
        score=0.032522,  # an RRF value: meaningless to a person
        via="rrf (fts+vector)",
        session_id="55555555-0000-4000-8000-000000000001",
        project="/home/dev/alpha",
        author="User",
        timestamp="2026-03-01T10:00:59.000Z",
        text="t",
    )
    assert header(row) == (
        "#1 via rrf (fts+vector) · User · 2026-03-01 10:00 · "
        "session 55555555-0000-4000-8000-000000000001 · /home/dev/alpha · chunk c"
    )
    assert "0.03" not in header(row)


# Word starts: alpha 0, beta 6, gamma 11, delta 17, epsilon 23, zeta 31, eta 36, theta 40 (length 45).
GREEK = "alpha beta\ngamma  delta epsilon zeta eta theta"


def test_a_snippet_starts_at_a_word_boundary_before_the_query_word_never_mid_word() -> None:
    # size 28: the window would open at 40 - 28 // 4 = 33, inside "zeta"; it moves on to "eta" (36)
    assert snippet(GREEK, "theta", 28) == "…eta theta"
    # size 40: it would open at 30, the space after "epsilon": "zeta" (31) is the first whole word
    assert snippet(GREEK, "theta", 40) == "…zeta eta theta"
    # size 20: 35 is the space before "eta": the window opens on "eta" (36)
    assert snippet(GREEK, "THETA?", 20) == "…eta theta"
    # the query word itself opens the window when no whole word fits before it
    assert snippet("x" * 50 + " needle here", "needle", 20) == "…needle here"


def test_a_snippet_ends_at_a_word_boundary_and_starts_at_the_top_without_a_query_word() -> None:
    flat = "alpha beta gamma delta epsilon zeta eta theta"
    # 13 characters would end inside "gamma" (11..15): cut back to "alpha beta"
    assert snippet(flat, "alpha", 13) == "alpha beta…"
    assert snippet(flat, "omega", 13) == "alpha beta…"  # no query word: from the beginning
    assert snippet(flat, "", 100) == flat  # control: the whole text fits, nothing marked as cut


def test_ids_that_start_count_what_is_not_listed() -> None:
    assert ids_that_start("chunk", ["ab1"], 1) == "1 chunk id starts with it: ab1"
    assert ids_that_start("session", ["ab1", "ab2"], 5) == (
        "5 session ids start with it: ab1, ab2 and 3 more"
    )
    assert ids_that_start("session", ["ab1", "ab2"], 2) == "2 session ids start with it: ab1, ab2"


def test_counts_take_the_plural_unless_one_and_bytes_read_as_megabytes() -> None:
    assert [counted(n, "chunk") for n in (0, 1, 2)] == ["0 chunks", "1 chunk", "2 chunks"]
    assert megabytes(0) == "0.0 MB"
    assert megabytes(3_249_999) == "3.2 MB"  # 3.249999 rounds down
    assert megabytes(90_867_123) == "90.9 MB"


def test_one_line_shows_a_slash_command_as_it_was_typed() -> None:
    stored = (
        "<command-message>beads:create</command-message>\n<command-name>/beads:create</command-name>\n"
        "<command-args>set up credo\n\nand dialyzer</command-args>\n\nI'll research the setup."
    )
    assert one_line(stored) == "/beads:create set up credo and dialyzer I'll research the setup."
    # the name first, no arguments
    assert one_line(
        "<command-name>/clear</command-name> <command-message>clear</command-message>"
    ) == ("/clear")
    assert one_line("<command-message>init</command-message> then") == "init then"  # no name
    # control: tags that are not Claude Code's command tags, and prose about them, stay as written
    assert (
        one_line("a <command-line> tag and <b>bold</b>") == "a <command-line> tag and <b>bold</b>"
    )

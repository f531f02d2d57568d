"""Hit rows: one set of field names for the command line, the MCP tools and the prompt hook."""

from __future__ import annotations

from pathlib import Path

from arms.base import Hit
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench.mcp_tools import SearchHit
from recallbench.present import HitRow, clip, hit_rows, minute, one_line
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
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abc def", 5) == "abc…"
    assert len(clip("x" * 50, 10)) == 10
    assert minute("2026-03-01T10:00:59.000Z") == "2026-03-01 10:00"
    assert minute(None) == "unknown time"

"""Settles stay on their text when a stream is chunked again: a rebuild carries each settle to the
chunk that holds its messages in the new memory (a newer chunker or parser may chunk a stream
differently, so a chunk id can name other text), and a forget chunks a stream again under the version
it was chunked with, so the chunks before what it removed keep their ids and text.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine import chunked_sql, chunking
from recallbench.cli import main
from tests.engine.fixtures_transcripts import OTHER_SESSION, SESSION, ts, user_line, write_jsonl

# M1: 225 eight-character words, stored without its last space: 1,799 characters. Chunking version 1
# cuts it 900 + 899, version 2 896 + 896 + 7. M2 (895 characters) fits beside neither M1's last piece
# nor OLD, so under version 2 it comes one chunk later (after the 7), and so does every chunk after it.
M1 = "".join(f"word{i:03d} " for i in range(225))
M2 = "b " * 447 + "b"
OLD = "Use port 5432 for the orders database."
FILLER = "c " * 439 + "c"  # 879 characters: OLD does not fit beside it
NEW = "Correction: the orders database listens on port 6543."
LAST = "And forget the zebra-token I pasted."
# 125 seven-character words, each followed by a space (1,000 characters, 999 stored): version 2 ends
# its first piece after word111's space, at 896.
WORDS = "".join(f"word{i:03d} " for i in range(125))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _chunks(home: Path) -> dict[str, str]:
    """chunk id -> text, of the memory in `home`."""
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        return {str(i): str(t) for i, t in conn.execute("SELECT id, text FROM chunks")}


def _lengths(home: Path, session: str) -> list[int]:
    """The lengths of a session's chunk texts, in stream order."""
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        sql = "SELECT length(text) FROM chunks WHERE session_id = ? ORDER BY idx"
        return [int(n) for (n,) in conn.execute(sql, (session,))]


def _found(query: str) -> list[str]:
    out = invoke("search", query, "--all-projects", "--arm", "fts", "--json")
    return [h["text"] for h in json.loads(out.stdout)["hits"]]


def _settled_under_version_1(home: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory imported before chunking version 2 from M1, M2, OLD, FILLER, NEW and `LAST`, with
    OLD settled as corrected by NEW."""
    texts = [M1, M2, OLD, FILLER, NEW, LAST]
    write_jsonl(
        root / f"{SESSION}.jsonl",
        [
            user_line(t, uuid=f"u{i}", parent=f"u{i - 1}" if i else None, timestamp=ts(i))
            for i, t in enumerate(texts)
        ],
    )
    pieces = chunking._pieces
    with monkeypatch.context() as old:
        old.setattr(chunking, "_pieces", lambda text, budget, _: pieces(text, budget, 1))
        old.setattr(chunked_sql, "record_version", lambda conn, version: None)
        assert invoke("import", "--no-embed", str(root)).exit_code == 0
    before = _chunks(home)
    old_id = next(i for i, t in before.items() if t == OLD)
    new_id = next(i for i, t in before.items() if t.startswith(NEW))
    settled = invoke("correct", old_id, "--by", new_id, "--kind", "corrected", "--reason", "moved")
    assert settled.exit_code == 0, settled.output
    assert _found("orders database port") == [NEW + "\n\n" + LAST]  # OLD is hidden


def _settled_texts(home: Path) -> tuple[str, str]:
    (row,) = json.loads(invoke("corrections", "--json").stdout)
    after = _chunks(home)
    return after[row["old"]], after[row["new"]]


def test_a_rebuild_moves_a_settle_to_the_chunk_that_now_holds_its_messages(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled_under_version_1(home, tmp_path / "t", monkeypatch)
    before = _chunks(home)
    old_id = next(i for i, t in before.items() if t == OLD)
    new_id = next(i for i, t in before.items() if t.startswith(NEW))

    rebuilt = invoke("rebuild", "--no-embed")
    assert rebuilt.exit_code == 0, rebuilt.output
    after = _chunks(home)
    # the ids of the old statement and its correction now name other text (M2's, the filler's)
    assert after[old_id] == M2
    assert after[new_id] == FILLER
    assert _settled_texts(home) == (OLD, NEW + "\n\n" + LAST)
    assert _found("orders database port") == [NEW + "\n\n" + LAST]
    assert "1 moved to the chunk that holds its messages now" in rebuilt.stdout


def test_a_forget_chunks_a_version_1_stream_again_as_version_1_did(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled_under_version_1(home, tmp_path / "t", monkeypatch)
    before = _chunks(home)
    out = invoke("forget", "--match", "zebra-token", "--confirm", "zebra-token")
    assert out.exit_code == 0, out.output
    after = _chunks(home)
    # only the last chunk (NEW and LAST) changed: every chunk before it kept its id and text, M1's
    # 900 + 899 among them (its last space is not stored; version 2 would have made them 896 + 896 +
    # 7 and moved every later id)
    assert {i: t for i, t in after.items() if before.get(i) != t} == {
        i: NEW for i, t in before.items() if t.startswith(NEW)
    }
    assert sorted(len(t) for t in after.values() if t in M1) == [899, 900]
    assert _settled_texts(home) == (OLD, NEW)
    assert _found("orders database port") == [NEW]


def _append(path: Path, *texts: str, first: int, session: str = SESSION) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for i, text in enumerate(texts, start=first):
            line = user_line(
                text, uuid=f"u{i}", parent=f"u{i - 1}", timestamp=ts(i), session_id=session
            )
            fh.write(json.dumps(line) + "\n")


def test_a_growing_stream_keeps_its_stored_pieces_under_the_version_that_made_them(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two sessions under version 1: one ending in M1 ([A], [M1's 900], [its 899]: the import chunks it
    # again from M1's first piece when it grows), one of a short prompt only.
    grows = tmp_path / "t" / f"{SESSION}.jsonl"
    short = tmp_path / "t" / f"{OTHER_SESSION}.jsonl"
    write_jsonl(grows, [user_line("Which words?", uuid="u0", timestamp=ts(0))])
    _append(grows, M1, first=1)
    write_jsonl(
        short, [user_line("Which port?", uuid="u0", timestamp=ts(0), session_id=OTHER_SESSION)]
    )
    pieces = chunking._pieces
    with monkeypatch.context() as old:
        old.setattr(chunking, "_pieces", lambda text, budget, _: pieces(text, budget, 1))
        old.setattr(chunked_sql, "record_version", lambda conn, version: None)
        assert invoke("import", "--no-embed", str(grows.parent)).exit_code == 0
    before = _chunks(home)
    assert sorted(len(t) for t in before.values()) == [11, 12, 899, 900]
    # both go on with "And now?" and WORDS (999 stored: version 1 cuts 900 + 99, version 2 896 + 103)
    _append(grows, "And now?", WORDS, first=2)
    _append(short, "And now?", WORDS, first=1, session=OTHER_SESSION)
    assert invoke("import", "--no-embed", str(grows.parent)).exit_code == 0
    after = _chunks(home)
    kept = {i: t for i, t in before.items() if t != "Which port?"}
    assert {i: after[i] for i in kept} == kept  # M1's pieces (and their ids) as they were
    added = {i: len(t) for i, t in after.items() if i not in before}
    # "And now?" (8) joins "Which port?" (11) in the short session, and fits beside nothing in the
    # other (899 + 8 and 8 + 896 are over 900). The stream holding M1 goes on under version 1, which
    # keeps its pieces; the other, whose stored chunk either version keeps, under version 2.
    assert sorted(added.values()) == [8, 99, 103, 896, 900]
    assert _lengths(home, SESSION) == [12, 900, 899, 8, 900, 99]
    assert _lengths(home, OTHER_SESSION) == [21, 896, 103]  # 11 + 2 (the separator) + 8


# A stream of short statements: twelve 250-character fillers, each with a marker word of its own (three
# fit in a chunk), the corrected statement after the seventh, its correction after the eleventh.
FILL = [f"marker{i:02d} " + "filler words " * 18 + "x" * 7 for i in range(12)]
SETTLED_OLD = "Deploys go out from the blue cluster only."
SETTLED_NEW = "Deploys go out from the green cluster now."


def _stream_of_statements(home: Path, root: Path) -> tuple[str, str]:
    """Import it and settle the statement as corrected by its correction; returns their chunk ids."""
    assert {len(f) for f in FILL} == {250}
    texts = [*FILL[:7], SETTLED_OLD, *FILL[7:11], SETTLED_NEW]
    write_jsonl(
        root / f"{SESSION}.jsonl",
        [
            user_line(t, uuid=f"u{i}", parent=f"u{i - 1}" if i else None, timestamp=ts(i))
            for i, t in enumerate(texts)
        ],
    )
    assert invoke("import", "--no-embed", str(root)).exit_code == 0
    chunks = _chunks(home)
    old_id = next(i for i, t in chunks.items() if SETTLED_OLD in t)
    new_id = next(i for i, t in chunks.items() if SETTLED_NEW in t)
    out = invoke("correct", old_id, "--by", new_id, "--kind", "corrected", "--reason", "moved")
    assert out.exit_code == 0, out.output
    return old_id, new_id


def test_a_forget_earlier_in_the_stream_moves_a_settle_with_its_text(
    home: Path, tmp_path: Path
) -> None:
    old_id, _ = _stream_of_statements(home, tmp_path / "t")
    assert not any(SETTLED_OLD in t for t in _found("blue cluster"))  # hidden
    # forgetting the first filler moves every later message up: the statement joins chunk 1
    out = invoke("forget", "--match", "marker00", "--confirm", "marker00")
    assert out.exit_code == 0, out.output
    assert "1 settle moved to the chunk that holds its text now" in out.output
    (row,) = json.loads(invoke("corrections", "--json").stdout)
    (moved,) = [line for line in invoke("audit").stdout.splitlines() if "settle.move" in line]
    assert f"settlement:1, {old_id}, " in moved
    assert row["old"] in moved  # the id the statement is under now
    old_text, new_text = _settled_texts(home)
    assert SETTLED_OLD in old_text
    assert SETTLED_NEW in new_text
    assert SETTLED_OLD not in _chunks(home)[old_id]  # its old id holds other text now
    assert not any(SETTLED_OLD in t for t in _found("blue cluster"))  # still hidden
    assert any(SETTLED_NEW in t for t in _found("green cluster"))  # control: the correction shows


def test_forgetting_the_settled_text_itself_undoes_the_settle(home: Path, tmp_path: Path) -> None:
    old_id, _ = _stream_of_statements(home, tmp_path / "t")
    marker = next(w for w in _chunks(home)[old_id].split() if w.startswith("marker"))
    assert not any(marker in t for t in _found(marker))  # control: hidden with the statement
    out = invoke("forget", "--match", "blue cluster", "--confirm", "blue cluster")
    assert out.exit_code == 0, out.output
    assert "1 settle undone: what it settled is not there as it was" in out.output
    (row,) = json.loads(invoke("corrections", "--json", "--all").stdout)
    assert row["undone_by"] == "person"
    (undo,) = [line for line in invoke("audit").stdout.splitlines() if " undo " in line]
    assert "person" in undo
    assert "settlement:1, " in undo
    # what the chunk held besides the statement is found again
    assert any(marker in t for t in _found(marker))


def test_forgetting_only_the_correction_leaves_the_corrected_statement_hidden(
    home: Path, tmp_path: Path
) -> None:
    _, new_id = _stream_of_statements(home, tmp_path / "t")
    # the correction's whole chunk (two fillers and the correction) goes: its text is gone
    out = invoke("forget", "--chunk", new_id, "--confirm", new_id)
    assert out.exit_code == 0, out.output
    assert "undone" not in out.output
    (row,) = json.loads(invoke("corrections", "--json").stdout)  # still in force
    assert row["kind"] == "corrected"
    assert not any(SETTLED_OLD in t for t in _found("blue cluster"))  # the statement stays hidden
    assert _found("green cluster") == []  # control: the correction is gone

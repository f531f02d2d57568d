"""A transcript file that moved (its folder moved: a new machine, a renamed home) keeps its stream:
the next import takes the old record over instead of storing every message twice
(`engine.moved_files`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.embed import HashEmbedder
from engine.memory import Memory
from tests.engine.fixtures_transcripts import (
    SESSION,
    append_jsonl,
    simple_session,
    ts,
    user_line,
    write_jsonl,
)


def _ids(memory: Memory) -> list[str]:
    return sorted(cid for _, cid, _, _ in memory.chunk_rows())


def _paths(memory: Memory) -> list[str]:
    return [str(r[0]) for r in memory.conn.execute("SELECT path FROM files ORDER BY path")]


def test_a_moved_file_keeps_its_stream_and_imports_only_what_it_gained(tmp_path: Path) -> None:
    old = write_jsonl(tmp_path / "a" / f"{SESSION}.jsonl", simple_session("Why is the cache cold?"))
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    first = memory.import_paths([tmp_path / "a"], embed=False)
    assert (first.files_imported, first.files_moved, first.chunks_written) == (1, 0, 1)
    before = _ids(memory)
    messages = memory.status()["messages"]
    assert messages == 4  # the prompt, the call, the result and the answer
    shutil.move(tmp_path / "a", tmp_path / "b")  # the folder moved; a line is added there
    moved = tmp_path / "b" / old.name
    append_jsonl(moved, [user_line("And now?", uuid="u9", parent="a3", timestamp=ts(9))])

    second = memory.import_paths([tmp_path / "b"], embed=False)

    assert second.files_moved == 1
    assert second.messages == 1  # only the line it gained
    assert memory.status()["messages"] == 5
    # the chunk keeps its id (settles and notes name it), the line joins it: no second copy
    assert _ids(memory) == before
    assert _paths(memory) == [str(moved.resolve())]
    memory.close()


def test_a_copy_beside_its_original_or_another_file_is_not_a_move(tmp_path: Path) -> None:
    original = write_jsonl(tmp_path / "a" / f"{SESSION}.jsonl", simple_session("Why?"))
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([tmp_path / "a"], embed=False)
    # a copy while the original is still there: two files, both kept
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    copied = memory.import_paths([tmp_path / "copy"], embed=False)
    assert (copied.files_moved, copied.files_imported) == (0, 1)
    assert len(_paths(memory)) == 2
    # the original gone, and a file of the same name whose bytes differ: not the same file
    original.unlink()
    write_jsonl(tmp_path / "c" / original.name, simple_session("Something else entirely?"))
    other = memory.import_paths([tmp_path / "c"], embed=False)
    assert (other.files_moved, other.files_imported) == (0, 1)
    assert len(_paths(memory)) == 3
    memory.close()


def test_a_tombstone_the_new_path_holds_already_stands_for_the_old_one(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a" / f"{SESSION}.jsonl", simple_session("Why is the cache cold?"))
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([tmp_path / "a"], embed=False)
    old = _paths(memory)[0]
    new = str((tmp_path / "b" / f"{SESSION}.jsonl").resolve())
    row = "('message', ?, 'x1', NULL, ?, 0, 10, '2026-01-01T00:00:00Z')"
    sql = f"INSERT INTO tombstones VALUES {row}"
    memory.conn.execute(sql, (SESSION, old))
    memory.conn.execute(sql, (SESSION, new))  # the same message's, under the new path
    shutil.move(tmp_path / "a", tmp_path / "b")

    report = memory.import_paths([tmp_path / "b"], embed=False)

    assert (report.files_moved, report.files_failed) == (1, {})
    held = memory.conn.execute("SELECT path FROM tombstones WHERE ref = 'x1'").fetchall()
    assert held == [(new,)]
    memory.close()

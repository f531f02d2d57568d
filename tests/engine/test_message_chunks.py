"""`Memory.chunks_for_messages`: which stored chunks cover given messages, scoped, ids only."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

A = "/home/dev/alpha"
S1 = "33333333-0000-4000-8000-000000000001"
S2 = "33333333-0000-4000-8000-000000000002"
NOW = datetime(2026, 3, 1, tzinfo=UTC)
# About 2,600 characters: more than two chunks' worth (900), so the answer is split across chunks.
LONG = " ".join(f"the zeppelin ledger keeps entry {n} balanced" for n in range(60))


def _memory(tmp_path: Path) -> Memory:
    root = tmp_path / "corpus"
    write_jsonl(
        root / "alpha" / f"{S1}.jsonl",
        simple_session("Why is the ledger slow?", session_id=S1, cwd=A, answer=LONG, prefix="x-"),
    )
    write_jsonl(
        root / "alpha" / f"{S2}.jsonl",
        simple_session(
            "How do we rotate keys?", session_id=S2, cwd=A, answer="With the vault.", prefix="y-"
        ),
    )
    memory = Memory(tmp_path / "m.db")
    memory.import_paths([root], embed=False)
    return memory


def _covering(memory: Memory, uuid: str) -> list[str]:
    """Chunk ids whose records cover `uuid`, in the order chunk_rows lists them (the check)."""
    ids = [row[1] for row in memory.chunk_rows()]
    return [c.id for c in memory.chunks(ids, Scope.everywhere()) if uuid in c.message_uuids]


def test_each_message_maps_to_every_chunk_that_covers_it_and_unknown_ones_are_left_out(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path)
    try:
        found = memory.chunks_for_messages(S1, ["x-u1", "x-a3", "nope"], Scope.of(A))
        assert set(found) == {"x-u1", "x-a3"}  # "nope" is in no chunk
        assert list(found["x-a3"]) == _covering(memory, "x-a3")
        assert len(found["x-a3"]) >= 3  # 2,600 characters need at least three 900-character chunks
        assert list(found["x-u1"]) == _covering(memory, "x-u1")
        assert len(found["x-u1"]) == 1
        # a message of another session is not answered for this one, but is for its own
        assert memory.chunks_for_messages(S1, ["y-u1"], Scope.of(A)) == {}
        assert list(memory.chunks_for_messages(S2, ["y-u1"], Scope.of(A))["y-u1"]) == _covering(
            memory, "y-u1"
        )
    finally:
        memory.close()


def test_the_read_is_scoped_and_still_names_a_chunk_that_a_settle_hid(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    try:
        assert memory.chunks_for_messages(S1, ["x-u1"], Scope.of("/home/dev/beta")) == {}
        first = memory.chunks_for_messages(S1, ["x-u1"], Scope.of(A))["x-u1"][
            0
        ]  # control: in scope
        other = memory.chunks_for_messages(S2, ["y-u1"], Scope.of(A))["y-u1"][0]
        hits = [h.chunk_id for h in memory.lexical("ledger slow", Scope.of(A), 10)]
        assert first in hits  # found before the settle
        memory.settle(first, by=other, kind="corrected", reason="wrong", actor="person", now=NOW)
        hits = [h.chunk_id for h in memory.lexical("ledger slow", Scope.of(A), 10)]
        assert first not in hits  # searches no longer return it ...
        assert (
            memory.chunks_for_messages(S1, ["x-u1"], Scope.of(A))["x-u1"][0] == first
        )  # ... this does
    finally:
        memory.close()

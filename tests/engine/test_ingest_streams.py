"""Which stream a transcript file's messages and chunks are stored under.

Two files share a stream only when they are the same file: two exported `session.jsonl` of two projects
must not overwrite or borrow each other's text. A store written under the old key (the bare session id)
is re-keyed by the next import of each file, without duplicates and without losing what it holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import ingest
from engine.chunking import chunk_id
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from engine.transcript_files import TranscriptFile, is_main_stream, stored_stream
from tests.engine.fixtures_transcripts import append_jsonl, simple_session, user_line, write_jsonl

A = "/home/dev/alpha"
B = "/home/dev/beta"
C = "/home/dev/gamma"
GAMMA = "9a33a000-0000-4000-8000-000000000003"


def open_memory(tmp_path: Path, name: str = "m.db") -> Memory:
    return Memory(tmp_path / name, HashEmbedder(64))


def texts(memory: Memory, project: str) -> list[str]:
    return sorted(text for _, _, p, text in memory.chunk_rows() if p == project)


def hits(memory: Memory, word: str, project: str) -> list[str]:
    found = memory.lexical(word, Scope.of(project), 10)
    return [r.text for r in memory.chunks([s.chunk_id for s in found], Scope.of(project))]


def exported(root: Path, folder: str, cwd: str, prompt: str, answer: str, prefix: str) -> Path:
    """A session exported as `<folder>/session.jsonl`: the file name is no session id."""
    return write_jsonl(
        root / folder / "session.jsonl",
        simple_session(prompt, cwd=cwd, answer=answer, prefix=prefix),
    )


def test_same_file_name_in_two_projects_keeps_each_projects_text(tmp_path: Path) -> None:
    """Before: one stream `session`; importing B then A overwrote B's rows and filed B's text under A."""
    root = tmp_path / "exports"
    file_a = exported(root, "alpha", A, "Why does alpha flake?", "Alpha used a wall clock.", "a-")
    file_b = exported(root, "beta", B, "Rotate the beta key", "Rotated the beta key.", "b-")
    # B holds more than A: with a shared stream, A's import re-chunked B's extra messages under A.
    append_jsonl(file_b, [user_line("zebracorn deployment notes", uuid="b-u9", cwd=B)])
    memory = open_memory(tmp_path)

    memory.import_paths([file_b])
    memory.import_paths([file_a])

    alpha, beta = texts(memory, A), texts(memory, B)
    assert len(alpha) == 1
    assert "Why does alpha flake?" in alpha[0]  # A's text is stored, under A
    assert len(beta) == 1
    assert "Rotate the beta key" in beta[0]  # B's text survived A's import
    assert "zebracorn" in beta[0]
    assert not any("zebracorn" in t for t in alpha)
    assert hits(memory, "zebracorn", A) == []  # never injected into A's prompts
    assert len(hits(memory, "zebracorn", B)) == 1  # positive control: B finds it
    records = memory.chunks([i for _, i, _, _ in memory.chunk_rows()], Scope.everywhere())
    assert len({r.stream for r in records}) == 2


def test_the_stream_key_names_the_project_and_the_resolved_file(tmp_path: Path) -> None:
    tf = TranscriptFile(path=tmp_path / "s.jsonl", session_id="s", agent_id=None, stream="s")
    key = stored_stream(tf, A, "/x/s.jsonl")
    assert key.startswith("s@")
    assert len(key) == len("s@") + 16
    assert key == stored_stream(tf, A, "/x/s.jsonl")  # the same file keeps its key
    assert stored_stream(tf, B, "/x/s.jsonl") != key  # another project: another stream
    assert stored_stream(tf, A, "/y/s.jsonl") != key  # another file: another stream


def test_a_stream_key_tells_a_main_transcript_from_a_subagents(tmp_path: Path) -> None:
    main = TranscriptFile(path=tmp_path / "s.jsonl", session_id="s", agent_id=None, stream="s")
    agent = TranscriptFile(
        path=tmp_path / "s" / "agent-x.jsonl", session_id="s", agent_id="x", stream="s/agent-x"
    )
    assert is_main_stream(stored_stream(main, A, "/x/s.jsonl"), "s")
    assert not is_main_stream(stored_stream(agent, A, "/x/s/agent-x.jsonl"), "s")
    assert not is_main_stream(stored_stream(main, A, "/x/s.jsonl"), "t")  # another session's


def test_chunk_ids_are_stable_across_reimports_of_the_same_file(tmp_path: Path) -> None:
    root = tmp_path / "exports"
    path = exported(root, "alpha", A, "Why does alpha flake?", "Alpha used a wall clock.", "a-")
    first = open_memory(tmp_path, "first.db")
    first.import_paths([root])
    ids = [i for _, i, _, _ in first.chunk_rows()]
    record = first.chunks(ids, Scope.of(A))[0]
    assert ids == [chunk_id(record.stream, 0)]  # the id is derived from the stored stream

    path.write_bytes(path.read_bytes())  # touched, same bytes: unchanged
    assert first.import_paths([root]).files_unchanged == 1
    append_jsonl(path, [user_line("and a follow-up question " * 40, uuid="a-u9", cwd=A)])
    first.import_paths([root])
    grown = [i for _, i, _, _ in first.chunk_rows()]
    # 999 characters after stripping: pieces of 900 and 99, neither fits beside the first chunk.
    assert len(grown) == 3
    assert grown[0] == ids[0]  # the old chunk kept its id

    second = open_memory(tmp_path, "second.db")
    second.import_paths([root])
    assert [i for _, i, _, _ in second.chunk_rows()] == grown  # same ids in a fresh store


def test_a_store_keyed_the_old_way_is_rekeyed_by_the_next_import_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema is unchanged; only the key is. Yesterday's import stored `tf.stream` itself."""
    root = tmp_path / "exports"
    exported(root, "alpha", A, "Why does alpha flake?", "Alpha used a wall clock.", "a-")
    exported(root, "beta", B, "Rotate the beta key", "Rotated the beta key.", "b-")
    gone = tmp_path / "gone" / f"{GAMMA}.jsonl"
    write_jsonl(
        gone, simple_session("Gamma?", session_id=GAMMA, cwd=C, answer="Gamma.", prefix="g-")
    )
    old = open_memory(tmp_path, "old.db")
    with monkeypatch.context() as m:
        m.setattr(ingest, "stored_stream", lambda tf, project, path: tf.stream)
        old.import_paths([gone])
        old.import_paths([root / "beta"])
        old.import_paths([root / "alpha"])
    # Positive control of the old behaviour: the two `session.jsonl` shared one stream and A overwrote B.
    assert texts(old, B) == []
    assert len(texts(old, A)) == 1
    gone.unlink()  # Claude Code deleted this transcript since; its text must stay

    report = old.import_paths([root])

    assert report.files_failed == {}
    assert report.files_reimported == 2
    assert report.files_imported == 2
    fresh = open_memory(tmp_path, "fresh.db")
    fresh.import_paths([root])
    rows = sorted((i, p, t) for _, i, p, t in old.chunk_rows() if p != C)
    assert rows == sorted((i, p, t) for _, i, p, t in fresh.chunk_rows())  # ids, projects, texts
    assert len(texts(old, C)) == 1  # the deleted transcript's chunk is kept
    assert int(str(old.status()["files"])) == 3
    assert old.import_paths([root]).files_unchanged == 2  # and the new keys are stable


def test_recent_sessions_name_the_opening_chunk_of_the_main_stream(tmp_path: Path) -> None:
    """The session-start brief quotes it; it used to compute `chunk_id(session id, 0)` itself."""
    root = tmp_path / "projects" / "alpha"
    write_jsonl(
        root / f"{GAMMA}.jsonl",
        simple_session("Main prompt here", session_id=GAMMA, cwd=A, answer="Main answer."),
    )
    agent = [user_line("Agent prompt here", uuid="g1", session_id=GAMMA, cwd=A, sidechain=True)]
    write_jsonl(root / GAMMA / "subagents" / "agent-a1.jsonl", agent)
    memory = open_memory(tmp_path)
    memory.import_paths([root])

    (row,) = memory.recent_sessions(Scope.of(A), 5)

    assert row["chunks"] == 2  # the main stream's chunk and the subagent's
    (opening,) = memory.chunks([str(row["opening_chunk_id"])], Scope.of(A))
    assert opening.text.startswith("Main prompt here")
    assert opening.index == 0


def _opening(memory: Memory) -> str:
    (row,) = memory.recent_sessions(Scope.of(A), 5)
    assert row["opening_chunk_id"] is not None
    (opening,) = memory.chunks([str(row["opening_chunk_id"])], Scope.of(A))
    return opening.text


def test_the_opening_of_a_transcript_not_named_by_its_session_is_its_first_chunk(
    tmp_path: Path,
) -> None:
    """A copied transcript renamed `exported.jsonl`: its stream is keyed by the file name, while its
    chunks carry the session id of its lines. The opening used to be None (the brief quoted `""`)."""
    root = tmp_path / "projects" / "alpha"
    write_jsonl(
        root / "exported.jsonl",
        simple_session("Renamed prompt here", session_id=GAMMA, cwd=A, answer="An answer."),
    )
    memory = open_memory(tmp_path)
    memory.import_paths([root])
    assert _opening(memory).startswith("Renamed prompt here")


def test_a_session_with_only_a_subagents_transcript_opens_with_the_subagents_first_chunk(
    tmp_path: Path,
) -> None:
    root = tmp_path / "projects" / "alpha"
    agent = [user_line("Agent prompt here", uuid="g1", session_id=GAMMA, cwd=A, sidechain=True)]
    write_jsonl(root / GAMMA / "subagents" / "agent-a1.jsonl", agent)
    memory = open_memory(tmp_path)
    memory.import_paths([root / GAMMA])  # the subagent's file alone, first
    assert _opening(memory).startswith("Agent prompt here")
    # Once the main transcript is imported (after the subagent's: a later rowid), it opens.
    write_jsonl(
        root / f"{GAMMA}.jsonl",
        simple_session("Main prompt here", session_id=GAMMA, cwd=A, answer="Main answer."),
    )
    memory.import_paths([root])
    assert _opening(memory).startswith("Main prompt here")

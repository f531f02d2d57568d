"""The prompt hook after a compaction: the running session's lines the compaction took out of context can
be injected again; what the context still holds is not.

COMPACTED asked why the retry test fails and got an answer (one chunk), was compacted (a
`compact_boundary` line and the summary Claude Code writes after it), then asked a long question about the
release version (a chunk of its own, after the boundary). OTHER asked about the retry test in its own
words. Both are imported, as the Stop hook would have done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.api import ChunkRecord
from engine.scope import Scope
from engine.text_reads import TextReads
from recallbench.running_session import compaction_lines, not_in_context, transcript_uuids
from tests.engine.fixtures_transcripts import Line, system_line, ts, user_line, write_jsonl
from tests.engine.records import chunk_record
from tests.recallbench.corpus import ALPHA, chat_session, import_corpus
from tests.recallbench.prompt_hook import ANSWER, FRESH, OTHER_TEXT, PROMPT, inject, write_other

COMPACTED = "0c0c0c0c-0000-4000-8000-000000000001"
OTHER = "0c0c0c0c-0000-4000-8000-000000000002"
RELEASE = "Bump the release version number in pyproject for the candidate build"
# 810 characters: with the first turn's 105 it passes the 900-character chunk budget, so the second
# turn starts a chunk of its own
RELEASE_TEXT = RELEASE + " " + "and keep the changelog in step with it " * 19
OWN_HEADER = "from this session before its last compaction and earlier sessions"


def compacted_lines(*, boundary: bool = True) -> list[Line]:
    """COMPACTED's lines; without `boundary`, the same turns never compacted."""
    env: dict[str, Any] = {"session_id": COMPACTED, "cwd": ALPHA}
    turns = chat_session(COMPACTED, ALPHA, [(PROMPT, ANSWER), (RELEASE_TEXT, "Bumped.")], minute=0)
    marker = system_line("compact_boundary", uuid=f"{COMPACTED}-b", timestamp=ts(20), **env)
    marker["logicalParentUuid"] = f"{COMPACTED}-a0"
    marker["compactMetadata"] = {"trigger": "manual", "preTokens": 1200}
    summary = user_line(
        "This session is being continued from a previous conversation.",
        uuid=f"{COMPACTED}-s",
        parent=f"{COMPACTED}-b",
        timestamp=ts(20, 5),
        **env,
    )
    summary["isCompactSummary"] = True
    return turns[:2] + ([marker, summary] if boundary else []) + turns[2:]


def write(root: Path) -> dict[str, Path]:
    folder = root / "-home-dev-alpha"
    return {
        COMPACTED: write_jsonl(folder / f"{COMPACTED}.jsonl", compacted_lines()),
        OTHER: write_other(folder, OTHER),
    }


def test_a_compacted_session_is_given_its_own_lines_from_before_the_compaction(
    tmp_path: Path, home: Path
) -> None:
    files = write(tmp_path / "projects")
    import_corpus(home / "memory.db", tmp_path / "projects").close()
    with TextReads(home / "memory.db") as reads:
        ids = [s.chunk_id for s in reads.lexical(PROMPT, Scope.of(ALPHA), 10)]
        own = [r for r in reads.chunks(ids, Scope.of(ALPHA)) if r.session_id == COMPACTED]
    # the scenario: the first turn is one chunk of its own, before the boundary
    assert [r.message_uuids for r in own][:1] == [(f"{COMPACTED}-u0", f"{COMPACTED}-a0")]

    after = inject(PROMPT, session=COMPACTED, cwd=ALPHA, transcript=str(files[COMPACTED]))
    assert ANSWER in after
    assert OWN_HEADER in after
    assert OTHER_TEXT in after  # positive control: the other session's chunk too
    # controls: the same turns never compacted, and no readable transcript, leave the own chunk out
    never = write_jsonl(tmp_path / "never.jsonl", compacted_lines(boundary=False))
    for transcript in (str(never), str(tmp_path / "missing.jsonl")):
        out = inject(PROMPT, session=COMPACTED, cwd=ALPHA, transcript=transcript)
        assert ANSWER not in out
        assert OWN_HEADER not in out
        assert OTHER_TEXT in out
        assert "from earlier sessions in this project" in out


def test_what_came_after_the_compaction_is_not_given_back(tmp_path: Path, home: Path) -> None:
    files = write(tmp_path / "projects")
    import_corpus(home / "memory.db", tmp_path / "projects").close()
    own = inject(RELEASE, session=COMPACTED, cwd=ALPHA, transcript=str(files[COMPACTED]))
    assert "changelog in step" not in own
    # control: asked from another session, the chunk after the boundary is relevant and injected
    assert "changelog in step" in inject(RELEASE, session=FRESH, cwd=ALPHA)


def rec(cid: str, stream: str, *uuids: str) -> ChunkRecord:
    """A chunk of `stream` (a stored stream key: "<session>[/agent-<id>]@<digits>")."""
    session = stream.partition("@")[0].partition("/")[0]
    return replace(chunk_record(cid, session, uuids), stream=stream)


def test_not_in_context_splits_the_running_session_at_its_last_compaction(tmp_path: Path) -> None:
    records = [
        rec("own-before", "S@01", "u1", "a1"),  # kept: taken out by the compaction
        rec("own-across", "S@01", "a1", "u2"),  # kept: one line is out of context
        rec("own-after", "S@01", "u2", "a2"),  # left out: in context
        rec("own-subagent", "S/agent-x@02", "x1"),  # left out: a subagent's chunk
        rec("own-empty", "S@01"),  # left out: nothing to tell
        rec("copy-before", "O@03", "u1", "a1"),  # kept: a copy of lines out of context
        rec("copy-after", "O@03", "u2", "a2"),  # left out: a copy of lines in context
        rec("other-mixed", "O@03", "a2", "z1"),  # kept: holds a line the session lacks
    ]
    turns = [{"type": "user", "uuid": u} for u in ("u1", "a1", "u2", "a2")]
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1"}
    path = tmp_path / "t.jsonl"
    payload = {"session_id": "S", "transcript_path": str(path)}

    def kept(lines: Sequence[Mapping[str, str]], store: _Store) -> list[str]:
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return [r.id for r in not_in_context(records, store, payload)]

    compacted = [*turns[:2], boundary, *turns[2:]]
    assert kept(compacted, _Store(None)) == [
        "own-before",
        "own-across",
        "copy-before",
        "other-mixed",
    ]
    # controls, never compacted: only the chunk with a line the session lacks is new to it, whether
    # the store holds the session or, before it is imported, the transcript says which lines it has
    assert kept(turns, _Store({"u1", "a1", "u2", "a2"})) == ["other-mixed"]
    assert kept(turns, _Store(None)) == ["other-mixed"]


class _Store:
    """The store's answer to `held_messages`: the lines it holds of the running session (None: the
    session is not stored)."""

    def __init__(self, held: set[str] | None) -> None:
        self.held = held

    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None:
        return None if self.held is None else self.held & set(uuids)


def test_compaction_lines_reads_the_lines_from_the_last_compaction_on(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    mention = json.dumps({"type": "user", "uuid": "u3", "text": '"subtype":"compact_boundary"'})
    path.write_text(
        '{"type":"user","uuid":"u1"}\n'
        '{"type":"system","subtype":"compact_boundary","uuid":"b1"}\n'
        '{"type":"user","uuid":"u2"}\n'
        '{"type": "system", "subtype": "compact_boundary", "uuid": "b2"}\n'
        + mention  # quoted inside a string value: not a compaction
        + '\n{"type":"user","uuid":"u4"}\n',
        encoding="utf-8",
    )
    assert compaction_lines(path) == frozenset({"b2", "u3", "u4"})
    assert transcript_uuids(path) == frozenset({"u1", "b1", "u2", "b2", "u3", "u4"})
    # only the last `tail_bytes` are searched: the last two lines are 75 + 28 = 103 bytes (the
    # mention, then u4's), b2's line the 64 before them; from 10 bytes into it its subtype shows
    assert path.stat().st_size == 282
    assert compaction_lines(path, tail_bytes=103) is None
    assert compaction_lines(path, tail_bytes=157) == frozenset({"b2", "u3", "u4"})
    assert compaction_lines(path, tail_bytes=170) == frozenset({"b2", "u3", "u4"})
    # controls: the mention alone is no compaction, nor is an empty file
    path.write_text(mention + "\n", encoding="utf-8")
    assert compaction_lines(path) is None
    assert transcript_uuids(path) == frozenset({"u3"})
    path.write_text("", encoding="utf-8")
    assert compaction_lines(path) is None
    assert transcript_uuids(path) == frozenset()

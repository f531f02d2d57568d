"""The prompt hook in a resumed session: what the running session already holds is not injected again.

Claude Code writes a resumed session to a new file under a new session id, starting with a copy of the
earlier lines under the same line uuids. Here ORIG asked why the retry test fails and got an answer
(two lines, one chunk); RESUMED starts with those two lines under their uuids, then a turn of its own;
OTHER asked about the same test in its own words. Every prompt below is ORIG's question, so ORIG's
chunk is the first lexical hit and OTHER's is relevant too (its coverage is 5/6 of the content words).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from engine.scope import Scope
from engine.text_reads import TextReads
from recallbench.running_session import not_in_context, transcript_uuids
from tests.engine.fixtures_transcripts import Line, write_jsonl
from tests.recallbench.corpus import ALPHA, chat_session, import_corpus
from tests.recallbench.prompt_hook import ANSWER as ORIG_ANSWER
from tests.recallbench.prompt_hook import FRESH, OTHER_TEXT, PROMPT, inject, run_hook, write_other

ORIG = "0a0a0a0a-0000-4000-8000-000000000001"
RESUMED = "0a0a0a0a-0000-4000-8000-000000000002"
OTHER = "0a0a0a0a-0000-4000-8000-000000000003"


def orig_lines() -> list[Line]:
    return chat_session(ORIG, ALPHA, [(PROMPT, ORIG_ANSWER)], minute=0)


def resumed_lines(copied: int) -> list[Line]:
    """The first `copied` of ORIG's lines under their uuids, then RESUMED's own turn."""
    lines = [copy.deepcopy(line) for line in orig_lines()[:copied]]
    for line in lines:
        line["sessionId"] = RESUMED
    own = chat_session(RESUMED, ALPHA, [("Add a changelog entry for the rename", "Added.")], 30)
    return lines + own


def write(root: Path, *, copied: int = 2) -> dict[str, Path]:
    folder = root / "-home-dev-alpha"
    return {
        ORIG: write_jsonl(folder / f"{ORIG}.jsonl", orig_lines()),
        OTHER: write_other(folder, OTHER),
        RESUMED: write_jsonl(folder / f"{RESUMED}.jsonl", resumed_lines(copied)),
    }


def import_only(db: Path, root: Path, sessions: list[str]) -> None:
    """Import the corpus less the sessions not in `sessions` (moved aside, then back)."""
    folder = root / "-home-dev-alpha"
    aside = root.parent / "aside"
    aside.mkdir(exist_ok=True)
    moved = [p for p in folder.glob("*.jsonl") if p.stem not in sessions]
    for path in moved:
        path.rename(aside / path.name)
    import_corpus(db, root).close()
    for path in moved:
        (aside / path.name).rename(path)


def prompt(home: Path, session: str, transcript: Path | str) -> str:
    return inject(PROMPT, session=session, cwd=ALPHA, transcript=str(transcript))


def test_a_resumed_session_not_yet_imported_is_not_given_the_lines_its_transcript_holds(
    tmp_path: Path, home: Path
) -> None:
    files = write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER])
    resumed = prompt(home, RESUMED, files[RESUMED])
    assert ORIG_ANSWER not in resumed
    assert OTHER_TEXT in resumed  # positive control: the other session's chunk is injected
    # controls: a fresh session, and the resumed one when its transcript cannot be read, get ORIG's
    assert ORIG_ANSWER in prompt(home, FRESH, tmp_path / "missing.jsonl")
    assert ORIG_ANSWER in prompt(home, RESUMED, "")


def test_a_resumed_session_once_imported_is_not_given_its_own_lines(
    tmp_path: Path, home: Path
) -> None:
    write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER, RESUMED])
    # once the session is stored, the store says which lines it holds: a missing file changes nothing
    resumed = prompt(home, RESUMED, tmp_path / "missing.jsonl")
    assert ORIG_ANSWER not in resumed
    assert OTHER_TEXT in resumed
    assert ORIG_ANSWER in prompt(home, FRESH, tmp_path / "missing.jsonl")  # control


def test_a_chunk_with_a_line_the_resumed_session_lacks_is_still_injected(
    tmp_path: Path, home: Path
) -> None:
    # RESUMED copied ORIG's question only: ORIG's chunk also holds the answer, which it lacks
    files = write(tmp_path / "projects", copied=1)
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER])
    assert ORIG_ANSWER in prompt(home, RESUMED, files[RESUMED])


def test_not_in_context_reads_the_store_first_then_the_transcript(
    tmp_path: Path, home: Path
) -> None:
    files = write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER, RESUMED])
    with TextReads(home / "memory.db") as reads:
        found = {s.chunk_id for s in reads.lexical(PROMPT, Scope.of(ALPHA), 10)}
        records = reads.chunks(sorted(found), Scope.of(ALPHA))
        by_session = {r.session_id: r for r in records}
        assert set(by_session) == {ORIG, OTHER, RESUMED}
        orig = by_session[ORIG]
        assert orig.message_uuids == (f"{ORIG}-u0", f"{ORIG}-a0")
        assert reads.held_messages(RESUMED, [*orig.message_uuids, f"{OTHER}-u0"]) == set(
            orig.message_uuids
        )
        assert reads.held_messages(OTHER, orig.message_uuids) == set()
        assert reads.held_messages(FRESH, orig.message_uuids) is None
        # the running session's own chunk and ORIG's copy of its lines go; OTHER's stays
        kept = not_in_context(records, reads, {"session_id": RESUMED})
        assert [r.session_id for r in kept] == [OTHER]
        # a session that is not stored: its transcript says which lines it holds (here RESUMED's
        # file, which holds every line of ORIG's chunk and of RESUMED's)
        unstored = {"session_id": FRESH, "transcript_path": str(files[RESUMED])}
        assert [r.session_id for r in not_in_context(records, reads, unstored)] == [OTHER]
        # control: without a transcript nothing but the session's own chunks is left out
        assert len(not_in_context(records, reads, {"session_id": FRESH})) == 3


def test_transcript_uuids_reads_each_lines_uuid_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    quoted = json.dumps({"note": '{"uuid":"u-inside"}'})  # a uuid inside a string value
    path.write_text(
        '{"parentUuid":"u-parent","uuid":"u-compact","type":"user"}\n'
        '{"type": "assistant", "uuid": "u-spaced", "leafUuid": "u-leaf"}\n' + quoted + "\n",
        encoding="utf-8",
    )
    assert transcript_uuids(path) == frozenset({"u-compact", "u-spaced"})
    size = path.stat().st_size
    assert transcript_uuids(path, max_bytes=size) == frozenset({"u-compact", "u-spaced"})
    assert transcript_uuids(path, max_bytes=size - 1) is None  # too large to read in a hook
    assert transcript_uuids(tmp_path / "missing.jsonl") is None
    assert transcript_uuids(tmp_path) is None  # a folder
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert transcript_uuids(fifo) is None  # returns at once: no writer is waited for
    assert transcript_uuids(Path("/dev/zero")) is None  # a device that never ends is not read


@pytest.mark.parametrize("payload", [{}, {"session_id": 7}, {"session_id": ""}])
def test_without_a_session_id_nothing_is_left_out(
    tmp_path: Path, home: Path, payload: dict[str, object]
) -> None:
    write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER, RESUMED])
    with TextReads(home / "memory.db") as reads:
        ids = [s.chunk_id for s in reads.lexical(PROMPT, Scope.of(ALPHA), 10)]
        records = reads.chunks(ids, Scope.of(ALPHA))
        assert len(records) == 3
        assert not_in_context(records, reads, payload) == records


# --- a long session on its own topic --------------------------------------------------------------

LONG = "0b0b0b0b-0000-4000-8000-000000000001"
EARLIER = "0b0b0b0b-0000-4000-8000-000000000002"
TOPIC = "flaky retry importer timeout"
EARLIER_TEXT = "Why does the flaky retry test in the importer hit the timeout on CI?"


def test_a_long_session_on_its_own_topic_does_not_crowd_out_earlier_sessions(
    tmp_path: Path, home: Path
) -> None:
    # LONG: six prompts of 600 characters, each the topic's four words over and over (one chunk each,
    # every one ranked above EARLIER's short chunk by BM25); EARLIER: the topic asked once.
    turns = [((f"{TOPIC} " * 30)[:600] + f" part {n}", "Noted.") for n in range(6)]
    folder = tmp_path / "projects" / "-home-dev-alpha"
    write_jsonl(folder / f"{LONG}.jsonl", chat_session(LONG, ALPHA, turns, minute=0))
    write_jsonl(
        folder / f"{EARLIER}.jsonl",
        chat_session(EARLIER, ALPHA, [(EARLIER_TEXT, "The decorator swallowed it.")], minute=30),
    )
    import_corpus(home / "memory.db", tmp_path / "projects").close()
    with TextReads(home / "memory.db") as reads:
        ranked = reads.chunks(
            [s.chunk_id for s in reads.lexical(TOPIC, Scope.of(ALPHA), 20)], Scope.of(ALPHA)
        )
    # the scenario: LONG holds the six best hits, EARLIER's chunk is the seventh
    assert [r.session_id for r in ranked] == [LONG] * 6 + [EARLIER]

    def ask(session: str) -> str:
        return inject(TOPIC, session=session, cwd=ALPHA)

    # asked from LONG itself, whose six chunks are left out, the earlier session's chunk is found
    assert EARLIER_TEXT in ask(LONG)
    # control: from another session LONG's chunks are relevant and fill the five places first
    other = ask(FRESH)
    assert f"{TOPIC} {TOPIC}" in other
    assert EARLIER_TEXT not in other


def brief(session: str, transcript: Path | str, source: str) -> str:
    """What the SessionStart hook prints for `session` starting in alpha (`source`: how it started)."""
    return run_hook(
        "SessionStart", session=session, cwd=ALPHA, transcript=str(transcript), source=source
    )


# How the brief lists each session: its opening words (every test session id starts 0a0a0a0a).
ORIG_LISTED = f'"{PROMPT[:40]}'
OTHER_LISTED = f'"{OTHER_TEXT[:40]}'


@pytest.mark.parametrize("source", ["resume", "fork"])
def test_the_brief_of_a_resumed_or_forked_session_leaves_out_the_session_it_continues(
    tmp_path: Path, home: Path, source: str
) -> None:
    files = write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER])
    resumed = brief(RESUMED, files[RESUMED], source)
    assert ORIG_LISTED not in resumed
    assert OTHER_LISTED in resumed  # positive control: the other session is listed
    # controls: a fresh start lists ORIG; so does the resumed session when its transcript is gone,
    # or when its copy lacks ORIG's opening lines
    assert ORIG_LISTED in brief(FRESH, tmp_path / "none.jsonl", "startup")
    assert ORIG_LISTED in brief(RESUMED, tmp_path / "missing.jsonl", source)
    partial = write_jsonl(tmp_path / "partial.jsonl", resumed_lines(0))
    assert ORIG_LISTED in brief(RESUMED, partial, source)


def test_only_a_resumed_or_forked_start_reads_the_transcript_for_the_brief(
    tmp_path: Path, home: Path
) -> None:
    files = write(tmp_path / "projects")
    import_only(home / "memory.db", tmp_path / "projects", [ORIG, OTHER])
    # the same transcript under a start that continues nothing: ORIG stays listed
    for source in ("startup", "clear", "compact", ""):
        assert ORIG_LISTED in brief(RESUMED, files[RESUMED], source)

"""`recallbench sessions` and `recallbench show`: browsing the memory without a query."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.chunking import chunk_id
from engine.scope import Scope
from recallbench.chunk_view import MIN_SHORT_ID, read_chunk
from recallbench.mcp_tools import MemoryChunk
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    simple_session,
    text_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.recallbench.cli_run import ok as invoke
from tests.recallbench.cli_run import run

LONG = "4c0a0000-0000-4000-8000-00000000000a"  # five chunks in alpha, started 10:30
SHORT = "4c0a0000-0000-4000-8000-00000000000b"  # one chunk in alpha, started 10:00
BETA = "4c0a0000-0000-4000-8000-00000000000c"  # one chunk in beta, started 11:00
# Five messages of about 700 characters: each fills a chunk of its own (900-character budget).
WORDS = ("anchovy", "bramble", "cobalt", "dulcimer", "ember")


def _message(word: str) -> str:
    return f"{word.capitalize()} is the topic here." + f" {word} filler text." * 33


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    alpha = tmp_path / "work" / "alpha"
    beta = tmp_path / "work" / "beta"
    alpha.mkdir(parents=True)
    beta.mkdir(parents=True)
    root = tmp_path / "transcripts"
    env: dict[str, Any] = {"session_id": LONG, "cwd": str(alpha)}
    lines: list[dict[str, Any]] = []
    parent = None
    for i, word in enumerate(WORDS):
        if i % 2 == 0:
            lines.append(
                user_line(_message(word), uuid=f"l{i}", parent=parent, timestamp=ts(30 + i), **env)
            )
        else:
            lines.extend(
                assistant_lines(
                    [text_block(_message(word))],
                    message_id=f"m{i}",
                    uuids=[f"l{i}"],
                    parent=parent,
                    timestamp=ts(30 + i),
                    **env,
                )
            )
        parent = f"l{i}"
    write_jsonl(root / "a" / f"{LONG}.jsonl", lines)
    write_jsonl(
        root / "a" / f"{SHORT}.jsonl",
        simple_session(
            "Why is the short session short?", session_id=SHORT, cwd=str(alpha), prefix="s-"
        ),
    )
    beta_lines = simple_session("Rotate the beta key", session_id=BETA, cwd=str(beta), prefix="b-")
    for line in beta_lines:
        line["timestamp"] = ts(60)
    write_jsonl(root / "b" / f"{BETA}.jsonl", beta_lines)
    invoke("import", str(root))
    monkeypatch.chdir(alpha)
    return alpha, beta


def long_chunk(index: int) -> str:
    return chunk_id(f"{LONG}@" + stream_hash(), index)


def stream_hash() -> str:
    data = json.loads(invoke("sessions", "--json"))
    opening = next(s for s in data["sessions"] if s["session_id"] == LONG)["opening_chunk_id"]
    shown = json.loads(invoke("show", opening, "--json"))["chunk"]
    assert shown["stream"].startswith(f"{LONG}@")
    return str(shown["stream"]).split("@", 1)[1]


def test_sessions_lists_this_projects_sessions_newest_first_with_counts_and_openings(
    corpus: tuple[Path, Path],
) -> None:
    alpha, beta = corpus
    out = invoke("sessions").splitlines()
    assert out[0] == f"scope: {alpha}  sessions: 2 (most recent first)"
    assert out[1] == f"2026-03-01 10:30 · session {LONG} · 5 chunks · {alpha}"
    assert out[2].startswith('    "Anchovy is the topic here. anchovy filler text.')
    assert out[2].endswith('…"')  # clipped to 110 characters, quotes aside
    assert len(out[2]) == 4 + 1 + 110 + 1
    assert out[3] == f"2026-03-01 10:00 · session {SHORT} · 1 chunk · {alpha}"
    assert "Why is the short session short?" in out[4]
    assert BETA not in "\n".join(out)
    # positive control: every project lists beta's session first (it started last, 11:00)
    everywhere = invoke("sessions", "--all-projects").splitlines()
    assert everywhere[0] == "scope: *  sessions: 3 (most recent first)"
    assert everywhere[1] == f"2026-03-01 11:00 · session {BETA} · 1 chunk · {beta}"
    assert invoke("sessions", "--all-projects", "--limit", "1").count("session ") == 1


def test_sessions_json_gives_each_sessions_fields_and_whole_opening(
    corpus: tuple[Path, Path],
) -> None:
    alpha, _ = corpus
    data = json.loads(invoke("sessions", "--json"))
    assert data["scope"] == str(alpha)
    first = data["sessions"][0]
    assert list(first) == [
        "session_id",
        "project",
        "started",
        "ended",
        "chunks",
        "opening_chunk_id",
        "opening",
    ]
    assert (first["session_id"], first["chunks"]) == (LONG, 5)
    assert first["started"] == ts(30)
    assert first["ended"] == ts(34)
    assert first["opening"] == _message("anchovy")


def test_show_prints_the_chunk_whole_and_its_neighbours_ids(corpus: tuple[Path, Path]) -> None:
    alpha, _ = corpus
    middle = long_chunk(2)
    out = invoke("show", middle)
    lines = out.splitlines()
    assert lines[0] == f"--- chunk {middle} · User · 2026-03-01 10:32 · session {LONG} · {alpha}"
    assert lines[1] == _message("cobalt")  # the whole text, not a snippet
    assert lines[2] == f"previous: {long_chunk(1)}  next: {long_chunk(3)}"
    assert "bramble" not in out
    assert "dulcimer" not in out
    # positive control: --context 1 prints the chunk before and after, in order
    wider = invoke("show", middle, "--context", "1")
    assert wider.index("Bramble is the topic") < wider.index("Cobalt is the topic")
    assert wider.index("Cobalt is the topic") < wider.index("Dulcimer is the topic")
    assert f"--- before · chunk {long_chunk(1)} · Assistant · 2026-03-01 10:31" in wider
    assert f"--- after · chunk {long_chunk(3)} · Assistant · 2026-03-01 10:33" in wider
    assert "Anchovy" not in wider
    assert "Ember" not in wider


def test_show_context_stops_at_the_ends_of_the_session(corpus: tuple[Path, Path]) -> None:
    data = json.loads(invoke("show", long_chunk(0), "--context", "3", "--json"))
    assert data["chunk"]["previous_chunk_id"] is None
    assert data["chunk"]["next_chunk_id"] == long_chunk(1)
    assert data["before"] == []
    assert [c["index"] for c in data["after"]] == [1, 2, 3]
    last = json.loads(invoke("show", long_chunk(4), "--context", "3", "--json"))
    assert [c["index"] for c in last["before"]] == [1, 2, 3]
    assert last["after"] == []
    assert last["chunk"]["next_chunk_id"] is None


def test_show_json_uses_the_mcp_get_memory_field_names(corpus: tuple[Path, Path]) -> None:
    data = json.loads(invoke("show", long_chunk(1), "--json"))
    shared = [f for f in MemoryChunk.model_fields if f not in ("found", "replaced_by", "message")]
    assert list(data["chunk"]) == shared
    assert data["chunk"]["author"] == "Assistant"
    assert data["chunk"]["text"] == _message("bramble")


def test_show_keeps_to_the_scope_and_says_how_to_widen_it(corpus: tuple[Path, Path]) -> None:
    _, beta = corpus
    beta_chunk = json.loads(invoke("sessions", "--project", str(beta), "--json"))["sessions"][0][
        "opening_chunk_id"
    ]
    refused = run("show", beta_chunk)
    assert refused.exit_code == 1
    assert f"no chunk {beta_chunk} in " in refused.output
    assert "(pass --all-projects to look everywhere)" in refused.output
    # positive control: the same id is shown with --all-projects, and with its own project
    assert "Rotate the beta key" in invoke("show", beta_chunk, "--all-projects")
    assert "Rotate the beta key" in invoke("show", beta_chunk, "--project", str(beta))


def test_show_reads_a_chunk_by_the_start_of_its_id_when_it_starts_one(
    corpus: tuple[Path, Path],
) -> None:
    alpha, beta = corpus
    whole = long_chunk(1)
    shown = run("show", whole[:8])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == invoke("show", whole)  # control: what the whole id shows
    assert shown.stdout.startswith(f"--- chunk {whole} · ")
    assert (
        shown.stderr == f"chunk {whole}: the one chunk id in {alpha} that starts with {whole[:8]}\n"
    )
    # three characters are never read as a start; they name the ids they start
    refused = run("show", whole[:3])
    assert refused.exit_code == 1
    assert f"no chunk {whole[:3]} in {alpha}, but " in refused.output
    assert whole in refused.output
    # another project's chunk is not reached by the start of its id
    elsewhere = run("show", whole[:8], "--project", str(beta))
    assert elsewhere.exit_code == 1
    assert f"no chunk {whole[:8]} in {beta}" in elsewhere.output


def test_browsing_outside_any_project_asks_for_a_scope(
    corpus: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (("sessions",), ("show", long_chunk_id_unscoped())):
        result = run(*args)
        assert result.exit_code == 2
        assert "pass --project PATH or --all-projects" in result.output
    # positive control: the same listing with --all-projects works from here
    assert f"session {LONG}" in invoke("sessions", "--all-projects")


def long_chunk_id_unscoped() -> str:
    data = json.loads(invoke("sessions", "--all-projects", "--json"))
    return str(next(s for s in data["sessions"] if s["session_id"] == LONG)["opening_chunk_id"])


def test_browsing_without_a_database_says_to_import_first(tmp_path: Path) -> None:
    for args in (("sessions",), ("show", "x")):
        result = run("--db", str(tmp_path / "none.db"), *args)
        assert result.exit_code == 1
        assert "run `recallbench import` first" in result.output


def test_show_prints_a_corrected_chunk_with_its_status(corpus: tuple[Path, Path]) -> None:
    old = long_chunk(0)
    assert " · corrected on " not in invoke("show", old)  # control: no settle yet
    invoke("correct", old, "--note", "Anchovy was renamed.", "--kind", "corrected", "--reason", "x")
    assert json.loads(invoke("search", "anchovy topic", "--json"))["hits"][0]["chunk_id"] != old
    heading = invoke("show", old).splitlines()[0]
    assert heading.startswith(f"--- chunk {old} · User · 2026-03-01 10:30 · session {LONG} · ")
    assert " · corrected on " in heading
    assert json.loads(invoke("show", old, "--json"))["chunk"]["status"].startswith("corrected on ")


class _Ids:
    """Chunk ids, read as `read_chunk` reads them (scope aside)."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[Any]:
        return [SimpleNamespace(id=i) for i in ids if i in self.ids]

    def ids_starting_with(
        self, kind: str, prefix: str, scope: Scope, limit: int
    ) -> tuple[list[str], int]:
        found = sorted(i for i in self.ids if i.startswith(prefix) and len(i) > len(prefix))
        return found[:limit], len(found)


@pytest.mark.parametrize(
    ("given", "read", "starting"),
    [
        ("abcd-1", "abcd-1", []),  # a whole id
        ("abce", "abce-3", ["abce-3"]),  # four characters that start one id
        ("abcd", None, ["abcd-1", "abcd-2"]),  # four that start two: named, not read
        ("abc", None, ["abcd-1", "abcd-2", "abce-3"]),
        ("xyz", None, ["xyz-4"]),  # three characters that start one id: too few
        ("q", None, []),
    ],
)
def test_read_chunk_reads_four_or_more_characters_that_start_one_id(
    given: str, read: str | None, starting: list[str]
) -> None:
    assert MIN_SHORT_ID == 4
    record, named, count = read_chunk(
        _Ids(["abcd-1", "abcd-2", "abce-3", "xyz-4"]), given, Scope.everywhere()
    )
    assert (None if record is None else record.id, named, count) == (read, starting, len(starting))

"""`recallbench search` and `recallbench sessions` with `--since/--until`: the times a person writes,
and a listing kept to the window.

Corpus: `tests.engine.window_corpus` (chunks of project P written on 2026-01-10, -20 and -30 at
09:00 UTC; the best match for its query is the earliest).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench.cli import main
from recallbench.prompt_search import BadSearchRequestError, PromptSearch, request_scope
from recallbench.search_service import SearchService, socket_path
from recallbench.time_window import TimeError, narrowed, parse_time
from tests.engine.window_corpus import QUERY, P, session_id, write_window_corpus
from tests.recallbench.test_search_served import Counting

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_a_date_is_the_days_start_and_for_until_the_next_days() -> None:
    assert parse_time("2026-02-11", NOW) == datetime(2026, 2, 11, tzinfo=UTC)
    assert parse_time("2026-02-11", NOW, end=True) == datetime(2026, 2, 12, tzinfo=UTC)


def test_a_date_and_time_is_utc_unless_it_names_its_zone() -> None:
    assert parse_time("2026-02-11T14:30", NOW) == datetime(2026, 2, 11, 14, 30, tzinfo=UTC)
    assert parse_time("2026-02-11 14:30", NOW, end=True) == datetime(
        2026, 2, 11, 14, 30, tzinfo=UTC
    )
    zoned = parse_time("2026-02-11T14:30+02:00", NOW)
    assert zoned == datetime(2026, 2, 11, 12, 30, tzinfo=UTC)
    assert zoned.utcoffset() == timedelta(hours=2)  # kept as written; compared as an instant
    assert parse_time("2026-02-11T14:30Z", NOW) == datetime(2026, 2, 11, 14, 30, tzinfo=UTC)


def test_an_age_counts_back_from_now() -> None:
    assert parse_time("7d", NOW) == datetime(2026, 2, 22, 12, tzinfo=UTC)
    assert parse_time("2w", NOW) == datetime(2026, 2, 15, 12, tzinfo=UTC)
    assert parse_time("12h", NOW) == datetime(2026, 3, 1, tzinfo=UTC)
    assert parse_time("90m", NOW) == datetime(2026, 3, 1, 10, 30, tzinfo=UTC)
    assert parse_time(" 3D ", NOW) == datetime(2026, 2, 26, 12, tzinfo=UTC)


def test_an_unreadable_time_or_an_empty_window_is_refused_with_the_forms() -> None:
    with pytest.raises(TimeError, match=r"cannot read 'yesterday' as a time; give a date"):
        parse_time("yesterday", NOW)
    with pytest.raises(TimeError, match="cannot read"):
        parse_time("7 days", NOW)
    with pytest.raises(TimeError, match="'999999w' reaches back before the year 1"):
        parse_time("999999w", NOW)
    assert parse_time("99999w", NOW).year == 109  # control: far back, but a time
    scope = Scope.of(P)
    assert narrowed(scope, None, "  ", NOW) is scope  # nothing given: the scope itself
    assert narrowed(scope, "2026-02-11", "2026-02-11", NOW).window_bounds() == (
        "2026-02-11T00:00:00.000Z",
        "2026-02-12T00:00:00.000Z",
    )  # a bare date on both sides is that whole day
    with pytest.raises(TimeError, match="the window holds no time: since 2026-02-12 is not before"):
        narrowed(scope, "2026-02-12", "2026-02-11", NOW)
    zone = timezone(timedelta(hours=-5))
    assert narrowed(scope, "1d", None, NOW.astimezone(zone)).since == NOW - timedelta(days=1)


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    root = write_window_corpus(tmp_path / "claude")
    assert run("import", str(root / "projects")).exit_code == 0
    return root


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def sessions_of(result: Result) -> list[str]:
    return [hit["session_id"] for hit in json.loads(result.stdout)["hits"]]


def test_search_keeps_to_the_window_and_says_so(imported: Path) -> None:
    base = ("search", QUERY, "--project", P)
    everything = run(*base, "--json")
    assert sessions_of(everything)[0] == session_id(1)  # control: the Jan 10 chunk ranks first
    assert "window" not in json.loads(everything.stdout)
    windowed = run(*base, "--json", "--since", "2026-01-15", "--until", "2026-01-24")
    assert windowed.exit_code == 0, windowed.output
    assert sessions_of(windowed) == [session_id(2)]
    assert json.loads(windowed.stdout)["window"] == {
        "since": "2026-01-15T00:00:00.000Z",
        "until": "2026-01-25T00:00:00.000Z",
    }
    text = run(*base, "--since", "2026-01-25T09:00")
    assert text.stdout.splitlines()[0] == (
        f"arm: rrf  scope: {P}  window: 2026-01-25 09:00 .. UTC  hits: 1"
    )
    assert "session 77777777-0000-4000-8000-000000000003" in text.stdout


def test_a_running_server_answers_a_windowed_search_only_when_it_applies_the_window(
    imported: Path, home: Path
) -> None:
    emb = HashEmbedder()
    db = home / "memory.db"
    handler = Counting(PromptSearch(Memory(db, emb), "rrf", database=db))
    base = ("search", QUERY, "--project", P, "--json", "--verbose")
    alone = run(*base, "--until", "2026-01-15", "--in-process")
    with SearchService(emb, socket_path(home, emb.id), search=handler):
        served = run(*base, "--until", "2026-01-15")
    assert handler.calls == 1
    assert "answered by the server" in served.stderr
    assert json.loads(served.stdout) == json.loads(alone.stdout)
    assert sessions_of(served) == [session_id(1)]

    def without_window(request: Mapping[str, Any]) -> dict[str, Any]:
        """A server from before windows: it reads no since/until and names no window back."""
        older = {k: v for k, v in request.items() if k not in ("since", "until")}
        return {k: v for k, v in handler(older).items() if k != "window"}

    with SearchService(emb, socket_path(home, emb.id), search=without_window):
        unwindowed = run(*base)
        windowed = run(*base, "--until", "2026-01-15")
    assert "answered by the server" in unwindowed.stderr  # control: it answers without a window
    assert handler.calls == 3
    assert "did not apply the time window" in windowed.stderr
    assert "searching in this process (the server did not answer)" in windowed.stderr
    assert sessions_of(windowed) == [session_id(1)]


def test_the_server_refuses_a_malformed_window() -> None:
    base = {"since": "2026-01-15T00:00:00.000Z"}
    assert request_scope(base, [P]).window_bounds() == ("2026-01-15T00:00:00.000Z", None)
    with pytest.raises(BadSearchRequestError, match="until must be an ISO-8601 timestamp with"):
        request_scope(base | {"until": "2026-01-20"}, [P])  # no offset
    with pytest.raises(BadSearchRequestError, match="since must be before until"):
        request_scope(base | {"until": "2026-01-15T00:00:00Z"}, [P])


def test_a_bad_time_is_a_usage_error_naming_the_forms(imported: Path) -> None:
    result = run("search", QUERY, "--project", P, "--since", "last tuesday")
    assert result.exit_code == 2
    assert "cannot read 'last tuesday' as a time; give a date (2026-02-11)" in result.output
    backwards = run(
        "search", QUERY, "--project", P, "--since", "2026-02-12", "--until", "2026-02-01"
    )
    assert backwards.exit_code == 2
    assert "the window holds no time" in backwards.output


def test_sessions_lists_those_with_a_chunk_in_the_window_with_their_opening(imported: Path) -> None:
    everything = json.loads(run("sessions", "--project", P, "--json").stdout)
    assert [s["session_id"] for s in everything["sessions"]] == [
        session_id(3),
        session_id(2),
        session_id(1),
    ]  # control
    windowed = json.loads(run("sessions", "--project", P, "--json", "--until", "2026-01-20").stdout)
    assert [s["session_id"] for s in windowed["sessions"]] == [session_id(2), session_id(1)]
    assert windowed["window"] == {"since": None, "until": "2026-01-21T00:00:00.000Z"}
    assert windowed["sessions"][1]["opening"].startswith("deploy gateway deploy gateway")
    text = run("sessions", "--project", P, "--since", "2026-01-30")
    assert text.stdout.splitlines()[0] == (
        f"scope: {P}  window: 2026-01-30 00:00 .. UTC  sessions: 1 (most recent first)"
    )

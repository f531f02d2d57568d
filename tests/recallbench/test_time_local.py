"""`time.local`: the command line (search, sessions, show, projects) shows times, and reads the times a
person types, in the machine's time zone instead of UTC; the hooks and MCP tools keep UTC.

The zone is a POSIX TZ rule, so no zone database is needed: Central European Time, UTC+1, and from the
last Sunday of March (2026-03-29, 02:00) to the last Sunday of October summer time, UTC+2.
Corpus: `tests.engine.window_corpus` (chunks of project P written on 2026-01-10, -20 and -30 at
09:00 UTC, that is 10:00 in the zone).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recallbench.cli import main
from recallbench.present import minute
from recallbench.time_window import parse_time
from tests.engine.window_corpus import QUERY, P, session_id, write_window_corpus

CET = "CET-1CEST,M3.5.0,M10.5.0/3"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", CET)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_local_times_are_read_in_the_zone_winter_and_summer(berlin: None) -> None:
    # control: without `local`, UTC as before
    assert parse_time("2026-02-11", NOW) == datetime(2026, 2, 11, tzinfo=UTC)
    # winter, UTC+1: the day starts at 23:00 UTC the day before
    assert parse_time("2026-02-11", NOW, local=True) == datetime(2026, 2, 10, 23, tzinfo=UTC)
    # summer, UTC+2
    assert parse_time("2026-07-01T14:30", NOW, local=True) == datetime(
        2026, 7, 1, 12, 30, tzinfo=UTC
    )
    # the day summer time begins: until that day means until the next day's start, 00:00 UTC+2
    assert parse_time("2026-03-29", NOW, end=True, local=True) == datetime(
        2026, 3, 29, 22, tzinfo=UTC
    )
    # a time that names its zone, and an age, are what they say in any zone
    assert parse_time("2026-02-11T14:30Z", NOW, local=True) == datetime(
        2026, 2, 11, 14, 30, tzinfo=UTC
    )
    assert parse_time("7d", NOW, local=True) == datetime(2026, 2, 22, 12, tzinfo=UTC)


def test_local_times_are_shown_in_the_zone(berlin: None) -> None:
    assert minute("2026-02-12T15:58:03.123Z") == "2026-02-12 15:58"  # control: UTC as stored
    assert minute("2026-02-12T15:58:03.123Z", local=True) == "2026-02-12 16:58"
    assert minute("2026-07-01T10:00:00Z", local=True) == "2026-07-01 12:00"
    assert minute("2026-02-12T15:58:03", local=True) == "2026-02-12 16:58"  # no offset: UTC
    assert minute("not a time", local=True) == "not a time"[:16]
    assert minute(None, local=True) == "unknown time"


def test_search_and_sessions_read_and_show_local_times_once_turned_on(
    berlin: None, tmp_path: Path
) -> None:
    root = write_window_corpus(tmp_path / "claude")
    assert run("import", str(root / "projects")).exit_code == 0
    base = ("search", QUERY, "--project", P, "--since", "2026-01-20T09:30")

    utc = run(*base)
    assert utc.stdout.splitlines()[0].endswith("window: 2026-01-20 09:30 .. UTC  hits: 1")
    assert "2026-01-30 09:00" in utc.stdout  # 09:00 UTC is before 09:30 UTC: only Jan 30

    assert run("config", "set", "time.local", "true").exit_code == 0
    local = run(*base)
    lines = local.stdout.splitlines()

    # 09:30 in the zone is 08:30 UTC: the Jan 20 chunk (09:00 UTC, 10:00 here) is in the window now
    assert lines[0] == f"arm: rrf  scope: {P}  window: 2026-01-20 09:30 .. CET  hits: 2"
    assert "2026-01-20 10:00" in local.stdout
    assert "2026-01-30 10:00" in local.stdout
    as_json = json.loads(run(*base, "--json").stdout)
    assert as_json["window"]["since"] == "2026-01-20T08:30:00.000Z"  # JSON stays UTC
    assert {h["session_id"] for h in as_json["hits"]} == {session_id(2), session_id(3)}

    listed = run("sessions", "--project", P).stdout.splitlines()
    assert [line[:16] for line in listed[1::2][:3]] == [
        "2026-01-30 10:00",
        "2026-01-20 10:00",
        "2026-01-10 10:00",
    ]
    projects = run("projects").stdout
    assert f"{P} · 3 sessions · 3 chunks · latest 2026-01-30 10:00 · " in projects
    jan20 = next(h["chunk_id"] for h in as_json["hits"] if h["session_id"] == session_id(2))
    shown = run("show", jan20, "--project", P).stdout.splitlines()[0]
    assert shown.startswith(f"--- chunk {jan20} · User · 2026-01-20 10:00 · session ")

    # forget --before reads the zone too, and names the instant in UTC
    dry = run("forget", "--before", "2026-01-20T10:30", "--dry-run").stdout.splitlines()
    assert dry[0].startswith("forget --before 2026-01-20T09:30:00Z in ")
    # Jan 20 (09:00 UTC) of the other project, Jan 10 and Jan 20 of P: a prompt and an edit each
    assert dry[1:3] == [
        "  /home/dev/other  1 session: 1 chunk, 2 messages",
        f"  {P}  2 sessions: 2 chunks, 4 messages",
    ]

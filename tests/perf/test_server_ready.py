"""`perf.hooks.start_server` returns only once the server has logged every line it waits for (the
search command is timed against a warm server), and fails when the server exits first."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from perf import hooks
from recallbench import mcp_server

# A stand-in for `recallbench serve`: writes its log lines to stderr, then stays up until stopped.
FAKE = """
import sys, time
for line in sys.argv[1:]:
    if line == "--":
        break
    if line.startswith("sleep "):
        time.sleep(float(line.split()[1]))
        continue
    print(line, file=sys.stderr, flush=True)
    if line == "exit":
        sys.exit(3)
time.sleep(60)
"""


def fake_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *lines: str) -> None:
    script = tmp_path / "fake_serve.py"
    script.write_text(FAKE, encoding="utf-8")
    # start_server runs [*recallbench_command(), "serve", "--no-background-embed", *args]; the
    # stand-in reads its lines up to "--".
    command = [sys.executable, str(script), *lines, "--"]
    monkeypatch.setattr(hooks, "recallbench_command", lambda: command)
    # A missing line fails in seconds, not minutes.
    monkeypatch.setattr(hooks, "_SERVER_START_S", 20.0)


def test_the_markers_are_the_servers_own() -> None:
    assert hooks.LEXICAL_READY == mcp_server.LEXICAL_READY


def test_start_server_waits_for_every_line_in_either_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ready = (hooks.LISTENING, hooks.LEXICAL_READY)
    fake_server(
        monkeypatch,
        tmp_path,
        "recallbench INFO x: search service listening on /s.sock",
        "sleep 1.5",
        "recallbench INFO x: lexical snapshot ready 2.0 s after start",
    )
    t0 = time.monotonic()
    proc = hooks.start_server({}, ready=ready)
    waited = time.monotonic() - t0
    hooks.stop_server(proc)
    assert waited >= 1.5  # it did not return at the first line
    # Control: waiting only for the socket returns before the snapshot line is written.
    t0 = time.monotonic()
    proc = hooks.start_server({})
    waited_listening = time.monotonic() - t0
    hooks.stop_server(proc)
    assert waited_listening < 1.5
    # The snapshot line may come first.
    fake_server(
        monkeypatch,
        tmp_path,
        "recallbench INFO x: lexical snapshot ready 0.1 s after start",
        "recallbench INFO x: search service listening on /s.sock",
    )
    hooks.stop_server(hooks.start_server({}, ready=ready))


def test_start_server_fails_when_the_server_exits_before_every_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_server(monkeypatch, tmp_path, "recallbench INFO x: listening on /s.sock", "exit")
    with pytest.raises(RuntimeError, match="exited before"):
        hooks.start_server({}, ready=(hooks.LISTENING, hooks.LEXICAL_READY))


def test_start_server_stops_waiting_when_the_search_service_could_not_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The socket will never listen: it used to read the next line until the server exited (a real
    one never does, so a measurement hung)."""
    assert hooks.NOT_STARTED == mcp_server.SEARCH_NOT_STARTED
    fake_server(
        monkeypatch,
        tmp_path,
        "recallbench WARNING x: search service not started (hooks will read lexically): too long",
    )
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"cannot answer the prompt hook: .*too long"):
        hooks.start_server({})
    assert time.monotonic() - t0 < 10  # the stand-in stays up for 60 s


def test_start_server_gives_up_at_its_deadline_on_a_silent_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_server(monkeypatch, tmp_path, "recallbench INFO x: lexical snapshot ready 0.1 s")
    monkeypatch.setattr(hooks, "_SERVER_START_S", 2.0)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"did not log \['listening on'\] within 2 s"):
        hooks.start_server({})
    assert 2.0 <= time.monotonic() - t0 < 10  # the stand-in stays up for 60 s

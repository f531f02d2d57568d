"""Socket trust: the home folder must be the user's own, both ends of the socket check the other's uid,
and the hook log is never written through a planted symlink.

Tests run as root, so another owner is simulated by patching `home_trust.current_uid` (what the folder
and file checks compare with) or `home_trust.peer_uid` (the peer-credential reader); the real
SO_PEERCRED path is exercised with same-uid positive controls over real sockets.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.embed import HashEmbedder
from recallbench import config, home_trust, hooks
from recallbench.home_trust import UntrustedHomeError, peer_uid
from recallbench.mcp_server import ServeError, serve
from recallbench.search_service import SearchService, socket_path
from tests.engine.fixtures_transcripts import write_jsonl
from tests.recallbench.corpus import (
    ALPHA,
    SID_A1,
    SID_B1,
    chat_session,
    import_corpus,
    write_corpus,
)

REPO = Path(__file__).resolve().parents[2]
INPUTS = Path(__file__).resolve().parent / "hook_inputs"
OTHER_UID = 4242
SID_D1 = "dddddddd-0000-4000-8000-000000000001"
PROMPT = "why does the flaky retry test fail on CI again?"
ANSWER_ALPHA = "The retry decorator swallowed the timeout error."


@pytest.fixture
def corpus(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "projects"
    write_corpus(root)
    import_corpus(home / "memory.db", root).close()
    return root


def prompt_stdin() -> bytes:
    data = json.loads((INPUTS / "user_prompt_submit.json").read_text(encoding="utf-8"))
    return json.dumps({**data, "cwd": ALPHA, "prompt": PROMPT}).encode()


def log_text(home: Path) -> str:
    path = home / hooks.LOG_NAME
    return path.read_text(encoding="utf-8") if path.exists() else ""


# --- (a) the home folder --------------------------------------------------------------------------


def test_a_home_writable_by_others_makes_the_hooks_do_nothing_and_say_why(
    corpus: Path, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    fresh = write_jsonl(
        corpus / "-home-dev-alpha" / f"{SID_D1}.jsonl",
        chat_session(SID_D1, ALPHA, [("Rename the loader module", "Renamed it.")]),
    )
    stop = json.dumps({"transcript_path": str(fresh)})
    home.chmod(0o777)
    assert hooks.run_hook("UserPromptSubmit", prompt_stdin()) == ""
    assert hooks.run_hook("Stop", stop.encode()) == ""
    refusal = (
        f"the recallbench home folder {home} is writable by its group and every user (mode 0777)"
    )
    assert log_text(home).count(refusal) == 2
    assert f"Fix: chmod 700 {home}. The hooks do nothing until then." in log_text(home)
    assert "imported" not in log_text(home)
    assert refusal in capfd.readouterr().err
    home.chmod(0o702)
    assert hooks.run_hook("UserPromptSubmit", prompt_stdin()) == ""
    assert "is writable by every user (mode 0702)" in log_text(home)
    # positive control: the same folder, private again, gets context and imports
    home.chmod(0o700)
    assert ANSWER_ALPHA in hooks.run_hook("UserPromptSubmit", prompt_stdin())
    assert hooks.run_hook("Stop", stop.encode()) == ""
    assert "imported 1 file(s), 2 message(s), 1 chunk(s) written" in log_text(home)


def test_a_home_of_another_user_makes_the_hooks_do_nothing_and_say_why(
    corpus: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    home.chmod(0o700)
    with monkeypatch.context() as patch:
        patch.setattr(home_trust, "current_uid", lambda: OTHER_UID)
        assert hooks.run_hook("UserPromptSubmit", prompt_stdin()) == ""
    err = capfd.readouterr().err
    # The folder belongs to uid 0 (root runs the tests), and so does its log: neither is trusted, so
    # the reason goes to stderr.
    assert (
        f"the recallbench home folder {home} belongs to uid 0, not to you (uid {OTHER_UID})" in err
    )
    assert f"`sudo chown {OTHER_UID} {home}`" in err
    assert f"cannot write {home / hooks.LOG_NAME}: UntrustedFileError" in err
    assert "belongs to uid 0, not to you" not in log_text(home)  # another user's log is not ours
    assert ANSWER_ALPHA in hooks.run_hook("UserPromptSubmit", prompt_stdin())  # positive control


def test_serve_and_the_cli_refuse_an_untrusted_home_naming_the_folder_and_the_fix(
    home: Path,
) -> None:
    home.chmod(0o775)
    with pytest.raises(
        ServeError, match=rf"home folder {home} is writable by its group \(mode 0775\)"
    ):
        serve(home / "memory.db")
    with pytest.raises(UntrustedHomeError, match=r"Fix: chmod 700 "):
        config.trusted_home()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RECALLBENCH_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", "serve"],
        input="",
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: the recallbench home folder {home} is writable by its")
    assert f"Fix: chmod 700 {home}" in done.stderr
    home.chmod(0o700)
    assert config.trusted_home() == home  # positive control


# --- (b) the peer's uid, on both ends --------------------------------------------------------------


def test_peer_uid_reads_the_real_credentials_of_both_ends_of_a_unix_socket(tmp_path: Path) -> None:
    left, right = socket.socketpair()
    with left, right:
        assert peer_uid(left) == peer_uid(right) == os.geteuid()
    path = Path("/tmp") / f"rb-peer-{os.getpid()}.sock"
    path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(path))
            conn, _ = server.accept()
            with conn:
                assert peer_uid(client) == peer_uid(conn) == os.geteuid()
                home_trust.check_peer(conn, "a client")  # same uid: no error
    path.unlink()


class Impostor:
    """A process that bound the hook's socket path first: it records what it is sent and answers with
    hits from another project."""

    def __init__(self, path: Path, embedder_id: str) -> None:
        self.received = b""
        self.embedder_id = embedder_id
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.thread = threading.Thread(target=self._serve_one, daemon=True)
        self.thread.start()

    def _serve_one(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(10)
            while chunk := conn.recv(1 << 16):
                self.received += chunk
                if len(self.received) >= 4 + struct.unpack(">I", self.received[:4])[0]:
                    break
            hit = {"chunk_id": f"{SID_B1}:0", "score": 9.0, "cosine": 0.99}
            reply = json.dumps(
                {"ok": True, "embedder": self.embedder_id, "arm": "evil", "hits": [hit]}
            )
            with contextlib.suppress(OSError):
                conn.sendall(struct.pack(">I", len(reply)) + reply.encode())

    def close(self) -> None:
        self.thread.join(timeout=10)
        self.listener.close()


def test_the_hook_sends_nothing_to_a_server_of_another_user_and_reads_lexically(
    corpus: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb_id = HashEmbedder().id
    sock = socket_path(home, emb_id)
    impostor = Impostor(sock, emb_id)
    with monkeypatch.context() as patch:
        patch.setattr(home_trust, "peer_uid", lambda sock: OTHER_UID)
        out = hooks.run_hook("UserPromptSubmit", prompt_stdin())
    impostor.close()
    assert impostor.received == b""
    assert ANSWER_ALPHA in out  # the lexical read answered instead
    assert f"runs as uid {OTHER_UID}, not as you (uid {os.geteuid()}); refused" in log_text(home)
    assert "lexical read only" in log_text(home)
    assert "arm evil gave" not in log_text(home)
    # positive control: a server of our own uid is sent the prompt and its answer is used
    sock.unlink()
    impostor = Impostor(sock, emb_id)
    hooks.run_hook("UserPromptSubmit", prompt_stdin())
    impostor.close()
    assert PROMPT.encode() in impostor.received
    assert "arm evil gave 1 hit(s)" in log_text(home)


def ask(path: Path, request: dict[str, Any]) -> bytes:
    """Send one framed request as a bare client (which checks nothing) and return all it gets back."""
    payload = json.dumps({"search": request}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        got = b""
        # A refused client is closed on before its request is read: a reset or a broken pipe.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            client.sendall(struct.pack(">I", len(payload)) + payload)
            while chunk := client.recv(1 << 16):
                got += chunk
    return got


def test_the_service_answers_no_client_of_another_user(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashEmbedder()
    asked: list[Any] = []

    def search(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"arm": "fts", "hits": []}

    path = socket_path(home, emb.id)
    request = {"text": PROMPT, "projects": [ALPHA], "k": 3, "now": "2026-06-01T12:00:00+00:00"}
    with SearchService(emb, path, search=search):
        with monkeypatch.context() as patch:
            patch.setattr(home_trust, "peer_uid", lambda sock: OTHER_UID)
            refused = ask(path, request)
        answered = ask(path, request)  # positive control: a client of our uid
    assert (refused, asked[:0]) == (b"", [])
    assert asked == [request]
    assert json.loads(answered[4:]) == {"arm": "fts", "hits": [], "ok": True, "embedder": emb.id}


# --- (c) no log through a planted symlink -----------------------------------------------------------


def test_a_planted_hooks_log_symlink_is_never_followed(
    tmp_path: Path, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    absent = tmp_path / "created-by-the-hook"
    log = home / hooks.LOG_NAME
    for target in (victim, absent):
        log.unlink(missing_ok=True)
        log.symlink_to(target)
        assert hooks.run_hook("Stop", b"not json") == ""
        assert (
            f"{log} is a symbolic link; recallbench never writes through one"
            in capfd.readouterr().err
        )
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not absent.exists()
    lock = home / "import.lock"
    lock.symlink_to(absent)
    log.unlink()
    transcript = write_corpus(tmp_path / "projects")[SID_A1]
    hooks.run_hook("Stop", json.dumps({"transcript_path": str(transcript)}).encode())
    assert not absent.exists()
    assert f"UntrustedFileError: {lock} is a symbolic link" in log_text(home)
    # positive control: a log file of our own is created 0600 (whatever the umask) and written
    old = os.umask(0o022)
    try:
        log.unlink()
        assert hooks.run_hook("Stop", b"not json") == ""
    finally:
        os.umask(old)
    assert not log.is_symlink()
    assert log.stat().st_mode & 0o777 == 0o600
    assert "hook stdin of 8 bytes is not JSON" in log_text(home)


def test_the_cli_refuses_a_memory_in_a_home_others_may_write_but_doctor_still_reports(
    home: Path,
) -> None:
    from click.testing import CliRunner

    from recallbench.cli import main

    corpus = home.parent / "corpus"
    write_jsonl(
        corpus / "p" / f"{SID_A1}.jsonl",
        chat_session(SID_A1, ALPHA, [("why does the retry test flake", "a wall clock")]),
    )
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(corpus), "--no-embed"]).exit_code == 0
    home.chmod(0o777)
    try:
        refused = runner.invoke(main, ["search", "retry", "--all-projects"])
        assert refused.exit_code == 1
        assert f"home folder {home} is writable by its group and every user" in refused.output
        assert "hits:" not in refused.output
        # doctor does not open the memory through the CLI's context: it still says what is wrong
        doctor = runner.invoke(main, ["doctor"])
        assert "sqlite integrity" in doctor.output
        # a database outside the home is not the home's business
        elsewhere = home.parent / "elsewhere.db"
        other = runner.invoke(main, ["--db", str(elsewhere), "import", str(corpus), "--no-embed"])
        assert other.exit_code == 0, other.output
    finally:
        home.chmod(0o700)
    found = runner.invoke(main, ["search", "retry", "--all-projects"])  # positive control
    assert found.exit_code == 0, found.output
    assert "hits: 1" in found.output

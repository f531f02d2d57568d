"""The Unix-socket search service: binding, hand-over, embedding answers, and its stdlib client."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from engine.embed import HashEmbedder
from recallbench.search_service import (
    MAX_SOCKET_PATH_BYTES,
    SearchService,
    SearchServiceError,
    default_socket_path,
    embed_via_socket,
    socket_path,
    temporary_socket_path,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[Path]:
    # pytest's tmp_path can be long; Unix socket paths cannot, so a short folder under /tmp is used.
    short = Path("/tmp") / f"rb-{os.getpid()}-{tmp_path.name[-12:]}"
    short.mkdir(exist_ok=True)
    path = short / "e.sock"
    yield path
    for p in short.iterdir():
        p.unlink()
    short.rmdir()


class FlakyEmbedder:
    """HashEmbedder that fails on any text containing 'boom'."""

    def __init__(self) -> None:
        self._inner = HashEmbedder(dim=16)

    @property
    def id(self) -> str:
        return self._inner.id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if any("boom" in t for t in texts):
            msg = "model exploded"
            raise RuntimeError(msg)
        return self._inner.embed(texts)


def test_client_gets_exactly_the_embedders_vectors_through_the_socket(sock: Path) -> None:
    emb = HashEmbedder(dim=32)
    texts = ["why does the retry test flake", "", "naïve café ☕"]
    with SearchService(emb, sock):
        got = embed_via_socket(texts, 2.0, path=sock, embedder_id=emb.id)
    assert got is not None
    assert got.dtype == np.float32
    assert got.shape == (3, 32)
    assert np.array_equal(got, emb.embed(texts))


def test_client_returns_none_without_a_service_and_vectors_with_one(sock: Path) -> None:
    assert embed_via_socket(["hello world"], 0.5, path=sock) is None
    with SearchService(HashEmbedder(dim=8), sock):
        got = embed_via_socket(["hello world"], 2.0, path=sock)
    assert got is not None
    assert got.shape == (1, 8)


def test_a_stale_socket_file_is_replaced_and_removed_on_stop(sock: Path) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))
    stale.close()  # the file stays behind, as after a crashed server
    assert sock.exists()
    assert embed_via_socket(["x y z"], 0.5, path=sock) is None
    service = SearchService(HashEmbedder(dim=8), sock).start()
    try:
        assert service.bound
        assert embed_via_socket(["x y z"], 2.0, path=sock) is not None
    finally:
        service.stop()
    assert not sock.exists()
    service.stop()  # a second stop is harmless
    assert not sock.exists()


def test_a_stop_while_another_thread_starts_the_service_undoes_the_start(
    sock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server lists its service before its warm-up thread starts it, so that an exit in that gap
    stops it. A stop that landed there returned at once (or joined a thread not yet started, a
    RuntimeError), and the start then bound the socket: left listening after the server exited."""
    service = SearchService(HashEmbedder(dim=8), sock)
    entered, gate = threading.Event(), threading.Event()
    claim = service._claim

    def slow_claim() -> None:
        entered.set()
        gate.wait(5.0)
        claim()

    monkeypatch.setattr(service, "_claim", slow_claim)
    errors: list[BaseException] = []

    def stop() -> None:
        try:
            service.stop()
        except BaseException as exc:  # the test reports any
            errors.append(exc)

    starter = threading.Thread(target=service.start)
    starter.start()
    assert entered.wait(5.0)
    stopper = threading.Thread(target=stop)
    stopper.start()
    stopper.join(0.2)  # it waits for the start (before: it had returned already)
    assert stopper.is_alive()
    gate.set()
    starter.join(5.0)
    stopper.join(5.0)
    assert (errors, stopper.is_alive(), sock.exists()) == ([], False, False)
    # a start after the stop binds nothing; control: a fresh service does
    assert not service.start().bound
    fresh = SearchService(HashEmbedder(dim=8), sock).start()
    try:
        assert fresh.bound
    finally:
        fresh.stop()


def test_a_second_service_stands_by_and_takes_over_when_the_first_stops(sock: Path) -> None:
    emb = HashEmbedder(dim=8)
    first = SearchService(emb, sock, reclaim_interval_s=3600).start()
    second = SearchService(emb, sock, reclaim_interval_s=3600).start()
    try:
        assert first.bound
        assert not second.bound
        assert not second.reclaim()  # the first still answers
        first.stop()
        assert not sock.exists()
        assert second.reclaim()
        assert embed_via_socket(["a b"], 2.0, path=sock) is not None
    finally:
        first.stop()
        second.stop()
    assert not sock.exists()


def test_stop_never_removes_a_socket_file_another_service_put_there(sock: Path) -> None:
    service = SearchService(HashEmbedder(dim=8), sock, reclaim_interval_s=3600).start()
    owned_at_start = service.bound
    assert owned_at_start
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = sock.with_name("other.sock")
    other.bind(str(tmp))
    os.replace(tmp, sock)  # as a newer server does when it finds the path stale
    try:
        assert not service.bound
        service.stop()
        assert sock.exists()
    finally:
        other.close()


def test_an_embedder_failure_is_reported_and_the_service_keeps_answering(sock: Path) -> None:
    with SearchService(FlakyEmbedder(), sock):
        assert embed_via_socket(["boom goes the model"], 2.0, path=sock) is None
        after = embed_via_socket(["quiet text"], 2.0, path=sock)
    assert after is not None
    assert after.shape == (1, 16)


def test_client_refuses_vectors_of_another_embedder(sock: Path) -> None:
    emb = HashEmbedder(dim=8)
    with SearchService(emb, sock):
        assert embed_via_socket(["a b c"], 2.0, path=sock, embedder_id="minilm-l6-v2") is None
        assert embed_via_socket(["a b c"], 2.0, path=sock, embedder_id=emb.id) is not None


def _raw_request(path: Path, payload: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        s.connect(str(path))
        s.sendall(struct.pack(">I", len(payload)) + payload)
        (size,) = struct.unpack(">I", s.recv(4))
        header: dict[str, object] = json.loads(s.recv(size))
    return header


def test_a_malformed_request_gets_an_error_header(sock: Path) -> None:
    with SearchService(HashEmbedder(dim=8), sock):
        bad = _raw_request(sock, b'{"texts": "not a list"}')
        good = _raw_request(sock, b'{"texts": ["fine"]}')
    assert bad["ok"] is False
    assert "texts" in str(bad["error"])
    assert good == {"ok": True, "embedder": "hash-8-v1", "n": 1, "dim": 8}


def test_client_gives_up_within_its_timeout_when_the_service_hangs(sock: Path) -> None:
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(sock))
    mute.listen(1)  # accepts connections into the backlog, never answers
    try:
        started = time.monotonic()
        assert embed_via_socket(["hello there"], 0.3, path=sock) is None
        elapsed = time.monotonic() - started
    finally:
        mute.close()
        sock.unlink()
    assert elapsed < 2.0
    with SearchService(HashEmbedder(dim=8), sock):
        assert embed_via_socket(["hello there"], 2.0, path=sock) is not None


def test_client_rejects_a_single_string() -> None:
    with pytest.raises(TypeError, match="wrap it in a list"):
        embed_via_socket("one text", 1.0)


def test_a_socket_path_over_the_unix_limit_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    long_path = Path("/tmp") / ("x" * MAX_SOCKET_PATH_BYTES) / "e.sock"
    with pytest.raises(SearchServiceError, match="RECALLBENCH_HOME"):
        SearchService(HashEmbedder(dim=8), long_path)


def test_a_socket_path_whose_old_temporary_name_was_over_the_limit_binds(tmp_path: Path) -> None:
    """The socket was bound as `.<name>.<pid>` first, up to 9 bytes longer than the path the limit was
    checked on: a home 100 to 107 bytes deep passed the check and then failed to bind ("AF_UNIX path
    too long"), so `serve` answered no prompt hook. The temporary name is now no longer than the
    socket's own."""
    emb = HashEmbedder(dim=8)
    name = socket_path(Path("/"), emb.id).name  # embed-hash-8-v1.sock
    folder = tmp_path / ("d" * (MAX_SOCKET_PATH_BYTES - len(os.fsencode(tmp_path)) - len(name) - 2))
    path = folder / name
    assert len(os.fsencode(path)) == MAX_SOCKET_PATH_BYTES  # at the limit: allowed
    assert len(os.fsencode(path.with_name(f".{name}.{os.getpid()}"))) > MAX_SOCKET_PATH_BYTES
    tmp = temporary_socket_path(path, os.getpid())
    assert tmp.parent == folder
    assert len(tmp.name) <= len(name)
    with SearchService(emb, path) as service:
        assert service.bound
        assert embed_via_socket(["at the limit"], 5.0, path=path) is not None
    # control: one byte more is refused, naming the folder to change
    with pytest.raises(SearchServiceError, match="RECALLBENCH_HOME"):
        SearchService(emb, folder.with_name(folder.name + "d") / name)


def test_socket_path_is_keyed_by_embedder_id_under_the_home(home: Path) -> None:
    assert socket_path(Path("/h"), "hash-256-v1") == Path("/h/embed-hash-256-v1.sock")
    assert socket_path(Path("/h"), "a/b c") == Path("/h/embed-a_b_c.sock")
    # conftest sets RECALLBENCH_EMBEDDER=hash and RECALLBENCH_HOME=home
    assert default_socket_path() == home / "embed-hash-256-v1.sock"


def test_the_client_module_imports_only_the_stdlib() -> None:
    code = (
        "import sys; import recallbench.search_service; "
        "print(' '.join(sorted(m for m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    ).stdout.split()
    assert "socket" in out  # positive control: the listing is real
    # numpy is imported only once a vector arrives, so the lexical-only hook path never pays for it
    heavy = ("numpy", "engine", "arms", "harness", "recallbench.config", "torch", "mcp", "click")
    assert [m for m in out if m.split(".")[0] in heavy or m in heavy] == []

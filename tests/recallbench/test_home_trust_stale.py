"""What a killed `recallbench serve` leaves (its socket, temporary files) is removed on the next start;
nothing else is: not a live server's socket, not a file another process is writing, not another
user's file, not a file of another name."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from recallbench import home_trust
from recallbench.search_service import (
    SearchService,
    embed_via_socket,
    remove_stale_files,
    socket_path,
    temporary_socket_path,
)
from tests.recallbench.serving import start_serve, stop

HASH_ID = HashEmbedder().id


def dead_socket(path: Path) -> Path:
    """A socket file nobody accepts on, as a killed server leaves it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
    return path


@pytest.fixture
def live(home: Path) -> Iterator[Path]:
    """A live service of another embedder in the same home: its socket must survive."""
    emb = HashEmbedder(dim=16)
    path = socket_path(home, emb.id)
    with SearchService(emb, path):
        yield path


def test_serve_removes_the_socket_and_temporary_files_a_killed_server_left(
    home: Path, live: Path
) -> None:
    killed, _ = start_serve(home)
    stop(killed, signal.SIGKILL)
    gone = killed.pid  # a dead process: its temporary files are stale
    ours = socket_path(home, HASH_ID)
    assert ours.is_socket()  # SIGKILL gave the server no chance to remove it
    stale = [
        ours,
        dead_socket(socket_path(home, "minilm-l6-v2")),  # a killed server of another embedder
        dead_socket(temporary_socket_path(ours, gone)),  # bound, not yet renamed into place
        dead_socket(home / f".{ours.name}.{gone}"),  # the same, as servers before it named it
        home / f".memory.{HASH_ID}.{'ab' * 8}.hnsw.{gone}.tmp",  # a partition being written
        home / f".memory.{HASH_ID}.hnsw.json.{gone}.tmp",  # an index manifest being written
    ]  # in the order the log names them: sockets, then temporary files, each sorted by name
    for path in stale[4:]:
        path.write_bytes(b"half written")
    kept = [
        live,  # a live server's socket
        # bound by a living process, not yet renamed into place
        dead_socket(temporary_socket_path(socket_path(home, "minilm-l6-v2"), os.getpid())),
        home / f".memory.{HASH_ID}.hnsw.json.{os.getpid()}.tmp",  # a living process is writing it
        home / f".notes.{gone}.tmp",  # not named after the database
        home / "embed-old.sock",  # our socket's name, but a regular file
        home / f".memory.{HASH_ID}.hnsw.json.{gone}",  # no .tmp suffix
    ]
    for path in kept[2:]:
        path.write_bytes(b"keep")

    proc, lines = start_serve(home)
    try:
        said = "".join(lines)
        names = ", ".join(p.name for p in stale)
        assert (
            "removed 2 stale socket(s) and 4 temporary file(s) a stopped server left: " + names
        ) in said
        assert [p.name for p in stale if os.path.lexists(p) and p != ours] == []
        assert ours.is_socket()  # bound again by the new server, which answers on it
        assert embed_via_socket(["after the restart"], 5.0, path=ours) is not None
        assert [p.name for p in kept if not os.path.lexists(p)] == []
        # positive control: the live server whose socket was probed still answers
        assert embed_via_socket(["still here"], 5.0, path=live) is not None
    finally:
        stop(proc, signal.SIGTERM)


def test_only_files_of_the_current_user_are_removed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sock = dead_socket(socket_path(home, "minilm-l6-v2"))
    tmp = home / ".memory.hash.hnsw.json.999999999.tmp"  # pid over Linux's pid_max: never alive
    tmp.write_bytes(b"x")
    with monkeypatch.context() as patch:  # as another user, both files are someone else's
        patch.setattr(home_trust, "current_uid", lambda: 4242)
        elsewhere = remove_stale_files(home, home / "memory.db")
    assert (elsewhere.sockets, elsewhere.temporary) == ((), ())
    assert sock.is_socket()
    assert tmp.exists()
    removed = remove_stale_files(home, home / "memory.db")  # positive control: as their owner
    assert (removed.sockets, removed.temporary) == ((sock,), (tmp,))
    assert not os.path.lexists(sock)
    assert not tmp.exists()

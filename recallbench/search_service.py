"""The search service on a Unix socket: the running server answers the prompt hook's searches.

The MCP server process (`recallbench serve`) holds the loaded model, the vector index and the lexical
snapshot warm; it runs `SearchService` in a thread. A hook asks it through `search_via_socket`: the
server runs its arm over its warm indexes (the handler is `recallbench.prompt_search.PromptSearch`), so
the hook needs neither numpy nor the vector catalog. The service also answers embedding requests
(`embed_via_socket`) with the server's model. Both clients import only the standard library until a
vector arrives, and return None whenever nothing answers in time, so the hook can fall back to the
lexical read.

Wire format (one request per connection; all integers big-endian):

    request:  u32 length | UTF-8 JSON {"search": {...}}   (answered when the service has a handler)
    response: u32 length | UTF-8 JSON {"ok": true, "embedder": id, ...the handler's answer}, no body

    request:  u32 length | UTF-8 JSON {"texts": ["...", ...]}
    response: u32 length | UTF-8 JSON header | body
              header {"ok": true, "embedder": id, "n": n, "dim": d}, body = n*d little-endian float32
              header {"ok": false, "error": "..."}, no body

The socket lives at `$RECALLBENCH_HOME/embed-<embedder id>.sock` (mode 0600; the name is kept from when
the service only embedded, so running servers and hooks of every version find each other). Several
servers may run at once (Claude Code starts one per session): the first binds the path, the others stand
by and take the path over when its owner exits or leaves a stale file behind. A server only ever unlinks
the socket file it created itself; at start-up `remove_stale_files` clears what a killed server left.

Both ends check the other's uid (`SO_PEERCRED`, through `recallbench.home_trust`): a client sends
nothing to a process of another user, and the service answers no client of another user. Logs name
exceptions by type (`home_trust.describe_error`), never by a message that could quote a prompt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import select
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbench import home_trust
from recallbench.home_trust import describe_error

if TYPE_CHECKING:
    from types import TracebackType

    import numpy as np
    from numpy.typing import NDArray

    from engine.embed import Embedder

log = logging.getLogger("recallbench.search_service")

# Linux's sun_path holds 108 bytes including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107
MAX_REQUEST_BYTES = 1 << 20
MAX_TEXTS = 64
# The most hits a search request may ask for (`recallbench.prompt_search` enforces it).
MAX_SEARCH_K = 50
# A response header is a small JSON object; anything bigger is not from our server.
_MAX_HEADER_BYTES = 1 << 16
_LENGTH = struct.Struct(">I")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]")
# Our files in the home folder: the socket, and the temporary name it is bound under before the rename.
_SOCKET_NAME = re.compile(r"embed-[A-Za-z0-9._-]+\.sock")
# `.e<pid>.<6 hex>.sock` (`temporary_socket_path`), and `.embed-<id>.sock.<pid>` as servers before it
# named theirs.
_TMP_SOCKET_NAME = re.compile(
    r"\.e(?P<pid>[0-9]+)\.[0-9a-f]{6}\.sock|\.embed-[A-Za-z0-9._-]+\.sock\.(?P<old_pid>[0-9]+)"
)
# How often the accept loop wakes to notice stop() and to check that the socket path is still served.
_POLL_S = 0.1


# Answers a search request's JSON object with a JSON-ready mapping; raises ValueError for a bad request.
SearchHandler = Callable[[Mapping[str, Any]], Mapping[str, Any]]
# Told why a client got no answer, in words fit for a log (no request text).
WhyNone = Callable[[str], None]


class SearchServiceError(home_trust.LoggableError, RuntimeError):
    """The search service could not bind its socket."""


class BadRequestError(home_trust.LoggableError, ValueError):
    """A request the service cannot read; the message describes its shape, never its text."""


def socket_path(home: Path, embedder_id: str) -> Path:
    """The socket of the service for `embedder_id` under the recallbench home folder."""
    safe = _SAFE_ID.sub("_", embedder_id)
    return Path(home) / f"embed-{safe}.sock"


def temporary_socket_path(path: Path, pid: int) -> Path:
    """Where process `pid` binds the socket for `path` before renaming it into place: beside it, named
    `.e<pid>.<first 6 hex of the name's sha256>.sock`: at most 21 characters (a pid has at most 7
    digits), no longer than `embed-<id>.sock` for an id of 10 characters or more, as every embedder
    id is (`hash-256-v1`, `minilm-l6-v2`, …). `SearchService` checks both against the Unix limit."""
    digest = hashlib.sha256(path.name.encode()).hexdigest()[:6]
    return path.with_name(f".e{pid}.{digest}.sock")


def default_socket_path(embedder_id: str | None = None) -> Path:
    """The socket path for the configured home and embedder (`$RECALLBENCH_HOME`, `$RECALLBENCH_EMBEDDER`)."""
    from recallbench import config

    emb_id = embedder_id if embedder_id is not None else config.make_embedder().id
    return socket_path(config.home(), emb_id)


# --- client -------------------------------------------------------------------------------------


def embed_via_socket(
    texts: Sequence[str],
    timeout_s: float,
    *,
    path: Path | None = None,
    embedder_id: str | None = None,
) -> NDArray[np.float32] | None:
    """Vectors for `texts` from a running service, or None when none answers within `timeout_s`.

    `path` defaults to the configured socket of `embedder_id` (itself defaulting to the configured
    embedder). When `embedder_id` is given, an answer from another embedder is refused (None).

    Raises:
        TypeError: `texts` is a single str or holds something other than str.
    """
    items = _check_texts(texts)
    if not items:
        return None
    try:
        target = path if path is not None else default_socket_path(embedder_id)
    except Exception as exc:  # an unknown embedder name must not break the caller's fallback
        log.debug("no socket path: %s", describe_error(exc))
        return None
    deadline = time.monotonic() + max(timeout_s, 0.0)
    try:
        return _ask(target, items, deadline, embedder_id)
    except (OSError, ValueError, struct.error) as exc:
        log.debug("embedding service at %s did not answer: %s", target, describe_error(exc))
        return None


def search_via_socket(
    request: Mapping[str, Any],
    timeout_s: float,
    *,
    path: Path,
    embedder_id: str | None = None,
    why: WhyNone | None = None,
    refusal: WhyNone | None = None,
) -> dict[str, Any] | None:
    """The service's answer to a search request, or None when none answers (or refuses) in time.

    When `embedder_id` is given, an answer from a service of another embedder is refused (None). The
    request is sent only to a process of the current user. `why` is told the reason for a None;
    `refusal` is also told the service's own error when it refuses (a caller that logs the reason,
    like the prompt hook, leaves it out: an error may quote what was asked).
    """
    tell = why if why is not None else (lambda reason: log.debug("search service: %s", reason))
    payload = json.dumps({"search": dict(request)}, ensure_ascii=False).encode("utf-8")
    if len(payload) > MAX_REQUEST_BYTES:
        tell(f"request of {len(payload)} bytes is over the {MAX_REQUEST_BYTES}-byte limit")
        return None
    deadline = time.monotonic() + max(timeout_s, 0.0)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            header = _exchange(sock, path, payload, deadline, MAX_REQUEST_BYTES)
    except home_trust.UntrustedPeerError as exc:
        tell(str(exc))
        return None
    except (OSError, ValueError, struct.error) as exc:
        tell(f"no answer within {timeout_s}s ({describe_error(exc)})")
        return None
    if not isinstance(header, dict) or header.get("ok") is not True:
        tell("the service refused the request")
        error = header.get("error") if isinstance(header, dict) else None
        if refusal is not None and isinstance(error, str):
            refusal(error)
        return None
    if embedder_id is not None and header.get("embedder") != embedder_id:
        tell("the service answers for another embedder")
        return None
    return header


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        msg = f"embed_via_socket expects a sequence of texts, got a single str ({texts[:40]!r}); wrap it in a list"
        raise TypeError(msg)
    items = list(texts)
    for position, item in enumerate(items):
        value: object = item
        if not isinstance(value, str):
            msg = f"embed_via_socket expects str items, item {position} is {type(value).__name__}"
            raise TypeError(msg)
    return items


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        msg = "timed out"
        raise TimeoutError(msg)
    return left


def _recv_exact(sock: socket.socket, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < size:
        sock.settimeout(_remaining(deadline))
        part = sock.recv(min(size - got, 1 << 20))
        if not part:
            msg = f"connection closed after {got} of {size} bytes"
            raise ConnectionError(msg)
        chunks.append(part)
        got += len(part)
    return b"".join(chunks)


def _exchange(
    sock: socket.socket, path: Path, payload: bytes, deadline: float, max_header: int
) -> Any:
    """Connect, check that the server is ours, send one framed request, and return the decoded JSON
    header (None if it is too big).

    Raises:
        home_trust.UntrustedPeerError: the process listening at `path` runs as another user; nothing
            was sent.
    """
    sock.settimeout(_remaining(deadline))
    sock.connect(str(path))
    home_trust.check_peer(sock, "the server")
    sock.settimeout(_remaining(deadline))
    sock.sendall(_LENGTH.pack(len(payload)) + payload)
    (size,) = _LENGTH.unpack(_recv_exact(sock, _LENGTH.size, deadline))
    if size > max_header:
        return None
    return json.loads(_recv_exact(sock, size, deadline).decode("utf-8"))


def _ask(
    path: Path, texts: list[str], deadline: float, embedder_id: str | None
) -> NDArray[np.float32] | None:
    payload = json.dumps({"texts": texts}, ensure_ascii=False).encode("utf-8")
    if len(payload) > MAX_REQUEST_BYTES:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        header = _exchange(sock, path, payload, deadline, _MAX_HEADER_BYTES)
        if not isinstance(header, dict) or header.get("ok") is not True:
            log.debug("embedding service refused the request")
            return None
        n, dim = header.get("n"), header.get("dim")
        if not isinstance(n, int) or not isinstance(dim, int) or n != len(texts) or dim < 1:
            return None
        if embedder_id is not None and header.get("embedder") != embedder_id:
            return None
        body = _recv_exact(sock, n * dim * 4, deadline)
    import numpy as np  # only once an answer came: the lexical-only hook path never needs it

    return np.frombuffer(body, dtype="<f4").reshape(n, dim).astype(np.float32)


def _answers(path: Path, timeout_s: float = 0.2) -> bool:
    """Whether something accepts connections at `path` (a stale socket file refuses them)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


# --- what a killed server left ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StaleFiles:
    """What `remove_stale_files` removed."""

    sockets: tuple[Path, ...]
    temporary: tuple[Path, ...]


def remove_stale_files(home: Path, db: Path) -> StaleFiles:
    """Remove what a killed server left: sockets nobody answers on and temporary files of dead processes.

    Only our files go: owned by the current user, named as we name them (`embed-*.sock` and its
    temporary `.e<pid>.<hex>.sock`, or `.embed-*.sock.<pid>` from an older server, under `home`;
    `.<db stem>.*.<pid>.tmp`, the index writers' temporary files, beside `db`), a temporary file only
    when process <pid> is gone, and a socket only when nothing accepts on it. A live server's socket,
    and a file another process is writing, stay.
    """
    sockets: list[Path] = []
    temporary: list[Path] = []
    tmp_name = re.compile(rf"\.{re.escape(db.stem)}\..+\.(?P<pid>[0-9]+)\.tmp")
    for folder in dict.fromkeys([Path(home), Path(db).parent]):
        for path, info in _own_entries(folder):
            name = path.name
            if stat.S_ISSOCK(info.st_mode) and folder == home:
                if _SOCKET_NAME.fullmatch(name) and not _answers(path):
                    _unlink_unchanged(path, info, sockets)
                    continue
                match = _TMP_SOCKET_NAME.fullmatch(name)
            else:
                match = tmp_name.fullmatch(name) if stat.S_ISREG(info.st_mode) else None
            pid = None if match is None else match["pid"] or match["old_pid"]
            if pid is not None and not home_trust.pid_alive(int(pid)):
                _unlink_unchanged(path, info, temporary)
    return StaleFiles(sockets=tuple(sockets), temporary=tuple(temporary))


def _own_entries(folder: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """The entries of `folder` that the current user owns, with their lstat."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    me = home_trust.current_uid()
    for name in names:
        path = folder / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid == me:
            yield path, info


def _unlink_unchanged(path: Path, seen: os.stat_result, removed: list[Path]) -> None:
    """Unlink `path` if it is still the file `seen` described (a new server may have replaced it)."""
    try:
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev):
            path.unlink()
            removed.append(path)
    except OSError as exc:
        log.debug("cannot remove %s: %s", path, describe_error(exc))


# --- server -------------------------------------------------------------------------------------


class SearchService:
    """Answers search requests (given a `search` handler) and embedding requests on a Unix socket.

    Use as a context manager, or call `start()` and `stop()`. `stop()` removes the socket file if this
    service created it and nobody has replaced it since.
    """

    def __init__(
        self,
        embedder: Embedder,
        path: Path | None = None,
        *,
        request_timeout_s: float = 5.0,
        reclaim_interval_s: float = 2.0,
        search: SearchHandler | None = None,
    ) -> None:
        self.embedder = embedder
        self.search = search
        self.path = Path(path) if path is not None else default_socket_path(embedder.id)
        paths = (self.path, temporary_socket_path(self.path, os.getpid()))
        longest = max(paths, key=lambda p: len(os.fsencode(p)))
        if len(os.fsencode(longest)) > MAX_SOCKET_PATH_BYTES:
            msg = (
                f"socket path {longest} is {len(os.fsencode(longest))} bytes, over the "
                f"{MAX_SOCKET_PATH_BYTES}-byte limit of Unix sockets; set RECALLBENCH_HOME to a shorter folder"
            )
            raise SearchServiceError(msg)
        self.request_timeout_s = request_timeout_s
        self.reclaim_interval_s = reclaim_interval_s
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # Held while starting: a stop from another thread (the server's exit, while its warm-up
        # thread starts this) waits for the start to finish, or finds it stopped before it began.
        self._life = threading.Lock()

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> SearchService:
        """Bind (or stand by behind a live service at the same path) and start answering."""
        with self._life:
            if self._thread is not None or self._stop.is_set():
                return self
            home_trust.make_private_dir(self.path.parent)
            self._claim()
            thread = threading.Thread(target=self._loop, name="recallbench-search", daemon=True)
            thread.start()
            self._thread = thread
        return self

    def stop(self) -> None:
        """Stop answering and remove our socket file; safe to call twice, and while another thread
        is starting the service (it waits for that start, then undoes it)."""
        self._stop.set()
        with self._life:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        with self._lock:
            self._release()

    def __enter__(self) -> SearchService:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def reclaim(self) -> bool:
        """Take the socket path if nobody serves it (the loop calls this periodically); True if ours."""
        self._claim()
        return self.bound

    @property
    def bound(self) -> bool:
        """Whether this service currently owns the socket path."""
        with self._lock:
            return self._owns_path()

    # --- binding -----------------------------------------------------------------------------
    def _owns_path(self) -> bool:
        if self._listener is None or self._inode is None:
            return False
        try:
            return os.stat(self.path).st_ino == self._inode
        except OSError:
            return False

    def _claim(self) -> None:
        """Own the path unless a live service answers there; replace a stale file atomically."""
        with self._lock:
            if self._owns_path():
                return
            if self.path.exists() and _answers(self.path):
                self._release()  # someone else serves this embedder; stand by
                return
            self._release()
            tmp = temporary_socket_path(self.path, os.getpid())
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listener.bind(str(tmp))
                os.chmod(tmp, 0o600)
                listener.listen(16)
                inode = os.stat(tmp).st_ino
                # rename() replaces a stale socket file atomically; clients never see the path missing.
                os.replace(tmp, self.path)
            except OSError:
                listener.close()
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise
            listener.setblocking(False)
            self._listener, self._inode = listener, inode
            log.info("search service for %s listening on %s", self.embedder.id, self.path)

    def _release(self) -> None:
        """Close our listener; unlink the path only if it is still the file we bound."""
        if self._listener is None:
            return
        if self._owns_path():
            with contextlib.suppress(OSError):
                self.path.unlink()
        self._listener.close()
        self._listener, self._inode = None, None

    # --- serving -----------------------------------------------------------------------------
    def _loop(self) -> None:
        last_check = time.monotonic()
        while not self._stop.is_set():
            listener = self._listener
            if listener is None:
                self._stop.wait(_POLL_S)
            else:
                try:
                    ready, _, _ = select.select([listener], [], [], _POLL_S)
                    if ready:
                        conn, _ = listener.accept()
                        threading.Thread(
                            target=self._handle,
                            args=(conn,),
                            name="recallbench-search-req",
                            daemon=True,
                        ).start()
                except (OSError, ValueError) as exc:  # listener closed under us by stop()/reclaim
                    log.debug("accept failed: %s", describe_error(exc))
            if time.monotonic() - last_check >= self.reclaim_interval_s and not self._stop.is_set():
                last_check = time.monotonic()
                try:
                    self.reclaim()
                except OSError as exc:
                    log.warning("cannot bind %s: %s", self.path, describe_error(exc))

    def _handle(self, conn: socket.socket) -> None:
        import numpy as np

        with conn:
            try:
                # Before reading a byte: a process of another user gets nothing, not even an error.
                home_trust.check_peer(conn, "a client")
            except home_trust.UntrustedPeerError as exc:
                log.warning("%s", exc)
                return
            conn.setblocking(True)
            conn.settimeout(self.request_timeout_s)
            try:
                request = self._read_request(conn)
            except (OSError, ValueError, struct.error) as exc:
                self._send(conn, {"ok": False, "error": f"bad request: {describe_error(exc)}"})
                return
            if isinstance(request, dict):
                self._answer_search(conn, request)
                return
            texts = request
            try:
                vectors = np.ascontiguousarray(self.embedder.embed(texts), dtype="<f4")
            except Exception as exc:  # the embedder's failure is reported, never kills the thread
                log.warning("embedding failed: %s", describe_error(exc))
                self._send(conn, {"ok": False, "error": describe_error(exc)})
                return
            header = {
                "ok": True,
                "embedder": self.embedder.id,
                "n": int(vectors.shape[0]),
                "dim": int(vectors.shape[1]),
            }
            self._send(conn, header, vectors.tobytes())

    def _answer_search(self, conn: socket.socket, request: dict[str, Any]) -> None:
        if self.search is None:
            self._send(conn, {"ok": False, "error": "this service answers embedding requests only"})
            return
        try:
            answer = dict(self.search(request))
        except ValueError as exc:
            self._send(conn, {"ok": False, "error": f"bad search request: {describe_error(exc)}"})
            return
        except Exception as exc:  # the handler's failure is reported, never kills the thread
            # An FTS5 or tokenizer error can quote the prompt: the log names the type only.
            log.warning("search failed: %s", describe_error(exc))
            self._send(conn, {"ok": False, "error": describe_error(exc)})
            return
        self._send(conn, {**answer, "ok": True, "embedder": self.embedder.id})

    def _read_request(self, conn: socket.socket) -> list[str] | dict[str, Any]:
        """The texts of an embedding request, or the object of a search request."""
        deadline = time.monotonic() + self.request_timeout_s
        (size,) = _LENGTH.unpack(_recv_exact(conn, _LENGTH.size, deadline))
        if size > MAX_REQUEST_BYTES:
            msg = f"request of {size} bytes is over the {MAX_REQUEST_BYTES}-byte limit"
            raise BadRequestError(msg)
        data: Any = json.loads(_recv_exact(conn, size, deadline).decode("utf-8"))
        if isinstance(data, dict) and "search" in data:
            search = data["search"]
            if not isinstance(search, dict):
                msg = 'expected {"search": {...}}'
                raise BadRequestError(msg)
            return search
        texts = data.get("texts") if isinstance(data, dict) else None
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            msg = 'expected {"texts": [str, ...]}'
            raise BadRequestError(msg)
        if not texts or len(texts) > MAX_TEXTS:
            msg = f"expected 1 to {MAX_TEXTS} texts, got {len(texts)}"
            raise BadRequestError(msg)
        return [str(t) for t in texts]

    @staticmethod
    def _send(conn: socket.socket, header: dict[str, Any], body: bytes = b"") -> None:
        data = json.dumps(header).encode("utf-8")
        with contextlib.suppress(OSError):
            conn.sendall(_LENGTH.pack(len(data)) + data + body)

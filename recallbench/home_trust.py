"""What recallbench trusts in its home folder, and how it writes there without leaking.

`$RECALLBENCH_HOME` holds the socket the prompt hook sends every prompt to, and the hook's log. A
local user who can write that folder could bind the socket first (and read, or answer, every prompt)
or plant a `hooks.log` symlink (and make the hook write wherever it points). So:

- `home_problem` / `check_home` refuse a home folder not owned by the current user, or writable by
  group or others; the message names the folder and the fix.
- `check_peer` reads a connected Unix socket's peer credentials (`SO_PEERCRED`): each end of the search
  service refuses a process of another user before anything is sent.
- `open_private` opens a file of our own with `O_NOFOLLOW` (never a planted symlink), creating it 0600.
- `describe_error` names an exception for a log without its message, which can quote the input (a JSON
  decode error, an FTS5 syntax error); only `LoggableError`s, whose messages hold paths, ids, sizes
  and reasons, are quoted whole.
- `pid_alive` tells whether the process that named a temporary file is still running.

Only the standard library is imported: the prompt hook uses this module.
"""

from __future__ import annotations

import errno
import os
import shlex
import socket
import stat
import struct
from pathlib import Path

# Linux's struct ucred: pid_t pid, uid_t uid, gid_t gid.
_UCRED = struct.Struct("=iII")
# BSD and macOS: getsockopt(SOL_LOCAL=0, LOCAL_PEERCRED=1) fills a struct xucred that starts
# u_int cr_version (0), uid_t cr_uid.
_SOL_LOCAL, _LOCAL_PEERCRED = 0, 0x001
_XUCRED_HEAD = struct.Struct("=II")
_XUCRED_SIZE = 4 + 4 + 2 + 2 + 4 * 16 + 8  # version, uid, ngroups (+ padding), 16 groups, pointer


class LoggableError(Exception):
    """An error whose message holds only paths, ids, sizes and reasons, so a log may quote it."""


class UntrustedHomeError(LoggableError, PermissionError):
    """The recallbench home folder could be changed by another user."""


class UntrustedPeerError(LoggableError, ConnectionError):
    """The process at the other end of a Unix socket runs as another user."""


class UntrustedFileError(LoggableError, PermissionError):
    """A file recallbench writes is a symlink, not a regular file, or another user's."""


def current_uid() -> int:
    """The effective uid: what files we create are owned by, and what SO_PEERCRED reports of us."""
    return os.geteuid()


def describe_error(exc: BaseException) -> str:
    """The exception for a log: its type, errno and strerror; never a message that may quote input."""
    name = type(exc).__name__
    if isinstance(exc, LoggableError):
        return f"{name}: {exc}"
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{name} [Errno {exc.errno}] {exc.strerror}"
    return name


# --- the home folder ----------------------------------------------------------------------------


def home_problem(path: Path) -> str | None:
    """Why `path` cannot be trusted as the recallbench home, with the fix; None when it can.

    A folder that does not exist yet is trusted: recallbench creates it 0700.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read the recallbench home folder {path} ({describe_error(exc)})"
    quoted = shlex.quote(str(path))
    if not stat.S_ISDIR(info.st_mode):
        return f"the recallbench home {path} is not a folder; set RECALLBENCH_HOME to a folder of your own"
    me = current_uid()
    if info.st_uid != me:
        return (
            f"the recallbench home folder {path} belongs to uid {info.st_uid}, not to you (uid {me}): "
            "its owner could read every prompt the hook sends. Fix: set RECALLBENCH_HOME to a folder "
            f"of your own, or have the folder given to you (`sudo chown {me} {quoted}`)"
        )
    loose = info.st_mode & 0o022
    if loose:
        who = {0o020: "its group", 0o002: "every user", 0o022: "its group and every user"}[loose]
        return (
            f"the recallbench home folder {path} is writable by {who} "
            f"(mode {stat.S_IMODE(info.st_mode):04o}): another user could plant its socket or logs. "
            f"Fix: chmod 700 {quoted}"
        )
    return None


def check_home(path: Path) -> None:
    """Refuse a home folder another user could change.

    Raises:
        UntrustedHomeError: `path` is not owned by the current user or is writable by group or others;
            the message names the folder and the fix.
    """
    problem = home_problem(path)
    if problem is not None:
        raise UntrustedHomeError(problem)


def make_private_dir(path: Path) -> None:
    """Create `path` (and its parents) with mode 0700 if it does not exist."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


# --- files ----------------------------------------------------------------------------------------


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor for our own regular file at `path`, created with mode 0600; never follows a symlink.

    `O_NONBLOCK` keeps a planted FIFO from blocking the open; `fstat` then refuses it.

    Raises:
        UntrustedFileError: `path` is a symlink, not a regular file, or belongs to another user.
        OSError: the file cannot be opened.
    """
    mode = flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, mode, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            msg = f"{path} is a symbolic link; recallbench never writes through one (remove it)"
            raise UntrustedFileError(msg) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            msg = f"{path} is not a regular file; recallbench does not write to it (remove it)"
            raise UntrustedFileError(msg)
        if info.st_uid != current_uid():
            msg = (
                f"{path} belongs to uid {info.st_uid}, not to you; recallbench does not write to it"
            )
            raise UntrustedFileError(msg)
    except BaseException:
        os.close(fd)
        raise
    return fd


def append_private(path: Path, data: bytes, *, rotate_over: int) -> None:
    """Append `data` to our own file at `path` (see `open_private`), first moving a file over
    `rotate_over` bytes to `<name>.1`."""
    fd = open_private(path)
    try:
        if os.fstat(fd).st_size > rotate_over:
            os.close(fd)
            fd = -1
            os.replace(path, path.with_name(path.name + ".1"))
            fd = open_private(path)
        os.write(fd, data)
    finally:
        if fd >= 0:
            os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user counts: its file is not ours to judge)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- sockets --------------------------------------------------------------------------------------


def peer_uid(sock: socket.socket) -> int:
    """The effective uid of the process at the other end of a connected Unix socket.

    Raises:
        OSError: the platform cannot tell (the caller then refuses the peer).
    """
    if hasattr(socket, "SO_PEERCRED"):
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        _pid, uid, _gid = _UCRED.unpack(raw)
        return int(uid)
    raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
    version, uid = _XUCRED_HEAD.unpack_from(raw)
    if version != 0:
        msg = f"unknown struct xucred version {version}"
        raise OSError(errno.EPROTO, msg)
    return int(uid)


def check_peer(sock: socket.socket, what: str) -> None:
    """Refuse a peer that is not a process of the current user.

    Raises:
        UntrustedPeerError: the peer runs as another uid, or its credentials cannot be read.
    """
    me = current_uid()
    try:
        uid = peer_uid(sock)
    except OSError as exc:
        msg = f"cannot read the credentials of {what} ({describe_error(exc)}); refused"
        raise UntrustedPeerError(msg) from None
    if uid != me:
        msg = f"{what} runs as uid {uid}, not as you (uid {me}); refused"
        raise UntrustedPeerError(msg)

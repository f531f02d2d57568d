"""Files only their owner may read: the store's indexes and the person's settings hold private text.

Standard library only, so the hook path can use it without numpy.
"""

from __future__ import annotations

import os
from pathlib import Path


def private_file(path: Path) -> int:
    """Create or truncate `path` readable and writable by its owner only (0600 whatever the umask); an
    open descriptor. Index files hold every stored vector, which another local user must not read."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file left by a crash keeps its old mode through O_CREAT
    return fd


def write_private(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` through `private_file`."""
    with os.fdopen(private_file(path), "w", encoding="utf-8") as handle:
        handle.write(text)

"""Files by content and by identity: the sha256 that the model cache, the vector index partitions and
the sealed rosters record, and the stat key under which a recorded sha256 is trusted without reading
the file again."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's raw bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_key(path: Path) -> list[int]:
    """Size, modification time (ns) and inode: any write to the file or replacement of it changes one."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]

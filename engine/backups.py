"""The copies of the database that `recallbench rebuild` keeps, named `<db name>.bak-<time>`.

`engine.health.swap_in` makes one each time a rebuilt database takes the old one's place; nothing
removes them, since they are the way back from a rebuild gone wrong. Each holds everything the memory
held when it was made, so `forget` forgets in them too (`engine.forget`) and `recallbench status`
names them with their sizes. Imports nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Backup", "backup_name", "backups", "kept_backups"]

_INFIX = ".bak-"
_SIDECARS = ("-wal", "-shm")


@dataclass(frozen=True, kw_only=True)
class Backup:
    """One kept copy: its path and its bytes, with its -wal and -shm files when it has them."""

    path: Path
    bytes: int


def backup_name(db_path: Path, stamp: str) -> Path:
    """Where the copy of `db_path` made at `stamp` goes (`swap_in` numbers it if that is taken)."""
    return db_path.with_name(f"{db_path.name}{_INFIX}{stamp}")


def backups(db_path: Path) -> list[Path]:
    """The copies `recallbench rebuild` kept of the database (`<name>.bak-<time>`), sorted; links
    and the copies' own -wal and -shm files are not copies."""
    if not db_path.parent.is_dir():
        return []
    prefix = f"{db_path.name}{_INFIX}"
    return sorted(
        p
        for p in db_path.parent.iterdir()
        if p.name.startswith(prefix)
        and not p.name.endswith(_SIDECARS)
        and p.is_file()
        and not p.is_symlink()
    )


def kept_backups(db_path: Path) -> list[Backup]:
    """`backups` with their sizes on disk, sidecars included."""
    out = []
    for path in backups(db_path):
        size = 0
        for part in (path, *(Path(f"{path}{s}") for s in _SIDECARS)):
            try:
                size += part.lstat().st_size
            except OSError:
                continue
        out.append(Backup(path=path, bytes=size))
    return out

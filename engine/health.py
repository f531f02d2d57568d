"""The health of a store, and the swap that puts a rebuilt database in place of a damaged one.

`recallbench doctor` runs the checks and `recallbench rebuild` the swap. A check reports OK or a problem
instead of raising, so a damaged database still gets a whole report:

- `database_checks`: SQLite's integrity_check, and FTS5's integrity-check against the chunks it indexes;
- `index_check`: the hnswlib partitions on disk against the vector catalog (generation and members);
- `loose_paths` / `tighten`: folders and files another local user could open (the store holds every
  prompt and answer), and the fix: folders 0700, files 0600.

The transcripts are the source of truth and a damaged database is rebuilt from them. Nothing a person
enters into the store alone exists yet (no tombstones, no corrections); when something does, rebuilding
must carry it over from the old database, or it is lost.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from engine import reads, sanitized_sql, store
from engine.backups import backup_name
from engine.embed import Embedder
from engine.held_vectors import index_files
from engine.memory import Memory
from engine.sanitize import SANITIZE_VERSION
from engine.store_errors import STORE_ERRORS
from engine.vectors import EXACT_THRESHOLD, VectorIndex

# The modes `tighten` sets: nothing for the group or other users.
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# The problems of integrity_check listed at most; the first ones say what is wrong.
_INTEGRITY_LIMIT = 5
# The sessions the credentials check names at most (by the first 8 characters of the id).
_SESSIONS_NAMED = 3


@dataclass(frozen=True, kw_only=True)
class Check:
    """One line of a health report: what was checked, whether it is sound, what was found."""

    name: str
    ok: bool
    detail: str


# --- SQLite and FTS5 -------------------------------------------------------------------------------


def database_checks(db: Path) -> list[Check]:
    """SQLite's integrity_check and FTS5's integrity-check of the database at `db` (which exists)."""
    try:
        conn = store.connect(db)
    except STORE_ERRORS as exc:
        why = f"cannot open {db}: {exc}"
        return [_problem("sqlite integrity", why), _problem("full-text index", why)]
    try:
        return [_sqlite_check(conn), _fts_check(conn)]
    finally:
        conn.close()


def _problem(name: str, detail: str) -> Check:
    return Check(name=name, ok=False, detail=detail)


def _sqlite_check(conn: sqlite3.Connection) -> Check:
    name = "sqlite integrity"
    try:
        problems = reads.integrity_problems(conn, _INTEGRITY_LIMIT)
    except STORE_ERRORS as exc:
        return _problem(name, str(exc))
    if problems:
        return _problem(name, "; ".join(problems))
    return Check(name=name, ok=True, detail="integrity_check found every page and index sound")


def _fts_check(conn: sqlite3.Connection) -> Check:
    name = "full-text index"
    try:
        reads.check_fts(conn)
    except STORE_ERRORS as exc:
        return _problem(name, f"FTS5 integrity-check failed: {exc}")
    return Check(name=name, ok=True, detail="both FTS5 indexes match the stored chunks")


def credentials_check(db: Path) -> Check:
    """Whether the memory holds a credential in a format the running sanitizer redacts: text that an
    import under an older version stored (`engine.sanitized_sql.stale_credentials`)."""
    name = "credentials"
    try:
        conn = store.connect(db)
        try:
            with store.read(conn):
                held = sanitized_sql.version(conn)
                stale = sanitized_sql.stale_credentials(conn)
                through = sanitized_sql.credentials_version(conn)
        finally:
            conn.close()
    except STORE_ERRORS as exc:
        return _problem(name, f"not checked: {exc}")
    under = f"sanitizer version {held}" if held else "a sanitizer before version 3"
    if stale.kinds:
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in stale.kinds.items())
        sessions = ", ".join(s[:8] for s in stale.sessions[:_SESSIONS_NAMED])
        more = len(stale.sessions) - _SESSIONS_NAMED
        sessions += f" and {more} more" if more > 0 else ""
        return _problem(
            name,
            f"credentials in formats version {SANITIZE_VERSION} redacts ({kinds}), in "
            f"{stale.chunks} chunk{'' if stale.chunks == 1 else 's'} of "
            f"{len(stale.sessions)} session{'' if len(stale.sessions) == 1 else 's'} "
            f"({sessions}) imported under {under}",
        )
    # the memory does not yet record it: `status` still names this check until `forget` records it
    record = (
        "; `recallbench forget --credentials` records that, and `status` stops naming this check"
        if int(through or 0) < int(SANITIZE_VERSION)
        else ""
    )
    return Check(
        name=name,
        ok=True,
        detail=f"none in a format the running sanitizer (version {SANITIZE_VERSION}) redacts{record}",
    )


# --- the vector index ------------------------------------------------------------------------------


def index_check(db: Path, embedder: Embedder) -> Check:
    """The on-disk partitions of `embedder`'s index against the vector catalog in SQLite.

    A missing or stale index is sound: it is a cache, rebuilt on the next vector search. One that says
    it is current must list a partition for exactly the projects over EXACT_THRESHOLD vectors, and each
    partition must load (size and checksum) and hold exactly that project's vectors.
    """
    name = "vector index"
    try:
        memory = Memory(db, embedder)
    except STORE_ERRORS as exc:
        return _problem(name, f"cannot open {db}: {exc}")
    try:
        state = memory.index_state()
        if state != "current":
            return Check(name=name, ok=True, detail=f"{state}; built on the next vector search")
        gen, labels, _, projects, _, _, _ = store.vector_catalog(
            memory.conn, embedder.id, embedder.dim
        )
        listed = _listed_partitions(memory.index_path)
        wanted = _wanted_partitions(labels, projects)
        problems = [
            problem
            for project in sorted(set(wanted) | set(listed))
            for problem in _partition_problems(
                memory, project, listed.get(project), wanted.get(project)
            )
        ]
    except STORE_ERRORS as exc:
        return _problem(name, str(exc))
    finally:
        memory.close()
    if problems:
        return _problem(name, "; ".join(problems))
    held = sum(len(rows) for rows in wanted.values())
    return Check(
        name=name,
        ok=True,
        detail=f"current (generation {gen}): {len(wanted)} partition(s) hold {held} vectors "
        "as the catalog does",
    )


def _listed_partitions(manifest: Path) -> dict[str, str]:
    """Project -> partition file name, as the manifest lists them ({} when unreadable)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    parts = data.get("parts") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in parts.items()} if isinstance(parts, dict) else {}


def _wanted_partitions(
    labels: NDArray[np.int64], projects: list[str]
) -> dict[str, NDArray[np.int64]]:
    """Project -> its labels (ascending), for each project with more than EXACT_THRESHOLD vectors."""
    rows: dict[str, list[int]] = {}
    for label, project in zip(labels.tolist(), projects, strict=True):
        rows.setdefault(project, []).append(int(label))
    return {
        project: np.asarray(sorted(found), dtype=np.int64)
        for project, found in rows.items()
        if len(found) > EXACT_THRESHOLD
    }


def _partition_problems(
    memory: Memory, project: str, listed: str | None, wanted: NDArray[np.int64] | None
) -> list[str]:
    if wanted is None:
        return [f"a partition is listed for {project}, which needs none"]
    if listed is None:
        return [f"project {project} has {len(wanted)} vectors but no partition"]
    embedder = memory.embedder
    dim = embedder.dim if embedder is not None else 0
    index = VectorIndex(memory.index_path.with_name(listed), dim)
    if not index.load(full_check=True):
        return [f"the partition of {project} ({listed}) cannot be loaded: missing or damaged"]
    held = index.labels()
    if not np.array_equal(held, wanted):
        return [
            f"the partition of {project} holds {len(held)} vectors, the catalog {len(wanted)}"
            + ("" if len(held) != len(wanted) else " (different ones)")
        ]
    return []


# --- file modes ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LoosePath:
    """A folder or file that grants the group or other users some access, and the mode it should have."""

    path: Path
    mode: int
    wanted: int


def store_files(db: Path) -> list[Path]:
    """The files of the store at `db` that exist: the database, its -wal and -shm, its index files."""
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), *index_files(db)]
    return [p for p in files if p.exists()]


def loose_paths(roots: Iterable[Path]) -> list[LoosePath]:
    """Folders and files at or under `roots` whose mode grants the group or other users any access.

    Symbolic links are neither followed nor reported (a link's own mode means nothing).
    """
    seen: set[Path] = set()
    out: list[LoosePath] = []
    for root in roots:
        for path in _tree(root):
            if path in seen:
                continue
            seen.add(path)
            try:
                info = path.lstat()
            except FileNotFoundError:  # removed meanwhile
                continue
            mode = stat.S_IMODE(info.st_mode)
            if not stat.S_ISLNK(info.st_mode) and mode & 0o077:
                out.append(LoosePath(path=path, mode=mode, wanted=_wanted(info.st_mode)))
    return out


def _tree(root: Path) -> Iterator[Path]:
    if not os.path.lexists(root):
        return
    yield root
    if root.is_dir() and not root.is_symlink():
        for folder, dirs, files in os.walk(root):  # does not descend into links to folders
            dirs.sort()
            for name in sorted([*dirs, *files]):
                yield Path(folder) / name


def _wanted(st_mode: int) -> int:
    if stat.S_ISDIR(st_mode):
        return PRIVATE_DIR
    if stat.S_ISREG(st_mode):
        return PRIVATE_FILE
    return stat.S_IMODE(st_mode) & 0o700  # a socket or a pipe keeps what its owner had


def tighten(loose: Iterable[LoosePath]) -> list[tuple[LoosePath, str]]:
    """Give each path its wanted mode; returns those that could not be changed, with why."""
    failed: list[tuple[LoosePath, str]] = []
    for item in loose:
        try:
            if item.path.is_symlink():  # replaced by a link since it was found: never follow it
                continue
            os.chmod(item.path, item.wanted)
        except OSError as exc:
            failed.append((item, str(exc)))
    return failed


# --- rebuild ---------------------------------------------------------------------------------------


def chunks_of_transcripts(db: Path, paths: Sequence[Path]) -> int:
    """How many chunks of the database at `db` came from the transcript files at `paths`.

    Raises:
        One of STORE_ERRORS: the database cannot be opened or read.
    """
    conn = store.connect(db)
    try:
        return reads.chunks_of_files(conn, [str(p) for p in paths])
    finally:
        conn.close()


def recorded_transcripts(db: Path) -> list[Path]:
    """The transcript files the database at `db` records as imported, sorted.

    Raises:
        One of STORE_ERRORS: the database cannot be opened or read.
    """
    conn = store.connect(db)
    try:
        return [Path(p) for p in reads.recorded_files(conn)]
    finally:
        conn.close()


def swap_in(new_db: Path, db: Path, stamp: str) -> Path:
    """Put the database `new_db` (every connection to it closed) in place of `db`; return the backup.

    The old database becomes `<db>.bak-<stamp>` (a numbered name when that one is taken): it is
    hard-linked there first, so `db` never goes missing for a process that opens it meanwhile, and
    its -wal and -shm go with it, since a WAL left beside the new file would be replayed into it. The
    new file then replaces `db` in one rename. The old vector index files are removed: they describe
    the old database's rows, under a generation the new database counts again from zero.

    Raises:
        StoreError: `new_db` still has a write-ahead log (it is open somewhere), or a file could not be
            moved (`db` is then either the old database or the new one, never neither).
    """
    if Path(f"{new_db}-wal").exists():
        msg = f"{new_db} still has a write-ahead log; close every connection to it first"
        raise store.StoreError(msg)
    backup = _unused(backup_name(db, stamp))
    try:
        try:
            os.link(db, backup)
        except OSError:  # a filesystem without hard links
            shutil.copy2(db, backup)
        for suffix in ("-wal", "-shm"):
            side = Path(f"{db}{suffix}")
            if side.exists():
                os.replace(side, Path(f"{backup}{suffix}"))
        Path(f"{new_db}-shm").unlink(missing_ok=True)
        os.replace(new_db, db)
        for old in index_files(db):
            old.unlink(missing_ok=True)
    except OSError as exc:
        msg = f"cannot put the rebuilt database {new_db} in place of {db}: {exc}"
        raise store.StoreError(msg) from exc
    return backup


def _unused(path: Path) -> Path:
    candidate, n = path, 0
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate

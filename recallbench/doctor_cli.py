"""`recallbench doctor` and `recallbench rebuild`, and how the command line reports a damaged store.

A damaged or unreadable database ends any command with `StoreFailure` (exit 2): what is wrong, which
file, and what to do about it, never a traceback. `doctor` says which part is damaged; `rebuild` builds a
fresh database from the transcripts, which are the source of truth, and keeps the old file.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import click

from engine import health
from engine.embed import Embedder
from engine.held_vectors import index_files
from engine.memory import Memory
from engine.store_errors import STORE_ERRORS
from recallbench import config
from recallbench.cli_options import chosen_db, db_option
from recallbench.present import counted
from recallbench.store_failure import private_paths

# The width of the verdict column of `doctor` ("PROBLEM").
_VERDICT_WIDTH = 7


def _db(ctx: click.Context) -> Path:
    """`--db` given before or after the command, else the default database."""
    return chosen_db(ctx) or config.default_db()


def _embedder() -> Embedder | str:
    """The configured embedder, or why there is none."""
    try:
        return config.make_embedder()
    except (ImportError, ValueError) as exc:
        return str(exc)


# --- doctor ----------------------------------------------------------------------------------------


@click.command(
    "doctor", short_help="Check the store: integrity, vector index, file modes, credentials."
)
@click.option(
    "--fix",
    is_flag=True,
    help="Make loose folders 0700 and files 0600, and remove an inconsistent vector index "
    "(rebuilt from SQLite on the next search).",
)
@db_option
@click.pass_context
def doctor_command(ctx: click.Context, fix: bool) -> None:
    """Check the memory store: SQLite and FTS5 integrity, the vector index, file modes, and
    credentials that an import under an older sanitizer stored.

    Prints one line per check, OK or PROBLEM, and exits 1 when a problem remains.
    """
    path = _db(ctx)
    if not path.exists():
        raise click.ClickException(f"no database at {path}; run `recallbench import` first")
    checks = health.database_checks(path)
    sound = all(check.ok for check in checks)
    checks.append(_index(path, fix, sound=sound))
    checks.append(_permissions(path, fix))
    checks.append(health.credentials_check(path) if sound else _damaged("credentials"))
    for check in checks:
        verdict = "OK" if check.ok else "PROBLEM"
        click.echo(f"{verdict:<{_VERDICT_WIDTH}}  {check.name}: {check.detail}")
    _advise(checks)
    if not all(check.ok for check in checks):
        ctx.exit(1)


def _index(db: Path, fix: bool, *, sound: bool) -> health.Check:
    """The vector index check; only a sound database can say what the index should hold."""
    name = "vector index"
    if not sound:
        return _damaged(name)
    embedder = _embedder()
    if isinstance(embedder, str):
        return health.Check(name=name, ok=True, detail=f"not checked: {embedder}")
    index = health.index_check(db, embedder)
    if fix and not index.ok:
        for old in index_files(db):
            old.unlink(missing_ok=True)
        click.echo("fixed: removed the vector index files; the next vector search rebuilds them")
        index = health.index_check(db, embedder)
    return index


def _damaged(name: str) -> health.Check:
    """A check that only a sound database can answer, on a damaged one."""
    return health.Check(name=name, ok=False, detail="not checked: the database is damaged")


def _permissions(db: Path, fix: bool) -> health.Check:
    name = "permissions"
    loose = health.loose_paths(private_paths(db))
    if fix and loose:
        failed = {item.path: why for item, why in health.tighten(loose)}
        for item in loose:
            if item.path not in failed:
                click.echo(f"fixed: {item.path} {item.mode:04o} -> {item.wanted:04o}")
        loose = health.loose_paths(private_paths(db))
    if loose:
        shown = ", ".join(f"{item.path} ({item.mode:04o})" for item in loose)
        return health.Check(name=name, ok=False, detail=f"open to other users: {shown}")
    return health.Check(
        name=name, ok=True, detail=f"{config.home()} and the store's files are private to you"
    )


def _advise(checks: list[health.Check]) -> None:
    broken = {check.name for check in checks if not check.ok}
    if broken & {"sqlite integrity", "full-text index"}:
        click.echo(
            "The database is damaged: `recallbench rebuild` builds a fresh one from your "
            "transcripts and keeps the old file as a backup.",
            err=True,
        )
    else:
        if broken & {"vector index", "permissions"}:
            click.echo(
                "`recallbench doctor --fix` repairs the vector index and the modes.", err=True
            )
        if "credentials" in broken:
            click.echo(
                "`recallbench forget --credentials` redacts them in place, in the backups too, "
                "without the transcripts (the messages stay); `recallbench rebuild` imports every "
                "transcript again under the running sanitizer, when they all still exist.",
                err=True,
            )


# --- rebuild ---------------------------------------------------------------------------------------


@click.command("rebuild", short_help="Rebuild the database from the transcripts.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@db_option
@click.option("--no-embed", is_flag=True, help="Store text and FTS rows only; embed later.")
@click.option(
    "--drop-missing",
    is_flag=True,
    help="Rebuild even when transcripts the database records are gone: their sessions then stay "
    "only in the backup.",
)
@click.option(
    "--keep-missing",
    is_flag=True,
    help="Rebuild from the transcripts that remain and carry over, as stored, what the gone ones "
    "held (sessions, messages, chunks, vectors), still as the code that imported them read it.",
)
@click.pass_context
def rebuild_command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    no_embed: bool,
    drop_missing: bool,
    keep_missing: bool,
) -> None:
    """Build a fresh memory database from the transcripts and swap it in.

    Imports PATHS (files or folders), else every transcript file the database records, else (when it
    cannot be read) $CLAUDE_CONFIG_DIR/projects, into a new file, then puts it in place of the
    database in one rename. The old database is kept as memory.db.bak-<time>. Stop `recallbench
    serve` first; it keeps the old file open. What the person recorded in the store alone, the notes
    and settles of `recallbench correct` and the audit trail, is copied over from the old database,
    and what `recallbench forget` removed stays out: its tombstones are carried into the new file
    before the import. The
    old database's vectors of texts that did not change are reused (when it passes SQLite's
    quick_check), so only new or changed texts are embedded.

    Claude Code deletes transcripts older than its `cleanupPeriodDays` (30 by default), while the
    memory keeps what it imported from them. When recorded transcripts are gone, rebuild refuses,
    naming how many and how many chunks only this database holds; `--keep-missing` rebuilds from the
    rest and copies what the gone ones held as it is stored (read, and chunked, by the code that
    imported it: `status` still counts what older code left there), `--drop-missing` rebuilds
    without it. A rebuild splits long messages where a word ends (`status` counts the chunks an
    older import began inside a word).
    """
    path = _db(ctx)
    if not path.exists():
        raise click.ClickException(f"no database at {path}; `recallbench import` creates one")
    if drop_missing and keep_missing:
        raise click.UsageError("give --drop-missing or --keep-missing, not both")
    sources, gone = _sources(path, paths, drop_missing=drop_missing, keep_missing=keep_missing)
    new = path.with_name(f".{path.name}.rebuild-{os.getpid()}")
    for leftover in (new, Path(f"{new}-wal"), Path(f"{new}-shm")):
        leftover.unlink(missing_ok=True)
    embedder = None if no_embed else config.make_embedder()
    _carry_tombstones(path, new)
    memory = Memory(new, embedder)
    reused = 0
    try:
        # Before the import: a subagent whose session's main transcript is gone is then read as
        # part of that session (its project, and no text at all when the session is our own).
        kept = memory.carry_files(path, gone) if gone else None
        report = memory.import_paths(sources, embed=False, progress=config.show_progress())
        if embedder is not None:
            reused = _carry_vectors(path, memory)
            report.vectors_added = memory.embed_pending(progress=config.show_progress())
        _carry_trust(path, memory)
        _carry_checkouts(path, memory)
    except BaseException:
        memory.close()
        new.unlink(missing_ok=True)
        raise
    memory.close()
    if report.files_seen == 0:
        new.unlink(missing_ok=True)
        raise click.ClickException(
            f"no transcripts found in {', '.join(map(str, sources))}; {path} is left as it was"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = health.swap_in(new, path, stamp)
    click.echo(
        f"rebuilt {path} from {report.files_seen} transcript files: "
        f"{counted(report.chunks_written, 'chunk')}, "
        f"{counted(report.vectors_added, 'vector')} embedded"
        f"{f' ({reused} reused from the old database)' if reused else ''}, "
        f"{len(report.files_failed)} files failed"
    )
    for failed, why in sorted(report.files_failed.items()):
        click.echo(f"failed: {failed}: {why}", err=True)
    if kept is not None:
        click.echo(
            f"carried over from the old database, as stored: {counted(kept.files, 'transcript file')} "
            f"no longer on disk, {counted(kept.sessions, 'session')}, "
            f"{counted(kept.chunks, 'chunk')} (`recallbench status` names what older code left "
            "in them)"
        )
    click.echo(f"the old database is kept as {backup}")


def _carry_trust(old: Path, memory: Memory) -> None:
    """Copy the notes and settles of the old database into the rebuilt one, or say they stay behind."""
    try:
        notes, settles, moved = memory.carry_trust(old)
    except STORE_ERRORS as exc:
        click.echo(
            f"warning: cannot read the notes and corrections of {old} ({exc}); "
            "they stay only in the backup",
            err=True,
        )
        return
    if notes or settles:
        where = "the chunk that holds its" if moved == 1 else "the chunks that hold their"
        click.echo(
            f"carried over {notes} notes and {settles} settles (`recallbench corrections`)"
            f"{f'; {moved} moved to {where} messages now' if moved else ''}"
        )


def _carry_vectors(old: Path, memory: Memory) -> int:
    """The old database's vectors of the texts that did not change (they need no embedding), or
    say that every text is embedded again; returns how many chunk vectors were reused."""
    try:
        chunks, _ = memory.carry_vectors(old)
    except STORE_ERRORS as exc:
        click.echo(
            f"note: the vectors of {old} are not reused ({exc}); every text is embedded again",
            err=True,
        )
        return 0
    return chunks


def _carry_checkouts(old: Path, memory: Memory) -> None:
    """Keep where each project sat in git (its worktree may be gone), or say it stays behind."""
    try:
        memory.carry_checkouts(old)
    except STORE_ERRORS as exc:
        click.echo(
            f"warning: cannot read which git worktrees the projects of {old} were in ({exc}); "
            "`scope.worktrees` joins only those whose folders still exist",
            err=True,
        )


def _carry_tombstones(db: Path, new: Path) -> None:
    """The old database's tombstones into the new one, so the import leaves forgotten text out, and
    its audit trail, so that what was done to the memory stays recorded."""
    from engine import audit
    from engine.forget import carry_tombstones  # the person's command only; see forget_cli

    try:
        carry_tombstones(db, new)
    except STORE_ERRORS as exc:
        click.echo(
            f"warning: cannot read what was forgotten in {db} ({exc}); text removed with "
            "`recallbench forget` may come back: run the same forget again after the rebuild",
            err=True,
        )
    try:
        audit.carry(db, new)
    except STORE_ERRORS as exc:
        click.echo(
            f"warning: cannot read the audit trail of {db} ({exc}); the backup the rebuild keeps "
            "still holds it (`recallbench audit --db BACKUP`)",
            err=True,
        )


def _sources(
    db: Path, paths: tuple[Path, ...], *, drop_missing: bool, keep_missing: bool
) -> tuple[list[Path], list[Path]]:
    """What to import, and the recorded transcripts that are gone whose rows are carried over: PATHS
    (nothing carried), else the recorded transcripts (refused when some are gone, unless
    `drop_missing` or `keep_missing`), else the default folder."""
    if paths:
        missing = [p for p in paths if not p.exists()]
        if missing:
            raise click.ClickException("no such file or folder: " + ", ".join(map(str, missing)))
        return list(paths), []
    default = config.claude_projects()
    try:
        recorded = health.recorded_transcripts(db)
    except STORE_ERRORS as exc:
        click.echo(
            f"warning: cannot read which transcripts {db} holds ({exc}); importing {default}",
            err=True,
        )
        recorded = []
    present = [p for p in recorded if p.exists()]
    gone = [p for p in recorded if not p.exists()]
    if gone:
        said = (
            f"{len(gone)} of the {len(recorded)} transcript files the database records no longer "
            "exist"
        )
        if keep_missing:
            if not present:
                raise click.ClickException(
                    f"every one of the {len(recorded)} transcript files the database records is "
                    f"gone: nothing to rebuild {db} from, and it is left as it was"
                )
            return present, gone
        if not drop_missing:
            held = health.chunks_of_transcripts(db, gone)
            raise click.ClickException(
                f"{said} (Claude Code deletes transcripts after its cleanupPeriodDays, 30 by "
                f"default): what they held ({counted(held, 'chunk')}) is only in {db}, and a "
                "rebuild would leave it in the backup alone; nothing was changed. `recallbench rebuild "
                "--keep-missing` rebuilds from the rest and carries it over as stored; "
                "`--drop-missing` rebuilds without it; `recallbench forget --match TEXT` removes one "
                "text from this database without a rebuild"
            )
        click.echo(f"warning: {said}; what they held stays only in the backup", err=True)
    if present:
        return present, []
    if not default.exists():
        raise click.ClickException(
            f"no transcripts to rebuild {db} from: none recorded, and no folder {default}; "
            "name them: recallbench rebuild PATH..."
        )
    return [default], []

"""How a command says that the memory database cannot be used (exit 2, with what to run), and the
warning about store files other users can open.

Kept apart from `recallbench.doctor_cli` so that every command can use them without importing
`engine.health` (numpy, the import pipeline) until it has something to report.
"""

from __future__ import annotations

from pathlib import Path

import click

from engine.text_reads import is_lock_error
from recallbench import config


class StoreFailure(click.ClickException):
    """The memory database cannot be used; Click prints the message and exits 2."""

    exit_code = 2


def store_failure(db: Path | None, error: BaseException | str) -> StoreFailure:
    """The message for a store error met while using the memory database `db` (None: a database of
    the harness's own, which the error names when it can)."""
    if isinstance(error, BaseException) and is_lock_error(error):
        what = "a database" if db is None else f"the memory database {db}"
        return StoreFailure(
            f"{what} is busy: another recallbench process held its lock past the timeout "
            f"({error}); try again when that process has finished"
        )
    if db is None:
        return StoreFailure(f"a database this command uses cannot be used: {error}")
    flag = "" if db == config.default_db() else f" --db {db}"
    return StoreFailure(
        f"the memory database {db} cannot be used: {error}\n"
        f"Run `recallbench doctor{flag}` to see what is damaged, then `recallbench rebuild{flag}` "
        "to build a fresh database from your transcripts (the old file is kept as a backup)."
    )


def private_paths(db: Path) -> list[Path]:
    """What must be private to its owner: the recallbench home (all of it) and the store's files."""
    from engine import health  # numpy and the import pipeline: only when asked

    return [config.home(), *health.store_files(db)]


def warn_loose(db: Path) -> None:
    """One line on stderr per folder or file of the store that other users can open."""
    from engine import health

    for loose in health.loose_paths(private_paths(db)):
        click.echo(
            f"warning: {loose.path} is mode {loose.mode:04o}, open to other users; "
            f"`recallbench doctor --fix` makes it {loose.wanted:04o}",
            err=True,
        )

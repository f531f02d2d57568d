"""`recallbench audit`, and the one helper the person's commands use to add to the audit trail.

The trail itself (table, checks, append-only triggers) is `engine.audit`; it lives in the memory
database (`--db`, else ``$RECALLBENCH_HOME/memory.db``), which recording creates like `import` does,
after the same check that no other user can change the home folder. A command whose entry cannot be
written (no usable home, a locked or damaged database) still does its job and says so on stderr: an
action that is missing from the audit must never be silent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import click

from engine.audit import PERSON, STORE_ERRORS, AuditEntry, AuditError, AuditLog, parse_time
from recallbench import config
from recallbench.cli_options import chosen_db, db_option
from recallbench.home_trust import UntrustedHomeError, check_home

# Why an entry may not be written: a home other users can change, a refused entry, the database.
_CANNOT_RECORD: tuple[type[Exception], ...] = (UntrustedHomeError, AuditError, *STORE_ERRORS)


def audit_db() -> Path:
    """The memory database of this invocation: `--db` anywhere on the command line, else the default."""
    ctx = click.get_current_context(silent=True)
    chosen = chosen_db(ctx) if ctx is not None else None
    return chosen or config.default_db()


def _check_home(db: Path) -> None:
    """Refuse a database in a home folder another user could change (as the memory commands do)."""
    home = config.home()
    if home.exists() and db.resolve().is_relative_to(home.resolve()):
        check_home(home)


def record_audit(
    action: str, targets: Sequence[str], reason: str, now: datetime, actor: str = PERSON
) -> bool:
    """Append one entry to the audit of this invocation's database; True when it was written.

    Never raises for a database or home problem: the command it records has already done its work, so
    the failure is said on stderr, naming the database and why.
    """
    db = audit_db()
    try:
        _check_home(db)
        with AuditLog(db) as log:
            log.record(time=now, actor=actor, action=action, targets=targets, reason=reason)
    except _CANNOT_RECORD as exc:
        click.echo(
            f"warning: the audit entry for {action} could not be written to {db}: {exc}", err=True
        )
        return False
    return True


# Targets a line names before it counts the rest (a forget of a long period covers thousands of chunks).
SHOWN_TARGETS = 8


def _line(entry: AuditEntry) -> str:
    shown, more = entry.targets[:SHOWN_TARGETS], len(entry.targets) - SHOWN_TARGETS
    targets = ", ".join(shown) or "-"
    if more > 0:
        targets += f" and {more} more (--json lists them)"
    reason = f"  ({entry.reason})" if entry.reason else ""
    return f"{entry.time}  {entry.actor:<12} {entry.action:<16} {targets}{reason}"


@click.command("audit", short_help="List what was done to the memory: ship, hooks, forget, settle.")
@db_option
@click.option(
    "--since",
    metavar="ISO",
    default=None,
    help="Only entries at or after this time (ISO-8601; without a zone it is UTC), e.g. 2026-05-01.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the entries as a JSON list.")
def audit_command(since: str | None, as_json: bool) -> None:
    """List the audit trail, oldest first: time (UTC), actor, action, target ids and reason.

    The trail is append-only (the database refuses to change or delete its rows) and holds ids, never
    the text of a memory. `ship`, `hooks install`, `hooks uninstall`, every stage of `forget`, and
    each settle and undo (`correct`, `correct --undo`, and the model's `flag_memory` as
    `agent:<session>`) add to it.
    """
    try:
        bound = None if since is None else parse_time(since)
    except AuditError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from exc
    db = audit_db()
    if db.exists():
        try:
            _check_home(db)
        except UntrustedHomeError as exc:
            raise click.ClickException(str(exc)) from exc
        with AuditLog(db) as log:
            found = log.since(bound)
    else:  # reading creates nothing
        found = []
    if as_json:
        click.echo(json.dumps([e.to_dict() for e in found], indent=2))
        return
    if not found:
        after = f" since {since}" if since is not None else ""
        where = f"in {db}" if db.exists() else f"(no database at {db})"
        click.echo(f"no audit entries{after} {where}")
        return
    for entry in found:
        click.echo(_line(entry))

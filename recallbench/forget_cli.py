"""`recallbench forget`: remove a session, a project, a chunk or a string from the memory, for good,
or redact in place the credentials an older sanitizer let in (`--credentials`).

Owner only: the command line is the one way in. Nothing `recallbench serve`, the MCP tools or the
hooks reach imports this module or `engine.forget` (tests/recallbench/test_forget_imports.py), and this
module imports `engine.forget` only inside the command, so a process that never runs `forget` never
loads it.

The command shows what will go, asks the person to type the target back (or, without a terminal,
takes `--confirm` with the same target), then runs `engine.forget.forget` with one stage of its own:
`logs` rewrites `hooks.log` (and its rotated copy) without the lines that quote the target.
"""

from __future__ import annotations

import os
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from recallbench import config
from recallbench.cli_options import chosen_db, db_option
from recallbench.home_trust import UntrustedFileError, UntrustedHomeError, check_home, open_private
from recallbench.present import counted

if TYPE_CHECKING:
    from engine.forget_parts import Plan, Target

LOG_NAME = "hooks.log"  # recallbench.hooks.LOG_NAME; not imported, the hooks stay out of this graph
_READ_CHUNK = 1 << 16


# --- hooks.log ----------------------------------------------------------------------------------


def log_files(home: Path) -> list[Path]:
    """`hooks.log` and its rotated copies (`hooks.log.1`, ...) under `home`, sorted."""
    if not home.is_dir():
        return []
    return sorted(
        p for p in home.iterdir() if p.name == LOG_NAME or p.name.startswith(LOG_NAME + ".")
    )


def _read_own(path: Path) -> bytes:
    """The bytes of our own regular file at `path`; never follows a symlink (`open_private`)."""
    if stat.S_ISLNK(os.lstat(path).st_mode):
        msg = (
            f"{path} is a symbolic link; recallbench never follows one (remove it, then run again)"
        )
        raise UntrustedFileError(msg)
    fd = open_private(path, os.O_RDONLY)
    try:
        parts: list[bytes] = []
        while block := os.read(fd, _READ_CHUNK):
            parts.append(block)
        return b"".join(parts)
    finally:
        os.close(fd)


def quoting_lines(home: Path, needle: str) -> int:
    """Lines of the hook logs under `home` that contain `needle`."""
    raw = needle.encode("utf-8")
    return sum(sum(1 for line in _read_own(p).splitlines() if raw in line) for p in log_files(home))


def scrub_logs(home: Path, needle: str) -> str:
    """Rewrite each hook log without the lines holding `needle` (0600, through a new file).

    A line a hook appends between the read and the replace is lost with the old file; the log is a
    best-effort diagnostic, and the forget must not leave the quoted text behind.
    """
    raw = needle.encode("utf-8")
    removed = 0
    for path in log_files(home):
        lines = _read_own(path).splitlines(keepends=True)
        kept = [line for line in lines if raw not in line]
        if len(kept) == len(lines):
            continue
        tmp = path.with_name(f".{path.name}.forget.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, b"".join(kept))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        removed += len(lines) - len(kept)
    return f"{removed} log lines"


# --- the command ----------------------------------------------------------------------------------


# What `--credentials` stands for, and what a person types back to confirm it.
CREDENTIALS = "credentials"


def _target(
    session: str | None,
    project: str | None,
    chunk: str | None,
    match: str | None,
    credentials: bool = False,
) -> Target:
    from engine.forget_parts import Target

    options = {
        "session": session,
        "project": project,
        "chunk": chunk,
        "match": match,
        CREDENTIALS: CREDENTIALS if credentials else None,
    }
    given = [(kind, value) for kind, value in options.items() if value is not None]
    if len(given) != 1:
        shown = ", ".join(f"--{k}" for k, _ in given) or "none"
        msg = (
            "give exactly one of --session, --project, --chunk, --match, --credentials "
            f"(got {shown})"
        )
        raise click.UsageError(msg)
    kind, value = given[0]
    if kind == "project" and not Path(value).is_absolute():
        value = str(Path(value).expanduser().resolve())
    try:
        return Target(kind=kind, value=value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{kind}") from exc


def _interactive() -> bool:
    return sys.stdin.isatty()


def _show(plan: Plan, log_lines: int, db: Path, kept: list[Path]) -> None:
    target = plan.target
    if target.kind == CREDENTIALS:
        _show_credentials(plan, db, kept)
        return
    shown = "(the string given)" if target.kind == "match" else target.value
    click.echo(f"forget --{target.kind} {shown} in {db} removes, for good:")
    if not plan.counts:
        click.echo("  nothing in the database (an earlier forget may have removed it already)")
    for c in plan.counts:
        whole = "whole session" if c.whole else "part of session"
        click.echo(
            f"  {c.project}  {whole} {c.session_id}: {counted(c.chunks, 'chunk')}, "
            f"{counted(c.messages, 'message')}"
        )
    if plan.state_paths or plan.edit_paths:
        click.echo(
            f"  and the string in {len(plan.state_paths)} stored tool inputs, "
            f"{plan.edit_paths} recorded file paths"
        )
    click.echo(f"  {log_lines} lines of {LOG_NAME} that quote it")
    if kept:
        names = ", ".join(p.name for p in kept)
        click.echo(f"  and the same in {len(kept)} backups `recallbench rebuild` kept: {names}")
    for snippet in plan.snippets:
        click.echo(f"    > {snippet}")
    if plan.sessions:
        click.echo("Lines these sessions add later will not be imported either.")
    click.echo(
        "Tombstones (ids only) keep it from being imported again. The audit records the ids, "
        "never the text."
    )


def _show_credentials(plan: Plan, db: Path, kept: list[Path]) -> None:
    click.echo(f"forget --credentials in {db} redacts, in place (the messages stay):")
    if not plan.counts and not plan.state_paths:
        click.echo("  nothing: no stored text holds a credential the running sanitizer redacts")
    for c in plan.counts:
        click.echo(
            f"  {c.project}  session {c.session_id}: {counted(c.messages, 'message')} "
            f"rewritten, {counted(c.chunks, 'chunk')} chunked again"
        )
    if plan.state_paths:
        click.echo(f"  and the credentials in {len(plan.state_paths)} stored tool inputs")
    if kept:
        names = ", ".join(p.name for p in kept)
        click.echo(f"  and the same in {len(kept)} backups `recallbench rebuild` kept: {names}")
    click.echo("The audit records the ids and counts, never the text.")


def _confirm(target: Target, confirm: str | None) -> None:
    flag = f"--{target.kind}"
    if confirm is not None:
        if confirm != target.value:
            msg = f"--confirm must repeat the {flag} value exactly; nothing was removed"
            raise click.UsageError(msg)
        return
    if not _interactive():
        msg = (
            f"forget needs the {target.kind} typed back on a terminal, and stdin is not one; "
            f"to run it from a script, add --confirm with the same value as {flag}. "
            "Nothing was removed."
        )
        raise click.ClickException(msg)
    asked = (
        f"Type {CREDENTIALS} to redact them"
        if target.kind == CREDENTIALS
        else f"Type the {target.kind} again to forget it"
    )
    typed = click.prompt(asked, default="", show_default=False)
    if typed != target.value:
        msg = f"what was typed is not the {target.kind} given; nothing was removed"
        raise click.ClickException(msg)


def _refuse_a_short_id(db: Path, target: Target) -> None:
    """Refuse an id that names nothing stored but starts stored ones (the 8-character session ids
    the hooks show): forgetting it would only leave a tombstone for an id that never existed, and
    the person would believe the session gone."""
    from engine.scope import Scope
    from engine.text_reads import TextReads
    from recallbench.present import ids_that_start

    with TextReads(db) as reads:  # forget reaches every project, so the lookup does too
        shown, count = reads.ids_starting_with(target.kind, target.value, Scope.everywhere(), 5)
    if not count:
        return
    where = (
        "`recallbench sessions` lists them"
        if target.kind == "session"
        else "`recallbench search --json` shows them whole"
    )
    msg = (
        f"no {target.kind} {target.value} is stored, but "
        f"{ids_that_start(target.kind, shown, count)}; give the whole id ({where}). "
        "Nothing was removed."
    )
    raise click.UsageError(msg)


def _database() -> Path:
    ctx = click.get_current_context()
    db = chosen_db(ctx) or config.default_db()
    if not db.exists():
        msg = f"no database at {db}; there is nothing to forget"
        raise click.ClickException(msg)
    home = config.home()
    if home.exists() and db.resolve().is_relative_to(home.resolve()):
        try:
            check_home(home)
        except UntrustedHomeError as exc:
            raise click.ClickException(str(exc)) from exc
    return db


@click.command(
    "forget",
    short_help="Remove a session, project, chunk or string from the memory, for good (or redact "
    "credentials in place).",
)
@db_option
@click.option("--session", metavar="ID", help="Forget this session whole (its later lines too).")
@click.option("--project", metavar="PATH", help="Forget every session of this project.")
@click.option(
    "--chunk", metavar="ID", help="Forget the messages of this chunk (an id from search)."
)
@click.option(
    "--match",
    metavar="TEXT",
    help="Forget every message holding this exact, case-sensitive text (e.g. a leaked token).",
)
@click.option(
    "--credentials",
    is_flag=True,
    help="Redact in place every credential the running sanitizer finds in the stored text (an "
    "import under an older sanitizer kept them; `recallbench doctor` counts them).",
)
@click.option(
    "--confirm",
    metavar="SAME",
    default=None,
    help="The same value as the target, for use without a terminal (scripts). On a terminal, "
    "leave it out and type the target when asked: a --match value given here stays in the "
    "shell's history.",
)
@click.option("--dry-run", is_flag=True, help="Show what would go and stop.")
def forget_command(
    session: str | None,
    project: str | None,
    chunk: str | None,
    match: str | None,
    credentials: bool,
    confirm: str | None,
    dry_run: bool,
) -> None:
    """Remove text from the memory for good: from the messages and chunks, both FTS5 indexes (their
    segments merged), the vectors no other chunk shares, the hnswlib index files, the lines of
    hooks.log that quote it, and the same in the backups `recallbench rebuild` kept; then the
    write-ahead log is truncated and the database vacuumed.

    \b
    Give exactly one target:
      --session ID    a whole session, subagents included; lines it adds later are not imported
      --project PATH  every session of a project
      --chunk ID      the messages a chunk packs (the rest of its session stays)
      --match TEXT    every message whose text contains TEXT (exact, case-sensitive)
      --credentials   every credential the running sanitizer finds, redacted in place
                      (confirm with: --confirm credentials)

    A resumed or forked session starts with a copy of the earlier lines (same line ids): those
    copies go too, from the sessions holding them (which otherwise stay).

    It shows what will go and asks you to type the target back; without a terminal it refuses
    unless --confirm repeats the target. Tombstones (ids only) keep a re-import of the same
    transcript, or a session resumed or forked from it later, from bringing the text back, while
    new lines still import. Every stage
    is recorded in `recallbench audit` (ids and counts, never text). If a stage fails, the command
    exits 1 naming what is left; running the same command again finishes it. A running
    `recallbench serve` notices the change on its next read.
    """
    from engine.backups import backups
    from engine.forget import ForgetError, Stage, forget, preview

    target = _target(session, project, chunk, match, credentials)
    db = _database()
    home = db.parent
    plan = preview(db, target)
    if not plan.counts and target.kind in ("session", "chunk"):
        _refuse_a_short_id(db, target)
    redacting = target.kind == CREDENTIALS  # hooks.log never holds text: nothing to scrub there
    try:
        log_lines = 0 if redacting else quoting_lines(home, target.value)
    except (OSError, UntrustedFileError) as exc:
        raise click.ClickException(f"cannot read {home / LOG_NAME}: {exc}") from exc
    _show(plan, log_lines, db, backups(db))
    if dry_run:
        return
    _confirm(target, confirm)

    def progress(name: str, counts: str) -> None:
        click.echo(f"forget: {name} done ({counts})", err=True)

    extra = [] if redacting else [Stage(name="logs", run=lambda: scrub_logs(home, target.value))]
    names = ", ".join(["rows", "fts", "index", "backups", *(s.name for s in extra), "vacuum"])
    click.echo(f"forget: stages {names}", err=True)
    try:
        report = forget(db, target, now=datetime.now(UTC), extra=extra, on_stage=progress)
    except ForgetError as exc:
        raise click.ClickException(str(exc)) from exc
    said = "redacted" if redacting else "forgot"
    click.echo(f"{said}: {report.plan.summary()}; see `recallbench audit` for the stages")
    if target.kind in ("chunk", "match", CREDENTIALS) and report.plan.chunks:
        click.echo(
            "Chunks rewritten from the messages that stay get their vectors on the next "
            "`recallbench import` (or from a running server's background embedding)."
        )

"""`recallbench forget`: remove a session, a project, a chunk, a string or everything written before a
time from the memory, for good, or redact in place the credentials an older sanitizer let in
(`--credentials`) or a string no rule knows, in every later import too (`--redact`).

Owner only: the command line is the one way in. Nothing `recallbench serve`, the MCP tools or the
hooks reach imports this module or `engine.forget` (tests/recallbench/test_forget_imports.py), and this
module imports `engine.forget` only inside the command, so a process that never runs `forget` never
loads it.

The command shows what will go, asks the person to type the target back (or, without a terminal,
takes `--confirm` with the same target), then runs `engine.forget.forget` with one stage of its own:
`logs` rewrites `hooks.log` (and its rotated copy) without the lines that quote the target (for
`--before`: the lines written before the time).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
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


LineTest = Callable[[bytes], bool]


def quoting(needle: str) -> LineTest:
    """A log line that contains `needle`."""
    raw = needle.encode("utf-8")
    return lambda line: raw in line


def written_before(moment: datetime) -> LineTest:
    """A log line whose leading time (`recallbench.hooks.HookLog` writes one) is before `moment`."""

    from engine.audit import AuditError, parse_time

    def test(line: bytes) -> bool:
        try:
            return parse_time(line.split(b" ", 1)[0].decode("ascii", errors="replace")) < moment
        except AuditError:  # a line that does not start with a time
            return False

    return test


def quoting_lines(home: Path, test: LineTest) -> int:
    """Lines of the hook logs under `home` that `test` picks."""
    return sum(sum(1 for line in _read_own(p).splitlines() if test(line)) for p in log_files(home))


def scrub_logs(home: Path, test: LineTest) -> str:
    """Rewrite each hook log without the lines `test` picks (0600, through a new file).

    A line a hook appends between the read and the replace is lost with the old file; the log is a
    best-effort diagnostic, and the forget must not leave the quoted text behind.
    """
    removed = 0
    for path in log_files(home):
        lines = _read_own(path).splitlines(keepends=True)
        kept = [line for line in lines if not test(line)]
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
    *,
    before: str | None = None,
    redact: str | None = None,
    now: datetime | None = None,
) -> Target:
    from engine.forget_parts import Target

    options = {
        "session": session,
        "project": project,
        "chunk": chunk,
        "match": match,
        "before": before,
        CREDENTIALS: CREDENTIALS if credentials else None,
        "redact": redact,
    }
    given = [(kind, value) for kind, value in options.items() if value is not None]
    if len(given) != 1:
        shown = ", ".join(f"--{k}" for k, _ in given) or "none"
        msg = (
            "give exactly one of --session, --project, --chunk, --match, --before, --credentials, "
            f"--redact (got {shown})"
        )
        raise click.UsageError(msg)
    kind, value = given[0]
    if kind == "project" and not Path(value).is_absolute():
        value = str(Path(value).expanduser().resolve())
    if kind == "before":
        value = _horizon(value, now or datetime.now(UTC))
    try:
        return Target(kind=kind, value=value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{kind}") from exc


def _horizon(text: str, now: datetime) -> str:
    """The time `--before` names, as the engine records it (UTC, to the second)."""
    from engine.audit import utc_text
    from recallbench.time_window import TimeError, parse_time

    try:
        moment = parse_time(text, now, local=config.read_settings().time_local)
    except TimeError as exc:
        raise click.BadParameter(str(exc), param_hint="--before") from exc
    if moment > now:
        msg = (
            f"{text!r} is in the future ({utc_text(moment)}); forgetting before it would forget all"
        )
        raise click.BadParameter(msg, param_hint="--before")
    return utc_text(moment)


def _interactive() -> bool:
    return sys.stdin.isatty()


def _show(plan: Plan, log_lines: int, db: Path, kept: list[Path]) -> None:
    target = plan.target
    if target.kind == CREDENTIALS:
        _show_credentials(plan, db, kept)
        return
    if target.kind == "before":
        _show_before(plan, log_lines, db, kept)
        return
    if target.kind == "redact":
        _show_redact(plan, log_lines, db, kept)
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
    _show_backups(kept)
    for snippet in plan.snippets:
        click.echo(f"    > {snippet}")
    if plan.sessions:
        click.echo("Lines these sessions add later will not be imported either.")
    click.echo(
        "Tombstones (ids only) keep it from being imported again. The audit records the ids, "
        "never the text."
    )


def _show_backups(kept: list[Path]) -> None:
    if kept:
        names = ", ".join(p.name for p in kept)
        click.echo(f"  and the same in {len(kept)} backups `recallbench rebuild` kept: {names}")


def _show_before(plan: Plan, log_lines: int, db: Path, kept: list[Path]) -> None:
    at = plan.target.value
    click.echo(f"forget --before {at} in {db} removes, for good, every message written before it:")
    if not plan.counts:
        click.echo("  nothing in the database was written before it")
    projects: dict[str, list[int]] = {}
    for c in plan.counts:
        row = projects.setdefault(c.project, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + 1, row[1] + c.chunks, row[2] + c.messages
    for project, (sessions, chunks, messages) in sorted(projects.items()):
        click.echo(
            f"  {project}  {counted(sessions, 'session')}: {counted(chunks, 'chunk')}, "
            f"{counted(messages, 'message')}"
        )
    click.echo(f"  {log_lines} lines of {LOG_NAME} written before it")
    _show_backups(kept)
    if plan.horizon is not None and plan.horizon >= at:
        skips = (
            f"The memory's horizon stays at {plan.horizon}, set by an earlier `forget --before`: "
            "an import already skips every line written before it."
        )
    else:
        skips = "From now on an import skips every line written before it, in any transcript."
    click.echo(
        f"A session left without messages goes; the others keep what was written since. {skips} "
        "The audit records the ids, never the text."
    )


def _show_credentials(plan: Plan, db: Path, kept: list[Path]) -> None:
    click.echo(f"forget --credentials in {db} redacts, in place (the messages stay):")
    _show_rewrites(
        plan, "  nothing: no stored text holds a credential the running sanitizer redacts"
    )
    if plan.state_paths:
        click.echo(f"  and the credentials in {len(plan.state_paths)} stored tool inputs")
    _show_backups(kept)
    click.echo("The audit records the ids and counts, never the text.")


def _show_rewrites(plan: Plan, nothing: str) -> None:
    """Per session, the messages an in place target rewrites (`nothing` when it rewrites none)."""
    if not plan.counts and not plan.state_paths and not plan.edit_paths:
        click.echo(nothing)
    for c in plan.counts:
        click.echo(
            f"  {c.project}  session {c.session_id}: {counted(c.messages, 'message')} "
            f"rewritten, {counted(c.chunks, 'chunk')} chunked again"
        )


def _projects_naming(db: Path, text: str) -> int:
    from engine.text_reads import TextReads

    with TextReads(db) as reads:
        return sum(text in project for project in reads.projects())


def _show_redact(plan: Plan, log_lines: int, db: Path, kept: list[Path]) -> None:
    from engine.redacted_sql import HEAD, MARK

    click.echo(f"forget --redact (the string given) in {db} replaces it with {MARK}, in place:")
    _show_rewrites(plan, "  no stored message holds it")
    if plan.state_paths or plan.edit_paths:
        click.echo(
            f"  and the string in {len(plan.state_paths)} stored tool inputs; "
            f"{plan.edit_paths} recorded file-edit paths that hold it go"
        )
    click.echo(f"  {log_lines} lines of {LOG_NAME} that quote it go")
    _show_backups(kept)
    if folders := _projects_naming(db, plan.target.value):
        click.echo(
            f"It is part of {counted(folders, 'project path')} (the folders sessions ran in), which "
            "stay: `recallbench forget --project PATH` removes a project."
        )
    click.echo(
        "From now on every import redacts it too, and so does a rebuild: the memory records its "
        f"first {HEAD} characters, its length and its SHA-256, never the string. The audit records "
        "the ids and counts, never the text."
    )


def _confirm(target: Target, confirm: str | None, said: str | None = None) -> None:
    """`said`: the value as the person gave it, when the target holds it read (`--before 90d`)."""
    flag = f"--{target.kind}"
    noun = "string" if target.kind == "redact" else target.kind
    expected = target.value if said is None else said
    if confirm is not None:
        if confirm != expected:
            msg = f"--confirm must repeat the {flag} value exactly; nothing was removed"
            raise click.UsageError(msg)
        return
    if not _interactive():
        msg = (
            f"forget needs the {noun} typed back on a terminal, and stdin is not one; "
            f"to run it from a script, add --confirm with the same value as {flag}. "
            "Nothing was removed."
        )
        raise click.ClickException(msg)
    asked = {
        CREDENTIALS: f"Type {CREDENTIALS} to redact them",
        "redact": "Type the string again to redact it",
    }.get(target.kind, f"Type the {target.kind} again to forget it")
    typed = click.prompt(asked, default="", show_default=False)
    if typed != expected:
        msg = f"what was typed is not the {noun} given; nothing was removed"
        raise click.ClickException(msg)


def _log_test(target: Target) -> LineTest:
    """What picks the lines of `hooks.log` a target takes: those quoting it, or written before it."""
    if target.kind == "before":
        from engine.audit import parse_time

        return written_before(parse_time(target.value))
    return quoting(target.value)


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
    short_help="Remove a session, project, chunk, string or everything before a time from the "
    "memory, for good (or redact credentials or a string in place).",
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
    "--before",
    metavar="TIME",
    help="Forget every message written before this time (a date, a date and time, UTC unless "
    "`time.local` is on, or an age such as 90d), and keep such lines out of every later import.",
)
@click.option(
    "--credentials",
    is_flag=True,
    help="Redact in place every credential the running sanitizer finds in the stored text (an "
    "import under an older sanitizer kept them; `recallbench doctor` counts them).",
)
@click.option(
    "--redact",
    metavar="TEXT",
    help="Replace this exact, case-sensitive text with [redacted:forgotten] wherever it is stored "
    "(the messages stay), and in every later import (e.g. a token of a format the sanitizer does "
    "not know; at least 8 characters).",
)
@click.option(
    "--confirm",
    metavar="SAME",
    default=None,
    help="The same value as the target, for use without a terminal (scripts). On a terminal, "
    "leave it out and type the target when asked: a --match or --redact value given here stays in "
    "the shell's history.",
)
@click.option("--dry-run", is_flag=True, help="Show what would go and stop.")
def forget_command(
    session: str | None,
    project: str | None,
    chunk: str | None,
    match: str | None,
    before: str | None,
    credentials: bool,
    redact: str | None,
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
      --before TIME   every message written before TIME (2026-02-11 is that day's start;
                      90d is 90 days ago), and such lines of any transcript imported later
      --credentials   every credential the running sanitizer finds, redacted in place
                      (confirm with: --confirm credentials)
      --redact TEXT   TEXT replaced in place by [redacted:forgotten], the messages kept,
                      and in every line imported later (a rebuild too)

    A resumed or forked session starts with a copy of the earlier lines (same line ids): those
    copies go too, from the sessions holding them (which otherwise stay).

    It shows what will go and asks you to type the target back; without a terminal it refuses
    unless --confirm repeats the target. Tombstones (ids only) keep a re-import of the same
    transcript, or a session resumed or forked from it later, from bringing the text back, while
    new lines still import. Every stage is recorded in `recallbench audit` (ids and counts, never
    text). If a stage fails, the command exits 1 naming what is left; running the same command
    again finishes it. A running `recallbench serve` notices the change on its next read.
    """
    from engine.backups import backups
    from engine.forget import ForgetError, Stage, forget, preview

    now = datetime.now(UTC)
    target = _target(
        session, project, chunk, match, credentials, before=before, redact=redact, now=now
    )
    db = _database()
    home = db.parent
    plan = preview(db, target)
    if not plan.counts and target.kind in ("session", "chunk"):
        _refuse_a_short_id(db, target)
    redacting = target.kind == CREDENTIALS  # hooks.log never holds text: nothing to scrub there
    try:
        log_lines = 0 if redacting else quoting_lines(home, _log_test(target))
    except (OSError, UntrustedFileError) as exc:
        raise click.ClickException(f"cannot read {home / LOG_NAME}: {exc}") from exc
    _show(plan, log_lines, db, backups(db))
    if dry_run:
        return
    _confirm(target, confirm, before)

    def progress(name: str, counts: str) -> None:
        click.echo(f"forget: {name} done ({counts})", err=True)

    extra = (
        [] if redacting else [Stage(name="logs", run=lambda: scrub_logs(home, _log_test(target)))]
    )
    names = ", ".join(["rows", "fts", "index", "backups", *(s.name for s in extra), "vacuum"])
    click.echo(f"forget: stages {names}", err=True)
    try:
        report = forget(db, target, now=now, extra=extra, on_stage=progress)
    except ForgetError as exc:
        raise click.ClickException(str(exc)) from exc
    said = "redacted" if target.kind in (CREDENTIALS, "redact") else "forgot"
    click.echo(f"{said}: {report.plan.summary()}; see `recallbench audit` for the stages")
    if target.kind in ("chunk", "match", "before", CREDENTIALS, "redact") and report.plan.chunks:
        click.echo(
            "Chunks rewritten from the messages that stay get their vectors on the next "
            "`recallbench import` (or from a running server's background embedding)."
        )

"""The `recallbench` command line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from engine.checks import is_int
from engine.health import STORE_ERRORS, is_damage_report
from engine.memory import Memory
from engine.scope import Scope, resolve_project
from recallbench import config
from recallbench.doctor_cli import doctor_command, rebuild_command, store_failure, warn_loose
from recallbench.present import hit_rows, one_line

# Characters of a hit's text the plain-text listing shows on one line (`--json` gives it whole).
SNIPPET_CHARS = 200


class Context:
    """Lazily opened state shared by the commands of one invocation."""

    def __init__(self, db: Path | None) -> None:
        self.db = db or config.default_db()
        self._memory: Memory | None = None

    def memory(self, *, embedder: bool = True) -> Memory:
        if self._memory is None:
            try:
                self._memory = Memory(self.db, config.make_embedder() if embedder else None)
            except STORE_ERRORS:
                raise  # explained at the edge (`_Main`), with what to do about it
            except Exception as exc:
                raise click.ClickException(
                    f"cannot open the memory database {self.db}: {exc}"
                ) from exc
        return self._memory


pass_ctx = click.make_pass_decorator(Context)


# The commands whose database is the memory (`--db`); the harness's commands use databases of their own.
_MEMORY_COMMANDS = frozenset({"import", "status", "search", "serve", "doctor", "rebuild"})


class _Main(click.Group):
    """The root group: a damaged, unreadable or locked database ends any command with a clear
    message and exit 2 (`recallbench.doctor_cli.store_failure`), never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except STORE_ERRORS as exc:
            memory = ctx.invoked_subcommand in _MEMORY_COMMANDS and isinstance(ctx.obj, Context)
            raise store_failure(ctx.obj.db if memory else None, exc) from exc


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Database file (default: $RECALLBENCH_HOME/memory.db, "
    "$RECALLBENCH_HOME defaulting to ~/.local/share/recallbench).",
)
@click.version_option(package_name="recallbench")
@click.pass_context
def main(ctx: click.Context, db: Path | None) -> None:
    """recallbench: long-term memory for Claude Code, and the pre-registered benchmark that decides
    which retrieval method serves it.

    \b
    Typical use:
      recallbench import                 # read ~/.claude/projects into the memory database
      recallbench search "why did the retry test flake"
      nox -s bench                       # run the registered default benchmark
    """
    ctx.obj = Context(db)


# --- import / status -----------------------------------------------------------------------------


@main.command("import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--no-embed", is_flag=True, help="Store text and FTS rows only; embed later.")
@click.option("--json", "as_json", is_flag=True, help="Print the import summary as JSON.")
@pass_ctx
def import_cmd(ctx: Context, paths: tuple[Path, ...], no_embed: bool, as_json: bool) -> None:
    """Import Claude Code transcripts (incremental and idempotent).

    PATHS are transcript files or folders searched recursively; the default is
    $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects. Secrets, <private> spans and
    recallbench's own injected context are removed before anything is stored.
    """
    targets = list(paths) or [config.claude_projects()]
    missing = [p for p in targets if not p.exists()]
    if missing:
        raise click.ClickException("no such file or folder: " + ", ".join(str(p) for p in missing))
    memory = ctx.memory(embedder=not no_embed)
    report = memory.import_paths(targets, embed=not no_embed, progress=config.show_progress())
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        _fail_if_damaged(memory.db_path, report.files_failed)
        return
    click.echo(f"database: {memory.db_path}")
    click.echo(
        f"files: {report.files_seen} seen, {report.files_imported} imported, "
        f"{report.files_unchanged} unchanged, {report.files_reimported} re-imported (rewritten), "
        f"{len(report.files_failed)} failed"
    )
    click.echo(
        f"messages: {report.messages}  chunks written: {report.chunks_written}  "
        f"vectors added: {report.vectors_added}"
    )
    _echo_counts("skipped", data["skipped"])
    _echo_counts("scrubbed", data["scrubbed"])
    if report.self_transcripts:
        click.echo(f"self-transcripts skipped: {len(report.self_transcripts)}")
    for path, why in sorted(report.files_failed.items()):
        click.echo(f"failed: {path}: {why}", err=True)
    _fail_if_damaged(memory.db_path, report.files_failed)


def _fail_if_damaged(db: Path, failed: dict[str, str]) -> None:
    """A file the import could not write because the database is damaged is the database's failure."""
    damaged = [why for why in failed.values() if is_damage_report(why)]
    if damaged:
        raise store_failure(db, damaged[0])


def _echo_counts(label: str, counts: Any) -> None:
    if counts:
        items = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
        click.echo(f"{label}: {items}")
    else:
        click.echo(f"{label}: none")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_ctx
def status(ctx: Context, as_json: bool) -> None:
    """Show what the memory holds: sessions, chunks, vectors, size, index state, skip and scrub counts."""
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    info = ctx.memory().status()
    warn_loose(ctx.db)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    for key in (
        "database",
        "projects",
        "sessions",
        "self_transcripts",
        "files",
        "messages",
        "chunks",
    ):
        click.echo(f"{key}: {info[key]}")
    click.echo(f"vectors: {info['vectors']} ({info['embedder']})")
    click.echo(f"size: {int(str(info['db_bytes'])) / 1e6:.1f} MB")
    click.echo(f"index: {info['index']}{_index_note(info)}")
    _echo_counts("skipped", info["skipped"])
    _echo_counts("scrubbed", info["scrubbed"])


def _index_note(info: dict[str, object]) -> str:
    from engine.vectors import EXACT_THRESHOLD

    vectors = info["vectors"]
    if info["index"] == "missing" and is_int(vectors) and vectors <= EXACT_THRESHOLD:
        return f" (not needed: up to {EXACT_THRESHOLD} vectors are scanned exactly)"
    return ""


# --- search and arms -----------------------------------------------------------------------------


def resolve_scope(memory: Memory, project: tuple[str, ...], all_projects: bool, cwd: Path) -> Scope:
    """--project P (repeatable), --all-projects, or the project holding the current directory."""
    if all_projects and project:
        raise click.UsageError("use either --project or --all-projects, not both")
    if all_projects:
        return Scope.everywhere()
    if project:
        return Scope.of(project)
    found = resolve_project(memory.projects(), cwd)
    if found is None:
        raise click.UsageError(
            f"no imported sessions were recorded in {cwd.resolve()} or a folder above it; "
            "pass --project PATH or --all-projects"
        )
    return Scope.of(found)


@main.command()
@click.argument("query")
@click.option(
    "--arm",
    "arm_spec",
    default=None,
    help="Arm spec, e.g. 'walk' or 'rrf(pool=20)'. Default: the shipped arm, else rrf.",
)
@click.option(
    "--project", multiple=True, help="Search this project (its recorded cwd); repeatable."
)
@click.option("--all-projects", is_flag=True, help="Search every project (must be asked for).")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print hits as JSON rows (rank, chunk_id, score, via, session_id, project, author, "
    "timestamp, text).",
)
@pass_ctx
def search(
    ctx: Context,
    query: str,
    arm_spec: str | None,
    project: tuple[str, ...],
    all_projects: bool,
    limit: int,
    as_json: bool,
) -> None:
    """Search memory with a retrieval arm, scoped to the current project unless told otherwise."""
    from arms.base import Query
    from arms.registry import build

    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    memory = ctx.memory()
    scope = resolve_scope(memory, project, all_projects, Path.cwd())
    spec = arm_spec or config.shipped_spec() or "rrf"
    try:
        arm = build(spec, memory)
    except (ValueError, KeyError) as exc:
        raise click.UsageError(str(exc)) from exc
    hits = arm.search(Query(text=query, scope=scope, now=datetime.now(UTC), k=limit))
    rows = hit_rows(hits, memory.chunks([h.chunk_id for h in hits], scope))
    if as_json:
        data = {"arm": spec, "scope": str(scope), "hits": [row.to_dict() for row in rows]}
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"arm: {spec}  scope: {scope}  hits: {len(rows)}")
    for row in rows:
        click.echo(
            f"{row.rank:>2}. {row.score:.4f} via={row.via} session_id={row.session_id} "
            f"project={row.project} timestamp={row.timestamp}"
        )
        click.echo(f"    {one_line(row.text)[:SNIPPET_CHARS]}")


@main.command("arms")
def arms_cmd() -> None:
    """List the registered retrieval arms: name, canonical default spec, and what each does."""
    from arms.registry import default_spec, entry, names

    listed = [(name, default_spec(name), entry(name).description) for name in names()]
    name_width = max(len(name) for name, _, _ in listed)
    spec_width = max(len(spec) for _, spec, _ in listed)
    for name, spec, description in listed:
        click.echo(f"{name:<{name_width}}  {spec:<{spec_width}}  {description}")


def _attach() -> None:
    from recallbench.harness_cli import bench, corpus, protocol, roster
    from recallbench.serve_cli import hook_command, hooks_group, serve_command
    from recallbench.ship import ship_command

    for command in (
        protocol,
        roster,
        corpus,
        bench,
        ship_command,
        serve_command,
        hooks_group,
        hook_command,
        doctor_command,
        rebuild_command,
    ):
        main.add_command(command)


_attach()

if __name__ == "__main__":  # pragma: no cover
    main()

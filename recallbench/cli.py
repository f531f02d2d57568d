"""The `recallbench` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.backups import kept_backups
from engine.render import MAX_MESSAGE_BYTES
from engine.scope import Scope
from engine.store_errors import STORE_ERRORS, is_damage_report
from recallbench import config
from recallbench.cli_options import LazyGroup, chosen_db, db_option
from recallbench.cli_scope import explain, resolve_here
from recallbench.home_trust import UntrustedHomeError, check_home
from recallbench.present import megabytes
from recallbench.status_notes import (
    arm_info,
    arm_line,
    files_note,
    forget_notes,
    gone_transcripts,
    hooks_info,
    hooks_line,
    imported_line,
    index_note,
    other_vectors,
    settles_info,
    settles_line,
    stale_notes,
    unrecorded,
    unrecorded_note,
)
from recallbench.store_failure import store_failure, warn_loose

if TYPE_CHECKING:
    from engine.memory import Memory


class Context:
    """Lazily opened state shared by the commands of one invocation."""

    def __init__(self, click_ctx: click.Context) -> None:
        self._click_ctx = click_ctx
        self._memory: Memory | None = None

    @property
    def db(self) -> Path:
        """`--db` (given before or after the command), else the default database."""
        return chosen_db(self._click_ctx) or config.default_db()

    def memory(self, *, embedder: bool = True, few_texts: bool = False) -> Memory:
        """The database, opened once per invocation; `few_texts` when this command embeds only a
        query (`config.make_embedder`) and reads once (`Memory`'s `one_shot`)."""
        if self._memory is None:
            from engine.memory import Memory  # numpy and the import pipeline: only when used

            self.check_home()
            try:
                emb = config.make_embedder(few_texts=few_texts) if embedder else None
                self._memory = Memory(self.db, emb, one_shot=few_texts)
            except STORE_ERRORS:
                raise  # explained at the edge (`MainGroup`), with what to do about it
            except Exception as exc:
                raise click.ClickException(
                    f"cannot open the memory database {self.db}: {exc}"
                ) from exc
        return self._memory

    def check_home(self) -> None:
        """Refuse a database in a home folder another user could change (their socket, their logs).

        `recallbench doctor` does not come through here, so it can still say what is wrong.
        """
        home = config.home()
        if not home.exists() or not self.db.resolve().is_relative_to(home.resolve()):
            return
        try:
            check_home(home)
        except UntrustedHomeError as exc:
            raise click.ClickException(str(exc)) from exc


pass_ctx = click.make_pass_decorator(Context)


# The commands whose database is the memory (`--db`); the harness's commands use databases of their own.
_MEMORY_COMMANDS = frozenset(
    {"import", "status", "search", "serve", "doctor", "rebuild", "correct"}
) | {"corrections", "forget", "sessions", "show", "vectors"}


class MainGroup(LazyGroup):
    """The root group. A damaged, unreadable or locked database ends any command with a clear message
    and exit 2 (`recallbench.store_failure.store_failure`), never a traceback; a reader that closes the
    pipe early (`recallbench search q | head -1`) ends the command quietly with exit 0, as `head`
    expects, instead of a BrokenPipeError traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe surfaces here rather than at interpreter exit
        except BrokenPipeError:
            # What is still buffered goes nowhere; flushing it at exit would raise again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except STORE_ERRORS as exc:
            memory = ctx.invoked_subcommand in _MEMORY_COMMANDS and isinstance(ctx.obj, Context)
            raise store_failure(ctx.obj.db if memory else None, exc) from exc
        return result


@click.group(cls=MainGroup, context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@click.version_option(package_name="recallbench")
@click.pass_context
def main(ctx: click.Context) -> None:
    """recallbench: long-term memory for Claude Code, and the pre-registered benchmark that decides
    which retrieval method serves it.

    \b
    Typical use:
      recallbench import                 # read ~/.claude/projects into the memory database
      recallbench search "why did the retry test flake"
      nox -s bench                       # run the registered default benchmark
    """
    ctx.obj = Context(ctx)


# --- import / status -----------------------------------------------------------------------------


@main.command(
    "import",
    short_help="Import Claude Code transcripts (incremental).",
)
@db_option
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--no-embed", is_flag=True, help="Store text and FTS rows only; embed later.")
@click.option("--json", "as_json", is_flag=True, help="Print the import summary as JSON.")
@click.option(
    "--max-message-bytes",
    type=click.IntRange(min=1),
    default=MAX_MESSAGE_BYTES,
    show_default=True,
    help="Store at most this many bytes of one message; the rest is cut, with a marker.",
)
@pass_ctx
def import_cmd(
    ctx: Context,
    paths: tuple[Path, ...],
    no_embed: bool,
    as_json: bool,
    max_message_bytes: int,
) -> None:
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
    report = memory.import_paths(
        targets,
        embed=not no_embed,
        progress=config.show_progress(),
        max_message_bytes=max_message_bytes,
    )
    if report.files_seen == 0:
        where = ", ".join(str(p) for p in targets)
        click.echo(f"warning: no transcripts (.jsonl files) found in {where}", err=True)
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        _fail_if_damaged(memory.db_path, report.files_failed)
        return
    click.echo(f"database: {memory.db_path}")
    n = report.files_moved
    moved = f"; {n} moved (a file imported before, at a path now gone)" if n else ""
    click.echo(
        f"files: {report.files_seen} seen, {report.files_imported} imported, "
        f"{report.files_unchanged} unchanged, {report.files_reimported} re-imported (rewritten), "
        f"{len(report.files_failed)} failed{moved}"
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


@main.command(
    short_help="Show what the memory holds.",
)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option(
    "--project",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Say which project this folder resolves to (default: the current directory).",
)
@pass_ctx
def status(ctx: Context, as_json: bool, directory: Path | None) -> None:
    """Show what the memory holds: sessions, chunks, vectors, size, index state, skip and scrub counts,
    and which project the current directory (or --project) resolves to, and why."""
    if not ctx.db.exists():
        raise click.ClickException(f"no database at {ctx.db}; run `recallbench import` first")
    memory = ctx.memory()
    info = memory.status()
    warn_loose(ctx.db)
    here = resolve_here(memory, directory or Path.cwd())
    info["resolves"] = {
        "directory": here.directory,
        "project": here.project,
        "worktrees": list(here.worktrees),
        "joined": here.joined,
        "why": explain(here),
    }
    other = other_vectors(ctx.db, str(info["embedder"]))
    info["other_embedders_bytes"] = other
    gone = unrecorded(ctx.db)
    info["unrecorded_projects"] = len(gone)
    kept = kept_backups(ctx.db)
    info["backups"] = [{"path": str(b.path), "bytes": b.bytes} for b in kept]
    info["files_gone"] = gone_transcripts(ctx.db)
    arm = info["arm"] = arm_info()
    settles = info["corrections"] = settles_info(memory.settlements(Scope.everywhere()))
    hook_files = hooks_info(cwd=directory or Path.cwd())
    info["hooks"] = [f.to_dict() for f in hook_files]
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
        click.echo(f"{key}: {info[key]}{files_note(info) if key == 'files' else ''}")
    click.echo(
        f"vectors: {info['vectors']} ({info['embedder']}); "
        f"sentence vectors of your prompts: {info['sentence_vectors']}"
    )
    click.echo(f"size: {megabytes(int(str(info['db_bytes'])))}")
    if other:
        listed = ", ".join(f"{e} ({megabytes(n)})" for e, n in other.items())
        click.echo(
            f"vectors of other embedders: {listed}; `recallbench vectors` lists them, "
            "`recallbench vectors drop ID` removes one"
        )
    if kept:
        names = ", ".join(b.path.name for b in kept)
        click.echo(
            f"backups `recallbench rebuild` kept: {len(kept)}, "
            f"{megabytes(sum(b.bytes for b in kept))} ({names}); each holds the whole memory as "
            "it was, so delete one (with its -wal and -shm) once the rebuild is trusted"
        )
    click.echo(f"index: {info['index']}{index_note(info)}")
    click.echo(arm_line(arm))
    click.echo(settles_line(settles))
    click.echo(hooks_line(hook_files))
    click.echo(imported_line(info))
    _echo_counts("skipped", info["skipped"])
    _echo_counts("scrubbed", info["scrubbed"])
    for line in stale_notes(info):
        click.echo(line)
    for line in forget_notes(info):
        click.echo(line)
    read = ", ".join(here.projects) or "none"
    click.echo(f"project here: {read} for {here.directory} ({explain(here)})")
    if note := unrecorded_note(gone, here):
        click.echo(note)


# --- search and arms -----------------------------------------------------------------------------


@main.command(
    "arms",
    short_help="List the registered retrieval arms.",
)
def arms_cmd() -> None:
    """List the registered retrieval arms: name, canonical default spec, and what each does."""
    from arms.registry import default_spec, entry, names

    listed = [(name, default_spec(name), entry(name).description) for name in names()]
    name_width = max(len(name) for name, _, _ in listed)
    spec_width = max(len(spec) for _, spec, _ in listed)
    for name, spec, description in listed:
        click.echo(f"{name:<{name_width}}  {spec:<{spec_width}}  {description}")


# One example per command, shown under its --help; keyed by the command's path below `recallbench`.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "arm": ("recallbench arm fit --help",),
    "arm fit": (
        'recallbench arm fit "ltr()" --corpus corpora/locomo-train --roster sealed/locomo-train '
        "--now 2026-06-01 --out /tmp/ltr.json",
    ),
    "doctor": ("recallbench doctor", "recallbench doctor --fix"),
    "forget": (
        'recallbench forget --match "hunter2-password"',
        "recallbench forget --session 5e551011-0000-4000-8000-000000000001 --dry-run",
        "recallbench forget --before 180d --dry-run",
        "recallbench forget --credentials --dry-run",
    ),
    "rebuild": (
        "recallbench rebuild",
        "recallbench rebuild ~/.claude/projects --db /tmp/memory.db",
        "recallbench rebuild --drop-missing",
    ),
    "config": (
        "recallbench config list",
        "recallbench config set mcp.all_projects true",
        "recallbench config unset mcp.all_projects",
    ),
    "config list": ("recallbench config list",),
    "config get": ("recallbench config get scope.inherit_parent",),
    "config set": ("recallbench config set mcp.all_projects true",),
    "config unset": ("recallbench config unset mcp.all_projects",),
    "import": (
        "recallbench import",
        "recallbench import ~/.claude/projects/-home-me-app --no-embed",
    ),
    "status": ("recallbench status", "recallbench --db /tmp/memory.db status --json"),
    "search": (
        'recallbench search "why did the retry test flake"',
        'recallbench search --db /tmp/memory.db --arm fts --all-projects --json "signing key"',
        'recallbench search --since 7d "what did we decide about the cache"',
    ),
    "arms": ("recallbench arms",),
    "protocol": ("recallbench protocol verify protocols/default-2.toml",),
    "protocol register": (
        "recallbench protocol register protocols/mine.toml --key receipts=~/keys/key.json",
    ),
    "protocol amend": (
        'recallbench protocol amend protocols/mine.toml --reason "k=20 was a typo"',
    ),
    "protocol verify": ("recallbench protocol verify protocols/default-2.toml",),
    "protocol instantiate": (
        "recallbench protocol instantiate protocols/private.toml --corpus corpora/mine-masked "
        "--roster masked=sealed/mine-masked --roster drafted=sealed/mine-drafted "
        "--out protocols/mine.toml",
        "recallbench protocol instantiate protocols/private-receipts.toml --corpus ~/bench/corpus "
        "--roster sealed/mine --out protocols/mine-receipts.toml --key receipts=~/keys/key.json",
    ),
    "roster": ("recallbench roster verify sealed/default/receipts",),
    "roster seal": (
        "recallbench roster seal rosters/receipts-mined.json --out sealed/mine --key-out ~/keys/key.json",
    ),
    "roster verify": ("recallbench roster verify sealed/mine --key receipts=~/keys/key.json",),
    "roster mine": (
        "recallbench roster mine ~/.claude/projects --out rosters/receipts-mined.json",
        "recallbench roster mine --kind masked-receipts ~/bench/corpus --out rosters/mine-masked.json",
    ),
    "roster draft": (
        'recallbench roster draft --generator "claude -p --model haiku" --sample 40 --seed 7 '
        "corpora/mine-masked --out rosters/mine-drafted.json",
        'recallbench roster draft --generator "python tests/harness/draft_generator.py" --sample 20 '
        "--seed 1 corpora/mine-masked --out /tmp/drafted.json    # offline, deterministic",
    ),
    "roster review": (
        "recallbench roster review rosters/mine-drafted.json",
        "recallbench roster review rosters/mine-drafted.json --export-tsv review.tsv",
        "recallbench roster review rosters/mine-drafted.json --import-tsv review.tsv",
    ),
    "corpus mask": (
        "recallbench corpus mask ~/bench/corpus --mask rosters/mine-masked.mask.json "
        "--out corpora/mine-masked",
    ),
    "corpus": ("recallbench corpus synthetic --out corpora/synthetic",),
    "corpus freeze": (
        "recallbench corpus freeze corpora/synthetic --roster sealed/default/receipts",
    ),
    "corpus synthetic": ("recallbench corpus synthetic --out corpora/synthetic --seed 1234",),
    "corpus locomo": ("recallbench corpus locomo locomo10.json --out corpora/locomo",),
    "bench": ("recallbench bench run protocols/default-2.toml",),
    "bench run": ("recallbench bench run protocols/default-2.toml",),
    "ship": ("recallbench ship results/default-2/<run-id>", "recallbench ship --show"),
    "serve": ("claude mcp add recallbench -- recallbench serve",),
    "hooks": ("recallbench hooks install --scope project --dry-run",),
    "hooks install": ("recallbench hooks install", "recallbench hooks install --scope project"),
    "hooks uninstall": ("recallbench hooks uninstall",),
    "hook": ("echo '{}' | recallbench hook SessionStart    # what Claude Code runs",),
    "audit": ("recallbench audit", "recallbench audit --since 2026-05-01 --json"),
    "correct": (
        'recallbench correct OLD_ID --by NEW_ID --kind changed --reason "the port moved to 6543"',
        'recallbench correct OLD_ID --note "The port is 6543." --kind corrected --reason "wrong"',
        "recallbench correct --undo 3",
    ),
    "corrections": ("recallbench corrections --pending", "recallbench corrections --project ."),
    "sessions": (
        "recallbench sessions",
        "recallbench sessions --all-projects --limit 5 --json",
        "recallbench sessions --since 2026-02-11 --until 2026-02-11",
    ),
    "show": (
        "recallbench show 2d1c88f7-a1d1-5ded-842d-fe7b28184a34",
        "recallbench show 2d1c88f7-a1d1-5ded-842d-fe7b28184a34 --context 1 --all-projects",
    ),
    "vectors": ("recallbench vectors", "recallbench --db /tmp/memory.db vectors list"),
    "models": ("recallbench models",),
    "models list": ("recallbench models list --json",),
    "models drop": (
        "recallbench models drop minilm-l6-v2-tuned-0123456789ab --dry-run",
        "recallbench models drop minilm-l6-v2-tuned-0123456789ab --yes",
    ),
    "vectors list": ("recallbench vectors list", "recallbench vectors list --json"),
    "vectors drop": (
        "recallbench vectors drop minilm-l6-v2 --dry-run",
        "recallbench vectors drop minilm-l6-v2 --yes",
    ),
    "projects": ("recallbench projects", "recallbench --db /tmp/memory.db projects list"),
    "projects list": ("recallbench projects list", "recallbench projects list --json"),
    "projects join": (
        "recallbench projects join ~/src/app-worktrees/task-12 ~/src/app-worktrees/task-13 "
        "--worktree-of ~/src/app --dry-run",
        "recallbench projects join ~/src/app-worktrees/task-12 --undo --yes",
    ),
}


def _attach() -> None:
    """Register every command by module: each is imported only when named (or listed by --help), so
    a command pays only for its own imports (`recallbench search` asking a running server starts in
    a fraction of the time it took when every command's module loaded first)."""
    lazy = {
        "protocol": ("recallbench.harness_commands", "protocol"),
        "roster": ("recallbench.harness_commands", "roster"),
        "corpus": ("recallbench.harness_commands", "corpus"),
        "bench": ("recallbench.harness_cli", "bench"),
        "serve": ("recallbench.serve_cli", "serve_command"),
        "hooks": ("recallbench.serve_cli", "hooks_group"),
        "hook": ("recallbench.serve_cli", "hook_command"),
        "config": ("recallbench.config_cli", "config_group"),
        "doctor": ("recallbench.doctor_cli", "doctor_command"),
        "rebuild": ("recallbench.doctor_cli", "rebuild_command"),
        "arm": ("recallbench.fit_cli", "arm_group"),
        "audit": ("recallbench.audit_cli", "audit_command"),
        "correct": ("recallbench.correct_cli", "correct_command"),
        "corrections": ("recallbench.correct_cli", "corrections_command"),
        "forget": ("recallbench.forget_cli", "forget_command"),
        "search": ("recallbench.search_cli", "search_command"),
        "sessions": ("recallbench.browse_cli", "sessions_command"),
        "show": ("recallbench.browse_cli", "show_command"),
        "vectors": ("recallbench.vectors_cli", "vectors_group"),
        "models": ("recallbench.models_cli", "models_group"),
        "projects": ("recallbench.projects_cli", "projects_group"),
        # `ship` imports the harness's statistics (scipy, over a second).
        "ship": ("recallbench.ship", "ship_command"),
    }
    for name, (module, attribute) in lazy.items():
        main.lazy(name, module, attribute)
    main.prepare = _add_example


def _add_examples(group: click.Group, prefix: str = "") -> None:
    """Put each command's examples in its epilog (Click prints it at the end of --help)."""
    for name, command in group.commands.items():
        _add_example(f"{prefix}{name}", command)


def _add_example(path: str, command: click.Command) -> None:
    examples = EXAMPLES.get(path)
    if examples and not command.epilog:
        label = "Example:" if len(examples) == 1 else "Examples:"
        command.epilog = "\b\n" + label + "\n" + "\n".join(f"  {e}" for e in examples)
    if isinstance(command, click.Group):
        _add_examples(command, f"{path} ")


_attach()
_add_examples(main)

if __name__ == "__main__":  # pragma: no cover
    main()

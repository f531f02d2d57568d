"""CLI groups for the pre-registered harness: protocol, roster, corpus, bench.

A roster key kept outside the repository is given one way everywhere: `--key ROSTER=PATH` (repeatable),
ROSTER being the protocol's `[[rosters]]` name (for `roster verify`, the sealed folder's name).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from harness import freeze
from recallbench import config
from recallbench.cli_options import HelpGroup


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


# --- protocol --------------------------------------------------------------------------------------


@click.group(cls=HelpGroup)
def protocol() -> None:
    """Register, verify and instantiate pre-registered protocols (protocols/*.toml)."""


def key_paths(keys: tuple[str, ...]) -> dict[str, Path]:
    """`--key ROSTER=PATH` values by roster name."""
    out: dict[str, Path] = {}
    for item in keys:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise click.UsageError(
                f"--key takes ROSTER=PATH (e.g. --key receipts=~/keys/key.json), got {item!r}"
            )
        out[name] = Path(value).expanduser()
    return out


def one_key(keys: tuple[str, ...], roster_name: str) -> Path | None:
    """The key of the one roster a command works on; a `--key` naming another roster is an error."""
    paths = key_paths(keys)
    others = sorted(set(paths) - {roster_name})
    if others:
        raise click.UsageError(
            f"--key names roster(s) {', '.join(others)}, but this roster is {roster_name!r}; "
            f"write --key {roster_name}=PATH"
        )
    return paths.get(roster_name)


key_option = click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="ROSTER=PATH",
    help="A roster's key kept outside the repository (checked against the seal); repeatable.",
)


def _corpus_and_seals(
    path: Path, keys: tuple[str, ...] = ()
) -> tuple[freeze.Manifest, dict[str, str], list[str]]:
    from harness.protocol.load import load_protocol
    from harness.runner import current_seals, materialise_corpus

    proto = load_protocol(path)
    corpus = materialise_corpus(proto, progress=config.show_progress())
    seals, errors = current_seals(proto, key_paths(keys))
    return freeze.manifest(corpus), seals, errors


@protocol.command("register")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@key_option
def protocol_register(path: Path, keys: tuple[str, ...]) -> None:
    """Hash-lock PROTOCOL before any arm runs: writes PROTOCOL.lock.json with the protocol's sha256,
    the roster seals, the corpus manifest hash, the pinned embedder id, the time and the git commit.

    PROTOCOL must pin its embedder with a top-level line such as `embedder = "minilm-l6-v2"`."""
    from harness.protocol.lock import register
    from harness.protocol.model import ProtocolError
    from harness.runner import git_commit

    try:
        snapshot, seals, errors = _corpus_and_seals(path, keys)
        manifest = snapshot.sha256
        if errors:
            raise click.ClickException("; ".join(errors))
        fits, encoders = _fit(path, manifest, seals)
        lock = register(
            path,
            manifest_sha256=manifest,
            seals=seals,
            now=datetime.now(UTC),
            git_commit=git_commit(path.resolve().parent),
            fits=fits,
            encoders=encoders,
        )
    except (ProtocolError, OSError, ValueError, RuntimeError) as exc:
        raise _fail(exc) from exc
    click.echo(f"registered {path} (sha256 {lock.protocol_sha256})")
    click.echo(f"embedder {lock.embedder} (pinned)")
    click.echo(f"corpus manifest {manifest}")
    for name, seal in sorted(seals.items()):
        click.echo(f"roster {name}: seal {seal}")
    for name, record in sorted(lock.encoders.items()):
        click.echo(f"fine-tuned encoder {name}: {record['path']} (sha256 {record['sha256']})")
    for arm, record in sorted(lock.fits.items()):
        click.echo(f"fitted {arm}: {record['path']} (sha256 {record['sha256']})")


Records = dict[str, dict[str, str]]


def _fit(path: Path, manifest: str, seals: dict[str, str]) -> tuple[Records, Records]:
    """Fine-tune the protocol's encoders, then fit its fitted arms (none: nothing to do), once it
    is known to register: (fitted arm -> artifact record, encoder name -> artifact record)."""
    from harness.arm_memories import extra_embedders
    from harness.cross_fit import fit_protocol
    from harness.protocol.embedder import live_embedder
    from harness.protocol.lock import check_registrable
    from harness.protocol.model import ProtocolError
    from harness.runner import materialise_corpus

    proto = check_registrable(path, manifest_sha256=manifest, seals=seals)
    if not proto.fits and not proto.encoders:
        return {}, {}
    embedder = live_embedder()
    if embedder.id != proto.embedder:
        msg = (
            f"{path} pins embedder {proto.embedder} but the live one is {embedder.id}: a fitted arm "
            "must be fitted with the embedder it will run with; switch embedders, then register"
        )
        raise ProtocolError(msg)
    extras, problems = extra_embedders(proto)
    if problems:
        raise ProtocolError("; ".join(problems))
    kinds = {"encoder": "fine-tuned encoder", "arm": "fitted"}
    artifacts, encoders = fit_protocol(
        proto,
        embedder,
        test_corpus=materialise_corpus(proto),
        extras=extras,
        cache=proto.root / "cache",
        progress=config.show_progress(),
        on_fit=lambda kind, a: click.echo(f"{kinds[kind]} {a.arm} -> {a.path}", err=True),
    )
    return (
        {arm: a.to_dict() for arm, a in artifacts.items()},
        {name: a.to_dict() for name, a in encoders.items()},
    )


@protocol.command("amend")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--reason", required=True, help="Why the protocol changed (recorded in the lock).")
def protocol_amend(path: Path, reason: str) -> None:
    """Record an amendment made before the first run (after a run, changes are deviations)."""
    from harness.protocol.load import load_protocol
    from harness.protocol.lock import amend
    from harness.protocol.model import ProtocolError

    try:
        proto = load_protocol(path)
        runs = proto.root / "results" / proto.id
        has_runs = runs.is_dir() and any(runs.iterdir())
        lock = amend(path, datetime.now(UTC), reason, has_runs)
    except (ProtocolError, OSError) as exc:
        raise _fail(exc) from exc
    click.echo(f"amended {path}: now {lock.current_sha256}")


@protocol.command("verify")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@key_option
def protocol_verify(path: Path, keys: tuple[str, ...]) -> None:
    """Check PROTOCOL, its roster seals and its corpus against the lock; exit 1 on any mismatch."""
    from harness.protocol.lock import verify
    from harness.protocol.model import ProtocolError

    try:
        manifest, seals, errors = _corpus_and_seals(path, keys)
        problems = errors + [
            m.message
            for m in verify(
                path,
                manifest_sha256=manifest.sha256,
                seals=seals,
                read_before=manifest.read_before,
            )
        ]
    except (ProtocolError, OSError, RuntimeError) as exc:  # RunRefusedError: no corpus to check
        raise _fail(exc) from exc
    if problems:
        for p in problems:
            click.echo(f"MISMATCH: {p}", err=True)
        sys.exit(1)
    click.echo(
        f"OK: {path} matches its lock (corpus {manifest.sha256[:16]}…, {len(seals)} roster seals)"
    )


# --- roster ----------------------------------------------------------------------------------------


@click.group(cls=HelpGroup)
def roster() -> None:
    """Seal and verify question rosters; mine draft rosters from your own history."""


@roster.command("seal")
@click.argument("draft", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The sealed roster folder to write, e.g. sealed/NAME.",
)
@click.option(
    "--key-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the key (gold) here instead, e.g. outside the repository.",
)
@click.option(
    "--qid-prefix",
    default="",
    help="Prefix every qid, e.g. 'train-' for a training roster made by the same generator as a "
    "test roster (a fit refuses training qids that are test qids).",
)
def roster_seal(draft: Path, out: Path, key_out: Path | None, qid_prefix: str) -> None:
    """Split DRAFT into questions.json (what arms see) and key.json (gold), sealed by SEAL.sha256."""
    from harness.roster import RosterError, load_draft
    from harness.seal import SealError, seal_draft, with_qid_prefix

    try:
        info = seal_draft(with_qid_prefix(load_draft(draft), qid_prefix), out, key_path=key_out)
    except (RosterError, SealError, OSError) as exc:
        raise _fail(exc) from exc
    click.echo(f"sealed {draft} -> {out}")
    click.echo(f"seal {info.seal}")
    click.echo(f"verify without recallbench: cd {out} && sha256sum -c SEAL.sha256")


@roster.command("verify")
@click.argument("sealed", type=click.Path(exists=True, file_okay=False, path_type=Path))
@key_option
def roster_verify(sealed: Path, keys: tuple[str, ...]) -> None:
    """Check a sealed roster against its SEAL.sha256; exit 1 naming the file on any mismatch.

    A key kept outside the repository is given as --key NAME=PATH, NAME being SEALED's folder name.
    """
    from harness.seal import SealError, verify_sealed

    key = one_key(keys, sealed.name)
    try:
        info = verify_sealed(sealed, key)
    except SealError as exc:
        click.echo(f"MISMATCH: {exc}", err=True)
        sys.exit(1)
    click.echo(f"OK: {sealed} seal {info.seal}")


# --- corpus ----------------------------------------------------------------------------------------


@click.group(cls=HelpGroup)
def corpus() -> None:
    """Freeze corpora and build benchmark corpora (synthetic, LoCoMo)."""


@corpus.command("freeze")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--roster",
    "rosters",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Sealed roster whose questions are looked for verbatim in the corpus; repeatable.",
)
@click.option("--cutoff", default=None, help="ISO time; sessions starting later are flagged.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the manifest and scan as JSON here.",
)
def corpus_freeze(
    path: Path, rosters: tuple[Path, ...], cutoff: str | None, out: Path | None
) -> None:
    """Manifest (sha256 over the raw transcript bytes) and contamination scan of the corpus at PATH."""
    from harness.roster import load_questions

    try:
        manifest = freeze.manifest(path)
        questions = {r.name: [(q.qid, q.text) for q in load_questions(r)] for r in rosters}
        when = datetime.fromisoformat(cutoff.replace("Z", "+00:00")) if cutoff else None
        report = freeze.scan(path, questions=questions, cutoff=when)
    except (freeze.FreezeError, ValueError, OSError) as exc:
        raise _fail(exc) from exc
    click.echo(
        f"manifest sha256 {manifest.sha256} ({len(manifest.entries)} files, "
        f"{sum(e.size for e in manifest.entries)} bytes, parser {manifest.parser_version}, "
        f"sanitizer {manifest.sanitize_version})"
    )
    data = report.to_dict()
    click.echo(f"sessions: {data['sessions']}")
    click.echo(
        f"self-transcripts: {data['self_transcripts']['count']} {data['self_transcripts']['sessions']}"
    )
    click.echo("scaffolding: " + ", ".join(f"{k}={v}" for k, v in data["scaffolding"].items()))
    click.echo(f"roster leaks: {data['roster_leaks']['count']}")
    for leak in data["roster_leaks"]["items"]:
        click.echo(f"  {leak['roster']}/{leak['qid']}: {leak['sessions']}")
    click.echo(f"after cutoff: {data['after_cutoff']['count']} {data['after_cutoff']['sessions']}")
    if out is not None:
        out.write_text(
            json.dumps({"manifest": manifest.to_dict(), "scan": data}, indent=2) + "\n",
            encoding="utf-8",
        )
        click.echo(f"wrote {out}")


@corpus.command("synthetic")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the corpus and its draft rosters into.",
)
@click.option(
    "--seed",
    default=1234,
    show_default=True,
    type=int,
    help="Seed of the generator (same seed, same bytes).",
)
@click.option(
    "--sessions", default=None, type=int, help="Number of sessions (default: the generator's)."
)
@click.option(
    "--corrected",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Facts a later session corrects (two added sessions each, a settle in settles.json).",
)
@click.option(
    "--changed",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Settings a later session changes (two added sessions each, a settle in settles.json).",
)
@click.option(
    "--decisions",
    default=None,
    type=click.IntRange(min=1),
    help="Decisions planted, the decisions roster's size (default: the generator's, 64; at most "
    "36 per project, and the busiest project takes the largest share).",
)
def corpus_synthetic(
    out: Path, seed: int, sessions: int | None, corrected: int, changed: int, decisions: int | None
) -> None:
    """Write the deterministic synthetic Claude Code corpus with its draft rosters.

    With --corrected/--changed it also plants facts that are corrected or changed later, writes the
    settles a person would make (settles.json) and a draft `corrections` roster; without them the
    corpus is byte for byte the one it always was.
    """
    from harness.synthetic import SyntheticConfig, SyntheticError, generate

    try:
        config = SyntheticConfig(seed=seed, corrected_facts=corrected, changed_facts=changed)
        if sessions is not None:
            config = dataclasses.replace(config, sessions=sessions)
        if decisions is not None:
            config = dataclasses.replace(config, decisions=decisions)
        generated = generate(out, config)
    except SyntheticError as exc:
        raise click.ClickException(str(exc)) from exc
    sizes = ", ".join(f"{name}={n}" for name, n in generated.questions.items())
    click.echo(
        f"wrote {out}: {generated.session_files} sessions, "
        f"{generated.lines} lines, about {generated.estimated_chunks} chunks; draft rosters: {sizes}"
    )
    click.echo(f"manifest sha256 {freeze.manifest(out).sha256}")


@corpus.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the transcript tree and roster.json (keep it out of repositories).",
)
@click.option("--conversations", default=None, help="Comma-separated sample ids (default: all).")
def corpus_locomo(path: Path, out: Path, conversations: str | None) -> None:
    """Convert a LoCoMo JSON file into a Claude Code transcript tree plus OUT/roster.json (draft,
    message-unit gold). The data is CC BY-NC 4.0: keep it out of repositories."""
    from harness.locomo import LocomoError, convert

    wanted = [c.strip() for c in conversations.split(",") if c.strip()] if conversations else None
    try:
        report = convert(path, out, conversations=wanted)
    except LocomoError as exc:
        raise _fail(exc) from exc
    data = report.to_dict()
    click.echo(
        f"wrote {out}: {len(data['conversations'])} conversations, {data['sessions']} sessions, "
        f"{data['messages']} messages"
    )
    click.echo(
        f"questions: {data['questions']} of {data['questions_total']} "
        + json.dumps(data["categories"])
    )
    click.echo("evidence repairs: " + (json.dumps(data["repairs"]) if data["repairs"] else "none"))
    unresolved = data.get("unresolved", [])
    click.echo(f"unresolved (reported in {out / 'unresolved.json'}): {len(unresolved)}")
    for item in unresolved:
        click.echo(f"  {item['qid']}: evidence {item['raw_evidence']}")
    click.echo(f"next: recallbench roster seal {out / 'roster.json'} --out sealed/NAME")


# --- bench -----------------------------------------------------------------------------------------


@click.group(cls=HelpGroup)
def bench() -> None:
    """Run registered protocols."""


@bench.command("run")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--deviation",
    default=None,
    help="Run despite a mismatch; the reason is recorded first in the results.",
)
@key_option
@click.option(
    "--results",
    "results_root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results root (default: <repo>/results).",
)
def bench_run(
    path: Path, deviation: str | None, keys: tuple[str, ...], results_root: Path | None
) -> None:
    """Verify lock, seals, corpus and pinned embedder of PATH, run every arm on every sealed question,
    score, decide the gates and write results/<protocol>/<run-id>/ (never overwriting an earlier run).

    The embedder used is $RECALLBENCH_EMBEDDER (default minilm); it must report the id the protocol
    pins (`embedder = "minilm-l6-v2"`), else the run is refused unless --deviation says why."""
    from harness.protocol.model import ProtocolError
    from harness.runner import RunOptions, RunRefusedError, run

    keys_by_roster = key_paths(keys)
    try:
        result = run(
            path,
            RunOptions(
                deviation=deviation,
                key_paths=keys_by_roster,
                progress=config.show_progress(),
                results_root=results_root,
            ),
        )
    except (RunRefusedError, ProtocolError) as exc:
        raise _fail(exc) from exc
    s = result.summary
    click.echo(f"results: {result.directory}")
    if s.deviations:
        click.echo(f"DEVIATION recorded: {s.deviations[0].reason}")
    if s.embedder is not None:
        click.echo(s.embedder.describe())
    from harness.gates import format_gate_line

    for g in result.gates:
        click.echo(format_gate_line(g))
    primary = s.metrics.primary
    for row in s.aggregates:
        m = row.metrics.get(primary)
        if row.subset == "all" and m is not None:
            click.echo(
                f"{row.roster:<12} {row.arm:<60} {primary}={m.mean:.3f} "
                f"[{m.ci_low or 0:.3f}, {m.ci_high or 0:.3f}] n={row.n}"
            )
    click.echo(f"shipped arm (pre-registered rule): {s.shipped_arm}")

"""`protocol instantiate`: fill a template protocol's corpus and rosters with fresh hashes, keep the rest.

A template (e.g. protocols/private.toml) holds everything decided in advance: arms, gates, readings,
ship rule. What it cannot know is the user's corpus and rosters; this command fills in the corpus path
and its manifest hash (computed now), and each roster's path, seal (verified now) and unit (read from
its key: the key decides whether a session or a message is found), by editing the TOML text in place so the template's comments and layout survive into the new protocol.

Rosters are named as in the template: ``--roster NAME=DIR`` (repeatable). A template with one roster
also takes a bare ``--roster DIR``. Every roster of the template must be given, or left out by name
with ``--without NAME`` (`recallbench.template_without`: its gates go, and the ship rules read them as
NULL): a protocol whose gates name a roster that is not there would not load.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path

import click

from harness import freeze
from recallbench.harness_cli import key_option, key_paths
from recallbench.template_without import without_roster
from recallbench.toml_edit import set_in_every, set_in_roster, set_in_section, set_top


@click.command("instantiate")
@click.argument("template", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--corpus",
    "corpus",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The frozen corpus folder (its manifest hash is computed now).",
)
@click.option(
    "--roster",
    "rosters",
    required=True,
    multiple=True,
    metavar="NAME=DIR",
    help=(
        "A sealed roster folder for the template's [[rosters]] entry NAME (its seal is verified "
        "now); repeatable. A template with one roster also takes a bare DIR."
    ),
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The new protocol file (never overwritten); its stem becomes the protocol id.",
)
@click.option(
    "--fit-corpus",
    "fit_corpus",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The training corpus of the template's fitted arms and encoders ([[fits]], [[encoders]]): never the test corpus.",
)
@click.option(
    "--fit-roster",
    "fit_roster",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The sealed training roster of the template's fitted arms and encoders (its key in the folder).",
)
@click.option(
    "--without",
    "without",
    multiple=True,
    metavar="NAME",
    help=(
        "Leave the template's roster NAME out with its gates (e.g. --without drafted when you "
        "will not draft questions); the ship rules read those gates as NULL: a condition that "
        "accepts NULL is dropped, a rule that needs another verdict is removed. Repeatable; the "
        "new protocol's first line says what was left out."
    ),
)
@key_option
def protocol_instantiate(
    template: Path,
    corpus: Path,
    rosters: tuple[str, ...],
    out: Path,
    keys: tuple[str, ...],
    fit_corpus: Path | None,
    fit_roster: Path | None,
    without: tuple[str, ...],
) -> None:
    """Fill a template's corpus (path + fresh manifest hash) and rosters (path + seal), keep the rest.

    A template with fitted arms ([[fits]]) also needs their training corpus and roster
    (--fit-corpus, --fit-roster): `protocol register` fits on them. The new protocol's id becomes OUT's
    file stem so its results live apart from other instances.
    """
    from harness.protocol.load import find_root, load_protocol
    from harness.protocol.model import ProtocolError
    from harness.roster import RosterError, parse_key_file
    from harness.seal import SealError, verify_sealed

    if out.exists():
        raise click.ClickException(f"{out} exists; protocols are not overwritten")
    text = template.read_text(encoding="utf-8")
    template_rosters(text, template)  # valid TOML with named rosters, before any is left out
    left_out = []
    for name in dict.fromkeys(without):
        text, left = without_roster(text, name, template)
        left_out.append(left)
    names = template_rosters(text, template)
    folders = roster_folders(rosters, names, template)
    key_by_name = key_paths(keys)
    unknown = sorted(set(key_by_name) - set(names))
    if unknown:
        raise click.UsageError(
            f"--key names roster(s) {', '.join(unknown)}, but {template} has rosters "
            f"{', '.join(names)}; write --key NAME=PATH with one of those"
        )
    try:
        manifest = freeze.manifest(corpus).sha256
        infos = {
            name: verify_sealed(folder, key_by_name.get(name)) for name, folder in folders.items()
        }
        # The unit is the key's (a message-unit key scored per session would score nothing).
        units = {name: parse_key_file(info.key_path).unit for name, info in infos.items()}
    except (freeze.FreezeError, SealError, RosterError) as exc:
        raise click.ClickException(str(exc)) from exc
    root = find_root(out.resolve().parent)
    text = set_top(text, "id", out.stem)
    text = set_in_section(
        text,
        "[corpus]",
        {
            "path": relative(corpus, root),
            "manifest_sha256": manifest,
            **_converted(corpus, tomllib.loads(text)["corpus"].get("source")),
        },
    )
    text = fill_fits(text, template, fit_corpus, fit_roster, root)
    seals = {name: info.seal for name, info in infos.items()}
    for name, folder in folders.items():
        text = set_in_roster(
            text,
            name,
            {"path": relative(folder, root), "seal": seals[name], "unit": units[name]},
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    try:
        load_protocol(out)
    except ProtocolError as exc:
        out.unlink()
        raise click.ClickException(str(exc)) from exc
    filled = ", ".join(
        f"{name} seal {seal[:16]}… unit {units[name]}" for name, seal in seals.items()
    )
    click.echo(f"wrote {out} (corpus {manifest[:16]}…, {filled})")
    for left in left_out:
        click.echo(left.summary())
    click.echo("next: " + register_line(out, key_by_name))


def _converted(corpus: Path, source: object) -> dict[str, object]:
    """What a converter recorded about the corpus that the protocol repeats: LoCoMo's conversations."""
    report = corpus / "conversion.json"
    if source != "locomo" or not report.is_file():
        return {}
    try:
        conversations = json.loads(report.read_text(encoding="utf-8")).get("conversations")
    except (OSError, ValueError, AttributeError) as exc:
        raise click.ClickException(f"{report} is not a conversion report: {exc}") from exc
    return {"conversations": conversations} if isinstance(conversations, list) else {}


def fill_fits(
    text: str, template: Path, corpus: Path | None, roster: Path | None, root: Path
) -> str:
    """Fill every [[fits]] and [[encoders]] entry's corpus and training roster; refuse a mismatch of
    options and template.

    Raises:
        click.UsageError: the template fits arms and a --fit option is missing, or the other way round.
        click.ClickException: the training roster's seal or key does not check.
    """
    from harness.roster import RosterError, parse_key_file
    from harness.seal import SealError, verify_sealed

    doc = tomllib.loads(text)
    fits = [*(doc.get("fits") or []), *(doc.get("encoders") or [])]
    if not fits:
        if corpus is not None or roster is not None:
            raise click.UsageError(f"{template} fits no arm; drop --fit-corpus and --fit-roster")
        return text
    if corpus is None or roster is None:
        raise click.UsageError(
            f"{template} fits {', '.join(str(f.get('arm', f.get('name'))) for f in fits)}: give their training data "
            "with --fit-corpus DIR --fit-roster SEALED_DIR (never the test corpus or rosters)"
        )
    try:
        info = verify_sealed(roster)
        unit = parse_key_file(info.key_path).unit
        manifest = freeze.manifest(corpus).sha256
    except (SealError, RosterError, freeze.FreezeError) as exc:
        raise click.ClickException(str(exc)) from exc
    for table in ("fits", "encoders"):
        text = set_in_every(
            text,
            f"[{table}.corpus]",
            {
                "path": relative(corpus, root),
                "manifest_sha256": manifest,
                **_converted(corpus, fits[0].get("corpus", {}).get("source")),
            },
        )
        text = set_in_every(
            text,
            f"[[{table}.rosters]]",
            {"path": relative(roster, root), "seal": info.seal, "unit": unit},
        )
    return text


def register_line(out: Path, keys: Mapping[str, Path]) -> str:
    """The `protocol register` command for the new protocol, quoted for the shell and runnable as is."""
    words = ["recallbench", "protocol", "register", str(out)]
    for name, key in sorted(keys.items()):
        words += ["--key", f"{name}={key.resolve()}"]
    return shlex.join(words)


def template_rosters(text: str, template: Path) -> list[str]:
    """The names of the template's `[[rosters]]` entries, in file order."""
    try:
        rosters = tomllib.loads(text).get("rosters")
    except tomllib.TOMLDecodeError as exc:
        raise click.ClickException(f"{template} is not valid TOML: {exc}") from exc
    names = (
        [r.get("name") for r in rosters if isinstance(r, dict)] if isinstance(rosters, list) else []
    )
    if not names or not all(isinstance(n, str) for n in names):
        raise click.ClickException(f"{template} has no [[rosters]] entry with a name to fill in")
    return [str(n) for n in names]


def roster_folders(given: tuple[str, ...], names: list[str], template: Path) -> dict[str, Path]:
    """`--roster` values by template roster name, in the template's order.

    Raises:
        click.UsageError: a bare DIR for a template with several rosters, an unknown or repeated
            name, or a template roster left out.
    """
    out: dict[str, Path] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep:
            if len(names) != 1 or len(given) != 1:
                raise click.UsageError(
                    f"{template} has rosters {', '.join(names)}: give each as --roster NAME=DIR "
                    f"(got the bare folder {item!r})"
                )
            name, value = names[0], item
        if name not in names:
            raise click.UsageError(
                f"--roster names {name!r}, but {template} has rosters {', '.join(names)}"
            )
        if name in out:
            raise click.UsageError(f"--roster {name}=… is given twice")
        folder = Path(value).expanduser()
        if not folder.is_dir():
            raise click.UsageError(f"--roster {name}: {folder} is not a sealed roster folder")
        out[name] = folder
    missing = [n for n in names if n not in out]
    if missing:
        raise click.UsageError(
            f"{template} needs every roster it names; missing: "
            + ", ".join(f"--roster {n}=sealed/…" for n in missing)
            + " (or leave one out with its gates: "
            + " ".join(f"--without {n}" for n in missing)
            + ")"
        )
    return {n: out[n] for n in names}


def relative(path: Path, root: Path) -> str:
    """`path` relative to the repository root when inside it, else absolute (POSIX form)."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return resolved.as_posix()

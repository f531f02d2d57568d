"""`roster mine` and `corpus mask`: draft receipt rosters from your own transcripts, and build the
masked benchmark copy of a corpus (registered on the `roster` and `corpus` groups in harness_cli).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import click

from harness import freeze
from recallbench import config


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.command("mine")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--kind",
    type=click.Choice(["receipts", "masked-receipts"]),
    default="receipts",
    show_default=True,
    help="receipts: commit subject -> the session that made the commit. masked-receipts: the same "
    "questions plus a mask list (<stem>.mask.json) for `corpus mask`, which builds the benchmark copy "
    "without the commit calls, subjects and hashes.",
)
@click.option(
    "--unit",
    type=click.Choice(["session", "message"]),
    default="session",
    show_default=True,
    help="What counts as found. session: the session that made the commit. message: the messages of "
    "the work it recorded (that session's messages after its previous commit, through this commit's "
    "call and result); use it when each project holds few sessions, where finding the session is "
    "trivial.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("rosters/receipts-mined.json"),
    show_default=True,
    help="Where to write the draft roster (review it, then seal it).",
)
def roster_mine(
    paths: tuple[Path, ...], kind: str, unit: Literal["session", "message"], out: Path
) -> None:
    """Draft a receipt-lookup roster from your own transcripts (PATHS, default ~/.claude/projects):
    commit messages -> the session whose git result holds the hash. Sessions that only cite a hash
    are listed apart, never as authors; whatever cannot be read is skipped and counted.
    """
    from harness.mask import MaskError, build_mask, mask_path
    from harness.mine import MineError, mine_receipts

    targets = list(paths) or [config.claude_projects()]
    bar = _bar("mine", "file")
    try:
        mined = mine_receipts(targets, unit=unit, on_file=bar.update if bar else None)
        mask = build_mask(mined) if kind == "masked-receipts" else None
        roster_path, side_path = mined.write(out)
        if mask is not None:
            mask_file = mask.write(mask_path(roster_path))
    except (MineError, MaskError) as exc:
        raise _fail(exc) from exc
    finally:
        if bar is not None:
            bar.close()
    for line in mined.summary():
        click.echo(line)
    click.echo(
        f"drafted {roster_path} ({kind}): {len(mined.receipts)} questions; review {side_path}"
    )
    if mask is not None:
        click.echo(
            f"mask list {mask_file} (sha256 {mask.sha256}): {len(mask.call_ids())} calls, "
            f"{len(mask.subjects())} subjects, {len(mask.hashes())} hashes"
        )
        click.echo(
            f"build the benchmark copy: recallbench corpus mask {' '.join(map(str, targets))} "
            f"--mask {mask_file} --out corpora/{_masked_name(out.stem)}"
        )
    click.echo(f"review it, then: recallbench roster seal {roster_path} --out sealed/NAME")


@click.command("mask")
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--mask",
    "mask_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The mask list written by `roster mine --kind masked-receipts` (rosters/NAME.mask.json).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A new folder for the masked copy (never inside SRC).",
)
def corpus_mask(src: Path, mask_file: Path, out: Path) -> None:
    """Copy the transcripts under SRC into OUT with the mask applied: the commits' git commit calls
    and results removed, their subjects and hashes replaced in every line of every session. SRC (your
    live history) is only read. OUT/MASK.json records the mask; `corpus freeze OUT` includes it.
    """
    from harness.mask import MaskError
    from harness.mask_corpus import mask_corpus

    bar = _bar("mask", "file")
    try:
        report = mask_corpus(src, mask_file, out, on_file=bar.update if bar else None)
    except (MaskError, OSError) as exc:
        raise _fail(exc) from exc
    finally:
        if bar is not None:
            bar.close()
    data = report.to_dict()
    click.echo(
        f"wrote {out}: {data['files']} files ({data['files_changed']} changed, {data['left_out']} "
        f"other files left out), {data['lines_changed']} of {data['lines']} lines changed "
        f"({data['lines_not_json']} not JSON)"
    )
    click.echo("removed: " + ", ".join(f"{k}={v}" for k, v in data["removed"].items()))
    click.echo(f"mask sha256 {report.mask_sha256}; manifest sha256 {freeze.manifest(out).sha256}")


def _masked_name(stem: str) -> str:
    """The masked copy's folder name for a roster named `stem` (``mine-masked``, not ``…-masked-masked``)."""
    return stem if stem.endswith("masked") else f"{stem}-masked"


def _bar(desc: str, unit: str) -> Any:
    """A progress bar on a terminal, else None."""
    if not config.show_progress():
        return None
    from tqdm import tqdm  # only for a terminal

    return tqdm(desc=desc, unit=unit, leave=False)

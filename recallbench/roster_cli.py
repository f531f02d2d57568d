"""`recallbench roster draft` and `recallbench roster review`: questions in a person's words.

`draft` asks a model of the user's choice (any command reading stdin, e.g. ``claude -p``) for the question
a developer would ask about each sampled passage; `review` lets the person accept, edit or drop each one,
in the terminal or through a TSV file. Both are added to the `roster` group by `recallbench.cli`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from harness.draft import DEFAULT_TIMEOUT, DraftError, Generator, draft_roster, side_path
from harness.draft_filter import DEFAULT_MAX_OVERLAP, DEFAULT_RARE_SHARE
from harness.review import Action, Review, ReviewError, excerpt, export_tsv, import_tsv
from harness.roster import UNITS
from recallbench import config

__all__ = ["roster_draft", "roster_review"]

_PASSAGE_CHARS = 600  # of the passage shown in the terminal: about ten lines
_KEYS = ("a", "e", "d", "s", "q")
_ACTION_KEYS: dict[str, Action] = {"a": "accept", "e": "edit", "d": "drop"}


@click.command("draft")
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--generator",
    required=True,
    help="The command that writes one question: it reads the instruction and a passage on stdin and "
    'prints the question. Run without a shell. E.g. "claude -p --model haiku".',
)
@click.option(
    "--sample", type=click.IntRange(min=1), required=True, help="How many passages to sample."
)
@click.option("--seed", type=int, required=True, help="The sampling seed (recorded in the draft).")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The draft roster to write; its side file <stem>.passages.json goes beside it.",
)
@click.option(
    "--unit",
    type=click.Choice(UNITS),
    default="session",
    show_default=True,
    help="Gold: the passage's session, or its messages.",
)
@click.option(
    "--max-overlap",
    type=click.FloatRange(0, 1, min_open=True),
    default=DEFAULT_MAX_OVERLAP,
    show_default=True,
    help="Drop a question when more than this share of its content words are rare passage words.",
)
@click.option(
    "--rare-share",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=DEFAULT_RARE_SHARE,
    show_default=True,
    help="A passage word is rare when at most this share of the corpus's chunks (at least one) holds it.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds per generator call; a passage whose call runs longer is skipped.",
)
@click.option(
    "--force", is_flag=True, help="Overwrite --out (and its side file, review log included)."
)
def roster_draft(
    corpus: Path,
    generator: str,
    sample: int,
    seed: int,
    out: Path,
    unit: str,
    max_overlap: float,
    rare_share: float,
    timeout: float,
    force: bool,
) -> None:
    """Draft questions in a person's words from a frozen CORPUS, written by a model you choose.

    Samples passages (chunks as a benchmark stores them, secrets already removed) stratified by project
    and age, sends each to --generator with a fixed instruction asking for the question a developer
    would ask weeks later without the passage's distinctive words, and drops questions that copy rare
    passage words anyway. Gold is the passage's session (or messages). The passages leave this machine
    only if the generator sends them: `claude -p` sends them to Anthropic's API, as Claude Code does.
    recallbench itself makes no network call.

    Review the draft (recallbench roster review) before sealing it.
    """
    if out.exists() and not force:
        msg = f"{out} already exists (a review may be recorded in {side_path(out)}); choose another --out or pass --force"
        raise click.ClickException(msg)
    try:
        result = draft_roster(
            corpus,
            Generator(command=generator, timeout=timeout),
            sample=sample,
            seed=seed,
            name=out.stem,
            unit="message" if unit == "message" else "session",
            max_overlap=max_overlap,
            rare_share=rare_share,
            progress=config.show_progress(),
        )
        _echo_counts(result.counts, max_overlap)
        if result.unit == "session" and result.counts["alone_in_scope"]:
            click.echo(
                f"{result.counts['alone_in_scope']} of {result.counts['kept']} questions ask about "
                "the only session of their project (its scope holds no other), which every memory "
                "arm finds at the session unit; draft with --unit message to make the gold the "
                "passage itself"
            )
        draft_path, side = result.write(out)
    except (DraftError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"wrote {draft_path} (draft roster) and {side} (passages and provenance: never share it)"
    )
    click.echo(f"next: recallbench roster review {draft_path}")
    click.echo(
        f"then: recallbench roster seal {draft_path} --out sealed/{out.stem} --key-out KEY.json"
    )


def _echo_counts(counts: Mapping[str, Any], max_overlap: float) -> None:
    failures = counts["generator_failures"]
    click.echo(
        f"read {counts['files_seen']} transcript files ({counts['files_failed']} failed): "
        f"{counts['chunks']} chunks, {counts['too_short']} too short to ask about, "
        f"{counts['eligible']} eligible"
    )
    click.echo(
        f"sampled {counts['sampled']} passages from {len(counts['strata'])} strata (project x age); "
        f"asked the generator {counts['asked']} times"
    )
    click.echo(
        "generator failures: "
        + (", ".join(f"{reason} {n}" for reason, n in failures.items()) if failures else "none")
    )
    click.echo(
        f"dropped by the overlap filter (over {max_overlap:g} of a question's content words are rare "
        f"passage words): {counts['dropped_by_filter']}"
    )
    click.echo(f"kept: {counts['kept']}")


def _stdin_is_terminal() -> bool:
    """Whether a person can answer prompts (tests replace this)."""
    return sys.stdin.isatty()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@click.command("review")
@click.argument("draft", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--export-tsv",
    "export_to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the questions to review as TSV (qid, action, question, passage, project) and stop.",
)
@click.option(
    "--import-tsv",
    "import_from",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Apply a reviewed TSV: action accept, edit or drop (empty: not yet) and the question text.",
)
@click.option(
    "--all", "everything", is_flag=True, help="Also ask (or export) questions already reviewed."
)
def roster_review(
    draft: Path, export_to: Path | None, import_from: Path | None, everything: bool
) -> None:
    """Accept, edit or drop each drafted question of DRAFT, at the terminal or through a TSV file.

    Each question is shown with its project and the passage it was drafted from; answer a(ccept),
    e(dit), d(rop), s(kip) or q(uit). Every decision is saved at once: DRAFT is rewritten (an edit
    changes the text, a drop removes the question) and the review log in the side file records the
    action, the drafted text of an edited question, when and how long. Questions already reviewed are
    not asked again unless --all. Without a terminal, use --export-tsv, edit the file, --import-tsv.
    """
    if export_to is not None and import_from is not None:
        raise click.UsageError("give --export-tsv or --import-tsv, not both")
    try:
        review = Review.load(draft)
        if export_to is not None:
            rows = export_tsv(review, export_to, everything=everything)
            click.echo(f"wrote {rows} questions to {export_to}")
            click.echo(
                "fill in action and question, then: "
                f"recallbench roster review {draft} --import-tsv {export_to}"
            )
            return
        if import_from is not None:
            applied = import_tsv(review, import_from, at=_now())
            review.save()
            click.echo(f"applied {import_from}: " + _counts_line(applied))
        else:
            _review_at_terminal(review, everything=everything)
    except (ReviewError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{draft}: " + _counts_line(review.counts()))


def _counts_line(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items()) if n) or "nothing"


def _review_at_terminal(review: Review, *, everything: bool) -> None:
    if not _stdin_is_terminal():
        msg = (
            "roster review asks a person at a terminal, and stdin is not one. Without a terminal, use "
            f"the TSV round trip: recallbench roster review {review.draft_path} --export-tsv review.tsv, "
            "fill in its action and question columns, then recallbench roster review "
            f"{review.draft_path} --import-tsv review.tsv"
        )
        raise click.ClickException(msg)
    todo = review.pending(everything=everything)
    if not todo:
        click.echo("every question is reviewed already (--all asks them again)")
    for i, question in enumerate(todo, start=1):
        qid = question["qid"]
        started = time.monotonic()
        scope = question.get("scope")
        click.echo(
            f"\n[{i}/{len(todo)}] {qid}   project: {', '.join(scope) if isinstance(scope, list) else scope}"
        )
        passage = review.passage(qid)
        click.echo(
            "passage: "
            + (excerpt(passage, _PASSAGE_CHARS) if passage else "(not in the side file)")
        )
        click.echo(click.style("question: ", bold=True) + question["text"])
        key = click.prompt(
            "a(ccept) e(dit) d(rop) s(kip) q(uit)",
            type=click.Choice(list(_KEYS)),
            show_choices=False,
        )
        if key == "q":
            break
        if key == "s":
            continue
        text = click.prompt("new question", default=question["text"]) if key == "e" else None
        seconds = round(time.monotonic() - started, 1)
        recorded = review.decide(qid, _ACTION_KEYS[key], text, at=_now(), seconds=seconds)
        review.save()
        click.echo(f"{qid}: {recorded}")

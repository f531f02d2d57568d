"""Draft a roster of questions in a person's words: sampled passages, a model of the user's choice.

`draft_roster` samples passages from a frozen corpus (`harness.draft_sample`: read as the importer reads
it, stratified by project and age, seeded), sends each one to a generator command on stdin with the fixed
instruction `PROMPT`, and keeps the question it prints unless it copies the passage's rare words
(`harness.draft_filter`). The generator is any program that reads stdin and prints a question, such as
``claude -p --model haiku``; this project never calls a model or the network itself.

The generator is run without a shell (``shlex.split``), in the current folder, with a timeout. A
non-zero exit, a timeout, empty output or a program that cannot be started skips that passage with its
reason; nothing stops the draft. `PROMPT` starts with the project's self-prompt marker, so a Claude Code
session that a generator records while answering is a self-transcript that the importer never stores.

`DraftResult.write` writes the draft roster (``harness.roster.parse_draft`` reads it; category
``drafted``; gold = the passage's session, or its message uuids for unit ``message``) and a side file
``<stem>.passages.json`` that is never sealed: the provenance (instruction text and sha256, generator,
seed, sample size, corpus manifest sha256, filter settings), the counts, every passage with its chunk,
session and message uuids, what was skipped or dropped and why, and the review log
(`harness.review`). The chunk id stays out of the question's tags: ``questions.json`` is shared, and a
chunk id is the answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.markers import SELF_PROMPT_MARKER
from harness.draft_filter import DEFAULT_MAX_OVERLAP, DEFAULT_RARE_SHARE, DocFreq, Overlap, overlap
from harness.draft_sample import MIN_PASSAGE_CHARS, Passage, read_corpus, sample_passages
from harness.freeze import manifest
from harness.roster import Unit, alone_in_scope, parse_draft

__all__ = [
    "CATEGORY",
    "DEFAULT_TIMEOUT",
    "FAILURES",
    "PROMPT",
    "PROMPT_SHA256",
    "Answer",
    "DraftError",
    "DraftResult",
    "DraftedQuestion",
    "Generator",
    "draft_roster",
    "side_path",
    "write_json",
]

CATEGORY = "drafted"
DEFAULT_TIMEOUT = 120.0  # seconds per passage: a hosted model answers in a few
FAILURES = ("not_runnable", "exit_status", "timeout", "empty_output")
_PASSAGE_SLOT = "{passage}"

# The fixed instruction, sent before every passage. Stored (with its sha256) in the side file, so a
# protocol can record which instruction made its questions. Changing it changes PROMPT_SHA256.
PROMPT = f"""{SELF_PROMPT_MARKER}
You are helping a developer build a private test of how well they can search their own past coding
sessions. Below is a passage from one of those sessions (a conversation with an AI coding assistant,
with tool calls and their output).

Write the one question this developer would type weeks later to find this work again: in their own
words, from memory, about what they were doing, the problem, the decision or the outcome.

Do not reuse the passage's distinctive words. No identifiers, function, class or variable names, file
names or paths, commands, error messages, numbers, version strings or rare words: say what they are
about in plain, everyday words instead, the way a person remembers work, not the way a log records it.

Reply with the question only, on one line, without quotes or any other text.

<passage>
{_PASSAGE_SLOT}
</passage>
"""
PROMPT_SHA256 = hashlib.sha256(PROMPT.encode("utf-8")).hexdigest()


class DraftError(ValueError):
    """The draft cannot be made or written (bad corpus, generator or settings)."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What a generator made of one passage: a question, or the reason there is none."""

    question: str | None
    reason: str | None = None  # one of FAILURES when question is None
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class Generator:
    """A command that reads the instruction and passage on stdin and prints one question."""

    command: str
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        try:
            argv = shlex.split(self.command)
        except ValueError as err:
            msg = (
                f"--generator {self.command!r} cannot be split into words ({err}); check its quotes"
            )
            raise DraftError(msg) from err
        if not argv:
            msg = 'the generator command is empty; give one, e.g. --generator "claude -p --model haiku"'
            raise DraftError(msg)
        if shutil.which(argv[0]) is None:
            msg = (
                f"the generator {argv[0]!r} was not found on PATH nor as a file; install it or give "
                'its full path, e.g. --generator "claude -p --model haiku"'
            )
            raise DraftError(msg)
        if not self.timeout > 0:
            msg = (
                f"the generator timeout must be a positive number of seconds, got {self.timeout!r}"
            )
            raise DraftError(msg)

    def ask(self, passage: str) -> Answer:
        """Run the command once on `passage`; its question is the first non-empty line it prints."""
        stdin = PROMPT.replace(_PASSAGE_SLOT, passage)
        try:
            done = subprocess.run(  # the user's own command, split without a shell
                shlex.split(self.command),
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Answer(
                question=None, reason="timeout", detail=f"no answer in {self.timeout:g} s"
            )
        except OSError as err:
            return Answer(
                question=None, reason="not_runnable", detail=f"{type(err).__name__}: {err}"
            )
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [""]
            return Answer(
                question=None,
                reason="exit_status",
                detail=f"exit {done.returncode}: {tail[0][:200]}",
            )
        for line in done.stdout.splitlines():
            if line.strip():
                return Answer(question=line.strip())
        return Answer(question=None, reason="empty_output", detail="printed nothing")


@dataclass(frozen=True, kw_only=True)
class DraftedQuestion:
    """One question kept (or dropped by the filter), with the passage it came from."""

    qid: str
    text: str
    passage: Passage
    age: str
    overlap: Overlap

    def to_question(self, unit: Unit) -> dict[str, Any]:
        """The draft-roster entry: scope = the passage's project; gold = its session or messages."""
        units = (self.passage.session_id,) if unit == "session" else self.passage.message_uuids
        return {
            "qid": self.qid,
            "text": self.text,
            "scope": [self.passage.project],
            "category": CATEGORY,
            "tags": {"project": self.passage.project, "age": self.age},
            "gold": {"relevant": dict.fromkeys(units, 1), "forbidden": [], "control": None},
        }

    def side_entry(self) -> dict[str, Any]:
        """What a reviewer needs beside the question (never sealed)."""
        return {
            "chunk_id": self.passage.chunk_id,
            "session_id": self.passage.session_id,
            "project": self.passage.project,
            "message_uuids": list(self.passage.message_uuids),
            "timestamp": self.passage.timestamp,
            "age": self.age,
            "overlap": round(self.overlap.share, 4),
            "copied_rare_words": list(self.overlap.copied),
            "passage": self.passage.text,
        }


@dataclass(frozen=True, kw_only=True)
class DraftResult:
    """Everything one `draft_roster` call made: questions, what was skipped and why, and the counts."""

    name: str
    unit: Unit
    provenance: Mapping[str, Any]
    questions: tuple[DraftedQuestion, ...]
    dropped: tuple[DraftedQuestion, ...]  # by the overlap filter
    failed: tuple[tuple[str, Passage, Answer], ...]  # (qid, passage, answer) per generator failure
    counts: Mapping[str, Any]

    def draft_json(self) -> dict[str, Any]:
        """The draft roster as `harness.roster.parse_draft` reads it."""
        gen = self.provenance["generator"]
        return {
            "name": self.name,
            "unit": self.unit,
            "description": (
                f"Questions drafted by `{gen}` from {self.counts['sampled']} passages sampled with seed "
                f"{self.provenance['seed']} (instruction sha256 {PROMPT_SHA256[:16]}…, corpus manifest "
                f"{self.provenance['corpus_manifest_sha256'][:16]}…); provenance, passages and the "
                "review log are in the side file. Review them (recallbench roster review) before sealing."
            ),
            "questions": [q.to_question(self.unit) for q in self.questions],
        }

    def side_json(self) -> dict[str, Any]:
        """The side file: provenance, counts, passages, skipped and dropped items, and the review log."""
        return {
            "draft": self.name,
            "provenance": dict(self.provenance),
            "counts": dict(self.counts),
            "passages": {q.qid: q.side_entry() for q in self.questions},
            "dropped_by_filter": {
                q.qid: {"question": q.text, **q.side_entry()} for q in self.dropped
            },
            "generator_failures": {
                qid: {"reason": a.reason, "detail": a.detail, "chunk_id": p.chunk_id}
                for qid, p, a in self.failed
            },
            "review": {},
        }

    def write(self, out: Path) -> tuple[Path, Path]:
        """Write the draft to `out` and its side file beside it; return both paths.

        Raises:
            DraftError: no question was kept (a roster needs one) or the draft does not validate.
        """
        out = Path(out)
        if not self.questions:
            msg = f"no question was kept (counts: {dict(self.counts)}); nothing to write to {out}"
            raise DraftError(msg)
        draft = self.draft_json()
        parse_draft(draft, str(out))
        out.parent.mkdir(parents=True, exist_ok=True)
        side = side_path(out)
        write_json(out, draft)
        write_json(side, self.side_json())
        return out, side


def draft_roster(
    corpus: Path,
    generator: Generator,
    *,
    sample: int,
    seed: int,
    name: str,
    unit: Unit = "session",
    max_overlap: float = DEFAULT_MAX_OVERLAP,
    rare_share: float = DEFAULT_RARE_SHARE,
    progress: bool = False,
) -> DraftResult:
    """Sample `sample` passages of `corpus` with `seed`, ask `generator` for a question on each, filter.

    Raises:
        DraftError: a setting is out of range, or the corpus cannot be read or sampled.
    """
    if not 0 < max_overlap <= 1:
        msg = f"--max-overlap must be a share with 0 < t <= 1, got {max_overlap!r}"
        raise DraftError(msg)
    try:
        read = read_corpus(corpus, progress=progress)
        picked = sample_passages(read.passages, sample, seed)
        df = DocFreq.of((p.text for p in read.passages), rare_share=rare_share)
    except ValueError as err:
        raise DraftError(str(err)) from err
    kept, dropped, failed = _ask_all(generator, picked.picked, df, max_overlap, progress=progress)
    reasons = Counter(answer.reason for _, _, answer in failed)
    provenance = {
        "instruction": PROMPT,
        "instruction_sha256": PROMPT_SHA256,
        "generator": generator.command,
        "timeout_s": generator.timeout,
        "seed": seed,
        "sample": sample,
        "unit": unit,
        "corpus": str(corpus),
        "corpus_manifest_sha256": manifest(Path(corpus)).sha256,
        "sampling": {"min_passage_chars": MIN_PASSAGE_CHARS, "strata": "project x age terciles"},
        "filter": {
            "max_overlap": max_overlap,
            "rare_share": rare_share,
            "rare_limit": df.rare_limit,
        },
    }
    counts = {
        "chunks": len(read.passages),
        "too_short": picked.too_short,
        "eligible": picked.eligible,
        "sampled": len(picked.picked),
        "asked": len(picked.picked),
        "generator_failures": {r: reasons[r] for r in FAILURES if reasons[r]},
        "dropped_by_filter": len(dropped),
        "kept": len(kept),
        "strata": {s: {"eligible": e, "sampled": k} for s, (e, k) in picked.strata.items()},
        "files_seen": read.files_seen,
        "files_failed": len(read.files_failed),
        "alone_in_scope": alone_in_scope(
            (([q.passage.project], [q.passage.session_id]) for q in kept),
            ((p.project, p.session_id) for p in read.passages),
        ),
    }
    return DraftResult(
        name=name,
        unit=unit,
        provenance=provenance,
        questions=tuple(kept),
        dropped=tuple(dropped),
        failed=tuple(failed),
        counts=counts,
    )


def _ask_all(
    generator: Generator,
    picked: Sequence[tuple[Passage, str]],
    df: DocFreq,
    max_overlap: float,
    *,
    progress: bool,
) -> tuple[list[DraftedQuestion], list[DraftedQuestion], list[tuple[str, Passage, Answer]]]:
    """Ask for every passage in order (qids follow the sample, so a skip leaves a gap, not a shift)."""
    kept: list[DraftedQuestion] = []
    dropped: list[DraftedQuestion] = []
    failed: list[tuple[str, Passage, Answer]] = []
    bar = None
    if progress:
        from tqdm import tqdm  # only for a terminal: tqdm is not worth its import otherwise

        bar = tqdm(total=len(picked), desc="draft", unit="passage", leave=False)
    for i, (passage, age) in enumerate(picked, start=1):
        qid = f"draft-{i:04d}"
        answer = generator.ask(passage.text)
        if bar is not None:
            bar.update(1)
        if answer.question is None:
            failed.append((qid, passage, answer))
            continue
        share = overlap(answer.question, passage.text, df)
        item = DraftedQuestion(
            qid=qid, text=answer.question, passage=passage, age=age, overlap=share
        )
        (dropped if share.share > max_overlap else kept).append(item)
    if bar is not None:
        bar.close()
    return kept, dropped, failed


def side_path(draft: Path) -> Path:
    """The side file of a drafted roster: ``<stem>.passages.json`` beside it."""
    draft = Path(draft)
    return draft.with_name(f"{draft.stem}.passages.json")


def write_json(path: Path, data: object) -> None:
    """Write `data` as indented UTF-8 JSON, replacing `path` in one step (no half-written file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes((json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    os.replace(tmp, path)

"""A person's review of a drafted roster: accept, edit or drop each question, with a log of what changed.

The draft roster is rewritten in place (an edited question gets its new text; a dropped one leaves the
roster) and the review log goes into the draft's side file (``<stem>.passages.json``, never sealed): per
qid the action, the drafted text when it was edited, when the decision was made and how long it took (in
the terminal), and for a dropped question the whole question with its gold, so that nothing is lost.

A question whose text differs from what was drafted counts as edited, whichever action was typed last.
Questions already in the log are not asked again unless the caller asks for all of them.

The TSV round trip (`export_tsv`, `import_tsv`) gives the same decisions to a person who prefers a
spreadsheet or an editor: columns ``qid, action, question, passage, project``; the import reads
``action`` (``accept``, ``edit``, ``drop``, or empty for "not yet") and the question text, checks every
line first, and writes nothing when one is wrong.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from harness.draft import side_path, write_json
from harness.roster import RosterError, parse_draft

__all__ = [
    "ACTIONS",
    "TSV_COLUMNS",
    "Action",
    "Review",
    "ReviewError",
    "excerpt",
    "export_tsv",
    "import_tsv",
]

Action: TypeAlias = Literal["accept", "edit", "drop"]
ACTIONS: tuple[Action, ...] = ("accept", "edit", "drop")
TSV_COLUMNS = ("qid", "action", "question", "passage", "project")
TSV_EXCERPT = (
    300  # characters of passage in a TSV row: enough to recognise it, short enough to scan
)
_SPACE = re.compile(r"\s+")


class ReviewError(ValueError):
    """A draft, its side file or a review TSV is malformed; nothing was written."""


def excerpt(text: str, limit: int) -> str:
    """`text` with whitespace collapsed, cut to `limit` characters (with an ellipsis when cut)."""
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(kw_only=True)
class Review:
    """A draft roster and its side file, loaded for review; `save` writes both back."""

    draft_path: Path
    draft: dict[str, Any]
    side: dict[str, Any]

    @classmethod
    def load(cls, draft_path: Path) -> Review:
        """Read and check a draft and its side file (a draft without one gets one on `save`).

        Raises:
            ReviewError: the draft is not valid JSON or not a valid draft roster.
        """
        draft_path = Path(draft_path)
        draft = _read_object(draft_path)
        if draft.get("questions"):  # a review that dropped every question leaves an empty roster
            try:
                parse_draft(draft, str(draft_path))
            except RosterError as err:
                raise ReviewError(str(err)) from err
        side_file = side_path(draft_path)
        side = _read_object(side_file) if side_file.exists() else {"draft": draft.get("name")}
        if not isinstance(side.setdefault("review", {}), dict):
            msg = f"{side_file}: 'review' must be an object of qid -> decision; restore the file"
            raise ReviewError(msg)
        return cls(draft_path=draft_path, draft=draft, side=side)

    @property
    def log(self) -> dict[str, dict[str, Any]]:
        """The review log: qid -> the decision recorded for it."""
        log: dict[str, dict[str, Any]] = self.side["review"]
        return log

    def questions(self) -> list[dict[str, Any]]:
        """The draft's questions, in order."""
        questions: list[dict[str, Any]] = self.draft.get("questions", [])
        return questions

    def pending(self, *, everything: bool = False) -> list[dict[str, Any]]:
        """The questions still to review (every question of the roster with `everything`)."""
        return [q for q in self.questions() if everything or q["qid"] not in self.log]

    def passage(self, qid: str) -> str:
        """The passage a question was drafted from ('' when the side file does not hold it)."""
        entry = self.side.get("passages", {}).get(qid, {})
        return str(entry.get("passage", ""))

    def decide(
        self,
        qid: str,
        action: Action,
        text: str | None = None,
        *,
        at: str,
        seconds: float | None = None,
        via: str = "terminal",
    ) -> Action:
        """Record one decision and apply it to the draft; return the action recorded.

        `text` is the new question text for an edit (an accept or an edit whose text equals the current
        one keeps it). A question that no longer reads as drafted is recorded as edited.

        Raises:
            ReviewError: `qid` is not a question of the draft, `action` is unknown or `text` is empty.
        """
        if action not in ACTIONS:
            msg = f"unknown action {action!r} for {qid}; use one of {', '.join(ACTIONS)}"
            raise ReviewError(msg)
        question = self.question(qid)
        previous = self.log.get(qid, {})
        entry: dict[str, Any] = {"reviewed_at": at, "seconds": seconds, "via": via}
        if action == "drop":
            self.draft["questions"] = [q for q in self.questions() if q["qid"] != qid]
            entry |= {"action": "drop", "dropped": question}
            if "original" in previous:
                entry["original"] = previous["original"]
            self.log[qid] = entry
            return "drop"
        new = question["text"] if text is None else text.strip()
        if not new:
            msg = f"the new text of {qid} is empty; type a question, or drop it"
            raise ReviewError(msg)
        original = previous.get("original", question["text"])
        question["text"] = new
        edited = new != original
        entry["action"] = "edit" if edited else "accept"
        if edited:
            entry["original"] = original
        self.log[qid] = entry
        recorded: Action = entry["action"]
        return recorded

    def save(self) -> tuple[Path, Path]:
        """Write the draft and its side file back (each replaced in one step)."""
        side_file = side_path(self.draft_path)
        write_json(side_file, self.side)
        write_json(self.draft_path, self.draft)
        return self.draft_path, side_file

    def counts(self) -> Counter[str]:
        """Decisions in the log per action, and questions of the roster not reviewed yet."""
        counts = Counter(str(entry.get("action")) for entry in self.log.values())
        counts["pending"] = len(self.pending())
        return counts

    def question(self, qid: str) -> dict[str, Any]:
        """The draft's question `qid` (raises ReviewError when it is not in the roster)."""
        for question in self.questions():
            if question["qid"] == qid:
                return question
        why = "it was dropped in an earlier review" if qid in self.log else "no such qid"
        msg = f"{self.draft_path} has no question {qid!r} ({why})"
        raise ReviewError(msg)


def export_tsv(review: Review, path: Path, *, everything: bool = False) -> int:
    """Write the questions to review (all with `everything`) as TSV; return the number of rows."""
    rows = review.pending(everything=everything)
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(TSV_COLUMNS)
        for q in rows:
            action = review.log.get(q["qid"], {}).get("action", "")
            scope = q.get("scope")
            project = ", ".join(scope) if isinstance(scope, list) else str(scope)
            passage = excerpt(review.passage(q["qid"]), TSV_EXCERPT)
            writer.writerow([q["qid"], action, q["text"], passage, project])
    return len(rows)


def import_tsv(review: Review, path: Path, *, at: str) -> Counter[str]:
    """Apply the decisions of a review TSV: every line is checked first, then all are applied.

    Returns the count per recorded action, plus ``unchanged`` (a line that repeats what the log holds)
    and ``not_reviewed`` (empty action).

    Raises:
        ReviewError: a line names an unknown qid, a qid twice, a bad action or an empty question; the
            message names the line and nothing is applied.
    """
    decisions = _read_tsv(review, Path(path))
    counts: Counter[str] = Counter()
    for qid, action, text in decisions:
        if not action:
            counts["not_reviewed"] += 1
            continue
        current = review.question(qid)
        logged = review.log.get(qid, {}).get("action")
        if action != "drop" and text == current["text"] and logged in ("accept", "edit"):
            counts["unchanged"] += 1
            continue
        counts[review.decide(qid, action, text, at=at, via="tsv")] += 1
    return counts


def _read_tsv(review: Review, path: Path) -> list[tuple[str, Action | Literal[""], str]]:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t")
            header = next(reader, [])
            missing = [c for c in ("qid", "action", "question") if c not in header]
            if missing:
                msg = (
                    f"{path}:1: the header lacks column(s) {missing}; the first line must be "
                    f"{chr(9).join(TSV_COLUMNS)!r} as `--export-tsv` writes it"
                )
                raise ReviewError(msg)
            col = {name: header.index(name) for name in ("qid", "action", "question")}
            rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    except (OSError, UnicodeError) as err:
        msg = f"cannot read {path}: {err}"
        raise ReviewError(msg) from err
    known = {q["qid"] for q in review.questions()}
    seen: set[str] = set()
    out: list[tuple[str, Action | Literal[""], str]] = []
    for line, row in rows:
        cells = [*row, *[""] * (len(header) - len(row))]
        qid, typed, text = (cells[col[c]].strip() for c in ("qid", "action", "question"))
        action = _action(typed)
        where = f"{path}:{line}"
        if qid not in known:
            why = "it was dropped in an earlier review" if qid in review.log else "no such qid"
            msg = f"{where}: {qid!r} is not a question of {review.draft_path} ({why}); nothing was applied"
            raise ReviewError(msg)
        if qid in seen:
            msg = f"{where}: {qid} appears a second time; keep one line per question; nothing was applied"
            raise ReviewError(msg)
        seen.add(qid)
        if action is None:
            msg = (
                f"{where}: action {typed!r} for {qid} is not one of {', '.join(ACTIONS)} (or empty "
                "for not reviewed yet); nothing was applied"
            )
            raise ReviewError(msg)
        if action in ("accept", "edit") and not text:
            msg = f"{where}: the question of {qid} is empty; write one, or set action to drop; nothing was applied"
            raise ReviewError(msg)
        out.append((qid, action, text))
    return out


def _action(typed: str) -> Action | Literal[""] | None:
    """The action a TSV cell names ("" for not reviewed yet), None when it names none."""
    for action in ACTIONS:
        if typed.casefold() == action:
            return action
    return "" if not typed else None


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        msg = f"{path} does not exist; give the draft written by `recallbench roster draft`"
        raise ReviewError(msg) from err
    except (OSError, UnicodeError, json.JSONDecodeError) as err:
        msg = f"cannot read {path}: {err}"
        raise ReviewError(msg) from err
    if not isinstance(data, dict):
        msg = f"{path}: expected a JSON object, got {type(data).__name__}"
        raise ReviewError(msg)
    return data

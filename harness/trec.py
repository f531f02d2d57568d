"""TREC run and qrels files, so trec_eval, ir_measures or ranx can check our numbers independently.

Formats (whitespace-separated, one judgement or retrieved document per line):
- run:   `qid Q0 docid rank score tag`, rank 1-based in the ranking's order;
- qrels: `qid 0 docid grade`.
Writers sort qids (and, in qrels, doc ids) so the same input always gives the same bytes. A
query with an empty ranking writes no lines; evaluators then score it 0 as long as the qrels
list it (averaging over the qrels' queries, as trec_eval -c does), never dropping it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.checks import is_int

Run = dict[str, list[tuple[str, float]]]
Qrels = dict[str, dict[str, int]]


class TrecFormatError(ValueError):
    """A run or qrels that cannot be written or read in TREC format."""


def write_run(
    path: str | os.PathLike[str],
    run: Mapping[str, Sequence[tuple[str, float]]],
    tag: str,
) -> None:
    """Write `run` (qid -> [(doc id, score)], best first) as a TREC run file tagged `tag`.

    Evaluators such as trec_eval re-rank each query by score and ignore the rank column, so
    scores must not increase along a ranking; ties are allowed but an evaluator breaks them its
    own way (trec_eval by doc id), so pass strictly decreasing scores when tie order matters.

    Raises:
        TrecFormatError: for an id or tag that is empty or holds whitespace, a duplicate doc id
            within a query, a non-finite score, or a score higher than the one ranked above it.
    """
    _check_token(tag, "run tag")
    lines: list[str] = []
    for qid in sorted(run):
        _check_token(qid, "qid")
        seen: set[str] = set()
        previous = math.inf
        for rank, (doc_id, score) in enumerate(run[qid], start=1):
            _check_token(doc_id, f"doc id (query {qid}, rank {rank})")
            if doc_id in seen:
                msg = f"query {qid} lists doc id {doc_id!r} twice (again at rank {rank})"
                raise TrecFormatError(msg)
            seen.add(doc_id)
            value = float(score)
            if not math.isfinite(value):
                msg = f"query {qid} rank {rank} ({doc_id}) has non-finite score {score!r}"
                raise TrecFormatError(msg)
            if value > previous:
                msg = (
                    f"query {qid} rank {rank} ({doc_id}) scores {value!r}, above rank {rank - 1}'s "
                    f"{previous!r}; evaluators would re-rank it. Pass scores that never increase"
                )
                raise TrecFormatError(msg)
            previous = value
            lines.append(f"{qid} Q0 {doc_id} {rank} {value!r} {tag}\n")
    Path(path).write_text("".join(lines), encoding="utf-8", newline="\n")


def write_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write `qrels` (qid -> doc id -> integer grade) as a TREC qrels file.

    Raises:
        TrecFormatError: for an id that is empty or holds whitespace, or a grade that is not an int.
    """
    lines: list[str] = []
    for qid in sorted(qrels):
        _check_token(qid, "qid")
        for doc_id in sorted(qrels[qid]):
            _check_token(doc_id, f"doc id (query {qid})")
            grade = qrels[qid][doc_id]
            if not is_int(grade):
                msg = f"query {qid} doc {doc_id} grade must be an int, got {grade!r}"
                raise TrecFormatError(msg)
            lines.append(f"{qid} 0 {doc_id} {grade}\n")
    Path(path).write_text("".join(lines), encoding="utf-8", newline="\n")


def read_run(path: str | os.PathLike[str]) -> tuple[Run, str]:
    """Read a TREC run file: (qid -> [(doc id, score)] in rank order, the run tag).

    Raises:
        TrecFormatError: naming the file and line, for a line without six fields, a non-numeric rank
            or score, a repeated rank or doc id within a query, or more than one tag.
    """
    ranked: dict[str, dict[int, tuple[str, float]]] = {}
    seen: dict[str, set[str]] = {}
    tags: set[str] = set()
    for where, fields in _records(path):
        if len(fields) != 6:
            msg = (
                f"{where}: a run line has 6 fields (qid Q0 docid rank score tag), got {len(fields)}"
            )
            raise TrecFormatError(msg)
        qid, _, doc_id, raw_rank, raw_score, tag = fields
        rank = _parse_int(raw_rank, "rank", where)
        score = _parse_score(raw_score, where)
        rows = ranked.setdefault(qid, {})
        docs = seen.setdefault(qid, set())
        if rank in rows or doc_id in docs:
            msg = f"{where}: query {qid} repeats rank {rank} or doc id {doc_id!r}"
            raise TrecFormatError(msg)
        rows[rank] = (doc_id, score)
        docs.add(doc_id)
        tags.add(tag)
    if len(tags) != 1:
        msg = f"{path}: a run file holds exactly one tag, got {sorted(tags) or 'none (empty file)'}"
        raise TrecFormatError(msg)
    run = {qid: [rows[r] for r in sorted(rows)] for qid, rows in sorted(ranked.items())}
    return run, tags.pop()


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file: qid -> doc id -> grade.

    Raises:
        TrecFormatError: naming the file and line, for a line without four fields, a non-integer
            grade, or a doc judged twice for one query.
    """
    qrels: Qrels = {}
    for where, fields in _records(path):
        if len(fields) != 4:
            msg = f"{where}: a qrels line has 4 fields (qid 0 docid grade), got {len(fields)}"
            raise TrecFormatError(msg)
        qid, _, doc_id, raw_grade = fields
        grade = _parse_int(raw_grade, "grade", where)
        judged = qrels.setdefault(qid, {})
        if doc_id in judged:
            msg = f"{where}: query {qid} judges doc id {doc_id!r} twice"
            raise TrecFormatError(msg)
        judged[doc_id] = grade
    return {qid: dict(sorted(judged.items())) for qid, judged in sorted(qrels.items())}


def _records(path: str | os.PathLike[str]) -> list[tuple[str, list[str]]]:
    """The non-blank lines of `path` split on whitespace, each with a `file:line` locator."""
    text = Path(path).read_text(encoding="utf-8")
    return [
        (f"{path}:{number}", line.split())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def _parse_int(raw: str, field: str, where: str) -> int:
    """`int(raw)`, or a TrecFormatError naming the field and line."""
    try:
        return int(raw)
    except ValueError as error:
        msg = f"{where}: {field} must be an integer, got {raw!r}"
        raise TrecFormatError(msg) from error


def _parse_score(raw: str, where: str) -> float:
    """A finite `float(raw)`, or a TrecFormatError naming the line."""
    try:
        value = float(raw)
    except ValueError as error:
        msg = f"{where}: score must be a number, got {raw!r}"
        raise TrecFormatError(msg) from error
    if not math.isfinite(value):
        msg = f"{where}: score must be finite, got {raw!r}"
        raise TrecFormatError(msg)
    return value


def _check_token(value: str, what: str) -> None:
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        msg = f"{what} must be a non-empty string without whitespace, got {value!r}"
        raise TrecFormatError(msg)

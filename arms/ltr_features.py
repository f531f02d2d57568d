"""The features of the `ltr` arm: their names, their groups, and how each column is filled.

`arms.ltr.gather` builds one row per candidate, in the order of `FEATURES` (absent from a pool means 0
for that pool's features), then, with `dates=True`, `DATE_FEATURES`:

- ``lex_score``: the lexical score (engine BM25, higher is better) min-max normalised over the lexical
  pool of this query, so 1 is the pool's best and 0 its worst; a pool whose scores are all equal gives 1.
- ``lex_rr``: 1 / rank in the lexical pool, ranks 1-based over (−score, chunk id).
- ``stem_score``, ``stem_rr``: the same two over the stemmed lexical pool ("deploys" meets "deployed").
- ``vec_cosine``: the cosine to the query's embedding (the default floor 0.0 keeps 0 below every
  present value, so "absent" reads as "too far" to a linear model).
- ``vec_rr``: 1 / rank in the vector pool.
- ``both_pools``: 1 when both pools hold the chunk.
- ``rrf``: `Σ over pools holding it of 1 / (rrf_k + rank)`, the `rrf` arm's fused score.
- ``term_share``: the share of the query's distinct terms that are tokens of the chunk. Terms follow
  the engine's lexical rule (`engine.reads.query_terms`: runs of word characters and `-`, at least 2
  characters) applied to the case-folded text, on both sides; 0 when the query has no term.
- ``log_length``: `log1p` of the chunk's length in characters.
- ``author_user``, ``author_assistant``: the chunk's author (`engine.model.Author`) one-hot; a tool
  result is both 0.
- ``session_count``: how many candidates share the chunk's session (itself included).
- ``session_best_rrf``: the best `rrf` among the candidates of its session (itself included).
- ``neighbor_best_rrf``: the best `rrf` of the adjacent chunks (same stream, index ± 1) that are
  candidates; 0 when neither is.
- ``log_age_days``: `log1p` of the chunk's age in days at `query.now` (its `ts_start`, else its
  session's start; a future time counts as 0 days).
- ``age_missing``: 1 when neither timestamp parses (and the age is then 0).

With ``dates=True`` two more follow (`DATE_FEATURES`), for questions that name a date
(`arms.dates.named_date`: "on October 13, 2023", "in July 2023", "in June"):

- ``date_named``: 1 for every candidate when the question names a date, else 0.
- ``date_close``: `exp(−gap / DATE_SCALE_DAYS)` (30 days), the gap in days from the chunk's day (its time, else its session's
  start, in UTC) to the named day, month or year (`arms.dates.gap_days`; 0 inside it); 0 when the
  question names no date or the chunk is undated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from arms.base import Query
from arms.dates import gap_days, named_date
from arms.decay import SECONDS_PER_DAY
from engine.api import ChunkRecord, Scored
from engine.function_words import WORD
from engine.model import Author

__all__ = [
    "COLUMN",
    "DATE_FEATURES",
    "DATE_SCALE_DAYS",
    "FEATURES",
    "GROUPS",
    "channel_features",
    "context_features",
    "date_features",
    "has_term",
    "lexical_features",
    "query_terms",
    "text_features",
]

FEATURES: tuple[str, ...] = (
    "lex_score",
    "lex_rr",
    "stem_score",
    "stem_rr",
    "vec_cosine",
    "vec_rr",
    "both_pools",
    "rrf",
    "term_share",
    "log_length",
    "author_user",
    "author_assistant",
    "session_count",
    "session_best_rrf",
    "neighbor_best_rrf",
    "log_age_days",
    "age_missing",
)
# With `dates=True`, after `FEATURES`: whether the question names a date (`arms.dates.named_date`),
# and how close the chunk's time is to it.
DATE_FEATURES: tuple[str, ...] = ("date_named", "date_close")
COLUMN = {name: i for i, name in enumerate((*FEATURES, *DATE_FEATURES))}
# `date_close` is exp(-gap / DATE_SCALE_DAYS): 1 on the named day (or in the named month or year),
# 0.37 a month away. A month, the span of "in June" and "July 2023"; not tuned.
DATE_SCALE_DAYS = 30.0
# Feature groups, for ablations (`LtrParams.without`): every feature is in exactly one.
GROUPS: dict[str, tuple[str, ...]] = {
    "lexical": ("lex_score", "lex_rr"),
    "stem": ("stem_score", "stem_rr"),
    "vector": ("vec_cosine", "vec_rr"),
    "fusion": ("both_pools", "rrf"),
    "text": ("term_share", "log_length"),
    "author": ("author_user", "author_assistant"),
    "context": ("session_count", "session_best_rrf", "neighbor_best_rrf"),
    "age": ("log_age_days", "age_missing"),
    "dates": DATE_FEATURES,
}
# The term rule of the engine's lexical reads (`engine.function_words.WORD`, `engine.reads.query_terms`).
_MIN_TERM = 2


def query_terms(text: str) -> frozenset[str]:
    """The distinct terms of `text` under the engine's lexical rule, after case folding."""
    return frozenset(t for t in WORD.findall(text.casefold()) if len(t) >= _MIN_TERM)


def has_term(folded: str, term: str) -> bool:
    """Whether `term` is a whole token of the case-folded text `folded` (as `query_terms` splits it).

    A substring search with a boundary check, not a tokenisation of the chunk: the chunk is long and
    the query has few terms, and this is the arm's hottest loop.
    """
    start = folded.find(term)
    while start >= 0:
        end = start + len(term)
        before = folded[start - 1] if start > 0 else " "
        after = folded[end] if end < len(folded) else " "
        if not _is_term_char(before) and not _is_term_char(after):
            return True
        start = folded.find(term, start + 1)
    return False


def _is_term_char(ch: str) -> bool:
    # `[\w-]` of `WORD`: \w is what str.isalnum() accepts, and the underscore.
    return ch.isalnum() or ch in "_-"


def channel_features(
    matrix: NDArray[np.float64],
    records: Sequence[ChunkRecord],
    lex: Sequence[Scored],
    vec: Sequence[Scored],
    rrf_k: int,
) -> None:
    """lex_score, lex_rr, vec_cosine, vec_rr, both_pools and rrf."""
    lexical_features(matrix, records, lex, "lex_score", "lex_rr")
    lex_rank = {s.chunk_id: rank for rank, s in enumerate(lex, start=1)}
    vec_rank = {s.chunk_id: rank for rank, s in enumerate(vec, start=1)}
    cosine = {s.chunk_id: s.score for s in vec}
    for row, rec in enumerate(records):
        cid = rec.id
        if cid in lex_rank:
            matrix[row, COLUMN["rrf"]] += 1.0 / (rrf_k + lex_rank[cid])
        if cid in vec_rank:
            matrix[row, COLUMN["vec_cosine"]] = cosine[cid]
            matrix[row, COLUMN["vec_rr"]] = 1.0 / vec_rank[cid]
            matrix[row, COLUMN["rrf"]] += 1.0 / (rrf_k + vec_rank[cid])
        matrix[row, COLUMN["both_pools"]] = float(cid in lex_rank and cid in vec_rank)


def lexical_features(
    matrix: NDArray[np.float64],
    records: Sequence[ChunkRecord],
    pool: Sequence[Scored],
    score_column: str,
    rr_column: str,
) -> None:
    """A lexical pool's score, min-max scaled over the pool (1 when all are equal), and 1 / rank.

    The plain pool fills lex_score and lex_rr, the Porter-stemmed one stem_score and stem_rr.
    """
    rank = {s.chunk_id: r for r, s in enumerate(pool, start=1)}
    score = {s.chunk_id: s.score for s in pool}
    low = min(score.values(), default=0.0)
    span = max(score.values(), default=0.0) - low
    for row, rec in enumerate(records):
        if rec.id in rank:
            matrix[row, COLUMN[score_column]] = (score[rec.id] - low) / span if span > 0 else 1.0
            matrix[row, COLUMN[rr_column]] = 1.0 / rank[rec.id]


def context_features(matrix: NDArray[np.float64], records: Sequence[ChunkRecord]) -> None:
    """session_count, session_best_rrf and neighbor_best_rrf (these read the rrf column)."""
    rrf = matrix[:, COLUMN["rrf"]]
    count: dict[str, int] = {}
    best: dict[str, float] = {}
    at: dict[tuple[str, int], float] = {}
    for row, rec in enumerate(records):
        count[rec.session_id] = count.get(rec.session_id, 0) + 1
        best[rec.session_id] = max(best.get(rec.session_id, 0.0), float(rrf[row]))
        at[(rec.stream, rec.index)] = float(rrf[row])
    for row, rec in enumerate(records):
        matrix[row, COLUMN["session_count"]] = count[rec.session_id]
        matrix[row, COLUMN["session_best_rrf"]] = best[rec.session_id]
        around = (at.get((rec.stream, rec.index + d), 0.0) for d in (-1, 1))
        matrix[row, COLUMN["neighbor_best_rrf"]] = max(around)


def text_features(
    matrix: NDArray[np.float64],
    records: Sequence[ChunkRecord],
    times: Sequence[datetime | None],
    query: Query,
) -> None:
    """term_share, log_length, the author one-hot and the age (`times`: each record's
    `arms.decay.record_time`)."""
    wanted = query_terms(query.text)
    for row, rec in enumerate(records):
        if wanted:
            folded = rec.text.casefold()
            have = sum(has_term(folded, term) for term in wanted)
            matrix[row, COLUMN["term_share"]] = have / len(wanted)
        matrix[row, COLUMN["log_length"]] = math.log1p(len(rec.text))
        matrix[row, COLUMN["author_user"]] = float(rec.author == Author.USER)
        matrix[row, COLUMN["author_assistant"]] = float(rec.author == Author.ASSISTANT)
        age = _age_days(times[row], query.now)
        if age is None:
            matrix[row, COLUMN["age_missing"]] = 1.0
        else:
            matrix[row, COLUMN["log_age_days"]] = math.log1p(age)


def date_features(
    matrix: NDArray[np.float64], times: Sequence[datetime | None], query: Query
) -> None:
    """date_named (1 for every candidate when the question names a date) and date_close
    (exp(−days from the chunk's day to the named date / `DATE_SCALE_DAYS`); 0 when undated).
    `times`: each candidate's `arms.decay.record_time`, in row order."""
    span = named_date(query.text)
    if span is None:
        return
    matrix[:, COLUMN["date_named"]] = 1.0
    for row, when in enumerate(times):
        if when is not None:
            gap = gap_days(when.astimezone(UTC).date(), span)
            matrix[row, COLUMN["date_close"]] = math.exp(-gap / DATE_SCALE_DAYS)


def _age_days(when: datetime | None, now: datetime) -> float | None:
    """Days from the chunk's time (else its session's start) to `now`, at least 0; None when undated."""
    if when is None:
        return None
    return max(0.0, (now - when).total_seconds() / SECONDS_PER_DAY)

"""The `ltr` arm: a learned reranker over the union of deep lexical and vector pools.

Candidates are the union of `lexical(query, pool)`, its Porter-stemmed twin `lexical(query, pool,
stem=True)` and `nearest(embed(query), pool, min_score)` (with `sentences=True`, rescored by the
person's sentence vectors: `arms.pools.vector_pool`), their records read once with `chunks(ids,
query.scope)` (so nothing outside the scope is ever scored). Each candidate gets the features
`arms.ltr_features` describes and fills: `FEATURES`, then `DATE_FEATURES` with `dates=True`.

The model is a logistic regression on standardised features (scikit-learn, `fit_ltr`), stored as plain
numbers: per-feature `mean`, `scale` and `coef`, and an `intercept`. The score of a candidate is the
linear score (the log-odds) `intercept + Σ coef · (x − mean) / scale`, computed with numpy: searching
never imports scikit-learn. The log-odds rank exactly as the probabilities do, and do not saturate into
ties at 1.0 as a probability can.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from arms.base import Hit, Query
from arms.decay import record_time
from arms.fitting import Example, FitError, Fitted, Part
from arms.ltr_features import (
    COLUMN,
    DATE_FEATURES,
    FEATURES,
    GROUPS,
    channel_features,
    context_features,
    date_features,
    has_term,
    lexical_features,
    query_terms,
    text_features,
)
from arms.pools import lexical_text, ordered, vector_pool
from arms.spec import OMIT_DEFAULT, SpecError, check_bool, check_float, check_int
from engine.api import ChunkRecord, ReadAPI

__all__ = [
    "DATE_FEATURES",
    "FEATURES",
    "GROUPS",
    "Candidates",
    "LinearModel",
    "LtrArm",
    "LtrParams",
    "fit_ltr",
    "gather",
    "hand_model",
    "has_term",
    "query_terms",
]

MODEL_KEYS: tuple[str, ...] = ("coef", "features", "intercept", "mean", "scale")

# Inverse regularisation strength of the logistic regression. 1.0 (scikit-learn's default) on
# standardised features: seventeen features and thousands of candidates per fit leave little to
# overfit, and a fixed, documented value keeps the fit free of any tuning on answers.
C = 1.0
# lbfgs converges in well under 100 iterations on standardised features; the cap only bounds a
# pathological fit, and the iterations used are reported in the fit's counts.
MAX_ITER = 1000
# Pairwise fits pair each relevant candidate with at most this many irrelevant ones per query (the
# hardest first), which bounds a fit's size at pool sizes of 100 per channel.
MAX_NEGATIVES = 50
Objective = Literal["pointwise", "pairwise"]
OBJECTIVES: tuple[Objective, ...] = ("pointwise", "pairwise")


@dataclass(frozen=True, kw_only=True)
class LtrParams:
    """`pool`: hits fetched per channel; `min_score`: the vector channel's cosine floor; `rrf_k`: the
    constant of the `rrf` feature (>= 1).

    `objective`: ``pointwise`` classifies each candidate (relevant or not); ``pairwise`` learns from
    pairs of one relevant and one irrelevant candidate of the same query which is the better one
    (RankNet's logistic pairwise loss, Burges et al. 2005, with a linear scorer): it optimises the
    order within a query, which is what MRR measures, and ignores how scores compare across queries.

    `min_score` defaults to 0.0, not the 0.20 of `vector` and `rrf`: the model weighs the cosine
    itself, so a floor only hides candidates from it, and at 0.0 the value 0 that marks "not in the
    vector pool" lies at or below every cosine that is in it.
    """

    pool: int = 100
    min_score: float = 0.0
    rrf_k: int = 60
    objective: Objective = "pointwise"
    # For ablations: feature groups (`GROUPS`) left out, comma-separated; their columns read 0 in fitting
    # and scoring, and leaving out "stem" also leaves the stemmed pool out of the candidates. Omitted
    # from the canonical spec when empty, so specs registered before it read as they did.
    without: str = field(default="", metadata={OMIT_DEFAULT: True})
    # The vector channel rescored by the person's sentence vectors (`arms.pools.vector_pool`): the
    # `vec_*` features then read the rescored cosine. Omitted from the spec when False.
    sentences: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    # The `DATE_FEATURES` after `FEATURES` (a model is fitted for one feature list or the other).
    # Omitted from the spec when False.
    dates: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    # Both lexical pools read the question without its function words (`arms.pools.lexical_text`);
    # the features are the same. Omitted from the spec when False.
    stop: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    @property
    def features(self) -> tuple[str, ...]:
        """The feature columns, in order: `FEATURES`, then `DATE_FEATURES` with `dates`."""
        return (*FEATURES, *DATE_FEATURES) if self.dates else FEATURES

    @property
    def dropped(self) -> tuple[str, ...]:
        """The feature groups left out, in `GROUPS` order."""
        named = {g.strip() for g in self.without.split(",") if g.strip()}
        return tuple(g for g in GROUPS if g in named)

    def __post_init__(self) -> None:
        named = {g.strip() for g in self.without.split(",") if g.strip()}
        unknown = sorted(named - set(GROUPS))
        if unknown:
            msg = f"ltr: without names unknown feature group(s) {unknown}; groups: {', '.join(GROUPS)}"
            raise SpecError(msg)
        check_bool("ltr", "sentences", self.sentences)
        check_bool("ltr", "dates", self.dates)
        check_bool("ltr", "stop", self.stop)
        if "dates" in named and not self.dates:
            msg = "ltr: without=dates leaves out features this arm only has with dates=True"
            raise SpecError(msg)
        check_int("ltr", "pool", self.pool, minimum=1)
        check_float("ltr", "min_score", self.min_score, low=-1.0, high=1.0)
        check_int("ltr", "rrf_k", self.rrf_k, minimum=1)
        if self.objective not in OBJECTIVES:
            msg = f"ltr: objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}"
            raise SpecError(msg)


@dataclass(frozen=True, kw_only=True)
class Candidates:
    """A query's candidates, by chunk id, and their feature rows (one row per record, in the order of
    the params' `features`)."""

    records: tuple[ChunkRecord, ...]
    matrix: NDArray[np.float64]


def gather(memory: ReadAPI, params: LtrParams, query: Query) -> Candidates:
    """The union of both pools for `query`, records read once within its scope, with their features."""
    vector = memory.embed_query(query.text)
    vec = vector_pool(
        memory, vector, query.scope, params.pool, params.min_score, sentences=params.sentences
    )
    text = lexical_text(query.text, params.stop)
    lex = ordered(memory.lexical(text, query.scope, params.pool))[: params.pool]
    stem = (
        []
        if "stem" in params.dropped
        else ordered(memory.lexical(text, query.scope, params.pool, stem=True))[: params.pool]
    )
    ids = sorted({s.chunk_id for s in vec} | {s.chunk_id for s in lex} | {s.chunk_id for s in stem})
    found = {r.id: r for r in memory.chunks(ids, query.scope)} if ids else {}
    # An id the scoped read does not return is outside the scope (or gone): it is never a candidate.
    records = tuple(found[cid] for cid in ids if cid in found)
    matrix = np.zeros((len(records), len(params.features)), dtype=np.float64)
    channel_features(matrix, records, lex, vec, params.rrf_k)
    lexical_features(matrix, records, stem, "stem_score", "stem_rr")
    context_features(matrix, records)
    times = [record_time(r) for r in records]  # read once: the age and the date features share it
    text_features(matrix, records, times, query)
    if params.dates:
        date_features(matrix, times, query)
    for group in params.dropped:
        matrix[:, [COLUMN[name] for name in GROUPS[group]]] = 0.0
    return Candidates(records=records, matrix=matrix)


# --- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LinearModel:
    """A fitted linear scorer over standardised features (`FEATURES`, or an arm's `LtrParams.features`),
    validated on construction."""

    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    coef: NDArray[np.float64]
    intercept: float
    features: tuple[str, ...] = FEATURES

    @classmethod
    def from_dict(cls, model: object, features: tuple[str, ...] = FEATURES) -> LinearModel:
        """The model an artifact holds, checked against the arm's `features`.

        Raises:
            FitError: a key is missing or unknown, the features differ from `features` (names or
                order), a list has the wrong length, a number is not finite, or a scale is not > 0.
        """
        if not isinstance(model, Mapping):
            msg = f"ltr model must be a mapping with keys {', '.join(MODEL_KEYS)}, got {type(model).__name__}"
            raise FitError(msg)
        keys = sorted(str(k) for k in model)
        if keys != sorted(MODEL_KEYS):
            msg = (
                f"ltr model keys must be {', '.join(MODEL_KEYS)}, got {', '.join(keys) or '(none)'}; "
                "refit the arm with this version"
            )
            raise FitError(msg)
        _check_features(model["features"], features)
        mean = _numbers("mean", model["mean"], features)
        scale = _numbers("scale", model["scale"], features)
        coef = _numbers("coef", model["coef"], features)
        if not bool(np.all(scale > 0.0)):
            bad = [features[i] for i in np.flatnonzero(scale <= 0.0)]
            msg = f"ltr model scale must be > 0 for every feature, not for {', '.join(bad)}"
            raise FitError(msg)
        intercept = model["intercept"]
        if not _is_number(intercept) or not math.isfinite(intercept):
            msg = f"ltr model intercept must be a finite number, got {intercept!r}"
            raise FitError(msg)
        return cls(
            mean=mean, scale=scale, coef=coef, intercept=float(intercept), features=tuple(features)
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (plain lists of Python floats), as `from_dict` reads it."""
        return {
            "coef": [float(x) for x in self.coef],
            "features": list(self.features),
            "intercept": float(self.intercept),
            "mean": [float(x) for x in self.mean],
            "scale": [float(x) for x in self.scale],
        }

    def score(self, matrix: NDArray[np.float64]) -> NDArray[np.float64]:
        """The log-odds of each row: `intercept + ((x − mean) / scale) · coef`."""
        scores: NDArray[np.float64] = ((matrix - self.mean) / self.scale) @ self.coef
        return scores + self.intercept


def _check_features(features: object, names: tuple[str, ...]) -> None:
    if not isinstance(features, list | tuple) or list(features) != list(names):
        got = list(features) if isinstance(features, list | tuple) else features
        expected = list(names)
        detail = ""
        if isinstance(got, list):
            missing = [f for f in expected if f not in got]
            extra = [f for f in got if f not in expected]
            detail = f" (missing: {missing or 'none'}; unknown: {extra or 'none'})"
        msg = (
            f"ltr model features {got!r} are not this code's features {expected!r}{detail}; "
            "the model was fitted by another version: refit it"
        )
        raise FitError(msg)


def _numbers(key: str, values: object, names: tuple[str, ...]) -> NDArray[np.float64]:
    if not isinstance(values, list | tuple) or len(values) != len(names):
        size = len(values) if isinstance(values, list | tuple) else type(values).__name__
        msg = (
            f"ltr model {key} must be a list of {len(names)} numbers (one per feature), got {size}"
        )
        raise FitError(msg)
    for name, value in zip(names, values, strict=True):
        if not _is_number(value) or not math.isfinite(value):
            msg = f"ltr model {key} for {name} must be a finite number, got {value!r}"
            raise FitError(msg)
    return np.asarray([float(v) for v in values], dtype=np.float64)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def hand_model(
    weights: Mapping[str, float], intercept: float = 0.0, *, features: tuple[str, ...] = FEATURES
) -> dict[str, Any]:
    """A model dict with the given coefficients on raw features (mean 0, scale 1; others 0), for an
    arm with `features` (`LtrParams.features`).

    For tests and for reading the format; a run only ever uses a model `fit_ltr` produced.

    Raises:
        FitError: a weight names no feature.
    """
    unknown = sorted(set(weights) - set(features))
    if unknown:
        msg = f"ltr has no feature(s) {unknown}; features: {', '.join(features)}"
        raise FitError(msg)
    return {
        "coef": [float(weights.get(name, 0.0)) for name in features],
        "features": list(features),
        "intercept": float(intercept),
        "mean": [0.0] * len(features),
        "scale": [1.0] * len(features),
    }


# --- the arm --------------------------------------------------------------------------------------


class LtrArm:
    """Candidates from both pools scored by the fitted model; top k by (−score, chunk id), `via` "ltr"."""

    name = "ltr"

    def __init__(self, memory: ReadAPI, params: LtrParams, model: Mapping[str, Any]) -> None:
        self.memory = memory
        self.params = params
        self.model = LinearModel.from_dict(model, params.features)

    def search(self, query: Query) -> list[Hit]:
        """The top k candidates by the model's log-odds, ties by chunk id."""
        found = gather(self.memory, self.params, query)
        scores = self.model.score(found.matrix)
        ranked = sorted(
            zip((r.id for r in found.records), (float(s) for s in scores), strict=True),
            key=lambda pair: (-pair[1], pair[0]),
        )[: query.k]
        return [Hit(chunk_id=cid, score=score, via="ltr") for cid, score in ranked]


# --- fitting --------------------------------------------------------------------------------------


def fit_ltr(memory: ReadAPI, params: LtrParams, examples: tuple[Example, ...], seed: int) -> Fitted:
    """Fit the logistic model on every candidate of every usable example (label: grade > 0).

    An example is used when its candidates hold at least one relevant and one irrelevant chunk;
    the others are counted by reason. The classes are weighted `balanced`: a query has a few
    relevant chunks among up to 2 × `pool` candidates, and unweighted the loss would be spent on
    the many easy negatives rather than on what separates the relevant ones.

    Raises:
        FitError: no example is usable.
    """
    return fit_ltr_parts([(memory, examples)], params, seed)


def fit_ltr_parts(parts: Sequence[Part], params: LtrParams, seed: int) -> Fitted:
    """`fit_ltr` over several parts: each part's examples are gathered through its own memory, in
    part order, and one model is fitted on all their candidates (cross-fitting).

    Raises:
        FitError: no example is usable.
    """
    rows: list[NDArray[np.float64]] = []
    labels: list[NDArray[np.int64]] = []
    counts = {
        "examples": 0,
        "used": 0,
        "skipped_no_candidates": 0,
        "skipped_no_positive": 0,
        "skipped_no_negative": 0,
        "candidates": 0,
        "positives": 0,
    }
    for memory, examples in parts:
        counts["examples"] += len(examples)
        for example in examples:
            found = gather(memory, params, example.query)
            label = np.asarray([int(example.grade(r) > 0) for r in found.records], dtype=np.int64)
            reason = _skip_reason(label)
            if reason is not None:
                counts[reason] += 1
                continue
            rows.append(found.matrix)
            labels.append(label)
            counts["used"] += 1
            counts["candidates"] += len(label)
            counts["positives"] += int(label.sum())
    if not rows:
        msg = (
            f"ltr cannot be fitted: none of the {counts['examples']} training examples has both a "
            f"relevant and an irrelevant candidate (no candidates: "
            f"{counts['skipped_no_candidates']}, no relevant: {counts['skipped_no_positive']}, no "
            f"irrelevant: {counts['skipped_no_negative']}); check that the training roster matches "
            "the corpus"
        )
        raise FitError(msg)
    if params.objective == "pairwise":
        model, iterations, pairs = _fit_pairwise(rows, labels, seed, params.features)
        counts["pairs"] = pairs
    else:
        model, iterations = _fit_logistic(
            np.vstack(rows), np.concatenate(labels), seed, params.features
        )
    counts["iterations"] = iterations
    return Fitted(features=params.features, model=model.to_dict(), counts=counts)


def _skip_reason(label: NDArray[np.int64]) -> str | None:
    if label.size == 0:
        return "skipped_no_candidates"
    if not label.any():
        return "skipped_no_positive"
    if label.all():
        return "skipped_no_negative"
    return None


def _fit_logistic(
    matrix: NDArray[np.float64], label: NDArray[np.int64], seed: int, features: tuple[str, ...]
) -> tuple[LinearModel, int]:
    """StandardScaler + LogisticRegression (lbfgs, `C`, balanced), deterministic for a given input."""
    # Imported here so that building and running the arm never loads scikit-learn.
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(matrix)
    classifier = LogisticRegression(
        C=C, solver="lbfgs", max_iter=MAX_ITER, class_weight="balanced", random_state=seed
    ).fit(scaler.transform(matrix), label)
    model = LinearModel(
        mean=np.asarray(scaler.mean_, dtype=np.float64),
        scale=np.asarray(scaler.scale_, dtype=np.float64),
        coef=np.asarray(classifier.coef_[0], dtype=np.float64),
        intercept=float(classifier.intercept_[0]),
        features=features,
    )
    return model, int(classifier.n_iter_[0])


def _fit_pairwise(
    rows: Sequence[NDArray[np.float64]],
    labels: Sequence[NDArray[np.int64]],
    seed: int,
    features: tuple[str, ...],
) -> tuple[LinearModel, int, int]:
    """A linear scorer from within-query pairs: logistic regression on standardised differences.

    Each query gives every (relevant, irrelevant) pair of its candidates, at most `MAX_NEGATIVES`
    irrelevant ones (those the `rrf` feature ranks highest: the hard ones, ties by row). Each pair
    enters once each way (x_pos − x_neg labelled 1, x_neg − x_pos labelled 0), so the classes are
    balanced and no intercept is needed; the model's intercept is 0.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.vstack(rows))
    diffs: list[NDArray[np.float64]] = []
    for matrix, label in zip(rows, labels, strict=True):
        z = scaler.transform(matrix)
        pos = np.flatnonzero(label == 1)
        neg = np.flatnonzero(label == 0)
        order = np.lexsort((neg, -matrix[neg, COLUMN["rrf"]]))
        neg = neg[order][:MAX_NEGATIVES]
        diffs.append((z[pos][:, None, :] - z[neg][None, :, :]).reshape(-1, z.shape[1]))
    forward = np.vstack(diffs)
    pairs = len(forward)
    x = np.vstack([forward, -forward])
    y = np.concatenate([np.ones(pairs, dtype=np.int64), np.zeros(pairs, dtype=np.int64)])
    classifier = LogisticRegression(
        C=C, solver="lbfgs", max_iter=MAX_ITER, fit_intercept=False, random_state=seed
    ).fit(x, y)
    model = LinearModel(
        mean=np.asarray(scaler.mean_, dtype=np.float64),
        scale=np.asarray(scaler.scale_, dtype=np.float64),
        coef=np.asarray(classifier.coef_[0], dtype=np.float64),
        intercept=0.0,
        features=features,
    )
    return model, int(classifier.n_iter_[0]), pairs

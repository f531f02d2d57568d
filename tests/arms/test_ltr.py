"""The `ltr` arm: hand-worked features, a deterministic fit whose signs are right, model checks, scope."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from arms import registry
from arms.base import Hit, Query
from arms.fitting import Example, FitError
from arms.ltr import (
    DATE_FEATURES,
    FEATURES,
    GROUPS,
    LinearModel,
    LtrArm,
    LtrParams,
    fit_ltr,
    fit_ltr_parts,
    gather,
    hand_model,
    has_term,
    query_terms,
)
from arms.registry import RegistryError, full_canonical
from arms.spec import SpecError
from engine.model import Author
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0, toward

NOW = datetime(2025, 1, 11, tzinfo=UTC)  # ten days after s1 started


def fixture_memory() -> FakeMemory:
    """Four chunks of project /a; the query "deploy api" has the vector e0."""
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start="2025-01-01T00:00:00Z")
    mem.add_session("s2", project="/a", start=None)
    # FakeMemory's lexical score counts the chunk's tokens that are query tokens.
    mem.add_chunk(
        "c1", session="s1", text="deploy the api", vector=toward(0.8, 1), author=Author.USER
    )
    mem.add_chunk("c2", session="s1", text="deploy deploy deploy", vector=toward(0.6, 2))
    mem.add_chunk(
        "c3", session="s1", text="unrelated", vector=toward(0.9, 3), author=Author.TOOL_RESULT
    )
    mem.add_chunk("c4", session="s2", text="api", author=Author.USER)  # no vector, undated
    mem.add_query("deploy api", e0())
    mem.add_query("api", e0())
    return mem


def query(text: str = "deploy api", scope: Scope | None = None, k: int = 10) -> Query:
    return Query(text=text, scope=scope or Scope.of("/a"), now=NOW, k=k)


def rows_by_id(mem: FakeMemory, q: Query, params: LtrParams | None = None) -> dict[str, Any]:
    params = params or LtrParams()
    found = gather(mem, params, q)
    return {
        rec.id: dict(zip(params.features, (float(x) for x in row), strict=True))
        for rec, row in zip(found.records, found.matrix, strict=True)
    }


def test_the_features_of_a_four_chunk_fixture_match_the_hand_worked_values() -> None:
    # Lexical pool (term counts): c2 3, c1 2, c4 1 -> ranks c2 1, c1 2, c4 3; min-max over 1..3.
    # Vector pool (cosine to e0): c3 0.9, c1 0.8, c2 0.6 -> ranks c3 1, c1 2, c2 3; c4 has no vector.
    # rrf (k=60): c1 1/62 + 1/62, c2 1/61 + 1/63, c3 1/61, c4 1/63.
    # Session s1 holds c1 (index 0), c2 (1), c3 (2); s2 holds c4 alone. Its best rrf is c2's, since
    # 1/61 + 1/63 = 124/3843 = 0.0322665 > 2/62 = 0.0322581. s1 started 10 days before NOW.
    rrf1, rrf2, rrf3, rrf4 = 2 / 62, 1 / 61 + 1 / 63, 1 / 61, 1 / 63
    expected = {
        "c1": [0.5, 1 / 2, 0.5, 1 / 2, 0.8, 1 / 2, 1, rrf1, 2 / 2, math.log(15), 1, 0, 3, rrf2, rrf2, math.log(11), 0],
        "c2": [1.0, 1 / 1, 1.0, 1 / 1, 0.6, 1 / 3, 1, rrf2, 1 / 2, math.log(21), 0, 1, 3, rrf2, rrf1, math.log(11), 0],
        "c3": [0.0, 0, 0.0, 0, 0.9, 1 / 1, 0, rrf3, 0 / 2, math.log(10), 0, 0, 3, rrf2, rrf2, math.log(11), 0],
        "c4": [0.0, 1 / 3, 0.0, 1 / 3, 0.0, 0, 0, rrf4, 1 / 2, math.log(4), 1, 0, 1, rrf4, 0, 0, 1],
    }  # fmt: skip
    # log_length is log1p of 14, 20, 9 and 3 characters; c2's neighbours are c1 (2/62) and c3 (1/61).
    # "deploy" and "api" carry no suffix, so the stemmed pool is the plain one: stem_* = lex_*.
    got = rows_by_id(fixture_memory(), query())
    assert list(got) == ["c1", "c2", "c3", "c4"]  # by chunk id
    for cid, values in expected.items():
        assert got[cid] == pytest.approx(dict(zip(FEATURES, values, strict=True)), abs=1e-6), cid


def test_the_stemmed_pool_brings_in_other_word_forms_and_has_its_own_features() -> None:
    mem = fixture_memory()
    mem.add_chunk("c5", session="s2", text="deploying apis", author=Author.USER)  # no vector
    got = rows_by_id(mem, query())
    # plain pool: c2 3, c1 2, c4 1 (c5 shares no exact token); stemmed pool: deploying -> deploy and
    # apis -> api, so c5 scores 2 and ties c1: c2 3 (rank 1), c1 2 (2), c5 2 (3, by id), c4 1 (4).
    assert got["c5"]["lex_score"] == 0.0
    assert got["c5"]["lex_rr"] == 0.0
    assert got["c5"]["stem_score"] == pytest.approx(0.5)  # (2 - 1) / (3 - 1)
    assert got["c5"]["stem_rr"] == pytest.approx(1 / 3)
    assert got["c4"]["stem_rr"] == pytest.approx(1 / 4)
    assert got["c4"]["lex_rr"] == pytest.approx(1 / 3)  # control: c4's plain rank is unchanged


def test_an_ablation_zeroes_its_feature_groups_and_leaving_out_stem_drops_its_pool() -> None:
    every = sorted((*FEATURES, *DATE_FEATURES))
    assert sorted(n for names in GROUPS.values() for n in names) == every  # each once
    mem = fixture_memory()
    mem.add_chunk("c5", session="s2", text="deploying apis", author=Author.USER)
    full = rows_by_id(mem, query())
    assert full["c1"]["log_age_days"] == pytest.approx(math.log(11))  # control: present when kept
    cut = rows_by_id(mem, query(), LtrParams(without="stem, age"))
    assert "c5" not in cut  # found only by the stemmed pool, which is not asked
    assert [c for c in mem.calls if c[0] == "lexical"][-1][1][3] is False  # the last read is plain
    for cid in ("c1", "c2", "c4"):
        for name in (*GROUPS["stem"], *GROUPS["age"]):
            assert cut[cid][name] == 0.0
        assert cut[cid]["lex_rr"] == full[cid]["lex_rr"]  # other groups untouched
    assert full_canonical("ltr") == "ltr(min_score=0.0,objective='pointwise',pool=100,rrf_k=60)"
    assert full_canonical("ltr(without='stem')") == (
        "ltr(min_score=0.0,objective='pointwise',pool=100,rrf_k=60,without='stem')"
    )
    with pytest.raises(SpecError, match=r"unknown feature group\(s\) \['stemming'\]"):
        LtrParams(without="stemming")


def dated_memory() -> FakeMemory:
    """Four chunks on "deploy", each in a session of its own: 13 and 20 October 2023, 1 December
    2023, and undated."""
    mem = FakeMemory()
    for sid, start in (
        ("oct13", "2023-10-13T09:00:00Z"),
        ("oct20", "2023-10-20T23:30:00Z"),
        ("dec01", "2023-12-01T00:00:00Z"),
        ("none", None),
    ):
        mem.add_session(sid, project="/a", start=start)
        mem.add_chunk(f"c-{sid}", session=sid, text="deploy", vector=toward(0.5, 1))
    for text in ("deploy on October 13, 2023", "deploy in October", "deploy"):
        mem.add_query(text, e0())
    return mem


DATED = LtrParams(dates=True)


def dated_rows(
    mem: FakeMemory, text: str, params: LtrParams = DATED
) -> dict[str, dict[str, float]]:
    return rows_by_id(mem, query(text), params)


def test_with_dates_a_named_date_scores_each_chunk_by_its_days_from_it() -> None:
    day = dated_rows(dated_memory(), "deploy on October 13, 2023")
    assert {cid: row["date_named"] for cid, row in day.items()} == dict.fromkeys(day, 1.0)
    assert day["c-oct13"]["date_close"] == pytest.approx(1.0)  # the named day: gap 0
    assert day["c-oct20"]["date_close"] == pytest.approx(math.exp(-7 / 30))  # 0.7919
    assert day["c-dec01"]["date_close"] == pytest.approx(math.exp(-49 / 30))  # 18 + 30 + 1 days
    assert day["c-none"]["date_close"] == 0.0  # undated
    # "in October", any year: both October chunks are inside it; 1 December is 31 days after it.
    month = dated_rows(dated_memory(), "deploy in October")
    assert month["c-oct13"]["date_close"] == month["c-oct20"]["date_close"] == 1.0
    assert month["c-dec01"]["date_close"] == pytest.approx(math.exp(-31 / 30))
    # control: a question that names no date leaves both columns 0, and the other features match
    plain = dated_rows(dated_memory(), "deploy")
    assert {row["date_named"] + row["date_close"] for row in plain.values()} == {0.0}
    assert plain["c-oct13"]["lex_rr"] == day["c-oct13"]["lex_rr"] > 0
    # without dates the arm has its 17 columns only
    assert gather(
        dated_memory(), LtrParams(), query("deploy on October 13, 2023")
    ).matrix.shape == (
        4,
        len(FEATURES),
    )
    assert len(DATED.features) == len(FEATURES) + 2


def test_dates_is_a_spec_parameter_and_a_model_must_be_fitted_for_its_feature_list() -> None:
    assert full_canonical("ltr(dates=True)") == (
        "ltr(dates=True,min_score=0.0,objective='pointwise',pool=100,rrf_k=60)"
    )
    assert full_canonical("ltr(dates=True,without='dates')").endswith("without='dates')")
    with pytest.raises(SpecError, match="without=dates leaves out features"):
        LtrParams(without="dates")
    mem = dated_memory()
    by_date = hand_model({"date_close": 1.0}, features=DATED.features)
    arm = registry.build("ltr(dates=True)", mem, by_date)
    hits = arm.search(query("deploy on October 13, 2023"))
    assert [h.chunk_id for h in hits] == ["c-oct13", "c-oct20", "c-dec01", "c-none"]
    # control: with no date named every score ties and the order is the chunk ids'
    assert [h.chunk_id for h in arm.search(query("deploy"))] == sorted(
        ["c-oct13", "c-oct20", "c-dec01", "c-none"]
    )
    with pytest.raises(FitError, match=r"missing: \['date_named', 'date_close'\]"):
        registry.build("ltr(dates=True)", mem, hand_model({"rrf": 1.0}))
    with pytest.raises(FitError, match=r"unknown: \['date_named', 'date_close'\]"):
        registry.build("ltr()", mem, by_date)
    with pytest.raises(FitError, match="has no feature"):
        hand_model({"date_close": 1.0})  # not a feature of the plain list


def test_a_fit_with_dates_learns_that_the_named_day_holds_the_answer() -> None:
    # Query i names the day of session j = i % 4 (10, 12, 14 or 16 October 2023); its gold is that
    # session's chunk, and the cosines (0.9 - 0.1 j) put chunk 0 first whatever the gold.
    mem = FakeMemory()
    examples = []
    for i in range(8):
        for j in range(4):
            mem.add_session(f"s{i}-{j}", project=f"/p{i}", start=f"2023-10-{10 + 2 * j}T12:00:00Z")
            mem.add_chunk(
                f"q{i}c{j}", session=f"s{i}-{j}", text=f"topic{i}", vector=toward(0.9 - 0.1 * j, 1)
            )
        text = f"topic{i} on October {10 + 2 * (i % 4)}, 2023"
        mem.add_query(text, e0())
        q = Query(text=text, scope=Scope.of(f"/p{i}"), now=NOW)
        examples.append(
            Example(qid=f"q{i}", query=q, unit="message", relevant={f"q{i}c{i % 4}-m0": 1})
        )
    fitted = registry.fit("ltr(dates=True)", mem, tuple(examples[:6]), seed=3)
    assert fitted.features == DATED.features
    coef = dict(zip(DATED.features, fitted.model["coef"], strict=True))
    assert coef["date_close"] > 0
    assert max(coef, key=lambda name: abs(coef[name])) == "date_close"
    # Held out: query 7 names 16 October, where the cosine ranks its chunk last.
    arm = registry.build("ltr(dates=True)", mem, fitted.model)
    held = examples[7].query
    assert arm.search(held)[0].chunk_id == "q7c3"
    # control: the plain arm, fitted on the same examples, cannot see the date and keeps cosine order
    plain = registry.fit("ltr()", mem, tuple(examples[:6]), seed=3)
    assert registry.build("ltr()", mem, plain.model).search(held)[0].chunk_id != "q7c3"


def test_a_lexical_pool_of_equal_scores_normalises_to_one_and_the_pool_caps_each_channel() -> None:
    mem = fixture_memory()
    # "api": c1 and c4 both score 1, so min-max has no span; both read 1 (c2 is in no lexical pool).
    got = rows_by_id(mem, query("api"))
    assert got["c1"]["lex_score"] == 1.0
    assert got["c4"]["lex_score"] == 1.0
    assert got["c2"]["lex_score"] == 0.0  # control: a vector-only candidate reads 0
    assert got["c2"]["lex_rr"] == 0.0
    # pool=1: the best of each channel only, c2 (lexical) and c3 (vector), each at rank 1.
    capped = rows_by_id(mem, query(), LtrParams(pool=1))
    assert list(capped) == ["c2", "c3"]
    assert capped["c2"]["rrf"] == pytest.approx(1 / 61)
    assert capped["c3"]["neighbor_best_rrf"] == pytest.approx(1 / 61)  # c2 is its neighbour


@pytest.mark.parametrize(
    ("text", "term", "found"),
    [
        ("the deploy-api works", "deploy-api", True),  # `-` joins a term, as in the engine's rule
        ("the deploy-api works", "deploy", False),  # so `deploy` alone is not a token here
        ("read (api) docs", "api", True),  # punctuation is a boundary
        ("set api_key now", "api", False),  # `_` is a word character
        ("rapid api", "api", True),  # the second occurrence is whole after a partial first one
        ("grosse strasse", "straße".casefold(), True),  # case folding on both sides: ß -> ss
        ("apis", "api", False),
    ],
)
def test_a_term_counts_only_as_a_whole_token_of_the_folded_chunk(
    text: str, term: str, found: bool
) -> None:
    folded = text.casefold()
    assert has_term(folded, term) is found
    assert (term in query_terms(text)) is found  # the same answer as splitting the chunk into terms


def test_query_terms_follow_the_engines_rule_of_two_or_more_word_characters() -> None:
    assert query_terms("Deploy the API, a b-c x_y!") == {"deploy", "the", "api", "b-c", "x_y"}


def test_records_are_read_once_within_the_query_scope() -> None:
    mem = fixture_memory()
    gather(mem, LtrParams(), query())
    assert mem.calls_to("chunks") == [(("c1", "c2", "c3", "c4"), Scope.of("/a"))]


def test_search_ranks_by_the_models_linear_score_with_ties_by_chunk_id() -> None:
    mem = fixture_memory()
    by_cosine = LtrArm(mem, LtrParams(), hand_model({"vec_cosine": 2.0}, intercept=0.5))
    hits = by_cosine.search(query(k=3))
    # 2 · cosine + 0.5: c3 2.3, c1 2.1, c2 1.7 (c4, 0.5, is cut by k=3)
    assert [h.chunk_id for h in hits] == ["c3", "c1", "c2"]
    assert [h.score for h in hits] == pytest.approx([2.3, 2.1, 1.7], abs=1e-6)
    assert {h.via for h in hits} == {"ltr"}
    # Standardised: (session_count − 2) / 0.5: s1's three chunks 2.0 each, tied and ordered by id;
    # c4 (1 − 2) / 0.5 = −2.0.
    model = hand_model({"session_count": 1.0})
    model["mean"][FEATURES.index("session_count")] = 2.0
    model["scale"][FEATURES.index("session_count")] = 0.5
    hits = LtrArm(mem, LtrParams(), model).search(query())
    assert hits == [
        Hit(chunk_id="c1", score=2.0, via="ltr"),
        Hit(chunk_id="c2", score=2.0, via="ltr"),
        Hit(chunk_id="c3", score=2.0, via="ltr"),
        Hit(chunk_id="c4", score=-2.0, via="ltr"),
    ]


def test_an_arm_scoped_to_project_a_never_scores_a_project_b_chunk() -> None:
    mem = fixture_memory()
    mem.add_session("sb", project="/b", start="2025-01-05T00:00:00Z")
    mem.add_chunk("b1", session="sb", text="deploy api deploy api", vector=toward(0.95, 4))
    arm = registry.build("ltr(pool=10)", mem, hand_model({"rrf": 1.0}))
    only_a = [h.chunk_id for h in arm.search(query(scope=Scope.of("/a")))]
    assert "b1" not in only_a
    assert "c1" in only_a
    both = [h.chunk_id for h in arm.search(query(scope=Scope.of("/a", "/b")))]
    assert both[0] == "b1"  # control: with /b in scope it is the best of both pools


# --- fitting ------------------------------------------------------------------------------------


def training_memory(n: int = 7) -> FakeMemory:
    """Query i ("topic{i}", project /p{i}) has four chunks; the gold one, j = i % 4, is the user's.

    Every chunk holds the query term once and chunk j has cosine 0.9 − 0.1·j, so the gold chunk's
    ranks move from query to query and only its author tells it apart.
    """
    mem = FakeMemory()
    for i in range(n):
        mem.add_session(f"s{i}", project=f"/p{i}", start="2025-01-01T00:00:00Z")
        for j in range(4):
            author = Author.USER if j == i % 4 else (Author.ASSISTANT, Author.TOOL_RESULT)[j % 2]
            mem.add_chunk(
                f"q{i}c{j}",
                session=f"s{i}",
                text=f"topic{i} note{j}",
                vector=toward(0.9 - 0.1 * j, j + 1),
                author=author,
            )
        mem.add_query(f"topic{i}", e0())
    mem.add_session("lone", project="/lone", start=None)
    mem.add_chunk("only", session="lone", text="topic9", vector=e0(), author=Author.USER)
    mem.add_query("topic9", e0())
    return mem


def example(i: int, *, scope: str | None = None, gold: str | None = None) -> Example:
    text = {"/lone": "topic9", "/empty": "topic0"}.get(scope or "", f"topic{i}")
    q = Query(text=text, scope=Scope.of(scope or f"/p{i}"), now=NOW)
    return Example(qid=f"q{i}", query=q, unit="message", relevant={gold or f"q{i}c{i % 4}-m0": 1})


SKIPPED = (
    example(90, scope="/empty"),  # nothing in scope: no candidates
    example(0, gold="nowhere-m0"),  # candidates, none relevant
    example(
        91, scope="/lone", gold="only-m0"
    ),  # its one candidate is relevant: nothing to contrast
)


def test_a_fit_learns_that_the_predictive_feature_is_the_users_authorship() -> None:
    mem = training_memory()
    examples = (*(example(i) for i in range(6)), *SKIPPED)
    fitted = registry.fit("ltr()", mem, examples, seed=3)
    assert fitted.features == FEATURES
    assert dict(fitted.counts) == {
        "examples": 9,
        "used": 6,
        "skipped_no_candidates": 1,
        "skipped_no_positive": 1,
        "skipped_no_negative": 1,
        "candidates": 24,  # 6 queries × 4 chunks
        "positives": 6,
        "iterations": fitted.counts["iterations"],
    }
    coef = dict(zip(FEATURES, fitted.model["coef"], strict=True))
    assert coef["author_user"] > 0
    assert max(coef, key=lambda name: abs(coef[name])) == "author_user"
    # The held-out query 6 has its gold at j = 2, behind two chunks of higher cosine.
    hits = registry.build("ltr()", mem, fitted.model).search(
        Query(text="topic6", scope=Scope.of("/p6"), now=NOW)
    )
    assert hits[0].chunk_id == "q6c2"
    # control: the rrf-only model puts the best-fused chunk first, not the user's
    rrf_only = registry.build("ltr()", mem, hand_model({"rrf": 1.0}))
    assert (
        rrf_only.search(Query(text="topic6", scope=Scope.of("/p6"), now=NOW))[0].chunk_id == "q6c0"
    )


def test_a_pairwise_fit_learns_the_same_ranking_from_within_query_pairs() -> None:
    mem = training_memory()
    examples = (*(example(i) for i in range(6)), *SKIPPED)
    fitted = registry.fit("ltr(objective='pairwise')", mem, examples, seed=3)
    # 6 usable queries, each 1 relevant x 3 irrelevant candidates (under MAX_NEGATIVES): 18 pairs
    assert fitted.counts["pairs"] == 18
    assert fitted.counts["used"] == 6
    assert fitted.model["intercept"] == 0.0  # pairs carry no intercept
    coef = dict(zip(FEATURES, fitted.model["coef"], strict=True))
    assert coef["author_user"] > 0
    assert max(coef, key=lambda name: abs(coef[name])) == "author_user"
    arm = registry.build("ltr(objective='pairwise')", mem, fitted.model)
    assert arm.search(Query(text="topic6", scope=Scope.of("/p6"), now=NOW))[0].chunk_id == "q6c2"
    again = registry.fit("ltr(objective='pairwise')", training_memory(), examples, seed=3)
    assert json.dumps(dict(again.model), sort_keys=True) == json.dumps(
        dict(fitted.model), sort_keys=True
    )
    with pytest.raises(SpecError, match="objective must be one of pointwise, pairwise"):
        LtrParams(objective="listwise")  # type: ignore[arg-type]


def test_fitting_twice_gives_identical_models_down_to_the_json_bytes() -> None:
    examples = tuple(example(i) for i in range(6))
    first = fit_ltr(training_memory(), LtrParams(), examples, seed=7)
    second = fit_ltr(training_memory(), LtrParams(), examples, seed=7)
    assert dict(first.model) == dict(second.model)
    assert json.dumps(dict(first.model), sort_keys=True) == json.dumps(
        dict(second.model), sort_keys=True
    )
    model = dict(first.model)
    assert all(type(x) is float for key in ("mean", "scale", "coef") for x in model[key])
    assert type(model["intercept"]) is float
    assert model["features"] == list(FEATURES)


def test_a_fit_from_parts_reads_each_part_through_its_own_memory() -> None:
    examples = tuple(example(i) for i in range(6))
    whole = fit_ltr(training_memory(), LtrParams(), examples, seed=7)
    # one part is the plain fit; two parts over the same corpus gather the same rows in the same
    # order, so they fit the same model
    one = fit_ltr_parts([(training_memory(), examples)], LtrParams(), seed=7)
    two = fit_ltr_parts(
        [(training_memory(), examples[:3]), (training_memory(), examples[3:])], LtrParams(), seed=7
    )
    assert dict(one.model) == dict(two.model) == dict(whole.model)
    assert dict(two.counts) == dict(whole.counts)
    assert two.counts["examples"] == 6
    # the second part read through a memory with other vectors (the gold chunk now has the best
    # cosine everywhere) is a different fit: the part's memory, not the first, answered its queries
    other = training_memory()
    for i in range(6):
        other.chunk_map[f"q{i}c{i % 4}"].vector = np.asarray(toward(0.99, 5), dtype=np.float32)
    mixed = fit_ltr_parts(
        [(training_memory(), examples[:3]), (other, examples[3:])], LtrParams(), seed=7
    )
    assert dict(mixed.model) != dict(whole.model)
    with pytest.raises(RegistryError, match="cannot be cross-fitted"):
        registry.fit_parts("ltrb()", [(training_memory(), examples)], seed=7)
    assert registry.fit_parts("ltr()", [(training_memory(), examples)], seed=7).model == whole.model


def test_the_stored_model_scores_exactly_as_scikit_learn_does() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    mem = training_memory()
    examples = tuple(example(i) for i in range(6))
    fitted = fit_ltr(mem, LtrParams(), examples, seed=0)
    rows = np.vstack([gather(mem, LtrParams(), e.query).matrix for e in examples])
    labels = np.concatenate(
        [[int(e.grade(r) > 0) for r in gather(mem, LtrParams(), e.query).records] for e in examples]
    )
    scaler = StandardScaler().fit(rows)
    reference = LogisticRegression(C=1.0, class_weight="balanced").fit(
        scaler.transform(rows), labels
    )
    ours = LinearModel.from_dict(fitted.model).score(rows)
    assert ours == pytest.approx(reference.decision_function(scaler.transform(rows)), abs=1e-9)


def test_a_fit_with_no_usable_example_says_why_each_was_skipped() -> None:
    with pytest.raises(FitError, match=r"none of the 3 training examples") as info:
        fit_ltr(training_memory(), LtrParams(), SKIPPED, seed=0)
    assert "no candidates: 1, no relevant: 1, no irrelevant: 1" in str(info.value)
    assert (
        fit_ltr(training_memory(), LtrParams(), (*SKIPPED, example(1)), seed=0).counts["used"] == 1
    )


def test_searching_never_imports_scikit_learn_and_fitting_does() -> None:
    code = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from arms import registry\n"
        "from arms.base import Query\n"
        "from arms.ltr import hand_model\n"
        "from engine.scope import Scope\n"
        "from tests.arms.test_ltr import fixture_memory{extra}\n"
        "q = Query(text='deploy api', scope=Scope.of('/a'), now=datetime(2025, 1, 11, tzinfo=UTC))\n"
        "registry.build('ltr()', fixture_memory(), hand_model({{'rrf': 1.0}})).search(q)\n"
        "{fit}"
        "print('sklearn' in sys.modules)\n"
    )
    search_only = code.format(extra="", fit="")
    fitting = code.format(
        extra=", training_memory, example",
        fit="registry.fit('ltr()', training_memory(), (example(1),), seed=0)\n",
    )
    for source, imported in ((search_only, "False"), (fitting, "True")):
        out = subprocess.run(
            [sys.executable, "-c", source], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == imported


# --- the model's checks -------------------------------------------------------------------------


def broken(change: str) -> dict[str, Any]:
    model = hand_model({"rrf": 1.0})
    n = len(FEATURES)
    if change == "missing key":
        del model["intercept"]
    elif change == "extra key":
        model["bias"] = 0.0
    elif change == "reordered":
        model["features"] = [FEATURES[1], FEATURES[0], *FEATURES[2:]]
    elif change == "one feature short":
        model["features"] = list(FEATURES[:-1])
    elif change == "short coef":
        model["coef"] = [0.0] * (n - 1)
    elif change == "nan mean":
        model["mean"][0] = float("nan")
    elif change == "zero scale":
        model["scale"][FEATURES.index("rrf")] = 0.0
    elif change == "bool coef":
        model["coef"][4] = True
    elif change == "text intercept":
        model["intercept"] = "0.5"
    return model


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            "missing key",
            "ltr model keys must be coef, features, intercept, mean, scale, got coef, ",
        ),
        ("extra key", "got bias, coef, features, intercept, mean, scale"),
        ("reordered", "are not this code's features"),
        ("one feature short", "missing: ['age_missing']; unknown: none"),
        ("short coef", "ltr model coef must be a list of 17 numbers (one per feature), got 16"),
        ("nan mean", "ltr model mean for lex_score must be a finite number, got nan"),
        ("zero scale", "ltr model scale must be > 0 for every feature, not for rrf"),
        ("bool coef", "ltr model coef for vec_cosine must be a finite number, got True"),
        ("text intercept", "ltr model intercept must be a finite number, got '0.5'"),
    ],
)
def test_a_malformed_model_is_refused_naming_what_is_wrong(change: str, message: str) -> None:
    mem = fixture_memory()
    with pytest.raises(FitError) as info:
        registry.build("ltr()", mem, broken(change))
    assert message in str(info.value)
    assert registry.build("ltr()", mem, broken("none")).search(query())  # control: intact model


def test_the_arm_cannot_be_built_without_a_model_and_its_params_are_checked() -> None:
    mem = fixture_memory()
    with pytest.raises(
        RegistryError, match="arm 'ltr' is fitted: it runs only from a fitted model"
    ):
        registry.build("ltr()", mem)
    assert registry.is_fitted("ltr()")
    arm = registry.build("ltr(pool=5)", mem, hand_model({}))  # control: with a model it builds
    assert isinstance(arm.inner, LtrArm)
    assert arm.params == LtrParams(pool=5, min_score=0.0, rrf_k=60)
    assert (
        registry.full_canonical("ltr()")
        == "ltr(min_score=0.0,objective='pointwise',pool=100,rrf_k=60)"
    )
    for spec, message in (
        ("ltr(pool=0)", "ltr: pool must be >= 1, got 0"),
        ("ltr(rrf_k=0)", "ltr: rrf_k must be >= 1, got 0"),
        ("ltr(min_score=1.5)", "ltr: min_score must be <= 1.0, got 1.5"),
    ):
        with pytest.raises(SpecError, match=message.replace("(", r"\(")):
            registry.build(spec, mem, hand_model({}))
    with pytest.raises(FitError, match=r"ltr has no feature\(s\) \['bm25'\]"):
        hand_model({"bm25": 1.0})

"""Fine-tuning the encoder: the in-batch-negatives loss by hand, the training spec, the pairs a real
memory yields, and a real (tiny) fit that is deterministic and pulls questions towards their texts."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from arms.base import Query
from arms.fitting import Example
from engine.api import Scored
from engine.embed import HashEmbedder
from engine.embed_common import minilm_model_dir
from engine.memory import Memory
from engine.scope import Scope
from engine.tuned_embed import TunedEmbedder, load_sentence_transformer, weights_sha256
from harness.tune import (
    Negative,
    Pair,
    TuneError,
    TuneParams,
    batch_loss,
    fine_tune,
    fit_encoder,
    hard_negatives,
    negative_mask,
    same_query_mask,
    training_pairs,
    warmup_factor,
)
from tests.arms.test_real_engine_fixtures import session

NOW = datetime(2026, 6, 1, tzinfo=UTC)
NO_MASK = torch.zeros(2, 2, dtype=torch.bool)


def pair(qid: str, chunk_id: str) -> Pair:
    return Pair(qid=qid, query=f"question {qid}", chunk_id=chunk_id, text=f"text {chunk_id}")


# --- the loss ---------------------------------------------------------------------------------------


def test_the_loss_of_identity_rows_is_the_cross_entropy_of_logits_one_and_zero() -> None:
    eye = torch.eye(2)
    # logits [[1, 0], [0, 1]]: each row's CE is -log(e / (e + 1)) = log(1 + e^-1) = 0.313262.
    loss = batch_loss(eye, eye, 1.0, NO_MASK)
    assert loss.item() == pytest.approx(math.log(1 + math.exp(-1)), abs=1e-6)
    assert loss.item() == pytest.approx(0.313262, abs=1e-6)


def test_a_masked_text_is_no_negative_so_its_row_loses_nothing() -> None:
    eye = torch.eye(2)
    mask = torch.tensor([[False, True], [False, False]])
    # Row 0's logits become [1, -inf]: CE 0. Row 1 keeps log(1 + e^-1). Mean: half of it.
    loss = batch_loss(eye, eye, 1.0, mask)
    assert loss.item() == pytest.approx(math.log(1 + math.exp(-1)) / 2, abs=1e-6)
    assert loss.item() == pytest.approx(0.156631, abs=1e-6)
    assert batch_loss(eye, eye, 1.0, NO_MASK).item() == pytest.approx(0.313262, abs=1e-6)


def test_the_scale_multiplies_the_cosines_before_the_cross_entropy() -> None:
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    d = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    # q @ d.T = [[1, 0.6], [0, 0.8]]; x20: [[20, 12], [0, 16]]; CE rows log(1 + e^-8), log(1 + e^-16).
    expected = (math.log1p(math.exp(-8)) + math.log1p(math.exp(-16))) / 2
    assert batch_loss(q, d, 20.0, NO_MASK).item() == pytest.approx(expected, rel=1e-4)


def test_the_loss_refuses_mismatched_shapes_and_a_masked_positive() -> None:
    eye = torch.eye(2)
    off_diagonal = torch.tensor([[False, True], [True, False]])
    assert batch_loss(eye, eye, 1.0, off_diagonal).item() == pytest.approx(0.0, abs=1e-7)  # control
    with pytest.raises(TuneError, match="of the same width"):
        batch_loss(eye, torch.eye(3), 1.0, NO_MASK)
    with pytest.raises(TuneError, match=r"mask\[i, i\]"):
        batch_loss(eye, eye, 1.0, torch.eye(2, dtype=torch.bool))


def test_extra_negative_rows_enter_every_query_s_softmax_unless_masked() -> None:
    q = torch.eye(2)
    d = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])  # row 2: a hard negative like d_0
    # logits [[1, 0, 1], [0, 1, 0]]: row 0's CE is log((2e + 1) / e) = log(2 + e^-1) = 0.861995,
    # row 1's log((e + 2) / e) = log(1 + 2e^-1) = 0.551444; the mean 0.706720.
    no_mask = torch.zeros(2, 3, dtype=torch.bool)
    assert batch_loss(q, d, 1.0, no_mask).item() == pytest.approx(0.706720, abs=1e-6)
    assert batch_loss(q, d, 1.0, no_mask).item() == pytest.approx(
        (math.log(2 + math.exp(-1)) + math.log(1 + 2 * math.exp(-1))) / 2, abs=1e-6
    )
    # Masked for row 0 (it holds row 0's evidence): row 0 is back to log(1 + e^-1) = 0.313262.
    masked = torch.tensor([[False, False, True], [False, False, False]])
    assert batch_loss(q, d, 1.0, masked).item() == pytest.approx(
        (0.313262 + 0.551444) / 2, abs=1e-6
    )
    with pytest.raises(TuneError, match=r"m >= b"):
        batch_loss(q, d[:1], 1.0, torch.zeros(2, 1, dtype=torch.bool))  # fewer texts than queries


def test_a_drawn_negative_is_masked_only_for_the_questions_it_answers() -> None:
    pairs = [pair("q1", "c1"), pair("q2", "c2"), pair("q1", "c3")]
    drawn = [Negative("c3", "t"), Negative("c9", "t")]  # c3 holds q1's evidence (its second pair)
    positives = {"q1": {"c1", "c3"}, "q2": {"c2"}}
    assert negative_mask(pairs, drawn, positives).tolist() == [
        [True, False],
        [False, False],  # control: c3 is a fair negative for q2
        [True, False],
    ]


def test_the_mask_marks_other_texts_of_the_same_question_and_repeats_of_the_same_chunk() -> None:
    pairs = [pair("q1", "c1"), pair("q1", "c2"), pair("q2", "c3"), pair("q3", "c1")]
    expected = [
        [False, True, False, True],  # q1/c1: q1/c2 shares the question, q3/c1 the chunk
        [True, False, False, False],
        [False, False, False, False],
        [True, False, False, False],
    ]
    assert same_query_mask(pairs).tolist() == expected
    assert same_query_mask(pairs).dtype == torch.bool


def test_the_warm_up_rises_linearly_over_its_steps_then_holds() -> None:
    assert [warmup_factor(s, 2) for s in range(4)] == [1 / 3, 2 / 3, 1.0, 1.0]
    assert [warmup_factor(s, 0) for s in range(2)] == [1.0, 1.0]


# --- the training spec ------------------------------------------------------------------------------

DEFAULT_SPEC = "tune(batch=16,epochs=2,lr=2e-05,scale=20.0,threads=2,warmup=0.1)"


def test_the_default_spec_is_canonical_and_parses_back_to_the_defaults() -> None:
    params = TuneParams()
    assert params.canonical() == DEFAULT_SPEC
    assert TuneParams.from_spec(DEFAULT_SPEC) == params
    assert TuneParams.from_spec("tune") == params
    assert TuneParams.from_spec(params.canonical()).canonical() == DEFAULT_SPEC
    values = {
        "epochs": 2, "lr": 2e-05, "batch": 16, "scale": 20.0, "warmup": 0.1, "threads": 2, "hard": 0
    }  # fmt: skip
    assert params.to_dict() == values
    assert json.loads(json.dumps(params.to_dict())) == values


def test_hard_negatives_are_named_in_the_spec_only_when_asked_for() -> None:
    assert (
        TuneParams(hard=0).canonical() == DEFAULT_SPEC
    )  # specs from before `hard` keep their text
    hard = TuneParams.from_spec("tune(hard=5)")
    assert hard.hard == 5
    assert hard.canonical() == (
        "tune(batch=16,epochs=2,hard=5,lr=2e-05,scale=20.0,threads=2,warmup=0.1)"
    )
    assert TuneParams.from_spec(hard.canonical()) == hard
    with pytest.raises(TuneError, match="hard must be an int >= 0, got -1"):
        TuneParams(hard=-1)


def test_a_spec_may_give_some_keys_and_an_int_for_a_float() -> None:
    params = TuneParams.from_spec("tune(epochs=1, lr=1, threads=1)")
    assert (params.epochs, params.lr, params.threads, params.batch) == (1, 1.0, 1, 16)
    assert isinstance(params.lr, float)
    assert params.canonical() == "tune(batch=16,epochs=1,lr=1.0,scale=20.0,threads=1,warmup=0.1)"


def test_a_spec_with_an_unknown_key_or_another_name_is_refused() -> None:
    assert TuneParams.from_spec("tune(batch=4)").batch == 4  # control
    with pytest.raises(TuneError, match=r"unknown parameter.*momentum") as raised:
        TuneParams.from_spec("tune(momentum=0.9)")
    assert "batch, epochs, hard, lr, scale, threads, warmup" in str(raised.value)
    with pytest.raises(TuneError, match="must be tune"):
        TuneParams.from_spec("rrf(batch=4)")
    with pytest.raises(TuneError, match="not valid syntax"):
        TuneParams.from_spec("tune(batch=")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("epochs", 0, "epochs must be an int >= 1"),
        ("epochs", 2.0, "epochs must be an int >= 1"),
        ("epochs", True, "epochs must be an int >= 1"),
        ("batch", 1, "batch must be an int >= 2"),
        ("threads", 0, "threads must be an int >= 1"),
        ("lr", 0.0, "lr must be > 0"),
        ("scale", -1.0, "scale must be > 0"),
        ("lr", float("nan"), "lr must be a finite number"),
        ("warmup", 1.0, r"warmup must be a fraction of the steps in \[0, 1\)"),
        ("warmup", -0.1, r"warmup must be a fraction"),
    ],
)
def test_out_of_range_params_are_refused(field: str, value: object, match: str) -> None:
    edge = TuneParams(epochs=1, batch=2, threads=1, warmup=0.0, lr=1e-9, scale=1e-9)  # control
    assert edge.warmup == 0.0
    with pytest.raises(TuneError, match=match):
        TuneParams(**{field: value})  # type: ignore[arg-type]


# --- training pairs from a real memory --------------------------------------------------------------

LONG = (
    "The queue drains through a worker pool of four. " * 20
)  # 960 chars: two chunks of one message


def example(qid: str, relevant: dict[str, int], unit: str = "message") -> Example:
    query = Query(text=f"question {qid}", scope=Scope.everywhere(), now=NOW)
    return Example(qid=qid, query=query, unit=unit, relevant=relevant)  # type: ignore[arg-type]


def test_training_pairs_join_each_question_to_every_chunk_holding_a_relevant_message(
    tmp_path: Path,
) -> None:
    root = tmp_path / "c"
    s1 = session(root, 1, 1, "why is the export late", "It waited on a lock.")  # 1-u, 1-a0
    s2 = session(root, 2, 5, "how is the queue drained", LONG)  # 2-u; 2-a0 split over two chunks
    s3 = session(root, 3, 9, "which port does staging use", "Staging listens on 6543.")
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([root])
    ids = [row[1] for row in memory.chunk_rows()]
    at = {(r.session_id, r.index): r for r in memory.chunks(ids, Scope.everywhere())}
    assert sorted(at) == [(s1, 0), (s2, 0), (s2, 1), (s2, 2), (s3, 0)]
    examples = [
        example("t/export", {"1-a0": 1}),
        example("t/queue", {"2-a0": 2, "3-u": 0}),  # grade 0: the staging chunk is no positive
        example("t/gone", {"9-u": 1}),  # no chunk holds it
        example("t/port", {"3-u": 1, "1-u": 1}),
    ]
    pairs, counts = training_pairs(memory, examples)

    def expect(qid: str, *keys: tuple[str, int]) -> list[Pair]:
        chunks = sorted((at[k] for k in keys), key=lambda r: r.id)
        return [Pair(qid=qid, query=f"question {qid}", chunk_id=r.id, text=r.text) for r in chunks]

    assert pairs == [
        *expect("t/export", (s1, 0)),
        *expect("t/port", (s1, 0), (s3, 0)),  # control: the staging chunk is reachable
        *expect("t/queue", (s2, 1), (s2, 2)),
    ]
    assert counts == {"examples": 4, "used": 3, "skipped_no_chunk": 1, "pairs": 5}
    assert pairs[0].text == "why is the export late\n\nIt waited on a lock."
    assert at[(s2, 1)].text + at[(s2, 2)].text == LONG.strip()


def test_training_pairs_refuse_session_unit_examples(tmp_path: Path) -> None:
    root = tmp_path / "c"
    s1 = session(root, 1, 1, "why is the export late", "It waited on a lock.")
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([root])
    assert training_pairs(memory, [example("t/a", {"1-u": 1})])[1]["pairs"] == 1  # control
    with pytest.raises(TuneError, match=r"message-unit rosters.*t/b"):
        training_pairs(memory, [example("t/b", {s1: 1}, unit="session")])


class PoolReads:
    """Stands in for a training memory with two fixed pools: BM25 finds a, b, c and the cosine c, d, a."""

    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        return [Scored(chunk_id=c, score=s) for c, s in (("a", 3.0), ("b", 2.0), ("c", 1.0))][
            :limit
        ]

    def embed_query(self, text: str) -> np.ndarray:
        return np.zeros(2, dtype=np.float32)

    def nearest(
        self, vector: np.ndarray, scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        return [Scored(chunk_id=c, score=s) for c, s in (("c", 0.9), ("d", 0.8), ("a", 0.7))][
            :limit
        ]

    def chunks(self, ids: list[str], scope: Scope) -> list[SimpleNamespace]:
        return [SimpleNamespace(id=c, text=f"text {c}") for c in ids]


def test_hard_negatives_are_the_fusion_s_best_chunks_that_hold_no_evidence() -> None:
    # rrf with k = 60: a 1/61 + 1/63 = 0.032266, c 1/63 + 1/61 = 0.032266 (tie: a before c),
    # b 1/62 = 0.016129, d 1/62 (tie: b before d). Order a, c, b, d.
    reads: Any = PoolReads()
    ex = example("t/q", {"1-u": 1})
    assert [n.chunk_id for n in hard_negatives(reads, ex, set(), 4)] == ["a", "c", "b", "d"]
    mined = hard_negatives(reads, ex, {"a"}, 2)  # a holds the evidence: never a negative
    assert mined == (Negative("c", "text c"), Negative("b", "text b"))
    assert [n.chunk_id for n in hard_negatives(reads, ex, {"a", "b"}, 10)] == ["c", "d"]


def test_training_pairs_carry_their_question_s_negatives_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "c"
    session(root, 1, 1, "why is the export late", "It waited on a lock.")
    session(root, 2, 5, "when does the export run", "The export runs at two.")
    session(root, 3, 9, "which port does staging use", "Staging listens on 6543.")
    memory = Memory(tmp_path / "m.db", HashEmbedder(64))
    memory.import_paths([root])
    query = Query(text="export late", scope=Scope.everywhere(), now=NOW)
    examples = [Example(qid="t/x", query=query, unit="message", relevant={"1-u": 1})]
    plain, counts = training_pairs(memory, examples)
    assert plain[0].negatives == ()
    assert "negatives" not in counts
    pairs, counts = training_pairs(memory, examples, hard=1)
    ((only,),) = [p.negatives for p in pairs]
    assert only.text == "when does the export run\n\nThe export runs at two."  # BM25 finds "export"
    assert only.chunk_id != pairs[0].chunk_id
    assert counts["negatives"] == 1
    assert {p.chunk_id for p in plain} == {p.chunk_id for p in pairs}  # control: the same positives


def test_fine_tuning_needs_two_pairs_before_it_loads_a_model() -> None:
    with pytest.raises(TuneError, match="at least 2 training pairs, got 1"):
        fine_tune([pair("q1", "c1")], TuneParams(), 0, base_dir=Path("/nonexistent"))


# --- a real fit ---------------------------------------------------------------------------------------

FIT_PAIRS = [
    Pair(qid=f"t/{n}", query=q, chunk_id=f"c{n}", text=t)
    for n, (q, t) in enumerate(
        [
            (
                "Why is the nightly export late?",
                "The export waited on a lock; it takes a lease now.",
            ),
            (
                "Why did the login page break?",
                "The login page lost its CSRF token after the upgrade.",
            ),
            ("How is the queue drained?", "The queue drains through a worker pool of four."),
            ("Which port does staging use?", "Staging Postgres listens on 6543 behind pgbouncer."),
            (
                "What broke the nightly build?",
                "A flaky snapshot test in the renderer failed twice.",
            ),
            (
                "Where are feature flags kept?",
                "Feature flags live in a YAML file under config/flags.",
            ),
        ]
    )
]


def own_cosine(queries: np.ndarray, texts: np.ndarray) -> float:
    """The mean cosine of each (unit) query vector to its own text's."""
    return float(np.mean(np.sum(queries * texts, axis=1)))


@pytest.mark.model
def test_a_fit_is_deterministic_and_pulls_each_question_towards_its_text(tmp_path: Path) -> None:
    params = TuneParams(epochs=1, batch=3, threads=1)
    queries, texts = [p.query for p in FIT_PAIRS], [p.text for p in FIT_PAIRS]
    base = load_sentence_transformer(minilm_model_dir())
    base_sha = weights_sha256(base)
    before = own_cosine(
        base.encode(queries, normalize_embeddings=True),
        base.encode(texts, normalize_embeddings=True),
    )
    del base
    threads = torch.get_num_threads()

    first = fine_tune(FIT_PAIRS, params, 7)
    assert torch.get_num_threads() == threads  # restored after a fit at one thread
    assert not first.training
    sha = fit_encoder(FIT_PAIRS, params, 7, cache=tmp_path)
    assert weights_sha256(first) == sha  # same pairs, params and seed: the same weights
    assert sha != base_sha  # control: the fit changed them
    assert weights_sha256(fine_tune(FIT_PAIRS, params, 8)) != sha  # and the seed matters

    tuned = TunedEmbedder(sha, cache=tmp_path)
    after = own_cosine(tuned.embed(queries), tuned.embed(texts))
    assert after > before + 0.01


@pytest.mark.model
def test_a_fit_with_hard_negatives_is_deterministic_and_uses_them() -> None:
    distractor = "The nightly export and the login page were both fine after the upgrade."
    pairs = [
        replace(
            p, negatives=(Negative(f"n{n}", distractor), Negative(f"m{n}", FIT_PAIRS[n - 1].text))
        )
        for n, p in enumerate(FIT_PAIRS)
    ]
    hard = TuneParams(epochs=1, batch=3, threads=1, hard=2)
    sha = weights_sha256(fine_tune(pairs, hard, 7))
    assert (
        weights_sha256(fine_tune(pairs, hard, 7)) == sha
    )  # same pairs, params, seed: same weights
    plain = TuneParams(epochs=1, batch=3, threads=1)
    # Control: the same pairs without `hard` train on in-batch negatives alone, to other weights.
    assert weights_sha256(fine_tune(pairs, plain, 7)) != sha

"""Fine-tuning the encoder: the in-batch-negatives loss by hand, the training spec, the pairs a real
memory yields, and a real (tiny) fit that is deterministic and pulls questions towards their texts."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import torch

from arms.base import Query
from arms.fitting import Example
from engine.embed import HashEmbedder
from engine.embed_common import minilm_model_dir
from engine.memory import Memory
from engine.scope import Scope
from engine.tuned_embed import TunedEmbedder, load_sentence_transformer, weights_sha256
from harness.tune import (
    Pair,
    TuneError,
    TuneParams,
    batch_loss,
    fine_tune,
    fit_encoder,
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
    with pytest.raises(TuneError, match="one shape"):
        batch_loss(eye, torch.eye(3), 1.0, NO_MASK)
    with pytest.raises(TuneError, match=r"mask\[i, i\]"):
        batch_loss(eye, eye, 1.0, torch.eye(2, dtype=torch.bool))


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
    values = {"epochs": 2, "lr": 2e-05, "batch": 16, "scale": 20.0, "warmup": 0.1, "threads": 2}
    assert params.to_dict() == values
    assert json.loads(json.dumps(params.to_dict())) == values


def test_a_spec_may_give_some_keys_and_an_int_for_a_float() -> None:
    params = TuneParams.from_spec("tune(epochs=1, lr=1, threads=1)")
    assert (params.epochs, params.lr, params.threads, params.batch) == (1, 1.0, 1, 16)
    assert isinstance(params.lr, float)
    assert params.canonical() == "tune(batch=16,epochs=1,lr=1.0,scale=20.0,threads=1,warmup=0.1)"


def test_a_spec_with_an_unknown_key_or_another_name_is_refused() -> None:
    assert TuneParams.from_spec("tune(batch=4)").batch == 4  # control
    with pytest.raises(TuneError, match=r"unknown parameter.*momentum") as raised:
        TuneParams.from_spec("tune(momentum=0.9)")
    assert "batch, epochs, lr, scale, threads, warmup" in str(raised.value)
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

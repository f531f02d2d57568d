"""Fitted arms in the registry: gold grades, a fitted arm built only from a model, fit dispatch."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from arms import registry
from arms.base import Hit, Query
from arms.fitting import Example, FitError, Fitted
from arms.registry import RegistryError
from engine.api import ChunkRecord, ReadAPI
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory
from tests.engine.records import chunk_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def record(cid: str, session: str, uuids: tuple[str, ...]) -> ChunkRecord:
    return chunk_record(cid, session, uuids)


def test_a_chunk_is_graded_by_its_session_or_its_best_message() -> None:
    query = Query(text="where", scope=Scope.everywhere(), now=NOW)
    by_session = Example(qid="q", query=query, unit="session", relevant={"s1": 2})
    by_message = Example(qid="q", query=query, unit="message", relevant={"m1": 1, "m3": 3})
    assert by_session.grade(record("c", "s1", ("m9",))) == 2
    assert by_session.grade(record("c", "s2", ("m1",))) == 0  # its message is no session
    assert by_message.grade(record("c", "s1", ("m1", "m3"))) == 3  # the best of its messages
    assert by_message.grade(record("c", "s1", ("m2",))) == 0
    with pytest.raises(FitError, match="unit must be"):
        Example(qid="q", query=query, unit="chunk", relevant={})  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class ToyParams:
    boost: float = 1.0


class ToyArm:
    """Returns one hit whose score is the fitted weight times `boost`."""

    name = "toy_fitted"

    def __init__(self, memory: ReadAPI, params: ToyParams, model: Mapping[str, Any]) -> None:
        self.params, self.weight = params, float(model["weight"])

    def search(self, query: Query) -> list[Hit]:
        return [Hit(chunk_id="c1", score=self.weight * self.params.boost, via="toy")]


def toy_fit(memory: ReadAPI, params: ToyParams, examples: tuple[Example, ...], seed: int) -> Fitted:
    # weight = number of gold units over all examples + seed (so both reach the model)
    return Fitted(
        features=("none",),
        model={"weight": sum(len(e.relevant) for e in examples) + seed},
        counts={"examples": len(examples)},
    )


@pytest.fixture
def toy() -> Iterator[str]:
    registry.register("toy_fitted", ToyArm, ToyParams, "A toy fitted arm.", fit=toy_fit)
    try:
        yield "toy_fitted"
    finally:
        registry._REGISTRY.pop("toy_fitted")


def test_a_fitted_arm_runs_only_from_its_model(toy: str) -> None:
    memory = FakeMemory()
    query = Query(text="where", scope=Scope.everywhere(), now=NOW)
    examples = (
        Example(qid="a", query=query, unit="session", relevant={"s1": 1, "s2": 1}),
        Example(qid="b", query=query, unit="session", relevant={"s3": 1}),
    )
    fitted = registry.fit("toy_fitted(boost=2.0)", memory, examples, seed=4)
    assert dict(fitted.model) == {"weight": 7}  # 3 gold units + seed 4
    assert registry.is_fitted("toy_fitted()")
    assert not registry.is_fitted("rrf()")
    with pytest.raises(RegistryError, match="is fitted: it runs only from a fitted model"):
        registry.build("toy_fitted(boost=2.0)", memory)
    arm = registry.build("toy_fitted(boost=2.0)", memory, fitted.model)
    assert arm.search(query) == [Hit(chunk_id="c1", score=14.0, via="toy")]  # 7 * 2.0
    # positive control: an arm that is not fitted builds without a model, and refuses one
    assert registry.build("rrf()", memory).name == "rrf"
    with pytest.raises(RegistryError, match="is not fitted; it takes no model"):
        registry.build("rrf()", memory, {"weight": 1})
    with pytest.raises(RegistryError, match="is not fitted; fitted arms: ltr, ltrb, toy_fitted"):
        registry.fit("rrf()", memory, examples, seed=0)

"""`perf.embed_rates.measure_embed_rates` takes each form's passes in turns and reports medians: a burst
of load on one pass changes neither a rate nor a speed-up."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from perf import embed_rates


class Clocked:
    """An embedder whose passes take scripted seconds on a shared fake clock."""

    def __init__(self, clock: list[float], passes: Sequence[float], value: float) -> None:
        self._clock, self._passes, self._value = clock, list(passes), value
        self.calls = 0

    @property
    def id(self) -> str:
        return f"fake-{self._value}"

    @property
    def dim(self) -> int:
        return 2

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if len(texts) > 8:  # a timed pass (the 8-text call is the untimed load)
            self._clock[0] += self._passes[self.calls]
            self.calls += 1
        row = np.asarray([self._value, np.sqrt(1.0 - self._value**2)], dtype=np.float32)
        return np.tile(row, (len(texts), 1))


def test_rates_and_speedups_are_medians_of_passes_taken_in_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]
    monkeypatch.setattr(embed_rates, "_clock", lambda: clock[0])
    # 10 texts. torch's second pass hits a burst (4 s instead of 2 s); fp32 takes 1 s each time.
    torch = Clocked(clock, [2.0, 4.0, 2.0], 1.0)
    fp32 = Clocked(clock, [1.0, 1.0, 1.0], 0.6)
    out = embed_rates.measure_embed_rates(
        [f"text {i}" for i in range(10)], rounds=3, forms={"torch": torch, "onnx_fp32": fp32}
    )
    assert (torch.calls, fp32.calls) == (3, 3)
    assert out["rounds"] == 3
    # torch: 5, 2.5, 5 chunks/s -> median 5.0; fp32: 10 each time.
    assert out["torch"]["chunks_per_s_rounds"] == [5.0, 2.5, 5.0]
    assert out["torch"]["chunks_per_s"] == 5.0
    assert out["onnx_fp32"]["chunks_per_s"] == 10.0
    # per-pass ratios 2/1, 4/1, 2/1 -> median 2.0 (the burst does not make it 2.67)
    assert out["onnx_fp32"]["speedup_vs_torch"] == 2.0
    # cosine of (1, 0) and (0.6, 0.8) is 0.6
    assert out["onnx_fp32"]["cosine_to_torch"]["min"] == pytest.approx(0.6)
    assert "speedup_vs_torch" not in out["torch"]
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        embed_rates.measure_embed_rates(["a"], rounds=0, forms={"torch": torch})


def test_main_with_no_queries_reports_the_rates_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = ["one two three", "four five six seven", "eight"]
    loads: list[tuple[list[str], str]] = []
    real_load = embed_rates.measure_query_load
    monkeypatch.setattr(embed_rates, "chunk_texts", lambda work, count: texts[:count])
    monkeypatch.setattr(embed_rates, "measure_embed_rates", lambda t, b: {"texts": len(t)})

    def load(queries: Sequence[str], variant: str) -> dict[str, object]:
        loads.append((list(queries), variant))
        return {"queries": len(queries)}

    monkeypatch.setattr(embed_rates, "measure_query_load", load)
    assert embed_rates.main(["--texts", "3", "--queries", "0"]) == 0
    assert json.loads(capsys.readouterr().out) == {"rates": {"texts": 3}}
    assert loads == []
    # Control: two queries, the first 12 words of the first two texts, once per variant.
    assert embed_rates.main(["--texts", "3", "--queries", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["query_fp32"] == report["query_int8"] == {"queries": 2}
    assert loads == [(texts[:2], "fp32"), (texts[:2], "int8")]
    with pytest.raises(SystemExit):
        embed_rates.main(["--texts", "3", "--queries", "-1"])
    with pytest.raises(ValueError, match="at least one query"):
        real_load([], "fp32")

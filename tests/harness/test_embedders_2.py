"""embedders-2: the int8 question with non-inferiority gates; its shape, its lock, its committed run, and
the registered protocols it must leave as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.gates import GateResult, choose_ship
from harness.protocol.load import load_protocol
from harness.protocol.lock import load_lock, lock_path, verify
from harness.protocol.model import Verdict
from harness.seal import canonical_json_bytes

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "protocols" / "embedders-2.toml"
FP32_RRF = "rrf(min_score=0.2,pool=20,rrf_k=60)"
INT8 = "@minilm-l6-v2-int8"
ROSTERS = ("receipts", "decisions", "multihop", "temporal", "negatives", "corrections")


def _run(protocol_id: str) -> Path:
    (folder,) = sorted((ROOT / "results" / protocol_id).glob("*/summary.json"))
    return folder.parent


def _gates(protocol_id: str) -> dict[str, GateResult]:
    data = json.loads((_run(protocol_id) / "summary.json").read_text(encoding="utf-8"))
    return {g["id"]: GateResult.from_dict(g) for g in data["gates"]}


def test_embedders_2_changes_only_the_gate_kind_of_embedders_1() -> None:
    two = load_protocol(PATH)
    one = load_protocol(ROOT / "protocols" / "embedders-1.toml")
    assert (two.rosters, two.corpus, two.arms, two.metrics, two.stats) == (
        one.rosters,
        one.corpus,
        one.arms,
        one.metrics,
        one.stats,
    )
    assert (two.embedder, two.embedders) == (one.embedder, one.embedders)
    assert [(g.roster, g.metric, g.margin, g.test) for g in two.gates] == [
        (g.roster, g.metric, g.margin, g.test) for g in one.gates
    ]
    for new, old in zip(two.gates, one.gates, strict=True):
        # embedders-1 tested harm (fp32 vs int8); embedders-2 tests int8 against fp32.
        assert (new.kind, old.kind) == ("non-inferiority", "superiority")
        assert (new.treatment, new.baseline) == (old.baseline, old.treatment)
        assert new.treatment.endswith(INT8)
        assert new.baseline == new.treatment.removesuffix(INT8)
    text = PATH.read_text(encoding="utf-8")
    assert "WRITTEN AFTER EMBEDDERS-1'S RESULTS WERE SEEN" in text
    assert "results/embedders-1/20261201T102339Z-9a1e8fe9/" in text


def test_int8_rrf_ships_only_when_all_six_rrf_gates_pass() -> None:
    protocol = load_protocol(PATH)
    (rule,) = protocol.ship.rules
    assert rule.arm == FP32_RRF + INT8
    assert dict(rule.when) == {f"NI-rrf-{r}": ("PASS",) for r in ROSTERS}
    assert protocol.ship.default == FP32_RRF
    passing: dict[str, Verdict] = {g.id: "PASS" for g in protocol.gates}
    assert choose_ship(protocol.ship, passing) == FP32_RRF + INT8
    # One NULL rrf gate keeps fp32; a NULL vector gate does not.
    assert choose_ship(protocol.ship, {**passing, "NI-rrf-temporal": "NULL"}) == FP32_RRF
    assert choose_ship(protocol.ship, {**passing, "NI-vector-multihop": "NULL"}) == FP32_RRF + INT8


@pytest.mark.parametrize(
    "name", ["default", "default-2", "default-3", "arms-v2", "embedders-1", "embedders-2"]
)
def test_registered_protocols_load_verify_and_keep_their_locks_byte_for_byte(name: str) -> None:
    path = ROOT / "protocols" / f"{name}.toml"
    protocol = load_protocol(path)
    lock = load_lock(path)
    assert lock is not None
    assert canonical_json_bytes(lock.to_dict()) == lock_path(path).read_bytes()
    assert protocol.sha256 == lock.current_sha256
    assert (
        verify(path, manifest_sha256=lock.current_manifest_sha256, seals=lock.current_seals) == []
    )


def test_the_committed_run_follows_the_non_inferiority_rule_and_keeps_fp32_rrf() -> None:
    gates = _gates("embedders-2")
    assert len(gates) == 12
    for g in gates.values():
        low, high = float(g.statistic["ci_low"] or 0), float(g.statistic["ci_high"] or 0)
        assert g.statistic["ni_bound"] == -0.02
        expected = "PASS" if low > -0.02 else "FAIL" if high < -0.02 else "NULL"
        assert g.verdict == expected, g.id
    assert {i for i, g in gates.items() if g.verdict == "NULL"} == {
        "NI-rrf-decisions",
        "NI-rrf-multihop",
        "NI-rrf-temporal",
        "NI-vector-multihop",
    }
    temporal = gates["NI-rrf-temporal"]
    assert dict(temporal.counts) == {"n": 32, "wins": 0, "losses": 3, "ties": 29}
    assert temporal.statistic["mean_diff"] == pytest.approx(-3 / 32)
    summary = json.loads((_run("embedders-2") / "summary.json").read_text(encoding="utf-8"))
    assert summary["shipped_arm"] == FP32_RRF
    assert summary["deviations"] == []
    report = (_run("embedders-2") / "report.md").read_text(encoding="utf-8")
    assert (
        "| NI-rrf-temporal | **NULL** | rrf#2 vs rrf | recall@5 | Δ=-0.094 CI [-0.219, 0.000], "
        "non-inferiority bound -0.020 | 32 |"
    ) in report


def test_the_committed_run_re_reads_embedders_1s_evidence() -> None:
    # Same per-question scores, so every CI of int8 - fp32 mirrors embedders-1's CI of fp32 - int8.
    assert (_run("embedders-2") / "per_query.csv").read_bytes() == (
        _run("embedders-1") / "per_query.csv"
    ).read_bytes()
    one = _gates("embedders-1")
    for gate_id, g in _gates("embedders-2").items():
        old = one["L" + gate_id.removeprefix("NI")]
        assert g.statistic["mean_diff"] == pytest.approx(-float(old.statistic["mean_diff"] or 0))
        assert g.statistic["ci_low"] == pytest.approx(-float(old.statistic["ci_high"] or 0))
        assert g.statistic["ci_high"] == pytest.approx(-float(old.statistic["ci_low"] or 0))
        assert (g.counts["wins"], g.counts["losses"]) == (old.counts["losses"], old.counts["wins"])

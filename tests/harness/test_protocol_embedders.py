"""Extra embedders in a protocol: the `@<id>` arm suffix, `embedders`, their checks, the lock, and the
committed protocols that predate them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine.embed as embed_module
from arms.registry import full_canonical
from engine.embed import HashEmbedder, register_embedder
from harness.protocol.arm_embedder import ArmEntry, arm_canonical, split_arm
from harness.protocol.load import load_protocol
from harness.protocol.lock import amend, load_lock, lock_path, register, verify
from harness.protocol.model import ProtocolError
from harness.seal import canonical_json_bytes
from tests.harness.test_protocol import MANIFEST, NOW, PROTOCOL, SEALS, _write

ROOT = Path(__file__).resolve().parents[2]
PINNED = 'embedder = "hash-256-v1"\n'
ARMS = 'arms = ["rrf(pool=20,rrf_k=60)", "walk(hops=2)", "vector(pool=20)"]\n'
EXTRA_ARMS = (
    'arms = ["rrf(pool=20,rrf_k=60)", "walk(hops=2)", "vector(pool=20)", '
    '"vector(pool=20)@hash-64-v1"]\n'
)
EXTRA = PROTOCOL.replace(PINNED, PINNED + 'embedders = ["hash-64-v1"]\n').replace(ARMS, EXTRA_ARMS)


@pytest.fixture
def hash64(monkeypatch: pytest.MonkeyPatch) -> str:
    """A second, cheap embedder registered as `hash64` (id hash-64-v1) for this test only."""
    monkeypatch.setattr(embed_module, "_REGISTRY", dict(embed_module._REGISTRY))
    register_embedder("hash64", lambda: HashEmbedder(dim=64))
    return "hash-64-v1"


def _register(path: Path) -> None:
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)


def test_an_arm_entry_splits_into_its_spec_and_the_embedder_it_names() -> None:
    assert split_arm("vector(pool=20)@hash-64-v1") == ArmEntry(
        spec="vector(pool=20)", embedder="hash-64-v1"
    )
    assert split_arm("none@hash-64-v1") == ArmEntry(spec="none", embedder="hash-64-v1")
    assert split_arm("vector(pool=20)") == ArmEntry(spec="vector(pool=20)")
    # An @ inside a quoted value is part of the spec, never a suffix; after the spec it is one.
    assert split_arm("fts(score='a@b')") == ArmEntry(spec="fts(score='a@b')")
    assert split_arm("fts(score='a@b')@hash-64-v1").embedder == "hash-64-v1"
    assert split_arm("vector(pool=20)@hash-64-v1").entry == "vector(pool=20)@hash-64-v1"
    assert arm_canonical("vector(pool=20)@hash-64-v1") == (
        full_canonical("vector(pool=20)") + "@hash-64-v1"
    )
    assert arm_canonical("vector(pool=20)") == full_canonical("vector(pool=20)")


def test_extra_embedders_parse_and_each_arm_runs_over_the_one_it_names(tmp_path: Path) -> None:
    protocol = load_protocol(_write(tmp_path, EXTRA))
    assert protocol.embedder == "hash-256-v1"
    assert protocol.embedders == ("hash-64-v1",)
    assert [protocol.arm_embedder(a) for a in protocol.arms] == [
        "hash-256-v1",
        "hash-256-v1",
        "hash-256-v1",
        "hash-64-v1",
    ]
    # control: a protocol without the list has none, and every arm runs over the pinned embedder
    plain = load_protocol(_write(tmp_path, PROTOCOL))
    assert plain.embedders == ()
    assert {plain.arm_embedder(a) for a in plain.arms} == {"hash-256-v1"}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t.replace(PINNED, ""),
            "embedders ['hash-64-v1'] are extra embedders, but the protocol pins none",
        ),
        (
            lambda t: t.replace(
                'embedders = ["hash-64-v1"]', 'embedders = ["hash-64-v1", "hash-256-v1"]'
            ),
            "embedders lists hash-256-v1, the pinned embedder; list only the extra ones",
        ),
        (
            lambda t: t.replace("@hash-64-v1", "@hash-32-v1"),
            "names embedder hash-32-v1, which is not an extra embedder; add it to embedders, "
            "or name one of ['hash-64-v1']",
        ),
        (
            lambda t: t.replace('"vector(pool=20)@hash-64-v1"', '"rrf(pool=20)@hash-256-v1"'),
            "names embedder hash-256-v1, which is not an extra embedder; hash-256-v1 is the pinned "
            "embedder: drop the suffix",
        ),
        (
            lambda t: t.replace(', "vector(pool=20)@hash-64-v1"', ""),
            "embedders ['hash-64-v1'] are listed but no arm names them",
        ),
        (
            lambda t: t.replace('embedders = ["hash-64-v1"]\n', ""),
            "names embedder hash-64-v1, which is not an extra embedder; add it to embedders, or "
            "name none: the protocol lists no embedders",
        ),
        (
            lambda t: t.replace('"vector(pool=20)@hash-64-v1"', '"ltr()@hash-64-v1"'),
            # a fitted arm may rank by an extra embedder, but like any fitted arm it needs a fit
            "fitted arm(s) ['ltr()@hash-64-v1'] have no [[fits]] entry",
        ),
        (lambda t: t.replace('["hash-64-v1"]', '["hash 64"]'), "$.embedders[0]"),
    ],
)
def test_inconsistent_extra_embedders_are_refused_at_load(
    tmp_path: Path, edit: object, expected: str
) -> None:
    assert callable(edit)
    with pytest.raises(ProtocolError) as err:
        load_protocol(_write(tmp_path, edit(EXTRA)))
    assert expected in str(err.value)
    # positive control: the unedited protocol loads
    assert load_protocol(_write(tmp_path, EXTRA)).embedders == ("hash-64-v1",)


def test_gates_and_ship_rules_name_the_arm_with_its_embedder(tmp_path: Path) -> None:
    gate = 'treatment = "walk(hops=2)"\nbaseline = "rrf(pool=20,rrf_k=60)"'
    named = 'treatment = "vector(pool=20)"\nbaseline = "vector(pool=20)@hash-64-v1"'
    protocol = load_protocol(_write(tmp_path, EXTRA.replace(gate, named)))
    assert protocol.gate("M").baseline == "vector(pool=20)@hash-64-v1"
    unknown = EXTRA.replace(gate, named.replace("@hash-64-v1", "@hash-32-v1"))
    with pytest.raises(
        ProtocolError, match=r"baseline 'vector\(pool=20\)@hash-32-v1' is not in arms"
    ):
        load_protocol(_write(tmp_path, unknown))


def test_register_pins_every_extra_embedder_in_the_lock(tmp_path: Path, hash64: str) -> None:
    path = _write(tmp_path, EXTRA)
    _register(path)
    data = json.loads(lock_path(path).read_text(encoding="utf-8"))
    assert (data["embedder"], data["embedders"]) == ("hash-256-v1", [hash64])
    lock = load_lock(path)
    assert lock is not None
    assert lock.current_embedders == (hash64,)
    assert canonical_json_bytes(lock.to_dict()) == lock_path(path).read_bytes()
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


def test_register_refuses_an_extra_embedder_no_registered_embedder_reports(tmp_path: Path) -> None:
    path = _write(tmp_path, EXTRA)  # hash-64-v1 is not registered in this test
    with pytest.raises(ProtocolError) as err:
        _register(path)
    assert "pins embedder 'hash-64-v1', which no registered embedder reports" in str(err.value)
    assert "hash-256-v1 (RECALLBENCH_EMBEDDER=hash)" in str(err.value)
    assert not lock_path(path).exists()


def test_an_edited_extra_embedder_is_a_named_mismatch_with_both_ids(
    tmp_path: Path, hash64: str
) -> None:
    path = _write(tmp_path, EXTRA)
    _register(path)
    lock_file = lock_path(path)
    original = lock_file.read_bytes()
    data = json.loads(original)
    data["embedders"] = ["minilm-l6-v2-int8"]
    lock_file.write_bytes(canonical_json_bytes(data))
    (mismatch,) = verify(path, manifest_sha256=MANIFEST, seals=SEALS)
    assert mismatch.thing == "embedder"
    assert mismatch.message.startswith(
        f"Expected embedder id of {path} (embedders) to be minilm-l6-v2-int8 but got hash-64-v1"
    )
    # The other way round: the lock is intact, the protocol's list was edited after registration.
    lock_file.write_bytes(original)
    edited = EXTRA.replace("hash-64-v1", "minilm-l6-v2-int8")
    path.write_text(edited, encoding="utf-8")
    things = {m.thing: m for m in verify(path, manifest_sha256=MANIFEST, seals=SEALS)}
    assert sorted(things) == ["embedder", "protocol"]
    assert "to be hash-64-v1 but got minilm-l6-v2-int8" in things["embedder"].message


def test_an_amendment_may_add_an_extra_embedder_and_the_lock_records_it(
    tmp_path: Path, hash64: str
) -> None:
    path = _write(tmp_path, PROTOCOL)
    _register(path)
    assert "embedders" not in json.loads(lock_path(path).read_text(encoding="utf-8"))
    path.write_text(EXTRA, encoding="utf-8")
    assert [m.thing for m in verify(path, manifest_sha256=MANIFEST, seals=SEALS)] == [
        "protocol",
        "embedder",
    ]
    lock = amend(path, NOW, "compare the smaller hash embedder", has_runs=False)
    assert (lock.embedders, lock.current_embedders) == ((), (hash64,))
    assert lock.to_dict()["amendments"][0]["embedders"] == [hash64]
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


@pytest.mark.parametrize("name", ["default", "default-2", "default-3", "arms-v2"])
def test_committed_protocols_without_extra_embedders_still_verify_byte_for_byte(name: str) -> None:
    path = ROOT / "protocols" / f"{name}.toml"
    protocol = load_protocol(path)
    assert protocol.embedders == ()
    assert all(split_arm(a).embedder is None for a in protocol.arms)
    lock = load_lock(path)
    assert lock is not None
    assert lock.current_embedders == ()
    assert "embedders" not in lock.to_dict()
    assert canonical_json_bytes(lock.to_dict()) == lock_path(path).read_bytes()
    assert protocol.sha256 == lock.current_sha256
    assert (
        verify(path, manifest_sha256=lock.current_manifest_sha256, seals=lock.current_seals) == []
    )


def test_the_locomo_template_loads_as_before() -> None:
    protocol = load_protocol(ROOT / "protocols" / "locomo.toml")
    assert protocol.embedders == ()
    plain = [a for a in protocol.arms if split_arm(a).embedder is None]
    assert {protocol.arm_embedder(a) for a in plain} == {"minilm-l6-v2"}
    # the two arms that name an embedder name the template's fine-tuned encoder, no extra one
    named = {split_arm(a).embedder for a in protocol.arms} - {None}
    assert named == {e.name for e in protocol.encoders} == {"minilm-l6-v2-tuned"}


def test_embedders_1_pins_fp32_and_int8_and_compares_each_arm_over_both() -> None:
    path = ROOT / "protocols" / "embedders-1.toml"
    protocol = load_protocol(path)
    assert (protocol.embedder, protocol.embedders) == ("minilm-l6-v2", ("minilm-l6-v2-int8",))
    assert [split_arm(a) for a in protocol.arms] == [
        ArmEntry(spec="vector(min_score=0.2,pool=20)"),
        ArmEntry(spec="rrf(min_score=0.2,pool=20,rrf_k=60)"),
        ArmEntry(spec="vector(min_score=0.2,pool=20)", embedder="minilm-l6-v2-int8"),
        ArmEntry(spec="rrf(min_score=0.2,pool=20,rrf_k=60)", embedder="minilm-l6-v2-int8"),
    ]
    rosters = [r.name for r in protocol.rosters]
    assert len(protocol.gates) == 2 * len(rosters) == 12
    for gate in protocol.gates:
        assert (gate.metric, gate.test, gate.margin) == ("recall@5", "bootstrap", 0.02)
        assert gate.baseline == f"{gate.treatment}@minilm-l6-v2-int8"
    (rule,) = protocol.ship.rules
    assert rule.arm == "rrf(min_score=0.2,pool=20,rrf_k=60)@minilm-l6-v2-int8"
    assert dict(rule.when) == {g.id: ("FAIL", "NULL") for g in protocol.gates}
    assert protocol.ship.default == "rrf(min_score=0.2,pool=20,rrf_k=60)"
    # the same sealed rosters and corpus as default-3
    default3 = load_protocol(ROOT / "protocols" / "default-3.toml")
    assert protocol.rosters == default3.rosters
    assert protocol.corpus == default3.corpus

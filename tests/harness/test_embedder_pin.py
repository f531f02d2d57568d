"""The embedder is part of the protocol: ids, registration, the lock, tampering, older protocols."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.embed import MiniLMEmbedder, get_embedder
from engine.onnx_embed import OnnxMiniLMEmbedder
from harness.protocol import embedder as pin
from harness.protocol.load import load_protocol
from harness.protocol.lock import amend, load_lock, lock_path, register, verify
from harness.protocol.model import ProtocolError
from harness.seal import canonical_json_bytes
from tests.harness.test_protocol import MANIFEST, NOW, PROTOCOL, SEALS, _write

ROOT = Path(__file__).resolve().parents[2]
PINNED = 'embedder = "hash-256-v1"\n'
UNPINNED = PROTOCOL.replace(PINNED, "")


def _register(path: Path) -> None:
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)


def test_registry_names_map_to_the_ids_embedders_report_without_loading_a_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[MiniLMEmbedder] = []
    onnx: list[OnnxMiniLMEmbedder] = []
    real = get_embedder

    def spy(name: str) -> object:
        made = real(name)
        if isinstance(made, MiniLMEmbedder):
            built.append(made)
        if isinstance(made, OnnxMiniLMEmbedder):
            onnx.append(made)
        return made

    monkeypatch.setattr(pin, "get_embedder", spy)
    assert pin.registry_ids() == {
        "hash": "hash-256-v1",
        "minilm": "minilm-l6-v2",
        "minilm-int8": "minilm-l6-v2-int8",
        "minilm-torch": "minilm-l6-v2",
    }
    assert len(built) == 1
    assert built[0]._model is None  # the id came from the class; no weights were read
    assert len(onnx) == 2
    assert [e._loaded for e in onnx] == [None, None]  # no ONNX model was exported or loaded
    # Two names report minilm-l6-v2 (ONNX and torch give the same vectors): the default wins.
    assert pin.name_for("minilm-l6-v2") == "minilm"
    assert pin.name_for("minilm-l6-v2-int8") == "minilm-int8"
    assert pin.name_for("hash-256-v1") == "hash"
    assert pin.name_for("minilm") is None  # a registry name is not an id
    assert pin.use_hint("hash-256-v1") == "set RECALLBENCH_EMBEDDER=hash"
    assert pin.use_hint("minilm-l6-v2").startswith("unset RECALLBENCH_EMBEDDER")
    # int8 is another experiment: its own id, reached by its own name, never the default's.
    assert pin.use_hint("minilm-l6-v2-int8") == "set RECALLBENCH_EMBEDDER=minilm-int8"


def test_live_embedder_is_the_override_then_the_environment_then_minilm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert pin.live_embedder().id == "hash-256-v1"  # conftest sets RECALLBENCH_EMBEDDER=hash
    assert pin.live_embedder("minilm").id == "minilm-l6-v2"
    monkeypatch.delenv("RECALLBENCH_EMBEDDER")
    assert pin.live_name() == "minilm"
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "glove")
    with pytest.raises(
        pin.EmbedderChoiceError, match=r"\$RECALLBENCH_EMBEDDER names embedder 'glove'"
    ):
        pin.live_embedder()


def test_the_protocol_names_its_embedder_and_the_schema_checks_the_value(tmp_path: Path) -> None:
    assert load_protocol(_write(tmp_path)).embedder == "hash-256-v1"
    assert load_protocol(_write(tmp_path, UNPINNED)).embedder is None  # older protocols load
    with pytest.raises(ProtocolError, match=r"\$\.embedder"):
        load_protocol(_write(tmp_path, PROTOCOL.replace(PINNED, 'embedder = "hash 256"\n')))


def test_register_refuses_a_protocol_without_an_embedder_and_names_the_line_to_add(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, UNPINNED)
    with pytest.raises(ProtocolError) as err:
        _register(path)
    message = str(err.value)
    assert "receipts.toml names no embedder" in message
    assert '\n  embedder = "hash-256-v1"\n' in message  # what this machine would run with
    assert "minilm-l6-v2 (RECALLBENCH_EMBEDDER=minilm)" in message
    assert not lock_path(path).exists()
    # positive control: the same protocol with the line registers, and the lock pins the id
    path.write_text(PROTOCOL, encoding="utf-8")
    _register(path)
    data = json.loads(lock_path(path).read_text(encoding="utf-8"))
    assert data["embedder"] == "hash-256-v1"
    lock = load_lock(path)
    assert lock is not None
    assert lock.current_embedder == "hash-256-v1"


def test_register_refuses_a_registry_name_in_place_of_an_id(tmp_path: Path) -> None:
    path = _write(tmp_path, PROTOCOL.replace(PINNED, 'embedder = "minilm"\n'))
    with pytest.raises(ProtocolError, match=r"pins embedder 'minilm', which no registered") as err:
        _register(path)
    assert "minilm-l6-v2" in str(err.value)
    assert not lock_path(path).exists()


def test_tampering_with_the_pinned_embedder_is_a_named_mismatch(tmp_path: Path) -> None:
    path = _write(tmp_path)
    _register(path)
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []  # control: untouched
    lock_file = lock_path(path)
    original = lock_file.read_bytes()
    data = json.loads(original)
    data["embedder"] = "minilm-l6-v2"
    lock_file.write_bytes(canonical_json_bytes(data))
    (mismatch,) = verify(path, manifest_sha256=MANIFEST, seals=SEALS)
    assert mismatch.thing == "embedder"
    assert mismatch.message.startswith(
        f"Expected embedder id of {path} (embedder) to be minilm-l6-v2 but got hash-256-v1"
    )
    # The other way round: the lock is intact, the protocol's line was edited after registration.
    lock_file.write_bytes(original)
    path.write_text(PROTOCOL.replace(PINNED, 'embedder = "minilm-l6-v2"\n'), encoding="utf-8")
    things = {m.thing: m for m in verify(path, manifest_sha256=MANIFEST, seals=SEALS)}
    assert sorted(things) == ["embedder", "protocol"]
    assert "to be hash-256-v1 but got minilm-l6-v2" in things["embedder"].message


def test_an_amendment_may_change_the_pinned_embedder_but_not_drop_it(tmp_path: Path) -> None:
    path = _write(tmp_path)
    _register(path)
    path.write_text(UNPINNED, encoding="utf-8")
    with pytest.raises(ProtocolError, match="names no embedder"):
        amend(path, NOW, "dropped the embedder", has_runs=False)
    path.write_text(PROTOCOL.replace(PINNED, 'embedder = "minilm-l6-v2"\n'), encoding="utf-8")
    lock = amend(path, NOW, "measure the serving model", has_runs=False)
    assert (lock.embedder, lock.current_embedder) == ("hash-256-v1", "minilm-l6-v2")
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


@pytest.mark.parametrize("name", ["default", "default-2"])
def test_protocols_registered_before_pinning_load_verify_and_keep_their_lock_bytes(
    name: str,
) -> None:
    path = ROOT / "protocols" / f"{name}.toml"
    assert load_protocol(path).embedder is None
    lock = load_lock(path)
    assert lock is not None
    assert lock.current_embedder is None
    assert "embedder" not in lock.to_dict()
    assert canonical_json_bytes(lock.to_dict()) == lock_path(path).read_bytes()
    assert (
        verify(path, manifest_sha256=lock.current_manifest_sha256, seals=lock.current_seals) == []
    )

"""`bench run` and the pinned embedder: it runs with the pinned one, refuses another unless a
deviation is declared, and still runs a protocol registered before pinning, recording it unpinned."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import engine.embed as embed_module
from engine.embed import HashEmbedder, register_embedder
from harness.protocol.load import canonical_sha256, raw_sha256
from harness.protocol.lock import load_lock, lock_path
from harness.runner import RunOptions, RunRefusedError, run
from harness.seal import canonical_json_bytes
from recallbench.cli import main
from tests.harness.test_runner import build_repo, options

PINNED = 'embedder = "hash-256-v1"\n'


@pytest.fixture
def hash64(monkeypatch: pytest.MonkeyPatch) -> str:
    """A second, cheap embedder registered as `hash64` (id hash-64-v1) for this test only."""
    monkeypatch.setattr(embed_module, "_REGISTRY", dict(embed_module._REGISTRY))
    register_embedder("hash64", lambda: HashEmbedder(dim=64))
    return "hash64"


def live(root: Path, **kw: Any) -> RunOptions:
    """Options that take the embedder from $RECALLBENCH_EMBEDDER, as `bench run` does."""
    return dataclasses.replace(options(root, **kw), embedder=None)


def summary_of(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
    return data


def test_pinned_protocol_runs_with_its_embedder_and_records_it(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, live(root))
    summary = summary_of(result.directory)
    assert summary["embedder"] == {
        "used": "hash-256-v1",
        "pinned": "hash-256-v1",
        "status": "pinned",
    }
    assert summary["environment"]["embedder"] == "hash-256-v1"
    assert summary["deviations"] == []
    assert summary["lock"]["embedder"] == "hash-256-v1"
    report = (result.directory / "report.md").read_text(encoding="utf-8")
    assert "\nEmbedder `hash-256-v1`, as the protocol pins.\n" in report


def test_another_live_embedder_is_refused_naming_both_ids_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hash64: str
) -> None:
    root, protocol = build_repo(tmp_path)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", hash64)  # what `bench run` would use
    with pytest.raises(RunRefusedError) as err:
        run(protocol, live(root))
    message = str(err.value)
    assert f"embedder: {protocol} pins hash-256-v1 but this run would use hash-64-v1" in message
    assert (
        "Fix: run with the pinned embedder hash-256-v1: set RECALLBENCH_EMBEDDER=hash, then "
        f"`recallbench bench run {protocol}`." in message
    )
    assert '--deviation "why"' in message
    assert "re-register" not in message  # the lock itself still matches
    assert not (root / "results").exists()
    # positive control: back on the pinned embedder, the same run goes through
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "hash")
    assert run(protocol, live(root)).directory.is_dir()


def test_a_deviation_runs_with_the_other_embedder_and_records_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hash64: str
) -> None:
    root, protocol = build_repo(tmp_path)
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", hash64)
    result = run(protocol, live(root, deviation="a smaller vector to see if size matters"))
    summary = summary_of(result.directory)
    assert next(iter(summary)) == "schema"
    assert list(summary)[1] == "deviations"
    (deviation,) = summary["deviations"]
    assert deviation["reason"] == "a smaller vector to see if size matters"
    assert deviation["problems"] == [
        f"embedder: {protocol} pins hash-256-v1 but this run would use hash-64-v1 "
        "(embedder 'hash64')"
    ]
    assert summary["embedder"] == {
        "used": "hash-64-v1",
        "pinned": "hash-256-v1",
        "status": "deviation",
    }
    assert summary["environment"]["embedder"] == "hash-64-v1"  # the vectors really were 64-d
    report = (result.directory / "report.md").read_text(encoding="utf-8")
    assert report.index("## Deviations") < report.index("Embedder `hash-64-v1`, but the protocol")
    assert "embedder: " in report[report.index("## Deviations") : report.index("## Gates")]


def test_an_edited_lock_embedder_is_refused_by_name(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    lock_file = lock_path(protocol)
    data = json.loads(lock_file.read_text(encoding="utf-8"))
    data["embedder"] = "minilm-l6-v2"
    lock_file.write_bytes(canonical_json_bytes(data))
    with pytest.raises(RunRefusedError) as err:
        run(protocol, live(root))
    assert "Expected embedder id of " in str(err.value)
    assert "to be minilm-l6-v2 but got hash-256-v1" in str(err.value)


def _unpinned_repo(tmp_path: Path) -> tuple[Path, Path]:
    """build_repo's protocol as it would have been registered before embedder pinning."""
    root, protocol = build_repo(tmp_path)
    protocol.write_text(protocol.read_text(encoding="utf-8").replace(PINNED, ""), encoding="utf-8")
    lock = load_lock(protocol)
    assert lock is not None
    old = lock.to_dict()
    del old["embedder"]
    old |= {
        "protocol_sha256": canonical_sha256(protocol),
        "protocol_raw_sha256": raw_sha256(protocol),
    }
    lock_path(protocol).write_bytes(canonical_json_bytes(old))
    return root, protocol


def test_a_protocol_registered_before_pinning_runs_with_the_live_embedder_marked_unpinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, protocol = _unpinned_repo(tmp_path)
    monkeypatch.chdir(root)
    out = CliRunner().invoke(main, ["bench", "run", str(protocol)])
    assert out.exit_code == 0, out.output
    line = (
        "embedder hash-256-v1, unpinned: the protocol predates embedder pinning, so the live "
        "embedder was used and recorded"
    )
    assert out.output.splitlines().count(line) == 1
    (directory,) = (root / "results" / "two").iterdir()
    summary = summary_of(directory)
    assert summary["embedder"] == {"used": "hash-256-v1", "pinned": None, "status": "unpinned"}
    assert summary["deviations"] == []
    assert "embedder" not in summary["lock"]  # the old lock, recorded as it is
    report = (directory / "report.md").read_text(encoding="utf-8")
    assert "Embedder `hash-256-v1`, **unpinned**: the protocol predates embedder pinning." in report
    # positive control: the pinned protocol prints no such line
    pinned_root, pinned = build_repo(tmp_path / "pinned")
    monkeypatch.chdir(pinned_root)
    again = CliRunner().invoke(main, ["bench", "run", str(pinned)])
    assert again.exit_code == 0, again.output
    assert "predates" not in again.output
    assert "embedder hash-256-v1, as the protocol pins" in again.output

"""`recallbench vectors`: listing each embedder's vectors and dropping those no longer in use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from engine.memory import Memory
from recallbench import config
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.recallbench.cli_run import ok, run

OLD = HashEmbedder(64)  # "hash-64-v1": vectors of an embedder the person switched away from


@pytest.fixture
def db(tmp_path: Path, home: Path) -> Path:
    """One session imported with the hash embedder (in use: `$RECALLBENCH_EMBEDDER=hash`) and with
    another one before it."""
    root = tmp_path / "transcripts"
    write_jsonl(
        root / "s.jsonl",
        simple_session(session_id="22222222-0000-4000-8000-000000000001", cwd="/w/alpha"),
    )
    path = home / "memory.db"
    memory = Memory(path, OLD)
    memory.import_paths([root])
    memory.ensure_index()
    memory.close()
    ok("import", str(root))
    return path


def _embedders() -> dict[str, dict[str, object]]:
    data = json.loads(ok("vectors", "list", "--json"))
    return {row["embedder"]: row for row in data["embedders"]}


def test_list_marks_the_embedder_in_use_and_names_the_drop_for_the_other(db: Path) -> None:
    out = ok("vectors").splitlines()
    assert out[0] == f"database: {db}  embedders with vectors: 2"
    assert out[1] == "hash-256-v1 · in use: selected by $RECALLBENCH_EMBEDDER"
    # One chunk: 256 × 4 bytes in use, 64 × 4 bytes for the old embedder.
    assert out[2].startswith("    1 chunk vector (one per distinct chunk text), ")
    assert out[3] == "hash-64-v1 · not in use: `recallbench vectors drop hash-64-v1`"
    assert out[4].startswith("    1 chunk vector (one per distinct chunk text), ")
    assert out[5].startswith("not in use: 1 embedder, about ")
    rows = _embedders()
    assert (rows["hash-256-v1"]["chunk_bytes"], rows["hash-64-v1"]["chunk_bytes"]) == (1024, 256)
    assert rows["hash-64-v1"]["in_use"] is None
    assert rows["hash-64-v1"]["index_files"] == ["memory.hash-64-v1.hnsw.json"]
    status = ok("status")
    assert "vectors of other embedders: hash-64-v1 (" in status
    old = rows["hash-64-v1"]
    parts = [old["chunk_bytes"], old["sentence_bytes"], old["index_bytes"]]
    other = json.loads(ok("status", "--json"))["other_embedders_bytes"]
    assert other == {"hash-64-v1": sum(int(str(n)) for n in parts)}


def test_drop_refuses_the_embedder_in_use_asks_first_and_then_removes_the_other(
    db: Path,
) -> None:
    refused = run("vectors", "drop", "hash-256-v1", "--yes")
    assert refused.exit_code == 1
    assert "hash-256-v1 is in use (selected by $RECALLBENCH_EMBEDDER)" in refused.output
    # The default embedder stays protected while the variable selects another: Claude Code may
    # start the hooks without it.
    default = run("vectors", "drop", "minilm-l6-v2", "--yes")
    assert "minilm-l6-v2 is in use (the default embedder, which serve and the hooks use)" in (
        default.output
    )
    unknown = run("vectors", "drop", "hash-32-v1", "--yes")
    assert "holds no vectors of hash-32-v1 (it holds: hash-256-v1, hash-64-v1)" in unknown.output
    dry = ok("vectors", "drop", "hash-64-v1", "--dry-run")
    assert dry.splitlines()[-1] == "nothing was removed (--dry-run)"
    unasked = run("vectors", "drop", "hash-64-v1")  # no terminal here
    assert unasked.exit_code == 1
    assert "give --yes" in unasked.output
    assert sorted(_embedders()) == ["hash-256-v1", "hash-64-v1"]

    out = ok("vectors", "drop", "hash-64-v1", "--yes")
    assert "dropped the vectors of hash-64-v1 (audit entry 1); database " in out
    assert sorted(_embedders()) == ["hash-256-v1"]
    assert not (db.parent / "memory.hash-64-v1.hnsw.json").exists()
    assert "vectors of other embedders" not in ok("status")
    assert "vectors.drop     hash-64-v1" in ok("audit")
    assert "#1 via rrf" in ok("search", "--all-projects", "import test fail")


def test_the_shipped_encoder_is_in_use_for_serve_and_the_hooks(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tuned = "minilm-l6-v2-tuned-0123456789ab"
    (home / "config.toml").write_text(
        f'[ship]\narm = "ltr()@minilm-l6-v2-tuned"\nembedder = "{tuned}"\nencoder = "x"\n'
    )
    assert config.embedders_in_use() == {
        "hash-256-v1": "selected by $RECALLBENCH_EMBEDDER",
        tuned: "the shipped encoder, which serve and the hooks use",
    }
    monkeypatch.delenv("RECALLBENCH_EMBEDDER")
    assert config.embedders_in_use() == {
        tuned: "the shipped encoder, which serve and the hooks use"
    }
    (home / "config.toml").unlink()  # control: nothing shipped, the packaged model
    assert config.embedders_in_use() == {
        "minilm-l6-v2": "the default embedder, which serve and the hooks use"
    }


def test_vectors_needs_a_database(home: Path) -> None:
    result = run("vectors")
    assert result.exit_code == 1
    assert f"no database at {home / 'memory.db'}" in result.output


def test_an_unknown_embedder_name_counts_as_in_use_by_that_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALLBENCH_EMBEDDER", "no-such-embedder")
    assert config.embedders_in_use() == {
        "no-such-embedder": "selected by $RECALLBENCH_EMBEDDER",
        "minilm-l6-v2": "the default embedder, which serve and the hooks use",
    }

"""A corpus's settles.json: parsed strictly, applied through the engine once, hashed into the manifest."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.memory import Memory
from engine.scope import Scope
from harness import freeze
from harness.settles import (
    SETTLES_FILE,
    SettlesError,
    apply_settles,
    load_settles,
    parse_settles,
)
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

A = "/home/dev/alpha"
S1 = "66666666-0000-4000-8000-000000000001"
S2 = "66666666-0000-4000-8000-000000000002"
AT = dt.datetime(2026, 2, 16, tzinfo=dt.UTC)


def _doc(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": 1,
        "actor": "person",
        "settled_at": "2026-02-16T00:00:00Z",
        "settles": [
            {
                "id": "settle-0001",
                "kind": "corrected",
                "old": {"session": S1, "message": "a-a3"},
                "by": {"session": S2, "message": "b-u1"},
                "reason": "the port was misread",
                "qid": "corrected-0001",
            }
        ],
    }
    doc.update(over)
    return doc


def _corpus(folder: Path, doc: dict[str, Any] | None = None) -> Path:
    write_jsonl(
        folder / "projects" / "alpha" / f"{S1}.jsonl",
        simple_session(
            "Which port does the bramble relay use?",
            session_id=S1,
            cwd=A,
            answer="The bramble relay listens on port 7311.",
            prefix="a-",
        ),
    )
    write_jsonl(
        folder / "projects" / "alpha" / f"{S2}.jsonl",
        simple_session(
            "Correction: the bramble relay listens on port 7393, not 7311.",
            session_id=S2,
            cwd=A,
            answer="Noted.",
            prefix="b-",
        ),
    )
    if doc is not None:
        (folder / SETTLES_FILE).write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_a_settles_file_parses_into_typed_settles_with_its_hash(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "c", _doc())
    settles = load_settles(folder)
    assert settles is not None
    assert settles.actor == "person"
    assert settles.settled_at == AT
    [spec] = settles.settles
    assert (spec.id, spec.kind, spec.old.message, spec.by.session, spec.qid) == (
        "settle-0001",
        "corrected",
        "a-a3",
        S2,
        "corrected-0001",
    )
    assert len(settles.sha256) == 64
    assert load_settles(_corpus(tmp_path / "none")) is None  # control: a corpus without one


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"version": 2}, "expected a settles object with version 1, got 2"),
        ({"actor": ""}, "actor must be a non-empty string"),
        ({"settled_at": "2026-02-16T00:00:00"}, "settled_at must carry a UTC offset"),
        ({"settled_at": "yesterday"}, "settled_at must be an ISO time"),
        ({"settles": {}}, "settles must be a list, got dict"),
        ({"settles": [{"id": "x", "kind": "wrong", "reason": "r"}]}, "kind must be one of"),
        ({"settles": [{"id": "x", "kind": "changed", "reason": "r", "old": {}}]}, "settles[0].old"),
    ],
)
def test_a_malformed_settles_file_is_refused_naming_what_is_wrong(
    over: dict[str, Any], message: str
) -> None:
    with pytest.raises(SettlesError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_settles(_doc(**over), sha256="0" * 64, where="settles.json")
    assert parse_settles(_doc(), sha256="0" * 64, where="settles.json").settles  # control


def test_duplicate_settle_ids_are_refused() -> None:
    one = _doc()["settles"][0]
    with pytest.raises(
        SettlesError, match=r"settle id\(s\) \['settle-0001'\] appear more than once"
    ):
        parse_settles(_doc(settles=[one, one]), sha256="0" * 64, where="settles.json")


def test_the_manifest_hashes_the_settles_file_and_a_corpus_without_one_hashes_as_before(
    tmp_path: Path,
) -> None:
    plain = freeze.manifest(_corpus(tmp_path / "plain"))
    with_settles = freeze.manifest(_corpus(tmp_path / "settled", _doc()))
    assert plain.settles_sha256 is None
    assert "settles_sha256" not in plain.to_dict()
    assert [e.sha256 for e in plain.entries] == [e.sha256 for e in with_settles.entries]
    assert with_settles.sha256 != plain.sha256  # the same transcripts, but settles.json differs
    changed = _doc(settles=[{**_doc()["settles"][0], "kind": "changed"}])
    (tmp_path / "settled" / SETTLES_FILE).write_text(json.dumps(changed), encoding="utf-8")
    assert freeze.manifest(tmp_path / "settled").sha256 != with_settles.sha256
    (tmp_path / "settled" / SETTLES_FILE).unlink()
    assert freeze.manifest(tmp_path / "settled").sha256 == plain.sha256  # control


def _import(folder: Path, db: Path) -> Memory:
    memory = Memory(db)
    memory.import_paths([folder / "projects"], embed=False)
    return memory


def test_settles_are_applied_through_the_engine_once_and_hide_the_corrected_chunk(
    tmp_path: Path,
) -> None:
    folder = _corpus(tmp_path / "c", _doc())
    settles = load_settles(folder)
    assert settles is not None
    memory = _import(folder, tmp_path / "m.db")
    try:
        everywhere = Scope.everywhere()
        old = memory.chunks_for_messages(S1, ["a-a3"], everywhere)["a-a3"][0]
        new = memory.chunks_for_messages(S2, ["b-u1"], everywhere)["b-u1"][0]
        assert old in [h.chunk_id for h in memory.lexical("bramble relay port", Scope.of(A), 10)]
        first = apply_settles(memory, settles)
        assert (first.count, first.applied, first.already, first.skipped) == (1, 1, 0, ())
        [held] = memory.settlements(everywhere)
        assert (held.old, held.new, held.kind, held.actor) == (old, new, "corrected", "person")
        assert held.reason == "the port was misread"
        hits = [h.chunk_id for h in memory.lexical("bramble relay port", Scope.of(A), 10)]
        assert old not in hits
        assert new in hits
        again = apply_settles(memory, settles)  # a cached database: nothing settled twice
        assert (again.applied, again.already) == (0, 1)
        assert len(memory.settlements(everywhere)) == 1
        assert again.to_dict()["count"] == 1
    finally:
        memory.close()


def test_a_settle_with_an_excluded_session_is_skipped_and_one_naming_a_missing_message_refused(
    tmp_path: Path,
) -> None:
    folder = _corpus(tmp_path / "c", _doc())
    settles = load_settles(folder)
    assert settles is not None
    memory = _import(folder, tmp_path / "m.db")
    try:
        skipped = apply_settles(memory, settles, excluded={S1})
        assert (skipped.applied, skipped.skipped) == (0, ("settle-0001",))
        assert memory.settlements(Scope.everywhere()) == []
        missing = _doc(settles=[{**_doc()["settles"][0], "old": {"session": S1, "message": "zz"}}])
        broken = parse_settles(missing, sha256="0" * 64, where="settles.json")
        with pytest.raises(
            SettlesError, match=f"old message zz of session {S1} is in no stored chunk"
        ):
            apply_settles(memory, broken)
        assert apply_settles(memory, settles).applied == 1  # control: the file as written applies
    finally:
        memory.close()


@dataclass
class _Refusing:
    """A stand-in engine that refuses every settle (as engine.trust.TrustError, a ValueError, does)."""

    calls: list[str] = field(default_factory=list)

    def chunks_for_messages(
        self, session_id: str, uuids: Sequence[str], scope: Scope
    ) -> dict[str, tuple[str, ...]]:
        return {u: (f"chunk-{u}",) for u in uuids}

    def settle(
        self, old: str, *, by: str, kind: str, reason: str, actor: str, now: dt.datetime
    ) -> object:
        self.calls.append(old)
        msg = f"{by} is itself corrected"
        raise ValueError(msg)

    def settlements(self, scope: Scope, *, include_undone: bool = False) -> list[Any]:
        return []


def test_a_settle_the_engine_refuses_stops_the_run_with_the_settle_named() -> None:
    settles = parse_settles(_doc(), sha256="0" * 64, where="settles.json")
    target = _Refusing()
    with pytest.raises(
        SettlesError, match=r"settle settle-0001 \(chunk-a-a3 corrected by chunk-b-u1\) was refused"
    ):
        apply_settles(target, settles)
    assert target.calls == ["chunk-a-a3"]

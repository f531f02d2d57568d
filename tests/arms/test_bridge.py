"""The `bridge` arm: keys, the file hop, the fusion worked by hand, rrf's answer without a key, scope."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arms.base import Hit, Query
from arms.bridge import BridgeArm, BridgeParams, keys_of, without_keys
from arms.rrf import RRFArm
from arms.spec import SpecError
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory, e0

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "In the module that holds `hoist_overdue_remnants`, what is the batch size set to?"


def q(text: str, scope: Scope) -> Query:
    return Query(text=text, scope=scope, now=NOW, k=10)


def triples(hits: list[Hit]) -> list[tuple[str, float, str]]:
    return [(h.chunk_id, round(h.score, 6), h.via) for h in hits]


def memory() -> FakeMemory:
    mem = FakeMemory()
    for n, (session, project) in enumerate(
        (("s1", "/a"), ("s2", "/a"), ("s3", "/a"), ("s4", "/b"))
    ):
        mem.add_session(session, project=project, start=f"2025-01-0{n + 1}T00:00:00Z")
    mem.add_edit("s1", "/a/src/span_ops.rs")
    mem.add_edit("s2", "/a/src/span_ops.rs")
    mem.add_edit("s3", "/a/src/other.rs")
    mem.add_edit("s4", "/a/src/span_ops.rs")  # another project's session, same path
    mem.add_chunk("k1", session="s1", text="Added hoist_overdue_remnants in span_ops.rs")
    mem.add_chunk(
        "gold", session="s2", text="The batch size in span_ops.rs is too high change it to 100"
    )
    mem.add_chunk("decoy", session="s3", text="The batch size in other.rs is set to 50 batch size")
    mem.add_chunk(
        "other-project", session="s4", text="batch size in span_ops.rs hoist_overdue_remnants"
    )
    mem.add_query(QUESTION, e0())
    mem.add_query("what is the batch size set to", e0())
    return mem


def test_keys_are_backticked_spans_else_identifier_shaped_words() -> None:
    assert keys_of("does `foo()` call `bar` or `foo`?", 3) == ["foo", "bar"]
    assert keys_of("call parse_config then loadUser, then parse_config", 3) == [
        "parse_config",
        "loadUser",
    ]
    assert keys_of("plain words, no code here", 3) == []
    assert keys_of("`a1` `b2` `c3` `d4`", 2) == ["a1", "b2"]
    assert without_keys(QUESTION, ["hoist_overdue_remnants"]) == (
        "In the module that holds , what is the batch size set to?"
    )


def test_the_file_bridge_lifts_the_answer_from_the_other_session_worked_by_hand() -> None:
    mem, scope = memory(), Scope.of("/a")
    # rrf alone (no vectors here, so its lexical list): the fake counts matching tokens: decoy 9
    # ("the batch size in is set to batch size"), gold 6, k1 2 ("hoist_overdue_remnants", "in").
    assert [h.chunk_id for h in RRFArm(mem).search(q(QUESTION, scope))] == ["decoy", "gold", "k1"]
    # The key's seed is k1 (session s1), which edited /a/src/span_ops.rs; the question without its
    # key plus "span_ops.rs" ranks decoy 9, gold 7, k1 2, and only the sessions that edited the
    # file (s1, s2) stay: the bridged list is gold, k1, weighted bridge_w = 2 by default.
    hits = BridgeArm(mem).search(q(QUESTION, scope))
    assert triples(hits) == [
        ("gold", round(1 / 62 + 2 / 61, 6), "rrf (fts) + bridge (span_ops.rs)"),  # 0.048916
        ("k1", round(1 / 63 + 2 / 62, 6), "rrf (fts) + bridge (span_ops.rs)"),  # 0.048131
        ("decoy", round(1 / 61, 6), "rrf (fts)"),  # 0.016393
    ]
    assert triples(hits)[0][1] == 0.048916


def test_the_bridge_weight_scales_the_third_list() -> None:
    mem, scope = memory(), Scope.of("/a")
    hits = BridgeArm(mem, BridgeParams(bridge_w=0.5)).search(q(QUESTION, scope))
    # gold 1/62 + 0.5/61 = 0.024326, k1 1/63 + 0.5/62 = 0.023938, decoy 1/61 = 0.016393.
    assert triples(hits)[:2] == [
        ("gold", round(1 / 62 + 0.5 / 61, 6), "rrf (fts) + bridge (span_ops.rs)"),
        ("k1", round(1 / 63 + 0.5 / 62, 6), "rrf (fts) + bridge (span_ops.rs)"),
    ]


def test_without_a_key_the_answer_is_rrfs_hit_for_hit() -> None:
    mem, scope = memory(), Scope.of("/a")
    plain = q("what is the batch size set to", scope)
    rrf = RRFArm(mem).search(plain)
    assert rrf  # the comparison is between real answers
    assert BridgeArm(mem).search(plain) == rrf
    assert not any(call[0] == "files_for_session" for call in mem.calls)  # no hop was made


def test_the_bridge_never_crosses_the_scope() -> None:
    mem = memory()
    only_a = [h.chunk_id for h in BridgeArm(mem).search(q(QUESTION, Scope.of("/a")))]
    assert "other-project" not in only_a
    assert "gold" in only_a  # positive control: the bridge works in this scope
    both = [h.chunk_id for h in BridgeArm(mem).search(q(QUESTION, Scope.of("/a", "/b")))]
    assert "other-project" in both  # and the chunk is found when its project is asked for


def test_parameters_are_checked() -> None:
    with pytest.raises(SpecError, match="bridge_w"):
        BridgeParams(bridge_w=-1.0)
    with pytest.raises(SpecError, match="max_files"):
        BridgeParams(max_files=0)

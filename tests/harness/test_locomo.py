"""The LoCoMo converter: evidence cleaning, the transcript tree, the draft roster and the template protocol.

The fixture (`locomo_fixture.json`) is invented dialogue in LoCoMo's shape, written for these tests.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arms import registry
from arms.registry import default_spec, full_canonical
from engine.embed import HashEmbedder
from engine.memory import Memory
from harness.locomo import (
    LocomoError,
    clean_evidence,
    convert,
    encode_project,
    parse_session_time,
    project_cwd,
    session_uuid,
    turn_uuid,
)
from harness.protocol.arm_embedder import ArmEntry, split_arm
from harness.protocol.load import load_protocol
from harness.roster import Draft, load_draft
from harness.subset import select

FIXTURE = Path(__file__).with_name("locomo_fixture.json")
REPO = Path(__file__).resolve().parents[2]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def converted(tmp_path: Path) -> tuple[Path, Draft]:
    out = tmp_path / "locomo"
    convert(FIXTURE, out)
    return out, load_draft(out / "roster.json")


# ---------------------------------------------------------------------------------------------
# Evidence cleaning


def test_semicolon_joined_evidence_splits_into_two_ids_and_counts_one_split() -> None:
    cleaned = clean_evidence(["D8:6; D9:17"])
    assert cleaned.ids == ("D8:6", "D9:17")
    assert dict(cleaned.repairs) == {"split": 1}
    assert cleaned.junk == ()


def test_extra_colon_after_d_is_repaired() -> None:
    cleaned = clean_evidence(["D:11:26"])
    assert cleaned.ids == ("D11:26",)
    assert dict(cleaned.repairs) == {"extra_colon": 1}


def test_ranges_in_one_session_expand_in_both_spellings() -> None:
    short = clean_evidence(["D3:4-6"])
    long = clean_evidence(["D3:4-D3:6"])
    assert short.ids == long.ids == ("D3:4", "D3:5", "D3:6")
    assert dict(short.repairs) == dict(long.repairs) == {"range": 1}


def test_spaces_lowercase_leading_zeros_and_duplicates_are_each_counted() -> None:
    cleaned = clean_evidence(["D3 : 4", "d5:1", "D2:07", "D3:4"])
    assert cleaned.ids == ("D3:4", "D5:1", "D2:7")
    assert dict(cleaned.repairs) == {"spaces": 1, "lowercase": 1, "leading_zero": 1, "duplicate": 1}


def test_junk_tokens_are_returned_and_counted_never_guessed() -> None:
    cleaned = clean_evidence(["D3:6-4", "D3:4-D4:2", "see", 7, "D1:1"])
    # backwards range, cross-session range, a word and a non-string are junk; the good id survives
    assert cleaned.junk == ("D3:6-4", "D3:4-D4:2", "see", "7")
    assert cleaned.ids == ("D1:1",)


# ---------------------------------------------------------------------------------------------
# Report and unresolved questions


def test_report_counts_match_the_fixture_worked_by_hand(tmp_path: Path) -> None:
    report = convert(FIXTURE, tmp_path / "out")
    assert report.conversations == ("demo-1", "demo-2")
    assert report.sessions == 2 + 2  # demo-1's session_3 is empty
    assert report.empty_sessions == 1
    assert report.messages == 3 + 4 + 3 + 2
    assert report.questions_total == 8 + 3
    assert report.questions == 11 - 2
    assert dict(report.categories) == {
        "single-hop": 1 + 2,
        "multi-hop": 2,
        "temporal": 1 + 1,
        "open-domain": 1,
        "adversarial": 1,
    }
    # split: "D1:1; D2:3" and "see above"; range: D2:2-4 and D2:1-D2:2
    assert dict(report.repairs) == {
        "split": 2,
        "extra_colon": 1,
        "range": 2,
        "leading_zero": 1,
        "lowercase": 1,
    }
    assert report.unresolved_ids == 2  # D9:9 and D7:1
    assert report.junk_tokens == 2  # "see", "above"
    assert report.to_dict()["questions"] == 9


def test_questions_without_usable_evidence_are_reported_not_silently_dropped(
    converted: tuple[Path, Draft],
) -> None:
    out, draft = converted
    side = json.loads((out / "unresolved.json").read_text(encoding="utf-8"))
    dropped = {p["qid"]: p["raw_evidence"] for p in side["unresolved"]}
    assert dropped == {"demo-1-q5": ["D9:9"], "demo-1-q7": []}
    qids = {q.qid for q in draft.questions}
    assert not qids & set(dropped)
    assert {"demo-1-q4", "demo-1-q6"} <= qids  # positive control: neighbours are kept
    conversion = json.loads((out / "conversion.json").read_text(encoding="utf-8"))
    assert [p["qid"] for p in conversion["unresolved"]] == ["demo-1-q5", "demo-1-q7"]


def test_partly_resolvable_question_keeps_its_good_evidence_and_lists_the_rest(
    converted: tuple[Path, Draft],
) -> None:
    out, draft = converted
    gold = draft.key["demo-1-q6"]
    assert dict(gold.relevant) == {turn_uuid("demo-1", "D1:3"): 1}
    side = json.loads((out / "unresolved.json").read_text(encoding="utf-8"))
    assert side["partial"] == [
        {
            "qid": "demo-1-q6",
            "sample_id": "demo-1",
            "question": "Which hobbies do Ada and Bo share?",
            "category": "multi-hop",
            "raw_evidence": ["D1:3", "D7:1", "see above"],
            "unknown_ids": ["D7:1"],
            "junk": ["see", "above"],
            "dropped": False,
        }
    ]


def test_repaired_and_expanded_evidence_becomes_message_uuid_gold(
    converted: tuple[Path, Draft],
) -> None:
    _, draft = converted
    assert set(draft.key["demo-1-q1"].relevant) == {
        turn_uuid("demo-1", "D1:1"),
        turn_uuid("demo-1", "D2:3"),
    }
    assert set(draft.key["demo-1-q2"].relevant) == {turn_uuid("demo-1", "D2:1")}
    assert set(draft.key["demo-1-q3"].relevant) == {
        turn_uuid("demo-1", f"D2:{i}") for i in (2, 3, 4)
    }
    assert set(draft.key["demo-2-q1"].relevant) == {turn_uuid("demo-2", "D1:2")}


# ---------------------------------------------------------------------------------------------
# Transcript tree


def test_converting_twice_gives_a_byte_identical_tree(tmp_path: Path) -> None:
    convert(FIXTURE, tmp_path / "a")
    convert(FIXTURE, tmp_path / "b")
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first == second
    assert len([p for p in first if p.endswith(".jsonl")]) == 4
    assert turn_uuid("demo-1", "D1:1") == turn_uuid("demo-1", "D1:1")
    assert turn_uuid("demo-1", "D1:1") != turn_uuid("demo-2", "D1:1")


def test_session_lines_carry_the_full_envelope_times_and_speakers(
    converted: tuple[Path, Draft],
) -> None:
    out, _ = converted
    cwd = project_cwd("demo-1")
    sid = session_uuid("demo-1", 1)
    lines = _lines(out / "projects" / encode_project(cwd) / f"{sid}.jsonl")
    assert encode_project(cwd) == "-locomo-demo-1"
    assert [line["type"] for line in lines] == ["user", "assistant", "user"]
    assert [line["timestamp"] for line in lines] == [
        "2023-05-08T13:56:00.000Z",
        "2023-05-08T13:56:01.000Z",
        "2023-05-08T13:56:02.000Z",
    ]
    assert [line["parentUuid"] for line in lines] == [None, lines[0]["uuid"], lines[1]["uuid"]]
    for line in lines:
        assert line["sessionId"] == sid
        assert line["cwd"] == cwd
        assert line["isSidechain"] is False
        assert line["gitBranch"] == ""
        assert {"userType", "version"} <= set(line)
    assert lines[0]["message"]["content"].startswith("Ada: Hi Bo!")
    bo = lines[1]["message"]
    assert bo["id"].startswith("msg_")
    assert bo["content"] == [
        {
            "type": "text",
            "text": "Bo: Nice work, Ada. I started a pottery class on Tuesdays.\n"
            "[image: a photo of a lopsided clay bowl on a wheel]",
        }
    ]


def test_session_times_in_locomo_spelling_parse_as_utc() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_time("12:48 am on 1 February, 2023") == datetime(
        2023, 2, 1, 0, 48, tzinfo=UTC
    )
    with pytest.raises(LocomoError, match=r"expected e\.g\."):
        parse_session_time("yesterday")


def test_every_question_is_scoped_to_exactly_its_own_conversation(
    converted: tuple[Path, Draft],
) -> None:
    out, draft = converted
    where: dict[str, str] = {}
    for path in (out / "projects").rglob("*.jsonl"):
        for line in _lines(path):
            where[line["uuid"]] = line["cwd"]
    assert {q.qid.split("-q")[0] for q in draft.questions} == {"demo-1", "demo-2"}
    for question in draft.questions:
        sample = question.qid.split("-q")[0]
        assert question.scope == (project_cwd(sample),)
        assert {where[u] for u in draft.key[question.qid].relevant} == {project_cwd(sample)}


def test_converted_tree_imports_and_every_gold_uuid_is_in_a_stored_chunk(
    converted: tuple[Path, Draft], tmp_path: Path
) -> None:
    out, draft = converted
    memory = Memory(tmp_path / "mem.db", HashEmbedder())
    try:
        report = memory.import_paths([out / "projects"], embed=False)
        assert report.files_imported == 4
        assert report.messages == 12
        rows = memory.conn.execute("SELECT project, message_uuids FROM chunks").fetchall()
    finally:
        memory.close()
    stored: dict[str, str] = {}
    for project, uuids in rows:
        for u in json.loads(uuids):
            stored[u] = project
    assert len(stored) == 12
    for question in draft.questions:
        for u in draft.key[question.qid].relevant:
            assert stored[u] == question.scope[0]


def test_category_is_kept_as_a_name_and_as_id_and_name_tags(
    converted: tuple[Path, Draft],
) -> None:
    _, draft = converted
    by_qid = {q.qid: q for q in draft.questions}
    expected = {
        "demo-1-q0": ("4", "single-hop"),
        "demo-1-q1": ("1", "multi-hop"),
        "demo-1-q2": ("2", "temporal"),
        "demo-1-q3": ("3", "open-domain"),
        "demo-1-q4": ("5", "adversarial"),
    }
    for qid, (cid, name) in expected.items():
        assert by_qid[qid].category == name
        assert dict(by_qid[qid].tags) == {"category_id": cid, "category_name": name}
    assert draft.unit == "message"


# ---------------------------------------------------------------------------------------------
# Conversation filter and refusals


def test_conversation_filter_converts_only_the_named_conversation(tmp_path: Path) -> None:
    report = convert(FIXTURE, tmp_path / "out", conversations=["demo-2"])
    draft = load_draft(tmp_path / "out" / "roster.json")
    assert report.conversations == ("demo-2",)
    assert sorted(q.qid for q in draft.questions) == ["demo-2-q0", "demo-2-q1", "demo-2-q2"]
    projects = sorted(p.name for p in (tmp_path / "out" / "projects").iterdir())
    assert projects == ["-locomo-demo-2"]


def test_unknown_conversation_is_refused_with_the_available_ids(tmp_path: Path) -> None:
    with pytest.raises(LocomoError, match=r"\['conv-99'\].*choose from \['demo-1', 'demo-2'\]"):
        convert(FIXTURE, tmp_path / "out", conversations=["conv-99"])
    assert not (tmp_path / "out").exists()


def test_a_non_empty_output_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(LocomoError, match="not empty"):
        convert(FIXTURE, out)
    convert(FIXTURE, tmp_path / "fresh")  # positive control: an empty target converts
    assert (tmp_path / "fresh" / "roster.json").is_file()


def test_a_file_that_is_not_locomo_shaped_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sample_id": "x"}), encoding="utf-8")
    with pytest.raises(LocomoError, match="JSON list of conversation objects"):
        convert(bad, tmp_path / "out")


# ---------------------------------------------------------------------------------------------
# The template protocol


def test_template_protocol_validates_and_compares_every_registered_arm() -> None:
    protocol = load_protocol(REPO / "protocols" / "locomo.toml")
    plain = [a for a in protocol.arms if split_arm(a).embedder is None]
    # every registered arm at its defaults, ltr once more reading the dates a question names, and
    # fts and the dated ltr once more reading the question without its function words
    dated = full_canonical("ltr(dates=True)")
    stopped = full_canonical("ltr(dates=True,stop=True)")
    assert sorted(plain) == sorted(
        [
            *(default_spec(n) for n in registry.names()),
            dated,
            full_canonical("fts(stop=True)"),
            stopped,
        ]
    )
    # and the vector channel and both dated ltr once more, over the encoder fine-tuned on the training set
    tuned = [split_arm(a) for a in protocol.arms if split_arm(a).embedder is not None]
    assert tuned == [
        ArmEntry(spec=default_spec("vector"), embedder="minilm-l6-v2-tuned"),
        ArmEntry(spec=dated, embedder="minilm-l6-v2-tuned"),
        ArmEntry(spec=stopped, embedder="minilm-l6-v2-tuned"),
    ]
    (encoder,) = protocol.encoders
    assert encoder.name == "minilm-l6-v2-tuned"
    assert [r.unit for r in encoder.rosters] == ["message"]
    assert [rule.arm for rule in protocol.ship.rules[:3]] == [
        f"{stopped}@minilm-l6-v2-tuned",
        f"{dated}@minilm-l6-v2-tuned",
        dated,
    ]
    # every fitted arm has its fit, the plain ltr too (reported beside the dated one, in no gate)
    assert sorted(f.arm for f in protocol.fits) == sorted(
        [
            f"{dated}@minilm-l6-v2-tuned",
            dated,
            f"{stopped}@minilm-l6-v2-tuned",
            stopped,
            default_spec("ltr"),
            default_spec("ltrb"),
        ]
    )
    gated = {g.treatment for g in protocol.gates} | {g.baseline for g in protocol.gates}
    assert default_spec("ltr") not in gated
    assert dated in gated  # control
    assert protocol.corpus.source == "locomo"
    assert protocol.corpus.manifest_sha256 == "0" * 64
    assert protocol.rosters[0].seal == "0" * 64
    assert protocol.rosters[0].unit == "message"
    assert protocol.metrics.all == ("recall@10", "mrr", "ndcg@10", "hit@10")
    for gate in protocol.gates:
        assert gate.test == "bootstrap"
        assert gate.readings.pass_.strip()
        assert gate.readings.fail.strip()
        assert gate.readings.null.strip()


def test_template_subsets_select_each_category_of_a_converted_roster(
    converted: tuple[Path, Draft],
) -> None:
    _, draft = converted
    subsets = load_protocol(REPO / "protocols" / "locomo.toml").rosters[0].subsets
    sizes = {name: len(select(draft.questions, expr)) for name, expr in subsets.items()}
    assert sizes == {
        "multi-hop": 2,
        "temporal": 2,
        "open-domain": 1,
        "single-hop": 3,
        "adversarial": 1,
        "answerable": 9 - 1,
    }

"""The generator's corrections option: off changes nothing, on only adds sessions, settles and a roster."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.roster import load_draft
from harness.synthetic import GeneratedCorpus, SyntheticConfig, SyntheticError, generate
from tests.harness.synthetic_reader import blocks_of, by_session, read_tree

ON = dataclasses.replace(SyntheticConfig.small(), corrected_facts=2, changed_facts=2)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[GeneratedCorpus, GeneratedCorpus]:
    root = tmp_path_factory.mktemp("corrections")
    return generate(root / "off", SyntheticConfig.small()), generate(root / "on", ON)


def test_turning_corrections_on_only_adds_files(
    pair: tuple[GeneratedCorpus, GeneratedCorpus],
) -> None:
    off, on = pair
    added = sorted(set(on.files) - set(off.files))
    assert set(off.files) <= set(on.files)
    # two sessions per fact (2 corrected + 2 changed), the settles file and the corrections roster
    assert len(added) == 2 * 4 + 2
    assert "settles.json" in added
    assert "rosters/corrections.json" in added
    assert on.session_files == off.session_files + 8
    differ = [f for f in off.files if (off.root / f).read_bytes() != (on.root / f).read_bytes()]
    assert differ == ["planted.json"]  # it records the added facts; every other byte is the same
    planted_off = json.loads((off.root / "planted.json").read_text())
    planted_on = json.loads((on.root / "planted.json").read_text())
    assert "corrected_facts" not in planted_off["config"]  # off: the record it always was
    assert (planted_on["config"]["corrected_facts"], planted_on["config"]["changed_facts"]) == (
        2,
        2,
    )
    assert [s["kind"] for s in planted_on["settings"]] == [
        "corrected",
        "corrected",
        "changed",
        "changed",
    ]


def test_the_config_records_the_knobs_only_when_on_and_refuses_too_many_facts(
    tmp_path: Path,
) -> None:
    assert "changed_facts" not in SyntheticConfig().to_dict()
    assert ON.to_dict()["changed_facts"] == 2
    assert not SyntheticConfig().corrections_on
    assert ON.corrections_on
    too_many = dataclasses.replace(SyntheticConfig.small(), corrected_facts=30, changed_facts=11)
    with pytest.raises(SyntheticError, match="must be <= 40"):
        generate(tmp_path / "x", too_many)


def _line(lines: list[dict[str, Any]], uuid: str) -> dict[str, Any]:
    [line] = [x for x in lines if x.get("uuid") == uuid]
    return line


def _text(line: dict[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks_of(line) if b.get("type") == "text")


def test_each_settle_names_the_one_message_that_states_the_old_value_and_the_one_that_replaces_it(
    pair: tuple[GeneratedCorpus, GeneratedCorpus],
) -> None:
    _, on = pair
    planted = json.loads((on.root / "planted.json").read_text())
    settles = json.loads((on.root / "settles.json").read_text())
    sessions = by_session(read_tree(on.root))
    assert settles["actor"] == "person"
    assert settles["settled_at"].endswith("T09:00:00Z")  # whole days after the 09:00 epoch
    assert [s["id"] for s in settles["settles"]] == [f"settle-000{n}" for n in (1, 2, 3, 4)]
    for fact, settle in zip(planted["settings"], settles["settles"], strict=True):
        assert settle["kind"] == fact["kind"]
        assert settle["old"]["session"] == fact["first_session"]
        assert settle["by"]["session"] == fact["second_session"]
        first = sessions[fact["first_session"]]
        second = sessions[fact["second_session"]]
        assert max(x["timestamp"] for x in first) < min(x["timestamp"] for x in second)
        old = _text(_line(first, settle["old"]["message"]))
        new = _text(_line(second, settle["by"]["message"]))
        assert fact["old"] in old
        assert fact["subject"] in old
        assert fact["new"] in new
        assert fact["subject"] in new
        # the setting is stated once: no other message of either session names the service's value
        olds = [x for x in first if fact["old"] in _text(x) and fact["subject"] in _text(x)]
        news = [x for x in second if fact["new"] in _text(x) and fact["subject"] in _text(x)]
        assert [x["uuid"] for x in olds] == [settle["old"]["message"]]
        assert [x["uuid"] for x in news] == [settle["by"]["message"]]
        assert settles["settled_at"] > max(x["timestamp"] for x in second)


def test_the_corrections_roster_pairs_each_corrected_fact_with_a_control_and_asks_changed_ones_once(
    pair: tuple[GeneratedCorpus, GeneratedCorpus],
) -> None:
    _, on = pair
    draft = load_draft(on.rosters["corrections"])
    settles = {s["qid"]: s for s in json.loads((on.root / "settles.json").read_text())["settles"]}
    assert draft.unit == "message"
    assert [q.qid for q in draft.questions] == [
        "corrected-0001",
        "corrected-control-0001",
        "corrected-0002",
        "corrected-control-0002",
        "changed-0001",
        "changed-0002",
    ]
    for n in ("0001", "0002"):
        negative, control = draft.key[f"corrected-{n}"], draft.key[f"corrected-control-{n}"]
        settle = settles[f"corrected-{n}"]
        assert negative.forbidden == (settle["old"]["message"],)
        assert negative.control == f"corrected-control-{n}"
        assert dict(negative.relevant) == {}
        assert dict(control.relevant) == {settle["by"]["message"]: 1}
        texts = {q.qid: q for q in draft.questions}
        assert texts[f"corrected-{n}"].text == texts[f"corrected-control-{n}"].text
        assert texts[f"corrected-{n}"].scope == texts[f"corrected-control-{n}"].scope
        changed = draft.key[f"changed-{n}"]
        assert dict(changed.relevant) == {settles[f"changed-{n}"]["by"]["message"]: 1}
        assert changed.forbidden == ()
        assert texts[f"changed-{n}"].text.endswith(" now?")
    assert on.questions["corrections"] == 6

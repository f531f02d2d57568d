"""`protocol instantiate --without NAME` (recallbench.template_without): a roster left out with its gates,
its place in the correction family and the ship rules' conditions on it, read as NULL."""

from __future__ import annotations

import itertools
import shutil
import tomllib
from pathlib import Path

import click
import pytest

from harness.gates import choose_ship
from harness.protocol.load import load_protocol
from harness.protocol.model import Verdict
from recallbench.template_without import without_roster

ROOT = Path(__file__).resolve().parents[2]
ZEROS = "0" * 64


def gate(gid: str, roster: str) -> str:
    return f"""[[gates]]
id = "{gid}"
roster = "{roster}"
metric = "recall@5"
treatment = "fts(pool=20,score='rank')"
baseline = "none()"
test = "bootstrap"
margin = 0.0
[gates.readings]
pass = "p {gid}"
fail = "f {gid}"
null = "n {gid}"

"""


def template(family: str) -> str:
    return (
        f"""id = "two"
title = "t"
hypothesis = "h"
registered = 2026-11-30
arms = ["none()", "fts(pool=20,score='rank')", "vector(min_score=0.2,pool=20)"]

[corpus]
source = "claude-projects"
path = "corpora/x"
manifest_sha256 = "{ZEROS}"
cutoff = 2026-11-30T00:00:00Z
exclude = ["self_transcript"]

[[rosters]]
name = "a"
path = "sealed/a"
seal = "{ZEROS}"
unit = "session"

[[rosters]]
name = "b"
path = "sealed/b"
seal = "{ZEROS}"
unit = "session"

[metrics]
primary = "recall@5"
secondary = ["mrr"]
k = 10

"""
        + gate("A1", "a")
        + gate("B1", "b")
        + gate("A2", "a")
        + gate("B2", "b")
        + f"""# this comment introduces the family and stays
[correction]
method = "holm"
alpha = 0.05
gates = {family}

[stats]
seed = 1
resamples = 100
confidence = 0.95

[ship]
default = "none()"
[[ship.rules]]
arm = "fts(pool=20,score='rank')"
when = {{ A1 = "PASS", B1 = ["PASS", "NULL"] }}
[[ship.rules]]
arm = "vector(min_score=0.2,pool=20)"
when = {{ B1 = "PASS", A2 = "PASS" }}
[[ship.rules]]
arm = "vector(min_score=0.2,pool=20)"
when = {{ A2 = ["PASS", "NULL"] }}
[[ship.rules]]
arm = "fts(pool=20,score='rank')"
when = {{ B2 = ["PASS", "NULL"] }}

[reporting]
commitments = ["c"]
"""
    )


TEMPLATE = template('["A1", "B1", "A2", "B2"]')


def test_the_roster_its_gates_and_the_rules_that_need_it_go_and_the_rest_stays() -> None:
    text, left = without_roster(TEMPLATE, "b", Path("t.toml"))
    doc = tomllib.loads(text)
    assert [r["name"] for r in doc["rosters"]] == ["a"]
    assert [g["id"] for g in doc["gates"]] == ["A1", "A2"]
    assert [g["readings"]["pass"] for g in doc["gates"]] == ["p A1", "p A2"]
    assert doc["correction"]["gates"] == ["A1", "A2"]
    # rule 1 keeps A1 = PASS (B1 accepted NULL); rule 2 needed B1 = PASS: gone; rule 3 untouched;
    # rule 4 read only B2, which NULL meets: left with no condition, it goes rather than always ship
    assert [(r["arm"][:3], r["when"]) for r in doc["ship"]["rules"]] == [
        ("fts", {"A1": "PASS"}),
        ("vec", {"A2": ["PASS", "NULL"]}),
    ]
    assert (left.gates, left.removed, left.narrowed, left.n_rules) == (
        ("B1", "B2"),
        (2, 4),
        (1,),
        4,
    )
    assert text.splitlines()[0] == (
        '# roster "b" left out (--without b); its gates B1, B2 read as NULL; ship rule(s) #2, #4 '
        "of 4 needed another verdict of them and are gone; rule(s) #1 lose their conditions on them"
    )
    assert "# this comment introduces the family and stays\n[correction]" in text
    assert "p B1" not in text
    assert "p A1" in text
    # control: the other roster left out instead keeps b's entries
    other, _ = without_roster(TEMPLATE, "a", Path("t.toml"))
    assert [g["id"] for g in tomllib.loads(other)["gates"]] == ["B1", "B2"]


def test_a_family_left_empty_is_removed() -> None:
    text, _ = without_roster(template('["B1", "B2"]'), "b", Path("t.toml"))
    assert "correction" not in tomllib.loads(text)
    assert "[stats]" in text  # control: the section after it stays
    kept, _ = without_roster(template('["B1", "B2"]'), "a", Path("t.toml"))
    assert tomllib.loads(kept)["correction"]["gates"] == ["B1", "B2"]


def test_an_unknown_roster_the_only_roster_and_a_header_with_a_comment_are_refused() -> None:
    with pytest.raises(click.UsageError, match=r"t\.toml has rosters a, b"):
        without_roster(TEMPLATE, "c", Path("t.toml"))
    one, _ = without_roster(TEMPLATE, "b", Path("t.toml"))
    with pytest.raises(click.UsageError, match="only roster"):
        without_roster(one, "a", Path("t.toml"))
    commented = TEMPLATE.replace('[[gates]]\nid = "B2"', '[[gates]]  # two\nid = "B2"')
    with pytest.raises(click.ClickException, match="4 \\[\\[gates\\]\\] entries, but 3 lines"):
        without_roster(commented, "b", Path("t.toml"))


def test_private_without_drafted_ships_what_it_would_with_every_drafted_gate_null(
    tmp_path: Path,
) -> None:
    """Every verdict of the six masked gates (3**6 = 729 cases): the arm chosen by the new rules equals
    the one the template's rules choose with the drafted gates NULL."""
    full = tmp_path / "full.toml"
    shutil.copy(ROOT / "protocols" / "private.toml", full)
    text, left = without_roster(full.read_text(encoding="utf-8"), "drafted", full)
    part = tmp_path / "part.toml"
    part.write_text(text, encoding="utf-8")
    before, after = load_protocol(full), load_protocol(part)
    masked = [g.id for g in after.gates]
    assert masked == ["MW", "ML", "MN", "MF", "BM", "BMm"]
    assert after.correction is not None
    assert after.correction.gates == tuple(masked)
    assert left.gates == ("DW", "DL", "DN", "BD", "BDm")
    verdicts: tuple[Verdict, ...] = ("PASS", "FAIL", "NULL")
    chosen = set()
    for combo in itertools.product(verdicts, repeat=len(masked)):
        given = dict(zip(masked, combo, strict=True))
        with_null: dict[str, Verdict] = {**given, **dict.fromkeys(left.gates, "NULL")}
        arm = choose_ship(after.ship, given)
        assert arm == choose_ship(before.ship, with_null), given
        chosen.add(arm.split("(")[0])
    # every arm a masked-only rule can ship is reached: the bridge, the fallback, fusion, none
    assert chosen == {"bridge", "fallback", "rrf", "none"}

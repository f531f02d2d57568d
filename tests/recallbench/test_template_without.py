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
from tests.recallbench.test_instantiate import TEMPLATE as TWO_ROSTERS
from tests.recallbench.test_instantiate import gate

ROOT = Path(__file__).resolve().parents[2]


RULES = """[ship]
default = "none()"
[[ship.rules]]
arm = "fts(pool=20,score='rank')"
when = { M1 = "PASS", D1 = ["PASS", "NULL"] }
[[ship.rules]]
arm = "none()"
when = { D1 = "PASS", M2 = "PASS" }
[[ship.rules]]
arm = "none()"
when = { M2 = ["PASS", "NULL"] }
[[ship.rules]]
arm = "fts(pool=20,score='rank')"
when = { D2 = ["PASS", "NULL"] }
"""


def template(family: str) -> str:
    """test_instantiate's two-roster template (masked, drafted; gate N on drafted) with four more
    gates, a correction family over `family` after a comment, and four ship rules."""
    gates = (
        gate("M1", "masked") + gate("D1", "drafted") + gate("M2", "masked") + gate("D2", "drafted")
    )
    family_table = (
        "# this comment introduces the family and stays\n"
        f'[correction]\nmethod = "holm"\nalpha = 0.05\ngates = {family}\n\n'
    )
    return TWO_ROSTERS.replace("[stats]", gates + family_table + "[stats]", 1).replace(
        '[ship]\ndefault = "none()"\n', RULES
    )


TEMPLATE = template('["N", "M1", "D1", "M2", "D2"]')


def test_the_roster_its_gates_and_the_rules_that_need_it_go_and_the_rest_stays() -> None:
    text, left = without_roster(TEMPLATE, "drafted", Path("t.toml"))
    doc = tomllib.loads(text)
    assert [r["name"] for r in doc["rosters"]] == ["masked"]
    assert [g["id"] for g in doc["gates"]] == ["M1", "M2"]
    assert [g["readings"]["pass"] for g in doc["gates"]] == ["p M1", "p M2"]
    assert doc["correction"]["gates"] == ["M1", "M2"]
    # rule 1 keeps M1 = PASS (D1 accepted NULL); rule 2 needed D1 = PASS: gone; rule 3 untouched;
    # rule 4 read only D2, which NULL meets: left with no condition, it goes rather than always ship
    assert [(r["arm"][:3], r["when"]) for r in doc["ship"]["rules"]] == [
        ("fts", {"M1": "PASS"}),
        ("non", {"M2": ["PASS", "NULL"]}),
    ]
    assert (left.gates, left.removed, left.narrowed, left.n_rules) == (
        ("N", "D1", "D2"),
        (2, 4),
        (1,),
        4,
    )
    assert text.splitlines()[0] == (
        '# roster "drafted" left out (--without drafted); its gates N, D1, D2 read as NULL; ship '
        "rule(s) #2, #4 of 4 needed another verdict of them and are gone; rule(s) #1 lose their "
        "conditions on them"
    )
    assert "# this comment introduces the family and stays\n[correction]" in text
    assert "p D1" not in text
    assert "p M1" in text  # the readings went with their gate
    # control: the other roster left out instead keeps drafted's entries
    other, _ = without_roster(TEMPLATE, "masked", Path("t.toml"))
    assert [g["id"] for g in tomllib.loads(other)["gates"]] == ["N", "D1", "D2"]


def test_a_family_left_empty_is_removed() -> None:
    text, _ = without_roster(template('["N", "D1", "D2"]'), "drafted", Path("t.toml"))
    assert "correction" not in tomllib.loads(text)
    assert "[stats]" in text  # control: the section after it stays
    kept, _ = without_roster(template('["N", "D1", "D2"]'), "masked", Path("t.toml"))
    assert tomllib.loads(kept)["correction"]["gates"] == ["N", "D1", "D2"]


def test_an_unknown_roster_the_only_roster_and_a_header_with_a_comment_are_refused() -> None:
    with pytest.raises(click.UsageError, match=r"t\.toml has rosters masked, drafted"):
        without_roster(TEMPLATE, "other", Path("t.toml"))
    one, _ = without_roster(TEMPLATE, "drafted", Path("t.toml"))
    with pytest.raises(click.UsageError, match="only roster"):
        without_roster(one, "masked", Path("t.toml"))
    commented = TEMPLATE.replace('[[gates]]\nid = "D2"', '[[gates]]  # two\nid = "D2"')
    with pytest.raises(click.ClickException, match="5 \\[\\[gates\\]\\] entries, but 4 lines"):
        without_roster(commented, "drafted", Path("t.toml"))


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

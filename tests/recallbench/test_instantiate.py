"""`protocol instantiate` with a template of several rosters: each filled by name, nothing left out."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from recallbench.cli import main
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

ZEROS = "0" * 64
SID = "77777777-0000-4000-8000-000000000001"


def gate(gid: str, roster: str) -> str:
    """A `[[gates]]` entry on `roster` (fts against no memory), its readings naming it."""
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


TEMPLATE = f"""# A two-roster template: this comment must survive instantiation.
id = "two"
title = "t"
hypothesis = "h"
registered = 2026-11-30
arms = ["none()", "fts(pool=20,score='rank')"]

[corpus]
source = "claude-projects"
path = "corpora/x"
manifest_sha256 = "{ZEROS}"
cutoff = 2026-11-30T00:00:00Z
exclude = ["self_transcript"]

[[rosters]]
name = "masked"
path = "sealed/x"
seal = "{ZEROS}"
unit = "session"

[[rosters]]
name = "drafted"   # a comment after the name
path = "sealed/y"
seal = "{ZEROS}"
unit = "session"

[metrics]
primary = "recall@5"
secondary = ["mrr"]
k = 10

{gate("N", "drafted")}[stats]
seed = 1
resamples = 100
confidence = 0.95

[ship]
default = "none()"

[reporting]
commitments = ["c"]
"""


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "protocols").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "protocols" / "two.toml").write_text(TEMPLATE)
    write_jsonl(
        root / "corpora" / "mine" / "p" / f"{SID}.jsonl",
        simple_session("fix the flaky retry loop", session_id=SID, cwd="/w/p", answer="done"),
    )
    for name, text in (("a", "where did we fix the retry loop"), ("b", "the flaky loop")):
        draft = root / "rosters" / f"{name}.json"
        draft.parent.mkdir(exist_ok=True)
        question = {
            "qid": "q1",
            "text": text,
            "scope": "*",
            "category": "c",
            "tags": {},
            "gold": {"relevant": {SID: 1}, "forbidden": [], "control": None},
        }
        draft.write_text(
            json.dumps(
                {"name": name, "unit": "session", "description": "", "questions": [question]}
            )
        )
    monkeypatch.chdir(root)
    for name in ("a", "b"):
        assert run("roster", "seal", f"rosters/{name}.json", "--out", f"sealed/{name}")[0] == 0
    return root


def test_each_roster_is_filled_by_name(repo: Path) -> None:
    code, out = run(
        "protocol", "instantiate", "protocols/two.toml", "--corpus", "corpora/mine",
        "--roster", "drafted=sealed/b", "--roster", "masked=sealed/a", "--out", "protocols/mine.toml",
    )  # fmt: skip
    assert code == 0, out
    text = Path("protocols/mine.toml").read_text()
    assert text.startswith("# A two-roster template: this comment must survive instantiation.")
    data = tomllib.loads(text)
    by_name = {r["name"]: r for r in data["rosters"]}
    assert by_name["masked"]["path"] == "sealed/a"
    assert by_name["drafted"]["path"] == "sealed/b"
    assert by_name["masked"]["seal"] != by_name["drafted"]["seal"]  # two different rosters
    assert ZEROS not in text  # every placeholder was replaced
    assert data["id"] == "mine"
    assert "masked seal" in out
    assert "drafted seal" in out
    assert out.splitlines()[-1] == "next: recallbench protocol register protocols/mine.toml"


@pytest.mark.parametrize(
    ("rosters", "expected"),
    [
        (["sealed/a"], "give each as --roster NAME=DIR"),
        (["masked=sealed/a"], "missing: --roster drafted=sealed/"),
        (["masked=sealed/a", "other=sealed/b"], "--roster names 'other'"),
        (["masked=sealed/a", "masked=sealed/b"], "is given twice"),
        (["masked=sealed/a", "drafted=sealed/nope"], "is not a sealed roster folder"),
    ],
)
def test_a_roster_left_out_or_misnamed_is_refused(
    repo: Path, rosters: list[str], expected: str
) -> None:
    args = ["protocol", "instantiate", "protocols/two.toml", "--corpus", "corpora/mine"]
    for item in rosters:
        args += ["--roster", item]
    code, out = run(*args, "--out", "protocols/bad.toml")
    assert code == 2, out
    assert expected in out
    assert not Path("protocols/bad.toml").exists()
    # control: the complete set of rosters instantiates
    ok = run(*args[:5], "--roster", "masked=sealed/a", "--roster", "drafted=sealed/b",
             "--out", "protocols/good.toml")  # fmt: skip
    assert ok[0] == 0, ok[1]


def test_a_key_for_a_roster_the_template_lacks_is_refused(repo: Path) -> None:
    args = [
        "protocol", "instantiate", "protocols/two.toml", "--corpus", "corpora/mine",
        "--roster", "masked=sealed/a", "--roster", "drafted=sealed/b",
    ]  # fmt: skip
    code, out = run(*args, "--key", "receipts=/tmp/k.json", "--out", "protocols/bad.toml")
    assert code == 2
    assert "--key names roster(s) receipts" in out
    assert run(*args, "--out", "protocols/good.toml")[0] == 0


MASKED_GATE = gate("M", "masked") + "[stats]"


def test_a_roster_left_out_by_name_goes_with_its_gates_and_the_new_file_says_so(repo: Path) -> None:
    args = ["protocol", "instantiate", "protocols/two.toml", "--corpus", "corpora/mine"]
    # two.toml's one gate is on drafted: a protocol left without gates is refused
    refused = run(*args, "--roster", "masked=sealed/a", "--without", "drafted",
                  "--out", "protocols/mine.toml")  # fmt: skip
    assert refused[0] == 2
    assert "every gate of protocols/two.toml is on drafted" in refused[1]
    Path("protocols/two.toml").write_text(TEMPLATE.replace("[stats]", MASKED_GATE))
    code, out = run(*args, "--roster", "masked=sealed/a", "--without", "drafted",
                    "--out", "protocols/mine.toml")  # fmt: skip
    assert code == 0, out
    text = Path("protocols/mine.toml").read_text()
    data = tomllib.loads(text)
    assert [r["name"] for r in data["rosters"]] == ["masked"]
    assert data["rosters"][0]["path"] == "sealed/a"
    assert [g["id"] for g in data["gates"]] == ["M"]  # gate N was on drafted
    first = '# roster "drafted" left out (--without drafted); its gates N read as NULL'
    assert text.splitlines()[0] == first
    assert first[2:] in out
    assert (
        text.splitlines()[1] == "# A two-roster template: this comment must survive instantiation."
    )
    assert out.splitlines()[-1] == "next: recallbench protocol register protocols/mine.toml"
    # a roster both given and left out, or the only one left out, is refused and nothing is written
    both = run(*args, "--roster", "masked=sealed/a", "--roster", "drafted=sealed/b",
               "--without", "drafted", "--out", "protocols/bad.toml")  # fmt: skip
    assert both[0] == 2
    assert "--roster names 'drafted'" in both[1]
    alone = run(*args, "--roster", "masked=sealed/a", "--without", "drafted", "--without", "masked",
                "--out", "protocols/bad.toml")  # fmt: skip
    assert alone[0] == 2
    assert "only roster" in alone[1]
    assert not Path("protocols/bad.toml").exists()

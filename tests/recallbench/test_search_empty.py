"""An empty answer says what to try: the other projects, or every time (`recallbench search`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recallbench.cli import main
from tests.recallbench.corpus import ALPHA, import_corpus, write_corpus

QUERY = "postgres backup cron"  # said in BETA only


@pytest.fixture
def imported(tmp_path: Path, home: Path) -> None:
    """The shared corpus imported into the home's memory."""
    root = tmp_path / "projects"
    write_corpus(root)
    import_corpus(home / "memory.db", root).close()


@pytest.mark.usefixtures("imported")
def test_an_empty_answer_names_the_wider_scope_and_the_window() -> None:
    runner = CliRunner()

    def search(*more: str) -> tuple[str, str]:
        out = runner.invoke(main, ["search", QUERY, "--arm", "fts", "--in-process", *more])
        assert out.exit_code == 0, out.output
        return out.stdout.splitlines()[0], out.stderr

    head, said = search("--project", ALPHA)
    assert head == f"arm: fts  scope: {ALPHA}  hits: 0"
    assert said == "nothing found (`--all-projects` searches every project)\n"
    # control: every project holds it, and a full answer says nothing more
    head, said = search("--all-projects")
    assert head == "arm: fts  scope: *  hits: 1"
    assert said == ""
    head, said = search("--all-projects", "--until", "2000-01-01")
    assert head.endswith("hits: 0")
    assert said == "nothing found (leave out --since and --until to search every time)\n"
    # the arm that holds no memory finds nothing by design: nothing to try
    assert search("--project", ALPHA, "--arm", "none")[1] == ""


@pytest.mark.usefixtures("imported")
def test_a_query_without_a_word_says_so_instead_of_a_wider_scope() -> None:
    runner = CliRunner()
    for query in ('"', "* ?", "a + b"):  # `a` and `b`: one letter each, no word the index reads
        out = runner.invoke(
            main, ["search", query, "--arm", "fts", "--in-process", "--project", ALPHA]
        )
        assert out.exit_code == 0, out.output
        assert out.stdout.splitlines()[0] == f"arm: fts  scope: {ALPHA}  hits: 0"
        assert out.stderr == (
            "nothing found: the query holds no word to look for (two letters or digits or more)\n"
        )
    # --json says it in `message` (null when there are hits)
    out = runner.invoke(
        main, ["search", '"', "--arm", "fts", "--in-process", "--project", ALPHA, "--json"]
    )
    data = json.loads(out.stdout)
    assert (data["hits"], out.stderr) == ([], "")
    assert data["message"] == (
        "nothing found: the query holds no word to look for (two letters or digits or more)"
    )
    found = runner.invoke(
        main, ["search", QUERY, "--arm", "fts", "--in-process", "--all-projects", "--json"]
    )
    assert json.loads(found.stdout)["message"] is None  # control: an answer with hits
    # control: a two-letter word is one, and the scope is what to try
    out = runner.invoke(main, ["search", "zz", "--arm", "fts", "--in-process", "--project", ALPHA])
    assert out.stderr == "nothing found (`--all-projects` searches every project)\n"

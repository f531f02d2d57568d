"""An empty answer says what to try: the other projects, or every time (`recallbench search`)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from recallbench.cli import main
from tests.recallbench.corpus import ALPHA, import_corpus, write_corpus

QUERY = "postgres backup cron"  # said in BETA only


def test_an_empty_answer_names_the_wider_scope_and_the_window(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "projects"
    write_corpus(root)
    import_corpus(home / "memory.db", root).close()
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

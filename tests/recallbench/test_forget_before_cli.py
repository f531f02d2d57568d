"""`recallbench forget --before TIME`: what it shows, what it asks, what it removes (hooks.log lines
included), and what `status` then says.

The corpus is tests/engine/forget_corpus.py (times: minutes after 2026-03-01 10:00 UTC; see
tests/engine/test_forget_before.py): before 10:44 lie sessions A1, A2 and B1 whole and the planted
session's first four messages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recallbench.cli import main
from tests.engine.forget_corpus import KEPT, PLANTED, write_forget_corpus
from tests.recallbench.corpus import ALPHA, BETA


def cli(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


@pytest.fixture
def root(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "projects"
    write_forget_corpus(folder)
    imported = cli("import", "--no-embed", str(folder))
    assert imported.exit_code == 0, imported.output
    return folder


def found(text: str) -> int:
    result = cli("search", "--all-projects", "--arm", "fts", "--json", f'"{text}"')
    assert result.exit_code == 0, result.output
    return len(json.loads(result.stdout)["hits"])


def test_the_dry_run_names_the_time_and_counts_per_project(root: Path, home: Path) -> None:
    result = cli("forget", "--before", "2026-03-01T10:44", "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    db = home / "memory.db"
    assert lines[0] == (
        f"forget --before 2026-03-01T10:44:00Z in {db} removes, for good, every message "
        "written before it:"
    )
    # alpha: A1 (4 messages), A2 (2) and the planted session's first 4; beta: B1 (4). Each session
    # packs into one chunk: the planted one's is rewritten from the two messages it keeps.
    assert lines[1] == f"  {ALPHA}  3 sessions: 3 chunks, 10 messages"
    assert lines[2] == f"  {BETA}  1 session: 1 chunk, 4 messages"
    assert lines[3] == "  0 lines of hooks.log written before it"
    assert found(PLANTED) == 1  # a dry run removes nothing


def test_it_asks_for_the_time_as_given_and_refuses_anything_else(root: Path) -> None:
    wrong = cli("forget", "--before", "2026-03-01T10:44", "--confirm", "2026-03-01T10:44:00Z")
    assert wrong.exit_code == 2
    assert "--confirm must repeat the --before value exactly; nothing was removed" in wrong.output
    assert found(PLANTED) == 1
    typed = cli("forget", "--before", "2026-03-01T10:44", "--confirm", "2026-03-01T10:44")
    assert typed.exit_code == 0, typed.output
    assert found(PLANTED) == 0
    assert found(KEPT) == 1  # written at 10:44, not before it


def test_hook_log_lines_written_before_the_time_go(root: Path, home: Path) -> None:
    log = home / "hooks.log"
    log.write_text(
        "2026-03-01T10:43:59.000+00:00 pid=1 UserPromptSubmit INFO: old\n"
        "2026-03-01T10:44:00.000+00:00 pid=1 UserPromptSubmit INFO: new\n"
        "a line without a time\n",
        encoding="utf-8",
    )
    log.chmod(0o600)
    dry = cli("forget", "--before", "2026-03-01T10:44", "--dry-run")
    assert "  1 lines of hooks.log written before it" in dry.stdout
    done = cli("forget", "--before", "2026-03-01T10:44", "--confirm", "2026-03-01T10:44")
    assert done.exit_code == 0, done.output
    assert log.read_text(encoding="utf-8") == (
        "2026-03-01T10:44:00.000+00:00 pid=1 UserPromptSubmit INFO: new\na line without a time\n"
    )


NEW_HORIZON = "From now on an import skips every line written before it, in any transcript."


def test_a_time_before_the_horizon_says_the_horizon_stays(root: Path) -> None:
    first = cli("forget", "--dry-run", "--before", "2026-03-01T10:44")
    assert NEW_HORIZON in first.stdout  # control: no horizon yet
    done = cli("forget", "--before", "2026-03-01T10:44", "--confirm", "2026-03-01T10:44")
    assert done.exit_code == 0, done.output

    earlier = cli("forget", "--dry-run", "--before", "2026-03-01T10:30")
    later = cli("forget", "--dry-run", "--before", "2026-03-01T10:50")

    assert NEW_HORIZON not in earlier.stdout
    assert (
        "The memory's horizon stays at 2026-03-01T10:44:00Z, set by an earlier `forget --before`: "
        "an import already skips every line written before it."
    ) in earlier.stdout
    assert NEW_HORIZON in later.stdout  # a later time moves it
    assert "horizon stays" not in later.stdout


def test_status_names_the_horizon_once_set(root: Path) -> None:
    assert "forgotten before" not in cli("status").stdout  # control: no horizon yet
    cli("forget", "--before", "2026-03-01", "--confirm", "2026-03-01")
    status = cli("status")
    assert (
        "forgotten before: 2026-03-01T00:00:00Z (`recallbench forget --before`): lines written "
        "earlier are not imported"
    ) in status.stdout
    assert json.loads(cli("status", "--json").stdout)["forgotten_before"] == "2026-03-01T00:00:00Z"
    assert found(PLANTED) == 1  # everything was written after 2026-03-01 00:00


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("last week", "cannot read 'last week' as a time"),
        ("2999-01-01", "is in the future (2999-01-01T00:00:00Z)"),
    ],
)
def test_a_time_it_cannot_use_is_a_usage_error(root: Path, given: str, said: str) -> None:
    result = cli("forget", "--before", given, "--dry-run")
    assert result.exit_code == 2
    assert said in result.output
    assert found(PLANTED) == 1


def test_only_one_target(root: Path) -> None:
    both = cli("forget", "--before", "7d", "--match", "abcd")
    assert both.exit_code == 2
    assert "(got --match, --before)" in both.output


def test_a_rebuild_keeps_the_horizon_and_the_audit_trail(root: Path) -> None:
    assert (
        cli("forget", "--before", "2026-03-01T10:44", "--confirm", "2026-03-01T10:44").exit_code
        == 0
    )
    trail = json.loads(cli("audit", "--json").stdout)
    assert len(trail) == 7  # begin, rows, fts, index, backups, logs, vacuum
    assert found(PLANTED) == 0
    rebuilt = cli("rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(cli("audit", "--json").stdout) == trail  # the same entries, ids and times
    assert found(PLANTED) == 0  # the horizon kept the lines written before it out
    assert found(KEPT) == 1  # control: what was written after it is imported again

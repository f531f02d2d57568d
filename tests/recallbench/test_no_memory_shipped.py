"""A run whose rule chose `none()` (no memory) says so where it matters: `ship` (and what it replaced),
`search` (on stderr), `serve` and `status`, and the hooks inject nothing even without a server;
an arm that searches says nothing of the kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import freeze
from harness.protocol.lock import register
from harness.runner import RunResult, run
from recallbench import config, hooks
from recallbench.cli import main
from tests.harness.test_runner import NOW, build_repo, options
from tests.recallbench.corpus import ALPHA, import_corpus, write_corpus
from tests.recallbench.test_hooks import log_text, sample

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("none()", True),
        (" none( ) ", True),
        ("none", True),
        ("rrf", False),
        ("nonesuch()", False),
        (None, False),
    ],
)
def test_no_memory_is_the_none_arm_only(spec: str | None, expected: bool) -> None:
    assert config.no_memory(spec) is expected


def _run(tmp_path: Path, default: str) -> RunResult:
    """build_repo's protocol with its ship default set to `default` (registered again), run."""
    root, protocol = build_repo(tmp_path)
    text = protocol.read_text(encoding="utf-8").replace('default = "rrf"', f'default = "{default}"')
    protocol.write_text(text, encoding="utf-8")
    protocol.with_suffix(".lock.json").unlink()
    manifest = freeze.manifest(root / "corpus").sha256
    seal = tomllib.loads(text)["rosters"][0]["seal"]
    register(protocol, manifest_sha256=manifest, seals={"fixture": seal}, now=NOW, git_commit=None)
    return run(protocol, options(root))


def serve_stderr() -> str:
    """What `recallbench serve` prints on stderr, started with an empty stdin (it ends at once)."""
    done = subprocess.run(
        [sys.executable, "-m", "recallbench.cli", "serve"],
        input="",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_shipping_no_memory_says_what_it_replaced_and_that_searches_find_nothing(
    tmp_path: Path,
) -> None:
    first = _run(tmp_path / "a", "rrf")
    second = _run(tmp_path / "b", "none")
    assert (first.summary.shipped_arm, second.summary.shipped_arm) == ("rrf", "none")
    runner = CliRunner()
    shipped = runner.invoke(main, ["ship", str(first.directory)])
    assert shipped.exit_code == 0, shipped.output
    assert "replaces" not in shipped.output  # nothing was shipped before
    assert "no memory" not in shipped.output  # control: rrf searches
    out = runner.invoke(main, ["ship", str(second.directory)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == f"shipped none from two run {second.directory.name}"
    assert lines[1] == f"replaces rrf (from two run {first.directory.name})"
    assert lines[-1].startswith(f"the shipped arm is none() (from two run {second.directory.name})")
    assert (
        "find nothing, and sessions start without a brief, until another run is shipped"
        in (lines[-1])
    )

    # search: the note on stderr, no hit on stdout; an arm asked for by name searches and says nothing
    root = tmp_path / "b" / "repo"
    assert runner.invoke(main, ["import", str(root / "corpus")]).exit_code == 0
    empty = runner.invoke(main, ["search", "beta signing key", "--all-projects", "--in-process"])
    assert empty.exit_code == 0, empty.output
    assert empty.stdout.splitlines() == ["arm: none  scope: *  hits: 0"]
    assert empty.stderr.startswith("the shipped arm is none() (from two run ")
    found = runner.invoke(
        main, ["search", "beta signing key", "--all-projects", "--in-process", "--arm", "fts"]
    )
    assert "hits: 1" in found.stdout.splitlines()[0]
    assert "Rotate the beta signing key" in found.stdout
    assert found.stderr == ""
    status = runner.invoke(main, ["status"]).stdout
    assert f"arm: none (shipped from two run {second.directory.name}): no memory" in status
    data = json.loads(runner.invoke(main, ["status", "--json"]).stdout)["arm"]
    assert (data["spec"], data["shipped"], data["no_memory"]) == ("none", True, True)
    assert f"recallbench: the shipped arm is none() (from two run {second.directory.name})" in (
        serve_stderr()
    )


def test_status_names_the_arm_that_answers(tmp_path: Path) -> None:
    result = _run(tmp_path, "rrf")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(tmp_path / "repo" / "corpus")]).exit_code == 0
    before = runner.invoke(main, ["status"]).stdout
    assert "arm: rrf (nothing shipped: the default;" in before
    assert runner.invoke(main, ["ship", str(result.directory)]).exit_code == 0
    after = runner.invoke(main, ["status"]).stdout
    assert f"arm: rrf (shipped from two run {result.directory.name})\n" in after  # no note
    assert "shipped arm is none()" not in serve_stderr()


def test_the_hooks_inject_nothing_when_no_memory_is_shipped_even_without_a_server(
    tmp_path: Path, home: Path
) -> None:
    """Without a running server the prompt hook reads lexically on its own, and the session-start
    brief reads the store itself; a shipped none() stops both."""
    root = tmp_path / "projects"
    write_corpus(root)
    import_corpus(home / "memory.db", root).close()
    prompt = json.dumps(sample("user_prompt_submit", cwd=ALPHA))
    answer = "The retry decorator swallowed the timeout error."
    start = json.dumps(sample("session_start", cwd=ALPHA)).encode()
    (home / "config.toml").write_text('[ship]\narm = "rrf"\n', encoding="utf-8")
    assert answer in hooks.run_hook("UserPromptSubmit", prompt.encode())  # control: rrf shipped
    assert "search_memory" in hooks.run_hook("SessionStart", start)  # and the brief
    (home / "config.toml").write_text('[ship]\narm = "none()"\n', encoding="utf-8")
    assert hooks.run_hook("UserPromptSubmit", prompt.encode()) == ""
    assert "the shipped arm is none() (no memory); nothing injected" in log_text(home)
    assert hooks.run_hook("SessionStart", start) == ""
    assert "the shipped arm is none() (no memory); no brief" in log_text(home)


def test_a_config_file_that_does_not_parse_leaves_search_on_rrf_and_status_says_why(
    tmp_path: Path, home: Path
) -> None:
    root = tmp_path / "projects"
    write_corpus(root)
    import_corpus(home / "memory.db", root).close()
    (home / "config.toml").write_text("[ship\n", encoding="utf-8")
    runner = CliRunner()
    found = runner.invoke(main, ["search", "retry decorator", "--all-projects", "--in-process"])
    assert found.exit_code == 0, found.output
    assert found.stdout.startswith("arm: rrf  scope: *  hits: ")
    assert "hits: 0" not in found.stdout.splitlines()[0]
    status = runner.invoke(main, ["status"]).stdout
    assert f"arm: rrf (the settings cannot be read: {home / 'config.toml'}: " in status

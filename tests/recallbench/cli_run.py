"""Running the `recallbench` command line in a test, as a person types it (in-process, Click's runner)."""

from __future__ import annotations

from click.testing import CliRunner, Result

from recallbench.cli import main


def run(*args: str) -> Result:
    """The command's result, whatever its exit code; exceptions other than Click's propagate."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ok(*args: str) -> str:
    """The command's output; it must exit 0."""
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.output

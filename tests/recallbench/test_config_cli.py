"""`recallbench config` (list, get, set, unset), and where the CLI says a directory belongs: `status`'s
project line and `search`'s default scope."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from recallbench import config
from tests.recallbench.cli_run import ok
from tests.recallbench.cli_run import run as cli
from tests.recallbench.scope_corpus import A_TEXT, B_TEXT, two_projects

SHIPPED = (
    "# Written by `recallbench ship`\n"
    "[ship]\n"
    'arm = "fts(pool=30)"\n'
    'canonical = "fts(pool=30)"\n'
    "[ship.verdicts]\n"
    'g1 = "pass"\n'
    "[someone_elses]\n"
    "numbers = [1, 2.5]\n"
    "when = 2026-06-01T12:00:00Z\n"
)


# --- recallbench config --------------------------------------------------------------------------


def test_every_setting_is_off_until_set_and_unset_restores_the_default(home: Path) -> None:
    assert ok("config", "list") == (
        "mcp.all_projects = false  (default)\nscope.inherit_parent = false  (default)\n"
        "scope.worktrees = false  (default)\ntime.local = false  (default)\n"
    )
    assert ok("config", "get", "mcp.all_projects") == "false\n"
    assert not (home / "config.toml").exists()  # reading writes nothing
    out = ok("config", "set", "mcp.all_projects", "true")
    assert out == f"mcp.all_projects = true  (wrote {home / 'config.toml'})\n"
    assert ok("config", "get", "mcp.all_projects") == "true\n"
    assert "mcp.all_projects = true\n" in ok("config", "list")
    assert config.read_settings() == config.Settings(mcp_all_projects=True)
    assert ok("config", "set", "scope.inherit_parent", "on").startswith(
        "scope.inherit_parent = true"
    )
    assert config.read_settings() == config.Settings(
        mcp_all_projects=True, scope_inherit_parent=True
    )
    assert ok("config", "unset", "mcp.all_projects").startswith(
        "mcp.all_projects removed; the default (false) applies"
    )
    assert ok("config", "unset", "mcp.all_projects") == (
        "mcp.all_projects was not set; the default (false) applies\n"
    )
    assert config.read_settings() == config.Settings(scope_inherit_parent=True)
    ok("config", "set", "scope.worktrees", "true")
    assert config.read_settings() == config.Settings(
        scope_inherit_parent=True, scope_worktrees=True
    )
    ok("config", "set", "time.local", "yes")
    assert config.read_settings() == config.Settings(
        scope_inherit_parent=True, scope_worktrees=True, time_local=True
    )


def test_setting_a_value_keeps_the_shipped_arm_and_every_key_it_does_not_know(home: Path) -> None:
    path = home / "config.toml"
    path.write_text(SHIPPED, encoding="utf-8")
    before = config.load_config()
    ok("config", "set", "mcp.all_projects", "yes")
    after = config.load_config()
    assert after.pop("mcp") == {"all_projects": True}
    assert after == before
    assert config.shipped_spec() == "fts(pool=30)"
    assert "shipped arm: fts(pool=30)" in ok("ship", "--show")
    ok("config", "unset", "mcp.all_projects")
    assert config.load_config() == before  # the emptied [mcp] table goes too
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set", "mcp.everything", "true"), "'mcp.everything' is not one of"),
        (("get", "nope"), "'nope' is not one of 'mcp.all_projects', 'scope.inherit_parent'"),
        (("unset", "ship.arm"), "'ship.arm' is not one of"),
        (("set", "mcp.all_projects", "maybe"), "mcp.all_projects takes true or false, got 'maybe'"),
        (("set", "mcp.all_projects"), "Missing argument 'VALUE'"),
    ],
)
def test_unknown_keys_and_bad_values_are_usage_errors_that_change_nothing(
    home: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("config", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert not (home / "config.toml").exists()
    # positive control: a good key and value are accepted
    assert cli("config", "set", "mcp.all_projects", "false").exit_code == 0


def test_a_broken_or_hand_edited_config_is_named_and_never_overwritten(home: Path) -> None:
    path = home / "config.toml"
    path.write_text("[ship\narm = 1\n", encoding="utf-8")
    result = cli("config", "set", "mcp.all_projects", "true")
    assert result.exit_code == 1
    assert f"cannot read {path}" in result.output
    assert path.read_text(encoding="utf-8") == "[ship\narm = 1\n"
    assert config.read_settings() == config.Settings()  # unreadable: everything stays off
    path.write_text('[mcp]\nall_projects = "yes"\n', encoding="utf-8")
    result = cli("config", "get", "mcp.all_projects")
    assert result.exit_code == 1
    assert "config.toml sets mcp.all_projects = 'yes'; it must be true or false" in result.output
    assert config.read_settings().mcp_all_projects is False  # fails closed
    # positive control: setting it replaces the bad value
    ok("config", "set", "mcp.all_projects", "true")
    assert config.read_settings().mcp_all_projects is True


def test_config_help_lists_every_setting_with_an_example() -> None:
    out = ok("config", "--help")
    for key, setting in config.SETTINGS.items():
        assert key in out
        assert setting.help.split()[0] in out
    assert "recallbench config set mcp.all_projects true" in out
    for command in ("list", "get", "set", "unset"):
        assert "Example:" in ok("config", command, "--help")


# --- where a directory belongs: status and search -----------------------------------------------


def test_status_says_which_project_a_path_through_another_project_resolves_to(
    tmp_path: Path, home: Path
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    for folder in (projects.through_dotdot, projects.through_link):
        out = ok("status", "--project", str(folder))
        assert out.splitlines()[-1] == (
            f"project here: {projects.alpha} for {projects.alpha} "
            "(sessions were recorded in this folder)"
        )
    # positive control: B itself resolves to B
    data = json.loads(ok("status", "--project", str(projects.beta), "--json"))
    assert data["resolves"]["project"] == str(projects.beta)


def test_status_says_why_a_sub_folder_resolves_to_no_project_until_inheritance_is_on(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    monkeypatch.chdir(projects.sub)
    assert ok("status").splitlines()[-1] == (
        f"project here: none for {projects.sub} (no sessions were recorded in this folder, and "
        f"parent-folder inheritance is off; the nearest recorded folder above it is "
        f"{projects.alpha}; `recallbench config set scope.inherit_parent true` would use it)"
    )
    ok("config", "set", "scope.inherit_parent", "true")
    assert ok("status").splitlines()[-1] == (
        f"project here: {projects.alpha} for {projects.sub} "
        f"(inherited from the nearest recorded folder above it, {projects.alpha})"
    )


def test_status_never_inherits_the_home_folder(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    # sessions once ran in the home folder itself (here, project A's folder)
    monkeypatch.setenv("HOME", str(projects.alpha))
    ok("config", "set", "scope.inherit_parent", "true")
    assert ok("status", "--project", str(projects.sub)).splitlines()[-1] == (
        f"project here: none for {projects.sub} (no sessions were recorded in this folder or a "
        f"folder above it; {projects.alpha} is the root or the home folder, whose sessions are "
        "never inherited)"
    )
    # positive control: another recorded project is still inherited by its sub-folder
    beta_sub = projects.beta / "sub"
    beta_sub.mkdir()
    out = ok("status", "--project", str(beta_sub))
    assert out.splitlines()[-1].startswith(f"project here: {projects.beta} for {beta_sub}")


@pytest.mark.parametrize("through", ["through_dotdot", "through_link"])
def test_search_in_a_path_through_another_project_reads_the_project_it_reaches(
    tmp_path: Path, home: Path, through: str
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    for folder, expected, text in (
        (getattr(projects, through), projects.alpha, A_TEXT),
        (projects.beta, projects.beta, B_TEXT),  # positive control: B itself is B
    ):
        out = ok("search", "flaky retry test on CI", "--project", str(folder), "--json")
        hits = json.loads(out)["hits"]
        assert {h["project"] for h in hits} == {str(expected)}
        assert text in hits[0]["text"]


def test_search_in_a_sub_folder_asks_for_a_scope_until_inheritance_is_on(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = two_projects(tmp_path, home / "memory.db")
    monkeypatch.chdir(projects.sub)
    refused = cli("search", "flaky retry test")
    assert refused.exit_code == 2
    assert "recallbench config set scope.inherit_parent true" in refused.output
    ok("config", "set", "scope.inherit_parent", "true")
    hits = json.loads(ok("search", "flaky retry test", "--json"))["hits"]
    assert {h["project"] for h in hits} == {str(projects.alpha)}

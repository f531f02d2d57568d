"""Installing and removing recallbench's hooks in Claude Code's settings (`recallbench hooks ...`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recallbench import hook_settings
from recallbench.hooks import EVENTS
from recallbench.serve_cli import hooks_group

OTHER_TOOLS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}
        ],
    },
}


def our_commands(settings: dict[str, Any]) -> list[str]:
    return sorted(
        entry["command"]
        for groups in settings.get("hooks", {}).values()
        for group in groups
        for entry in group.get("hooks", [])
        if hook_settings.is_ours(entry)
    )


def invoke_hooks(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(hooks_group, list(args), env=env, catch_exceptions=False)


def fake_executable(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "recallbench"
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


@pytest.fixture(autouse=True)
def exe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed `recallbench` on PATH (pytest, not recallbench, is sys.argv[0] here)."""
    path = fake_executable(tmp_path / "venv" / "bin")
    monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(sys, "argv", ["/usr/lib/python3/pytest"])
    return path


def ours(exe: Path) -> list[str]:
    return sorted(f"{exe} hook {e}" for e in EVENTS)


@pytest.fixture
def user_settings(home: Path) -> Path:
    # conftest points CLAUDE_CONFIG_DIR at home/claude
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(OTHER_TOOLS, indent=4), encoding="utf-8")
    return path


def test_install_keeps_other_tools_hooks_and_is_idempotent(user_settings: Path, exe: Path) -> None:
    original = user_settings.read_text(encoding="utf-8")
    first = invoke_hooks("install")
    assert first.exit_code == 0
    after_first = user_settings.read_text(encoding="utf-8")
    data = json.loads(after_first)
    assert our_commands(data) == ours(exe)
    assert data["hooks"]["Stop"][0] == OTHER_TOOLS["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"] == OTHER_TOOLS["hooks"]["PreToolUse"]
    assert data["model"] == "opus"
    assert data["permissions"] == {"allow": ["Bash(git status)"]}
    assert data["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": f"{exe} hook SessionEnd", "timeout": 30}]}
    ]
    backup = user_settings.with_name("settings.json" + hook_settings.BACKUP_SUFFIX)
    assert backup.read_text(encoding="utf-8") == original

    second = invoke_hooks("install")
    assert second.exit_code == 0
    assert "already installed" in second.output
    assert user_settings.read_text(encoding="utf-8") == after_first


def test_uninstall_removes_exactly_ours(user_settings: Path) -> None:
    invoke_hooks("install")
    assert len(our_commands(json.loads(user_settings.read_text(encoding="utf-8")))) == 5
    result = invoke_hooks("uninstall")
    assert result.exit_code == 0
    assert json.loads(user_settings.read_text(encoding="utf-8")) == OTHER_TOOLS
    again = invoke_hooks("uninstall")
    assert "were not present" in again.output
    assert json.loads(user_settings.read_text(encoding="utf-8")) == OTHER_TOOLS


def test_install_prints_the_mcp_registration_line(user_settings: Path, exe: Path) -> None:
    result = invoke_hooks("install")
    assert f"claude mcp add recallbench -- {exe} serve" in result.output


def test_dry_run_prints_the_resulting_json_and_writes_nothing(
    user_settings: Path, exe: Path
) -> None:
    before = user_settings.read_text(encoding="utf-8")
    result = invoke_hooks("install", "--dry-run")
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert our_commands(printed) == ours(exe)
    assert user_settings.read_text(encoding="utf-8") == before
    assert not user_settings.with_name("settings.json" + hook_settings.BACKUP_SUFFIX).exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"hooks": {', "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"hooks": []}', '"hooks"'),
        ('{"hooks": {"Stop": {"hooks": []}}}', '"hooks.Stop"'),
    ],
)
def test_malformed_settings_give_a_clear_error_and_stay_untouched(
    home: Path, content: str, fragment: str
) -> None:
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    for command in ("install", "uninstall"):
        result = invoke_hooks(command)
        assert result.exit_code == 1
        assert fragment in result.output
        assert "nothing was changed" in result.output
        assert path.read_text(encoding="utf-8") == content
    assert not path.with_name("settings.json" + hook_settings.BACKUP_SUFFIX).exists()


def test_install_creates_a_missing_user_settings_file_under_claude_config_dir(
    home: Path, exe: Path
) -> None:
    path = home / "claude" / "settings.json"
    assert not path.exists()
    invoke_hooks("install")
    assert our_commands(json.loads(path.read_text(encoding="utf-8"))) == ours(exe)


def test_project_scope_writes_the_projects_dot_claude_settings(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    result = invoke_hooks("install", "--scope", "project", env={"CLAUDE_PROJECT_DIR": str(project)})
    assert result.exit_code == 0
    assert len(our_commands(json.loads((project / ".claude" / "settings.json").read_text()))) == 5
    assert not (home / "claude" / "settings.json").exists()


def test_removing_ours_keeps_a_group_that_also_holds_another_tools_hook() -> None:
    shared = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "recallbench hook Stop"},
                        {"type": "command", "command": "other-tool stop"},
                    ]
                }
            ]
        }
    }
    assert hook_settings.without_our_hooks(shared) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool stop"}]}]}
    }
    # positive control: the entry with our prefix was the one removed
    assert hook_settings.is_ours(shared["hooks"]["Stop"][0]["hooks"][0])
    assert not hook_settings.is_ours({"command": "recallbenchx hook Stop"})


# --- uninstall gives back what install found -------------------------------------------------------

# Four-space indent, CRLF line endings, no final newline, a non-ASCII string: not how json.dumps writes.
ODD = '{\r\n    "model": "opus",\r\n    "statusLine": "café",\r\n    "hooks": {\r\n        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\r\n    }\r\n}'


def test_uninstall_restores_the_original_bytes_even_after_a_second_install(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exe: Path
) -> None:
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(ODD.encode("utf-8"))
    invoke_hooks("install")
    assert our_commands(json.loads(path.read_bytes())) == ours(exe)
    # recallbench moved: the second install rewrites the file, but must not touch the backup
    moved = fake_executable(tmp_path / "elsewhere" / "bin")
    monkeypatch.setenv("PATH", str(moved.parent))
    invoke_hooks("install")
    assert our_commands(json.loads(path.read_bytes())) == ours(moved)
    backup = path.with_name("settings.json" + hook_settings.BACKUP_SUFFIX)
    assert backup.read_bytes() == ODD.encode("utf-8")

    result = invoke_hooks("uninstall")
    assert "byte for byte" in result.output
    assert path.read_bytes() == ODD.encode("utf-8")
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no .bak, no record


def test_uninstall_deletes_the_file_and_folder_that_install_created(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    invoke_hooks("install", "--scope", "project", env=env)
    assert len(our_commands(json.loads((project / ".claude" / "settings.json").read_text()))) == 5
    result = invoke_hooks("uninstall", "--scope", "project", env=env)
    assert "deleted" in result.output
    assert not (project / ".claude").exists()  # not a `{}` file left behind
    assert list(project.iterdir()) == []


def test_uninstall_after_an_edit_removes_only_ours_and_keeps_the_files_layout(
    home: Path, exe: Path
) -> None:
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(ODD.encode("utf-8"))
    invoke_hooks("install")
    installed = path.read_bytes().decode("utf-8")
    assert installed.startswith('{\r\n    "model": "opus",\r\n')  # install kept the layout too
    assert not installed.endswith("\n")
    edited = installed.replace('"model": "opus"', '"model": "sonnet"')
    path.write_bytes(edited.encode("utf-8"))

    result = invoke_hooks("uninstall")
    assert "changed since install" in result.output
    # Their edit stays; key order, 4-space indent, CRLF, no final newline and the raw "é" are kept.
    # JSON keeps no more layout than that: the one-line Stop list comes back expanded.
    expected = {
        "model": "sonnet",
        "statusLine": "café",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    }
    text = json.dumps(expected, indent=4, ensure_ascii=False).replace("\n", "\r\n")
    assert path.read_bytes() == text.encode("utf-8")
    # positive control: the edited file did hold our entries before uninstall
    assert our_commands(json.loads(edited)) == ours(exe)


def test_project_scope_writes_at_the_git_root_not_the_current_subfolder(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(sub)
    assert invoke_hooks("install", "--scope", "project").exit_code == 0
    assert len(our_commands(json.loads((repo / ".claude" / "settings.json").read_text()))) == 5
    assert not (sub / ".claude").exists()
    # control: outside any repository the current folder is the project
    plain = tmp_path / "plain"
    plain.mkdir()
    assert hook_settings.settings_path("project", env={}, cwd=plain) == (
        plain.resolve() / ".claude" / "settings.json"
    )


def test_hook_commands_run_recallbench_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaced = fake_executable(tmp_path / "my tools" / "bin")
    monkeypatch.setenv("PATH", str(spaced.parent))
    settings = hook_settings.with_our_hooks({}, hook_settings.hook_executable())
    stop = settings["hooks"]["Stop"][0]["hooks"][0]
    assert stop["command"] == f"'{spaced}' hook Stop"  # absolute, and quoted for the shell
    assert hook_settings.is_ours(stop)
    # the console script that is running wins over PATH
    running = fake_executable(tmp_path / "venv2" / "bin")
    assert hook_settings.hook_executable(str(running)) == str(running)
    # an older install's bare command is still recognised (and removed) as ours
    assert hook_settings.is_ours({"command": "recallbench hook Stop"})
    assert not hook_settings.is_ours({"command": "/x/recallbenchx hook Stop"})

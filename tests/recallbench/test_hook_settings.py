"""Installing and removing recallbench's hooks in Claude Code's settings (`recallbench hooks ...`)."""

from __future__ import annotations

import json
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


@pytest.fixture
def user_settings(home: Path) -> Path:
    # conftest points CLAUDE_CONFIG_DIR at home/claude
    path = home / "claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(OTHER_TOOLS, indent=4), encoding="utf-8")
    return path


def test_install_keeps_other_tools_hooks_and_is_idempotent(user_settings: Path) -> None:
    original = user_settings.read_text(encoding="utf-8")
    first = invoke_hooks("install")
    assert first.exit_code == 0
    after_first = user_settings.read_text(encoding="utf-8")
    data = json.loads(after_first)
    assert our_commands(data) == sorted(f"recallbench hook {e}" for e in EVENTS)
    assert data["hooks"]["Stop"][0] == OTHER_TOOLS["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"] == OTHER_TOOLS["hooks"]["PreToolUse"]
    assert data["model"] == "opus"
    assert data["permissions"] == {"allow": ["Bash(git status)"]}
    assert data["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": "recallbench hook SessionEnd", "timeout": 30}]}
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


def test_install_prints_the_mcp_registration_line(user_settings: Path) -> None:
    result = invoke_hooks("install")
    assert "claude mcp add recallbench -- recallbench serve" in result.output


def test_dry_run_prints_the_resulting_json_and_writes_nothing(user_settings: Path) -> None:
    before = user_settings.read_text(encoding="utf-8")
    result = invoke_hooks("install", "--dry-run")
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert our_commands(printed) == sorted(f"recallbench hook {e}" for e in EVENTS)
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


def test_install_creates_a_missing_user_settings_file_under_claude_config_dir(home: Path) -> None:
    path = home / "claude" / "settings.json"
    assert not path.exists()
    invoke_hooks("install")
    assert our_commands(json.loads(path.read_text(encoding="utf-8"))) == sorted(
        f"recallbench hook {e}" for e in EVENTS
    )


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

"""Running the UserPromptSubmit hook as Claude Code does (through `recallbench hook`), for the tests."""

from __future__ import annotations

import json

from click.testing import CliRunner

from recallbench.serve_cli import hook_command


def inject(prompt: str, *, session: str, cwd: str, transcript: str = "") -> str:
    """What the prompt hook prints for `prompt` typed in `session` (its transcript at `transcript`)
    in the project at `cwd`; the hook must exit 0."""
    payload = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    result = CliRunner().invoke(
        hook_command, ["UserPromptSubmit"], input=json.dumps(payload), catch_exceptions=False
    )
    assert result.exit_code == 0
    return result.stdout

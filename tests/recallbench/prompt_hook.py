"""Running the UserPromptSubmit hook as Claude Code does (through `recallbench hook`), for the tests."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recallbench.serve_cli import hook_command
from tests.engine.fixtures_transcripts import write_jsonl
from tests.recallbench.corpus import ALPHA, chat_session

# The texts the prompt hook's session tests share: a question about a flaky test and its answer, and
# another session's question about the same test in its own words (5 of its 6 content words), so that
# both are injected for the question; and a session that is neither stored nor on disk.
PROMPT = "Why does the flaky retry test in the importer fail on CI?"
ANSWER = "The retry decorator swallowed the timeout error."
OTHER_TEXT = "Did the flaky retry test in the importer fail on the nightly build too?"
FRESH = "0f0f0f0f-0000-4000-8000-000000000009"


def run_hook(event: str, *, session: str, cwd: str, transcript: str = "", **fields: str) -> str:
    """What the hook for `event` prints in `session` (its transcript at `transcript`) in the project
    at `cwd`, with the event's own `fields` in its stdin; the hook must exit 0."""
    payload = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": cwd,
        "hook_event_name": event,
        **fields,
    }
    result = CliRunner().invoke(
        hook_command, [event], input=json.dumps(payload), catch_exceptions=False
    )
    assert result.exit_code == 0
    return result.stdout


def inject(prompt: str, *, session: str, cwd: str, transcript: str = "") -> str:
    """What the prompt hook prints for `prompt` typed in `session` (its transcript at `transcript`)
    in the project at `cwd`; the hook must exit 0."""
    return run_hook(
        "UserPromptSubmit", session=session, cwd=cwd, transcript=transcript, prompt=prompt
    )


def write_other(folder: Path, session: str) -> Path:
    """`session`'s transcript in `folder` (a projects folder's project): OTHER_TEXT asked in the alpha
    project, and answered."""
    turns = [(OTHER_TEXT, "Yes, twice this week.")]
    return write_jsonl(folder / f"{session}.jsonl", chat_session(session, ALPHA, turns, minute=40))

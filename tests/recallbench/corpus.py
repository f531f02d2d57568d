"""A small two-project corpus of Claude Code sessions, shared by the hook, MCP and concurrency tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.embed import HashEmbedder
from engine.memory import Memory
from tests.engine.fixtures_transcripts import (
    Line,
    assistant_lines,
    simple_session,
    text_block,
    ts,
    user_line,
    write_jsonl,
)

ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
SID_A1 = "aaaaaaaa-0000-4000-8000-000000000001"
SID_A2 = "aaaaaaaa-0000-4000-8000-000000000002"
SID_B1 = "bbbbbbbb-0000-4000-8000-000000000001"


def chat_session(sid: str, cwd: str, turns: list[tuple[str, str]], minute: int = 0) -> list[Line]:
    """A session of (prompt, answer) turns; line uuids are derived from the session id."""
    lines: list[Line] = []
    parent: str | None = None
    for n, (prompt, answer) in enumerate(turns):
        u, a = f"{sid}-u{n}", f"{sid}-a{n}"
        env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
        lines.append(user_line(prompt, uuid=u, parent=parent, timestamp=ts(minute + n), **env))
        lines.extend(
            assistant_lines(
                [text_block(answer)],
                message_id=f"msg-{a}",
                uuids=[a],
                parent=u,
                timestamp=ts(minute + n, 30),
                **env,
            )
        )
        parent = a
    return lines


def write_corpus(root: Path) -> dict[str, Path]:
    """Two alpha sessions and one beta session under a Claude-style projects folder."""
    return {
        SID_A1: write_jsonl(
            root / "-home-dev-alpha" / f"{SID_A1}.jsonl",
            simple_session(
                "Why does the flaky retry test in the importer fail on CI?",
                session_id=SID_A1,
                cwd=ALPHA,
                answer="The retry decorator swallowed the timeout error.",
                prefix="a1-",
            ),
        ),
        SID_A2: write_jsonl(
            root / "-home-dev-alpha" / f"{SID_A2}.jsonl",
            chat_session(
                SID_A2,
                ALPHA,
                [("Rename the config loader module", "Renamed loader.py to settings.py.")],
                minute=20,
            ),
        ),
        SID_B1: write_jsonl(
            root / "-home-dev-beta" / f"{SID_B1}.jsonl",
            simple_session(
                "Schedule the postgres backup cron job for the retry queue",
                session_id=SID_B1,
                cwd=BETA,
                answer="Backups of the retry queue run nightly at 3am.",
                prefix="b1-",
            ),
        ),
    }


def import_corpus(db: Path, root: Path) -> Memory:
    memory = Memory(db, HashEmbedder())
    report = memory.import_paths([root])
    assert report.files_failed == {}
    return memory

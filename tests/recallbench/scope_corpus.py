"""Two real project folders, one reachable through the other, for the scope probes of the CLI, MCP
tools and hooks.

B's path is longer than A's on purpose: the old resolver kept the longest match across the lexical and
the resolved path, so `B/../alpha` and `B/link-to-alpha` came out as B.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.embed import HashEmbedder
from engine.memory import Memory
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

SID_A = "5c0be000-0000-4000-8000-00000000000a"
SID_B = "5c0be000-0000-4000-8000-00000000000b"
A_TEXT = "The retry decorator swallowed the timeout error."
B_TEXT = "Backups of the retry queue run nightly at 3am."
PROMPT = "why does the flaky retry test fail on CI again?"


@dataclass(frozen=True, kw_only=True)
class TwoProjects:
    alpha: Path  # project A
    beta: Path  # project B, holding a way back to A
    through_dotdot: Path  # B/../alpha, lexically under B
    through_link: Path  # B/link-to-alpha, a symlink to A inside B
    sub: Path  # a folder inside A without sessions of its own
    db: Path


def two_projects(tmp_path: Path, db: Path) -> TwoProjects:
    """Import one session in A and one in B into `db` and lay out the paths that pass through B."""
    base = tmp_path.resolve() / "work"
    alpha = base / "alpha"
    beta = base / "beta-project-with-a-longer-path"
    (alpha / "src").mkdir(parents=True)
    beta.mkdir(parents=True)
    (beta / "link-to-alpha").symlink_to(alpha, target_is_directory=True)
    root = tmp_path / "transcripts"
    write_jsonl(
        root / "a" / f"{SID_A}.jsonl",
        simple_session(
            "Why does the flaky retry test in the importer fail on CI?",
            session_id=SID_A,
            cwd=str(alpha),
            answer=A_TEXT,
            prefix="a-",
        ),
    )
    write_jsonl(
        root / "b" / f"{SID_B}.jsonl",
        simple_session(
            "Why does the flaky retry test of the postgres backup cron job fail on CI?",
            session_id=SID_B,
            cwd=str(beta),
            answer=B_TEXT,
            prefix="b-",
        ),
    )
    memory = Memory(db, HashEmbedder())
    try:
        assert memory.import_paths([root]).files_failed == {}
    finally:
        memory.close()
    return TwoProjects(
        alpha=alpha,
        beta=beta,
        through_dotdot=Path(f"{beta}/../alpha"),
        through_link=beta / "link-to-alpha",
        sub=alpha / "src",
        db=db,
    )

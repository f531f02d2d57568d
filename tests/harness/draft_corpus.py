"""A hand-built corpus for drafting: eleven one-message sessions with known projects, times and words.

Each session is one typed prompt, so each is exactly one chunk. Sorted by time, the nine dated eligible
chunks fall into terciles by rank (0-2 old, 3-5 middle, 6-8 recent):

    rank  session  project  day         age
    0     s00      alpha    2026-01-01  old
    1     s01      alpha    2026-01-02  old      first line starts COPYME (the generator copies it)
    2     s02      beta     2026-01-03  old
    3     s03      alpha    2026-02-01  middle
    4     s04      alpha    2026-02-02  middle   holds FAILME (the generator exits 3)
    5     s05      alpha    2026-02-03  middle
    6     s06      beta     2026-03-01  recent   holds EMPTYME (the generator prints nothing)
    7     s07      beta     2026-03-02  recent
    8     s08      alpha    2026-03-03  recent
    -     s09      beta     (no time)   undated
    -     s10      alpha    2026-01-15  too short to ask about (under 200 characters)

Every text shares one filler sentence and has a first line of words found in no other session, so those
words are rare (document frequency 1). None of the test generator's paraphrase words (talk, short,
change, code, fixing) occurs anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.engine.fixtures_transcripts import user_line, write_jsonl

ALPHA = "/home/dev/alpha"
BETA = "/home/dev/beta"
GENERATOR = Path(__file__).with_name("draft_generator.py")
FILLER = (
    "We looked at the parser output and the retry queue together before lunch, then wrote down "
    "what the nightly job printed, compared it with yesterday and agreed on the next step for the "
    "release notes and the deploy checklist."
)
# session -> (project, ISO day or None, first line)
SESSIONS: dict[str, tuple[str, str | None, str]] = {
    "s00": (ALPHA, "2026-01-01", "the walrus ledger drifted"),
    "s01": (ALPHA, "2026-01-02", "COPYME the zorblax frobnicator broke in quux loader"),
    "s02": (BETA, "2026-01-03", "the pelican cache went stale"),
    "s03": (ALPHA, "2026-02-01", "the otter scheduler skipped a beat"),
    "s04": (ALPHA, "2026-02-02", "FAILME the badger importer hung"),
    "s05": (ALPHA, "2026-02-03", "the heron exporter doubled rows"),
    "s06": (BETA, "2026-03-01", "EMPTYME the lynx renderer flickered"),
    "s07": (BETA, "2026-03-02", "the moose tokenizer split emoji"),
    "s08": (ALPHA, "2026-03-03", "the falcon webhook retried forever"),
    "s09": (BETA, None, "the gecko mailer lost attachments"),
    "s10": (ALPHA, "2026-01-15", "tiny note"),
}
SHORT = "s10"


def session_id(name: str) -> str:
    """The full session id of a short name like ``s03``."""
    return f"dddddddd-0000-4000-8000-0000000000{name[1:]}"


def message_uuid(name: str) -> str:
    """The uuid of a session's one message."""
    return f"{session_id(name)[:8]}-{name}-msg"


def text_of(name: str) -> str:
    """The prompt of a session: its first line, then the shared filler (only a first line for s10)."""
    first = SESSIONS[name][2]
    return first if name == SHORT else f"{first}\n{FILLER}"


def write_corpus(root: Path) -> Path:
    """Write the corpus as a flat folder of ``<session>.jsonl`` files under `root`; return `root`."""
    for name, (project, day, _) in SESSIONS.items():
        sid = session_id(name)
        line = user_line(
            text_of(name),
            uuid=message_uuid(name),
            session_id=sid,
            cwd=project,
            timestamp=f"{day}T10:00:00.000Z" if day else None,
        )
        if day is None:
            del line["timestamp"]
        write_jsonl(root / f"{sid}.jsonl", [line])
    return root


def generator_command(mode: str = "paraphrase") -> str:
    """The test generator as a --generator value (this Python, an absolute script path)."""
    return f"{sys.executable} {GENERATOR} {mode}"

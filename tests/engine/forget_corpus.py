"""A corpus with a string to forget planted in it, and a byte scan of the files that could keep it.

The planted session (in project alpha) says the string to forget in a prompt, an answer and a Bash
command (so the stored stream state quotes it too); it also says a second string that is never
forgotten, the positive control of every "it is gone" check. The two strings share no FTS5 term and no
term prefix, so a term left in an index segment would show in a byte scan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.engine.fixtures_transcripts import (
    Line,
    assistant_lines,
    text_block,
    tool_result_line,
    tool_use_block,
    ts,
    user_line,
    write_jsonl,
)
from tests.recallbench.corpus import ALPHA, write_corpus

PLANTED = "zqvortex-marmalade-5521"  # the string forgotten
TERM = b"zqvortex"  # the FTS5 term it gives (lower case); also part of the string
KEPT = "yxpelican-harbinger-8830"  # said in the same session and never forgotten
KEPT_ELSEWHERE = "wbquasar-tangerine-6604"  # said in another session, never forgotten
SID_P = "dddddddd-0000-4000-8000-000000000001"
SID_K = "dddddddd-0000-4000-8000-000000000002"
PLANTED_QUERY = f"the staging credential {PLANTED}"
KEPT_QUERY = f"the archive password {KEPT}"
KEPT_ELSEWHERE_QUERY = f"the release signing passphrase {KEPT_ELSEWHERE}"


def planted_session(sid: str = SID_P, cwd: str = ALPHA) -> list[Line]:
    """Six messages: the string to forget in messages 1-4, the kept string in messages 5-6."""
    env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
    return [
        user_line(
            f"Remember the staging credential {PLANTED} for the deploy job",
            uuid="p-u1",
            timestamp=ts(40),
            **env,
        ),
        *assistant_lines(
            [
                text_block("Let me look for where it is used."),
                tool_use_block("p-t1", "Bash", {"command": f"grep -rn {PLANTED} deploy/"}),
            ],
            message_id="p-msg_1",
            uuids=["p-a1", "p-a2"],
            parent="p-u1",
            timestamp=ts(41),
            **env,
        ),
        tool_result_line(
            "p-t1", "deploy/job.yaml:3: token", uuid="p-r1", parent="p-a2", timestamp=ts(42), **env
        ),
        *assistant_lines(
            [text_block(f"The staging credential {PLANTED} is used by deploy/job.yaml only.")],
            message_id="p-msg_2",
            uuids=["p-a3"],
            parent="p-r1",
            timestamp=ts(43),
            **env,
        ),
        user_line(
            f"And the archive password is {KEPT}; note it for the backups",
            uuid="p-u2",
            parent="p-a3",
            timestamp=ts(44),
            **env,
        ),
        *assistant_lines(
            [text_block(f"Noted: the archive password {KEPT} opens the backup archive.")],
            message_id="p-msg_3",
            uuids=["p-a4"],
            parent="p-u2",
            timestamp=ts(45),
            **env,
        ),
    ]


def kept_session(sid: str = SID_K, cwd: str = ALPHA) -> list[Line]:
    env: dict[str, Any] = {"session_id": sid, "cwd": cwd}
    return [
        user_line(
            f"The release signing passphrase is {KEPT_ELSEWHERE}",
            uuid="k-u1",
            timestamp=ts(50),
            **env,
        ),
        *assistant_lines(
            [text_block(f"Understood, {KEPT_ELSEWHERE} signs the release builds.")],
            message_id="k-msg_1",
            uuids=["k-a1"],
            parent="k-u1",
            timestamp=ts(51),
            **env,
        ),
    ]


def write_forget_corpus(root: Path) -> dict[str, Path]:
    """The shared two-project corpus plus the planted and the kept session, under `root`."""
    files = write_corpus(root)
    files[SID_P] = write_jsonl(root / "-home-dev-alpha" / f"{SID_P}.jsonl", planted_session())
    files[SID_K] = write_jsonl(root / "-home-dev-alpha" / f"{SID_K}.jsonl", kept_session())
    return files


def byte_counts(folder: Path, needle: bytes) -> dict[str, int]:
    """Occurrences of `needle` in every file under `folder` (by path below it), sockets excluded."""
    out: dict[str, int] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(folder).as_posix()] = path.read_bytes().count(needle)
    return out


def scan_table(before: dict[str, int], after: dict[str, int], needle: bytes) -> str:
    """A table a person can read: each file's count of `needle` before and after."""
    names = sorted(set(before) | set(after))
    width = max([len(n) for n in names] + [4])
    lines = [f"byte scan for {needle.decode()!r}", f"{'file':<{width}}  before  after"]
    for name in names:
        b = before.get(name, "-")
        a = after.get(name, "-")
        lines.append(f"{name:<{width}}  {b!s:>6}  {a!s:>5}")
    lines.append(f"{'total':<{width}}  {sum(before.values()):>6}  {sum(after.values()):>5}")
    return "\n".join(lines)

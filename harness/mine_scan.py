"""Read git commits out of transcripts: the reading half of the receipt miner (`harness.mine`).

Each transcript file is parsed and sanitized the way the importer does. A Bash ``tool_use`` whose command
runs ``git commit`` is paired by id with its ``tool_result``; git's ``[branch abc1234] subject`` line in
that result is a commit the session made (`Found`). Every other place such a line turns up -- the result
of another command (``cat``, ``git cherry-pick``), a result whose call is not in the file, this project's
own MCP results, a self-transcript -- is recorded as a `Stray` with the reason, so that a reviewer (and a
test comparing with a plain scan of the files) can account for every commit line in the corpus. A file
that cannot be read is counted and passed over: one strange record never stops the miner.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from engine.model import Message, ToolResult, ToolUse
from engine.sanitize import sanitize
from engine.transcripts import StreamState, TranscriptFile, parse_file

__all__ = [
    "Attempt",
    "Found",
    "ScannedSession",
    "Stray",
    "commit_lines",
    "is_git_commit",
    "message_from_command",
    "scan_file",
]

_GIT_COMMIT = re.compile(
    r"(?<![\w./-])git\s+(?:(?:-[Cc]|--git-dir|--work-tree)(?:\s+|=)\S+\s+|-{1,2}[\w-]+(?:=\S+)?\s+)*"
    r"commit(?![\w-])"
)
_GIT = re.compile(r"(?<![\w./-])git\s")
_COMMIT_LINE = re.compile(
    r"^\[(?P<branch>[^\]\n]+?) (?P<hash>[0-9a-f]{7,40})\] (?P<subject>[^\n]*?)\s*$", re.M
)
_FULL_LINE = re.compile(r"^\s*(?P<hash>[0-9a-f]{40})\s*$", re.M)
FULL_HASH = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])")
_HEREDOC = re.compile(
    r"<<-?\s*(?P<q>['\"]?)(?P<tag>[A-Za-z_]\w*)(?P=q)[^\n]*\n(?P<body>.*?)\n[ \t]*(?P=tag)[ \t]*(?:\n|\)|$)",
    re.S,
)
_MESSAGE_FLAG = re.compile(
    r"(?:^|\s)(?:-[a-zA-Z]*m|--message)(?:=|\s+)"
    r"(?:\"(?P<dq>(?:[^\"\\]|\\.)*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s;&|'\"]+))"
)
_REVPARSE = re.compile(r"\bgit\b.*\b(?:rev-parse|log|show)\b", re.S)

StrayReason = Literal[
    "not_git_commit", "other_git_command", "no_call", "own_mcp_result", "self_transcript"
]


def is_git_commit(command: str) -> bool:
    """Whether a shell command runs ``git commit`` (also ``git -C dir commit``)."""
    return _GIT_COMMIT.search(command) is not None


def commit_lines(result: str) -> list[tuple[str, str, str]]:
    """``(branch, hash, subject)`` for each ``[branch hash] subject`` line git printed."""
    out: list[tuple[str, str, str]] = []
    for m in _COMMIT_LINE.finditer(result):
        branch = m.group("branch").removesuffix(" (root-commit)")
        out.append((branch, m.group("hash"), m.group("subject").strip()))
    return out


def message_from_command(command: str) -> str | None:
    """The first line of the commit message given on the command line, or None.

    Reads a heredoc (``-m "$(cat <<'EOF' ... EOF)"`` or ``-F - <<EOF``) first, then ``-m "..."``,
    ``-m '...'``, ``--message=...``, ``-am "..."`` and an unquoted ``-m word``.
    """
    match = _GIT_COMMIT.search(command)
    tail = command[match.end() :] if match else command
    heredoc = _HEREDOC.search(tail)
    if heredoc is not None:
        return _first_line(heredoc.group("body"))
    flag = _MESSAGE_FLAG.search(tail)
    if flag is None:
        return None
    if flag.group("dq") is not None:
        text = re.sub(r"\\(.)", r"\1", flag.group("dq"))
    elif flag.group("sq") is not None:
        text = flag.group("sq")
    else:
        text = flag.group("bare")
    return _first_line(text)


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return None


@dataclass(frozen=True, kw_only=True)
class Found:
    """A commit a session's own ``git commit`` printed (raw: not yet redacted)."""

    hash: str
    subject: str | None
    source: Literal["result", "command"]  # git's commit line, or ``-m`` of a quiet commit
    branch: str | None
    call_id: str  # the git commit tool_use id
    # The stored message uuids of the work this commit recorded: this file's messages after its
    # previous commit's result, through the call and its result (gold for unit ``message``).
    span: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One ``git commit`` call, whether or not it printed a hash (hooks refuse some)."""

    call_id: str
    message: str | None  # the first line of its ``-m`` message, as typed


@dataclass(frozen=True, kw_only=True)
class Stray:
    """A git commit line found where it is not a commit this session made, and why."""

    hash: str
    subject: str
    reason: StrayReason


@dataclass(kw_only=True)
class ScannedSession:
    """What one session's files hold, gathered over its main file and its subagent files."""

    session_id: str
    project: str | None = None
    self_transcript: bool = False
    texts: list[str] = field(default_factory=list)  # sanitized, as the store would hold them
    full_hashes: set[str] = field(default_factory=set)
    found: list[Found] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    strays: list[Stray] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)  # (call id, hash) already found


def scan_file(
    tf: TranscriptFile, sessions: dict[str, ScannedSession], counts: Counter[str]
) -> None:
    """Add what `tf` holds to its session in `sessions`; an unreadable file is counted, not raised."""
    session = sessions.setdefault(tf.session_id, ScannedSession(session_id=tf.session_id))
    state = StreamState()
    if tf.agent_id is not None and session.self_transcript:
        # A subagent's first prompt is written by its parent, not by our marker (as the importer does).
        state.self_transcript = True
    try:
        parsed = parse_file(tf.path, state=state, session_id=tf.session_id)
    except (OSError, ValueError) as exc:
        counts[f"files_unreadable:{type(exc).__name__}"] += 1
        return
    for reason, n in parsed.skipped.items():
        counts[f"lines_skipped:{reason}"] += n
    scrubbed: Counter[str] = Counter()
    clean = sanitize(parsed.messages, state, scrubbed)
    for kind in ("own_mcp_call", "own_mcp_result", "self_transcript_message"):
        counts[kind] += scrubbed[kind]
    if state.self_transcript:
        if tf.agent_id is None:
            session.self_transcript = True
        counts["self_transcript_streams"] += 1
        _strays_everywhere(parsed.messages, session, "self_transcript")
        return
    if session.project is None:
        session.project = state.cwd
    texts = [m.text for m in clean]
    session.texts.extend(texts)
    # Full hashes come from sanitized text (never from our injected context) and, below, from raw
    # tool results, which the sanitizer caps but a long `git log` may need whole.
    session.full_hashes.update(h for t in texts for h in FULL_HASH.findall(t))
    _scan_messages(parsed.messages, state, session, counts, {m.uuid for m in clean})


def _strays_everywhere(
    messages: Sequence[Message], session: ScannedSession, reason: StrayReason
) -> None:
    for msg in messages:
        for block in msg.blocks:
            if isinstance(block, ToolResult):
                _add_strays(block.content, session, reason)


def _add_strays(result: str, session: ScannedSession, reason: StrayReason) -> None:
    for _, hash_, subject in commit_lines(result):
        session.strays.append(Stray(hash=hash_, subject=subject, reason=reason))


def _scan_messages(
    messages: Sequence[Message],
    state: StreamState,
    session: ScannedSession,
    counts: Counter[str],
    stored: set[str],
) -> None:
    """Pair each Bash ``git commit`` call with its result; collect full hashes the session shows.

    `stored` holds the uuids of the messages the sanitizer keeps: only those can be gold.
    """
    commands: dict[str, tuple[str, str]] = {}  # tool_use id -> (tool name, command)
    pending: set[str] = set()
    span: list[str] = []  # stored messages since the last commit this file recorded
    for msg in messages:
        if msg.uuid in stored and msg.uuid not in span:
            span.append(msg.uuid)
        for block in msg.blocks:
            if isinstance(block, ToolUse):
                command = block.input.get("command")
                text = command if isinstance(command, str) else ""
                commands[block.id] = (block.name, text)
                if block.name == "Bash" and is_git_commit(text):
                    pending.add(block.id)
                    counts["git_commit_calls"] += 1
                    session.attempts.append(
                        Attempt(call_id=block.id, message=message_from_command(text))
                    )
            elif isinstance(block, ToolResult):
                if block.tool_use_id in state.suppressed_tool_ids:
                    # our own MCP results are never receipts nor hash sources
                    _add_strays(block.content, session, "own_mcp_result")
                    continue
                session.full_hashes.update(FULL_HASH.findall(block.content))
                if block.tool_use_id in pending:
                    pending.discard(block.tool_use_id)
                    counts["git_commit_results"] += 1
                    if _read_commit(
                        block, commands[block.tool_use_id][1], session, counts, tuple(span)
                    ):
                        span.clear()
                else:
                    _add_strays(block.content, session, _stray_reason(commands, block.tool_use_id))
    counts["git_commit_unanswered"] += len(pending)


def _stray_reason(commands: dict[str, tuple[str, str]], call_id: str) -> StrayReason:
    call = commands.get(call_id)
    if call is None:
        return "no_call"  # the call is in another file, or the line holding it was unreadable
    name, command = call
    return "other_git_command" if name == "Bash" and _GIT.search(command) else "not_git_commit"


def _read_commit(
    block: ToolResult,
    command: str,
    session: ScannedSession,
    counts: Counter[str],
    span: tuple[str, ...],
) -> bool:
    """Record the commit(s) a result shows; False when it shows none (refused, quiet or failed)."""
    lines = commit_lines(block.content)
    found = [
        Found(
            hash=h,
            subject=s or None,
            source="result",
            branch=b,
            call_id=block.tool_use_id,
            span=span,
        )
        for b, h, s in lines
    ]
    if not found:
        bare = _FULL_LINE.findall(block.content) if _REVPARSE.search(command) else []
        if bare:
            # `git commit -q ... && git rev-parse HEAD`: the last hash printed is the new HEAD.
            found.append(
                Found(
                    hash=bare[-1],
                    subject=message_from_command(command),
                    source="command",
                    branch=None,
                    call_id=block.tool_use_id,
                    span=span,
                )
            )
    if not found:
        counts["commits_without_hash"] += 1  # failed (hook, nothing to commit) or quiet
        return False
    for item in found:
        if (item.call_id, item.hash) in session.seen:
            # A compacted or resumed stream replays the same call: one commit, counted once.
            counts["duplicate_commit_lines"] += 1
            continue
        session.seen.add((item.call_id, item.hash))
        session.found.append(item)
        counts["commits_with_hash"] += 1
    return True

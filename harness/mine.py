"""Draft a receipt-lookup roster from a private transcript corpus: commit message -> authoring session.

A **receipt** is a commit whose hash a session's own ``git commit`` printed. The miner reads transcripts
the way the importer does (`engine.transcripts.discover` / `parse_file`, then `engine.sanitize.sanitize`
so that self-transcripts and this project's own MCP results are never mined) and finds:

* **authors** -- a Bash ``tool_use`` whose command runs ``git commit`` (also ``git -C dir commit``),
  paired by id with its ``tool_result``, which carries git's ``[branch abc1234] subject`` line. A
  result without that line but with a bare 40-hex line (``git commit -q ... && git rev-parse HEAD``)
  counts too, its subject then read from the command's ``-m "..."`` (or heredoc
  ``-m "$(cat <<'EOF' ... EOF)"``: the first line). A short hash is mapped to the full one when a
  40-hex string starting with it appears in the same session (a later ``git log`` or ``rev-parse``).
* **citations** -- any other session whose stored (sanitized) text mentions the hash: it quotes the
  commit without having made it. Citations are listed apart and never proposed as gold.

The query is the commit subject (redacted like stored text). Subjects shorter than `MIN_SUBJECT`
characters are skipped and counted. Commits sharing a subject (an ``--amend --no-edit``, the same commit
in two sessions) become one question whose gold lists every authoring session. Whatever git command
other than ``commit`` made a commit (cherry-pick, revert, merge) is not mined: the user reviews drafts.

`MinedRoster.write` writes the draft roster (unit ``session``, category ``receipt``, scope = the
authoring sessions' projects, qids ``receipt-<short hash>``) for ``harness.roster.load_draft`` and a
side file ``<name>.mining.json`` holding hashes, citations, skipped commits and counts for review.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from engine.model import Message, ToolResult, ToolUse
from engine.sanitize import redact, sanitize, scrub_private
from engine.transcripts import StreamState, TranscriptFile, discover, parse_file
from harness.roster import RosterError, parse_draft

__all__ = [
    "MIN_SUBJECT",
    "Commit",
    "MineError",
    "MinedRoster",
    "Receipt",
    "SkippedCommit",
    "commit_lines",
    "is_git_commit",
    "message_from_command",
    "mine_receipts",
]

MIN_SUBJECT = 8  # a shorter subject ("wip", "fix") is not a meaningful query
UNKNOWN_PROJECT = "(unknown)"  # what the importer stores for a session without a cwd

_GIT_COMMIT = re.compile(
    r"(?<![\w./-])git\s+(?:(?:-[Cc]|--git-dir|--work-tree)(?:\s+|=)\S+\s+|-{1,2}[\w-]+(?:=\S+)?\s+)*"
    r"commit(?![\w-])"
)
_COMMIT_LINE = re.compile(
    r"^\[(?P<branch>[^\]\n]+?) (?P<hash>[0-9a-f]{7,40})\] (?P<subject>[^\n]*?)\s*$", re.M
)
_FULL_LINE = re.compile(r"^\s*(?P<hash>[0-9a-f]{40})\s*$", re.M)
_FULL_HASH = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])")
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")
_HEREDOC = re.compile(
    r"<<-?\s*(?P<q>['\"]?)(?P<tag>[A-Za-z_]\w*)(?P=q)[^\n]*\n(?P<body>.*?)\n[ \t]*(?P=tag)[ \t]*(?:\n|\)|$)",
    re.S,
)
_MESSAGE_FLAG = re.compile(
    r"(?:^|\s)(?:-[a-zA-Z]*m|--message)(?:=|\s+)"
    r"(?:\"(?P<dq>(?:[^\"\\]|\\.)*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s;&|'\"]+))"
)
_REVPARSE = re.compile(r"\bgit\b.*\b(?:rev-parse|log|show)\b", re.S)


class MineError(ValueError):
    """The corpus cannot be mined or the mined roster cannot be written."""


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, kw_only=True)
class Commit:
    """One commit made inside a session, as read from its git tool result."""

    short: str  # the hash as git printed it (usually 7 characters)
    full: str | None  # the 40-character hash, when the same session shows it
    subject: str  # the query text, redacted
    source: Literal["result", "command"]  # where the subject was read
    branch: str | None
    session_id: str
    project: str

    @property
    def key(self) -> str:
        """The most specific hash known."""
        return self.full or self.short


@dataclass(frozen=True, kw_only=True)
class SkippedCommit:
    """A commit that was found but not turned into a question, and why."""

    hash: str
    session_id: str
    subject: str
    reason: Literal["short_subject", "no_subject"]

    def to_dict(self) -> dict[str, str]:
        return {
            "hash": self.hash,
            "session_id": self.session_id,
            "subject": self.subject,
            "reason": self.reason,
        }


@dataclass(frozen=True, kw_only=True)
class Receipt:
    """One drafted question: a commit subject and the sessions that committed it."""

    qid: str
    text: str
    hashes: tuple[str, ...]  # every commit merged into this question (full hash when known)
    authors: tuple[str, ...]  # session ids, first-seen order
    projects: tuple[str, ...]  # the authors' project cwds, first-seen order
    source: Literal["result", "command"]

    def __post_init__(self) -> None:
        if not self.authors or not self.projects or not self.hashes:
            msg = f"Receipt {self.qid} needs hashes, authors and projects, got {self!r}"
            raise MineError(msg)

    def to_question(self) -> dict[str, Any]:
        """The draft-roster entry (gold: every authoring session, grade 1)."""
        return {
            "qid": self.qid,
            "text": self.text,
            "scope": list(self.projects),
            "category": "receipt",
            "tags": {"hop": "single", "source": "mined"},
            "gold": {"relevant": dict.fromkeys(self.authors, 1), "forbidden": [], "control": None},
        }


@dataclass(frozen=True, kw_only=True)
class MinedRoster:
    """The drafted receipt questions with their citations, skipped commits and counts."""

    name: str
    receipts: tuple[Receipt, ...]
    citations: Mapping[str, tuple[str, ...]]  # hash -> sessions citing it without committing it
    skipped: tuple[SkippedCommit, ...]
    counts: Mapping[str, int]
    sources: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "citations", MappingProxyType(dict(self.citations)))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        # The miner's one promise: a session that only cites a hash is never its author.
        for receipt in self.receipts:
            for hash_ in receipt.hashes:
                wrong = sorted(set(self.citations.get(hash_, ())) & set(receipt.authors))
                if wrong:
                    msg = f"Session(s) {wrong} are listed both as author and as citing {hash_}"
                    raise MineError(msg)

    def draft_json(self) -> dict[str, Any]:
        """The draft roster as `harness.roster.parse_draft` reads it."""
        return {
            "name": self.name,
            "unit": "session",
            "description": (
                "Receipt look-up mined by harness.mine from "
                f"{', '.join(self.sources)}: commit subject -> the session whose git commit printed "
                "the hash. Review before sealing."
            ),
            "questions": [r.to_question() for r in self.receipts],
        }

    def side_json(self) -> dict[str, Any]:
        """Everything a reviewer needs that must not go into the roster."""
        return {
            "name": self.name,
            "sources": list(self.sources),
            "counts": dict(sorted(self.counts.items())),
            "receipts": [
                {
                    "qid": r.qid,
                    "hashes": list(r.hashes),
                    "authors": list(r.authors),
                    "projects": list(r.projects),
                    "subject_from": r.source,
                }
                for r in self.receipts
            ],
            "citations": {h: list(s) for h, s in sorted(self.citations.items())},
            "skipped": [s.to_dict() for s in self.skipped],
        }

    def side_path(self, out_path: Path) -> Path:
        """Where `write` puts the side file: ``<stem>.mining.json`` beside the roster."""
        return Path(out_path).with_name(f"{Path(out_path).stem}.mining.json")

    def write(self, out_path: Path) -> tuple[Path, Path]:
        """Write the draft roster to `out_path` and the side file beside it; return both paths.

        Raises:
            MineError: no receipt was found (a draft needs at least one question), or the draft
                does not validate.
        """
        out_path = Path(out_path)
        if not self.receipts:
            msg = (
                f"No receipts were mined from {list(self.sources)} (counts: "
                f"{dict(sorted(self.counts.items()))}); nothing to write to {out_path}"
            )
            raise MineError(msg)
        draft = self.draft_json()
        try:
            parse_draft(draft, str(out_path))
        except RosterError as err:
            msg = f"The mined roster does not validate as a draft: {err}"
            raise MineError(msg) from err
        out_path.parent.mkdir(parents=True, exist_ok=True)
        side = self.side_path(out_path)
        _write_json(out_path, draft)
        _write_json(side, self.side_json())
        return out_path, side


# ---------------------------------------------------------------------------------------------
# Command and result parsing


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


# ---------------------------------------------------------------------------------------------
# Mining


@dataclass(kw_only=True)
class _Session:
    session_id: str
    project: str | None = None
    self_transcript: bool = False
    texts: list[str] = field(default_factory=list)  # sanitized, as the store would hold them
    full_hashes: set[str] = field(default_factory=set)
    found: list[_Found] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class _Found:
    hash: str
    subject: str | None
    source: Literal["result", "command"]
    branch: str | None


def mine_receipts(
    paths: Sequence[Path], *, name: str = "receipts-mined", min_subject: int = MIN_SUBJECT
) -> MinedRoster:
    """Draft a receipt-lookup roster from the transcripts under `paths` (see the module docstring).

    Raises:
        MineError: `name` cannot name a roster.
        engine.transcripts.TranscriptError: a path does not exist.
    """
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
        msg = f"Roster name must be letters, digits, '.', '_' or '-' (it names the sealed folder), got {name!r}"
        raise MineError(msg)
    counts: Counter[str] = Counter()
    files, skipped_files = discover([Path(p) for p in paths])
    counts["files"] = len(files)
    for reason, n in skipped_files.items():
        counts[f"files_skipped:{reason}"] += n
    sessions: dict[str, _Session] = {}
    for tf in files:
        _scan_file(tf, sessions, counts)
    counts["sessions"] = len(sessions)
    counts["self_transcript_sessions"] = sum(1 for s in sessions.values() if s.self_transcript)
    commits, skipped = _commits(sessions, counts, min_subject)
    receipts = _receipts(commits, counts)
    citations = _citations(sessions, commits, skipped, counts)
    counts["receipts"] = len(receipts)
    return MinedRoster(
        name=name,
        receipts=tuple(receipts),
        citations=citations,
        skipped=tuple(skipped),
        counts=counts,
        sources=tuple(str(p) for p in paths),
    )


def _scan_file(tf: TranscriptFile, sessions: dict[str, _Session], counts: Counter[str]) -> None:
    session = sessions.setdefault(tf.session_id, _Session(session_id=tf.session_id))
    state = StreamState()
    if tf.agent_id is not None and session.self_transcript:
        # A subagent's first prompt is written by its parent, not by our marker (as the importer does).
        state.self_transcript = True
    parsed = parse_file(tf.path, state=state, session_id=tf.session_id)
    scrubbed: Counter[str] = Counter()
    clean = sanitize(parsed.messages, state, scrubbed)
    for kind in ("own_mcp_call", "own_mcp_result", "self_transcript_message"):
        counts[kind] += scrubbed[kind]
    if state.self_transcript:
        if tf.agent_id is None:
            session.self_transcript = True
        counts["self_transcript_streams"] += 1
        return
    if session.project is None:
        session.project = state.cwd
    texts = [m.text for m in clean]
    session.texts.extend(texts)
    # Full hashes come from sanitized text (never from our injected context) and, below, from raw
    # tool results, which the sanitizer caps but a long `git log` may need whole.
    session.full_hashes.update(h for t in texts for h in _FULL_HASH.findall(t))
    _scan_messages(parsed.messages, state, session, counts)


def _scan_messages(
    messages: Sequence[Message], state: StreamState, session: _Session, counts: Counter[str]
) -> None:
    """Pair each Bash ``git commit`` call with its result; collect full hashes the session shows."""
    pending: dict[str, str] = {}  # tool_use id -> command
    for msg in messages:
        for block in msg.blocks:
            if isinstance(block, ToolUse):
                command = block.input.get("command")
                if block.name == "Bash" and isinstance(command, str) and is_git_commit(command):
                    pending[block.id] = command
                    counts["git_commit_calls"] += 1
            elif isinstance(block, ToolResult):
                if block.tool_use_id in state.suppressed_tool_ids:
                    continue  # our own MCP results are never receipts nor hash sources
                session.full_hashes.update(_FULL_HASH.findall(block.content))
                command = pending.pop(block.tool_use_id, None)
                if command is not None:
                    counts["git_commit_results"] += 1
                    _read_commit(command, block.content, session, counts)
    counts["git_commit_unanswered"] += len(pending)


def _read_commit(command: str, result: str, session: _Session, counts: Counter[str]) -> None:
    lines = commit_lines(result)
    for branch, hash_, subject in lines:
        session.found.append(
            _Found(hash=hash_, subject=subject or None, source="result", branch=branch)
        )
    if lines:
        counts["commits_with_hash"] += len(lines)
        return
    bare = _FULL_LINE.findall(result) if _REVPARSE.search(command) else []
    if bare:
        # `git commit -q ... && git rev-parse HEAD`: the last hash printed is the new HEAD.
        session.found.append(
            _Found(
                hash=bare[-1], subject=message_from_command(command), source="command", branch=None
            )
        )
        counts["commits_with_hash"] += 1
        return
    counts["commits_without_hash"] += 1  # failed (hook, nothing to commit) or quiet


def _commits(
    sessions: Mapping[str, _Session], counts: Counter[str], min_subject: int
) -> tuple[list[Commit], list[SkippedCommit]]:
    commits: list[Commit] = []
    skipped: list[SkippedCommit] = []
    for session in sessions.values():
        if session.self_transcript:
            continue
        for found in session.found:
            full = _full_hash(found.hash, session.full_hashes)
            if full is not None and full != found.hash:
                counts["full_hash_resolved"] += 1
            subject = _clean_subject(found.subject)
            key = full or found.hash
            if subject is None:
                skipped.append(
                    SkippedCommit(
                        hash=key, session_id=session.session_id, subject="", reason="no_subject"
                    )
                )
                counts["no_subject"] += 1
                continue
            if len(subject) < min_subject:
                skipped.append(
                    SkippedCommit(
                        hash=key,
                        session_id=session.session_id,
                        subject=subject,
                        reason="short_subject",
                    )
                )
                counts["short_subject"] += 1
                continue
            if session.project is None:
                counts["unknown_project"] += 1
            commits.append(
                Commit(
                    short=found.hash[:7] if len(found.hash) == 40 else found.hash,
                    full=full,
                    subject=subject,
                    source=found.source,
                    branch=found.branch,
                    session_id=session.session_id,
                    project=session.project or UNKNOWN_PROJECT,
                )
            )
    return commits, skipped


def _full_hash(printed: str, fulls: Iterable[str]) -> str | None:
    if len(printed) == 40:
        return printed
    matches = sorted({f for f in fulls if f.startswith(printed)})
    return matches[0] if len(matches) == 1 else None


def _clean_subject(subject: str | None) -> str | None:
    if subject is None:
        return None
    text, _ = scrub_private(subject)
    text, _ = redact(text)
    text = " ".join(text.split())
    return text or None


def _receipts(commits: Sequence[Commit], counts: Counter[str]) -> list[Receipt]:
    """Group commits by subject (case and spacing folded); one question per subject."""
    groups: dict[str, list[Commit]] = {}
    for commit in commits:
        groups.setdefault(commit.subject.casefold(), []).append(commit)
    receipts: list[Receipt] = []
    used: set[str] = set()
    for group in groups.values():
        hashes = tuple(dict.fromkeys(c.key for c in group))
        authors = tuple(dict.fromkeys(c.session_id for c in group))
        if len(group) > 1:
            counts["merged_same_subject"] += len(group) - 1
        if len(authors) > 1:
            counts["multi_author_receipts"] += 1
        qid = _unique_qid(f"receipt-{group[0].short}", used)
        receipts.append(
            Receipt(
                qid=qid,
                text=group[0].subject,
                hashes=hashes,
                authors=authors,
                projects=tuple(dict.fromkeys(c.project for c in group)),
                source=group[0].source,
            )
        )
    return receipts


def _unique_qid(base: str, used: set[str]) -> str:
    qid, n = base, 2
    while qid in used:
        qid, n = f"{base}-{n}", n + 1
    used.add(qid)
    return qid


def _citations(
    sessions: Mapping[str, _Session],
    commits: Sequence[Commit],
    skipped: Sequence[SkippedCommit],
    counts: Counter[str],
) -> dict[str, tuple[str, ...]]:
    """Per commit hash, the non-author sessions whose stored text mentions it."""
    authors: dict[str, set[str]] = {}
    for c in commits:
        authors.setdefault(c.key, set()).add(c.session_id)
    for s in skipped:
        authors.setdefault(s.hash, set()).add(s.session_id)
    tokens = {
        sid: set(_HEX_TOKEN.findall("\n".join(s.texts)))
        for sid, s in sessions.items()
        if not s.self_transcript
    }
    out: dict[str, tuple[str, ...]] = {}
    for key, author_sids in authors.items():
        citing = tuple(
            sid
            for sid, found in tokens.items()
            if sid not in author_sids and any(_cites(t, key) for t in found)
        )
        if citing:
            out[key] = citing
            counts["citations"] += len(citing)
    counts["citing_sessions"] = len({s for c in out.values() for s in c})
    return out


def _cites(token: str, key: str) -> bool:
    """A hex token names the commit: a prefix of its full hash, or an extension of the short one."""
    if len(key) == 40:
        return key.startswith(token)
    return token.startswith(key) or key.startswith(token)


def _write_json(path: Path, data: object) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    path.write_bytes(text.encode("utf-8"))

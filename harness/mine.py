"""Draft a receipt-lookup roster from a private transcript corpus: commit message -> authoring session.

A **receipt** is a commit whose hash a session's own ``git commit`` printed. The miner reads transcripts
the way the importer does (`engine.transcripts.discover` / `parse_file`, then `engine.sanitize.sanitize`
so that self-transcripts and this project's own MCP results are never mined); `harness.mine_scan` finds:

* **commits** -- a Bash ``tool_use`` whose command runs ``git commit`` (also ``git -C dir commit``),
  paired by id with its ``tool_result``, which carries git's ``[branch abc1234] subject`` line. A
  result without that line but with a bare 40-hex line (``git commit -q ... && git rev-parse HEAD``)
  counts too, its subject then read from the command's ``-m "..."`` (first line).
* **citations** -- any other session whose stored (sanitized) text mentions the hash: it quotes the
  commit without having made it. Citations are listed apart and never proposed as gold.

Authorship is a property of the commit, not of one session's view of it. A short hash is resolved to the
full one a session shows (a later ``git log`` or ``rev-parse``), else to the one full hash in the whole
corpus that starts with it; a short hash left unresolved joins the one longer hash it prefixes. Commits
with one identity, and commits sharing a subject (an ``--amend``, the same subject committed twice, a
resumed session holding a copy of the call), are one question whose gold lists every session that holds
one of them; its citing sessions are, by construction, the others.

Nothing stops the miner but a bad roster name or a missing path: an unreadable file, a line that is not
JSON, a commit with no usable subject, a commit line printed by ``cat`` or ``git cherry-pick`` -- each is
skipped and counted under its reason (`MinedRoster.counts`, ``skipped`` in the side file). Subjects shorter
than `MIN_SUBJECT` characters are not questions.

`MinedRoster.write` writes the draft roster (unit ``session``, or ``message`` for the work each
commit recorded; category ``receipt``, scope = the authoring sessions' projects, qids
``receipt-<short hash>``) for ``harness.roster.load_draft`` and a side file ``<name>.mining.json`` holding hashes, citations, skipped commits and counts for review.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from engine.sanitize import redact, scrub_private
from engine.transcripts import discover
from harness.mine_scan import (
    Attempt,
    ScannedSession,
    commit_lines,
    is_git_commit,
    message_from_command,
    scan_file,
)
from harness.roster import RosterError, Unit, alone_in_scope, parse_draft

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

# Parser skip reasons that mean a line was damaged or of an unknown shape (not routine line types).
ODD_LINES = frozenset(
    {"malformed_json", "not_object", "no_envelope", "unknown_type", "nested_too_deep",
     "lone_surrogate", "invalid_utf8", "truncated_tail", "unknown_block"}
)  # fmt: skip
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class MineError(ValueError):
    """The corpus cannot be mined or the mined roster cannot be written."""


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, kw_only=True)
class Commit:
    """One commit made inside a session, as read from its git tool result."""

    short: str  # the hash as git printed it (usually 7 characters)
    full: str | None  # the 40-character hash, when the session or the corpus shows it
    subject: str | None  # the query text, redacted; None when git printed none
    printed: str | None  # the subject exactly as printed (the mask removes this string)
    source: Literal["result", "command"]  # where the subject was read
    branch: str | None
    session_id: str
    project: str
    call_id: str  # the git commit tool_use id
    span: tuple[str, ...] = ()  # the work it recorded, as message uuids (`harness.mine_scan.Found`)

    @property
    def key(self) -> str:
        """The most specific hash known."""
        return self.full or self.short


@dataclass(frozen=True, kw_only=True)
class SkippedCommit:
    """A commit line that was found but not turned into a question, and why."""

    hash: str
    session_id: str
    subject: str
    reason: str  # short_subject, no_subject, or a `harness.mine_scan.StrayReason`

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
    commits: tuple[Commit, ...] = ()  # every commit record behind it, first-seen order

    def __post_init__(self) -> None:
        if not self.authors or not self.projects or not self.hashes:
            msg = f"Receipt {self.qid} needs hashes, authors and projects, got {self!r}"
            raise MineError(msg)

    def work(self) -> tuple[str, ...]:
        """The message uuids of the work behind every merged commit, first-seen order."""
        return tuple(dict.fromkeys(u for c in self.commits for u in c.span))

    def to_question(self, unit: Unit = "session") -> dict[str, Any]:
        """The draft-roster entry, gold at grade 1: every authoring session (unit ``session``), or
        the messages of the work each commit recorded, from the authoring session's previous commit
        through this one's call and result (unit ``message``)."""
        gold = self.authors if unit == "session" else self.work()
        return {
            "qid": self.qid,
            "text": self.text,
            "scope": list(self.projects),
            "category": "receipt",
            "tags": {"hop": "single", "source": "mined"},
            "gold": {"relevant": dict.fromkeys(gold, 1), "forbidden": [], "control": None},
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
    attempts: Mapping[str, tuple[Attempt, ...]] = field(default_factory=dict)  # session -> calls
    unit: Unit = "session"

    def __post_init__(self) -> None:
        object.__setattr__(self, "citations", MappingProxyType(dict(self.citations)))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "attempts", MappingProxyType(dict(self.attempts)))
        # The miner's one promise, kept by construction (authors are grouped before citations).
        for receipt in self.receipts:
            for hash_ in receipt.hashes:
                wrong = sorted(set(self.citations.get(hash_, ())) & set(receipt.authors))
                if wrong:
                    msg = f"Session(s) {wrong} are listed both as author and as citing {hash_}"
                    raise MineError(msg)

    def skipped_by_reason(self) -> dict[str, int]:
        """How many commit lines were skipped, per reason."""
        return dict(sorted(Counter(s.reason for s in self.skipped).items()))

    def summary(self) -> list[str]:
        """What was read, found and skipped, in lines for a terminal (the side file has it all)."""
        c = self.counts
        odd = {
            k.split(":", 1)[1]: n
            for k, n in sorted(c.items())
            if k.startswith("lines_skipped:") and k.split(":", 1)[1] in ODD_LINES
        }
        files = {
            k: n for k, n in sorted(c.items()) if k.startswith(("files_skipped:", "files_unr"))
        }
        lines = [
            f"read {c.get('files', 0)} files of {c.get('sessions', 0)} sessions: "
            f"{c.get('git_commit_calls', 0)} git commit calls, {c.get('commits_with_hash', 0)} commits "
            f"with a hash ({c.get('duplicate_commit_lines', 0)} more replayed by compaction or "
            f"resume), {c.get('commits_without_hash', 0)} calls without one (refused or quiet)",
            f"questions: {len(self.receipts)} ({c.get('merged_same_subject', 0)} commits merged into "
            f"another's question: amended or the same subject; {c.get('multi_author_receipts', 0)} "
            f"with more than one session); {len(self.citations)} hashes also cited elsewhere",
            "commit lines skipped: " + _pairs(self.skipped_by_reason()),
            "odd lines skipped: " + _pairs(odd),
        ]
        if files:
            lines.append("files skipped: " + _pairs(files))
        alone = c.get("receipts_alone_in_scope", 0)
        if self.unit == "session" and alone:
            lines.append(
                f"{alone} of {len(self.receipts)} questions ask for the only session of their "
                "project (its scope holds no other), which every memory arm finds at the session unit; "
                "mine with --unit message to make the gold the commit's own work"
            )
        return lines

    def draft_json(self) -> dict[str, Any]:
        """The draft roster as `harness.roster.parse_draft` reads it."""
        return {
            "name": self.name,
            "unit": self.unit,
            "description": (
                "Receipt look-up mined by harness.mine from "
                f"{', '.join(self.sources)}: commit subject -> "
                + (
                    "the session whose git commit printed the hash."
                    if self.unit == "session"
                    else "the messages of the work that commit recorded."
                )
                + " Review before sealing."
            ),
            "questions": [r.to_question(self.unit) for r in self.receipts],
        }

    def side_json(self) -> dict[str, Any]:
        """Everything a reviewer needs that must not go into the roster."""
        return {
            "name": self.name,
            "sources": list(self.sources),
            "counts": dict(sorted(self.counts.items())),
            "skipped_by_reason": self.skipped_by_reason(),
            "receipts": [
                {
                    "qid": r.qid,
                    "hashes": list(r.hashes),
                    "authors": list(r.authors),
                    "projects": list(r.projects),
                    "subject_from": r.source,
                    "commits": [
                        {"session_id": c.session_id, "hash": c.short, "call_id": c.call_id}
                        for c in r.commits
                    ],
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
        write_json(out_path, draft)
        write_json(side, self.side_json())
        return out_path, side


# ---------------------------------------------------------------------------------------------
# Mining


def mine_receipts(
    paths: Sequence[Path],
    *,
    name: str = "receipts-mined",
    min_subject: int = MIN_SUBJECT,
    unit: Unit = "session",
    on_file: Callable[[], None] | None = None,
) -> MinedRoster:
    """Draft a receipt-lookup roster from the transcripts under `paths` (see the module docstring).

    `unit` chooses the gold: the authoring sessions, or the messages of the recorded work.
    `on_file` is called after each file (a progress bar's update).

    Raises:
        MineError: `name` cannot name a roster.
        engine.transcripts.TranscriptError: a path does not exist.
    """
    if not _NAME.match(name):
        msg = f"Roster name must be letters, digits, '.', '_' or '-' (it names the sealed folder), got {name!r}"
        raise MineError(msg)
    counts: Counter[str] = Counter()
    files, skipped_files = discover([Path(p) for p in paths])
    counts["files"] = len(files)
    for reason, n in skipped_files.items():
        counts[f"files_skipped:{reason}"] += n
    sessions: dict[str, ScannedSession] = {}
    for tf in files:
        scan_file(tf, sessions, counts)
        if on_file is not None:
            on_file()
    counts["sessions"] = len(sessions)
    counts["self_transcript_sessions"] = sum(1 for s in sessions.values() if s.self_transcript)
    live = [s for s in sessions.values() if not s.self_transcript]
    commits = _commits(live, counts)
    receipts, skipped = _group(commits, counts, min_subject)
    skipped.extend(_strays(sessions.values()))
    citations = _citations(live, receipts, skipped, counts)
    for reason, n in Counter(s.reason for s in skipped).items():
        counts[f"skipped:{reason}"] = n
    counts["receipts"] = len(receipts)
    counts["receipts_alone_in_scope"] = alone_in_scope(
        ((r.projects, r.authors) for r in receipts),
        ((s.project or UNKNOWN_PROJECT, s.session_id) for s in live),
    )
    return MinedRoster(
        name=name,
        receipts=tuple(receipts),
        citations=citations,
        skipped=tuple(skipped),
        counts=counts,
        sources=tuple(str(p) for p in paths),
        attempts={s.session_id: tuple(s.attempts) for s in live if s.attempts},
        unit=unit,
    )


def _commits(sessions: Sequence[ScannedSession], counts: Counter[str]) -> list[Commit]:
    """Every commit a session made, its short hash resolved to the full one where that is unique."""
    corpus: set[str] = set()
    for session in sessions:
        corpus.update(session.full_hashes)
        corpus.update(f.hash for f in session.found if len(f.hash) == 40)
    commits: list[Commit] = []
    for session in sessions:
        for found in session.found:
            full = _full_hash(found.hash, session.full_hashes)
            if full is not None and full != found.hash:
                counts["full_hash_resolved"] += 1
            elif full is None:
                full = _full_hash(found.hash, corpus)
                counts["full_hash_resolved_corpus" if full else "full_hash_unknown"] += 1
            commits.append(
                Commit(
                    short=found.hash[:7] if len(found.hash) == 40 else found.hash,
                    full=full,
                    subject=_clean_subject(found.subject),
                    printed=found.subject,
                    source=found.source,
                    branch=found.branch,
                    session_id=session.session_id,
                    project=session.project or UNKNOWN_PROJECT,
                    call_id=found.call_id,
                    span=found.span,
                )
            )
            if session.project is None:
                counts["unknown_project"] += 1
    return commits


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


class _Groups:
    """Union-find over commit indices: one group per question."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the first-seen commit names the group

    def members(self) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.find(i), []).append(i)
        return [out[root] for root in sorted(out)]


def _group(
    commits: Sequence[Commit], counts: Counter[str], min_subject: int
) -> tuple[list[Receipt], list[SkippedCommit]]:
    """One question per commit identity and subject; commits without a usable subject are skipped."""
    groups = _Groups(len(commits))
    first: dict[str, int] = {}
    for i, commit in enumerate(commits):
        groups.union(i, first.setdefault(commit.key, i))
    # A short hash nobody resolved joins the one longer hash it prefixes (a chain counts as one).
    for key, i in first.items():
        longer = [k for k in first if len(k) > len(key) and k.startswith(key)]
        if not longer:
            continue
        top = max(longer, key=len)
        if all(top.startswith(k) for k in longer):
            for k in longer:
                groups.union(i, first[k])
            counts["short_hash_merged"] += 1
        else:
            counts["short_hash_ambiguous"] += 1
    usable = [c.subject is not None and len(c.subject) >= min_subject for c in commits]
    by_subject: dict[str, int] = {}
    for i, commit in enumerate(commits):
        if usable[i] and commit.subject is not None:
            groups.union(i, by_subject.setdefault(commit.subject.casefold(), i))
    receipts: list[Receipt] = []
    skipped: list[SkippedCommit] = []
    used: set[str] = set()
    for members in groups.members():
        group = [commits[i] for i in members]
        named = [commits[i] for i in members if usable[i]]
        if not named:
            skipped.extend(_unusable(group))
            continue
        receipts.append(_receipt(group, named[0], used, counts))
    return receipts, skipped


def _receipt(
    group: Sequence[Commit], head: Commit, used: set[str], counts: Counter[str]
) -> Receipt:
    hashes = tuple(dict.fromkeys(c.key for c in group))
    authors = tuple(dict.fromkeys(c.session_id for c in group))
    counts["merged_same_subject"] += len(hashes) - 1
    if len(authors) > 1:
        counts["multi_author_receipts"] += 1
    if len({c.call_id for c in group}) < len({(c.call_id, c.session_id) for c in group}):
        counts["copied_commit_calls"] += 1  # a resumed session holds a copy of the same call
    return Receipt(
        qid=_unique_qid(f"receipt-{head.short}", used),
        text=head.subject or "",
        hashes=hashes,
        authors=authors,
        projects=tuple(dict.fromkeys(c.project for c in group)),
        source=head.source,
        commits=tuple(group),
    )


def _unusable(group: Sequence[Commit]) -> list[SkippedCommit]:
    out: dict[tuple[str, str], SkippedCommit] = {}
    for c in group:
        reason = "no_subject" if c.subject is None else "short_subject"
        out.setdefault(
            (c.key, c.session_id),
            SkippedCommit(
                hash=c.key, session_id=c.session_id, subject=c.subject or "", reason=reason
            ),
        )
    return list(out.values())


def _strays(sessions: Iterable[ScannedSession]) -> list[SkippedCommit]:
    out: dict[tuple[str, str, str], SkippedCommit] = {}
    for session in sessions:
        for stray in session.strays:
            subject = _clean_subject(stray.subject) or ""
            out.setdefault(
                (stray.hash, session.session_id, stray.reason),
                SkippedCommit(
                    hash=stray.hash,
                    session_id=session.session_id,
                    subject=subject,
                    reason=stray.reason,
                ),
            )
    return list(out.values())


def _unique_qid(base: str, used: set[str]) -> str:
    qid, n = base, 2
    while qid in used:
        qid, n = f"{base}-{n}", n + 1
    used.add(qid)
    return qid


def _citations(
    sessions: Sequence[ScannedSession],
    receipts: Sequence[Receipt],
    skipped: Sequence[SkippedCommit],
    counts: Counter[str],
) -> dict[str, tuple[str, ...]]:
    """Per commit hash, the sessions whose stored text mentions it and that hold none of its group."""
    holders: dict[str, set[str]] = {}  # hash -> every session of its question (or skipped group)
    for receipt in receipts:
        for hash_ in receipt.hashes:
            holders[hash_] = set(receipt.authors)
    for s in skipped:
        if s.reason in ("short_subject", "no_subject"):
            holders.setdefault(s.hash, set()).add(s.session_id)
    tokens = {s.session_id: set(_HEX_TOKEN.findall("\n".join(s.texts))) for s in sessions}
    out: dict[str, tuple[str, ...]] = {}
    for key, own in holders.items():
        citing = tuple(
            sid
            for sid, found in tokens.items()
            if sid not in own and any(_cites(t, key) for t in found)
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


def _pairs(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"


def write_json(path: Path, data: object) -> None:
    """UTF-8 JSON, indented, with a final newline (the miner's and the mask's files)."""
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    path.write_bytes(text.encode("utf-8"))

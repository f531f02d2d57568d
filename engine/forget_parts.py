"""What every forget target shares: the target, the plan of what it covers and its counts per session,
and chunking a stream again from the messages it keeps (`engine.forget`, `engine.forget_credentials`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from engine import chunked_sql, store
from engine.chunking import chunk_as_stored, text_sha256
from engine.forget_sql import ChunkRow, MessageRow
from engine.redacted_sql import MIN_CHARS
from engine.tombstone_sql import instant

TARGET_KINDS: tuple[str, ...] = (
    "session",
    "project",
    "chunk",
    "match",
    "before",
    "credentials",
    "redact",
)
# A shorter string would match too much by accident (every "ok"); the person can still remove more.
MIN_MATCH_CHARS = 4


@dataclass(frozen=True, kw_only=True)
class Target:
    """What to forget: `kind` is one of TARGET_KINDS; `value` the id, project path, string, or (for
    `before`) a time with its zone (`engine.audit.utc_text` writes it)."""

    kind: str
    value: str

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            msg = f"unknown forget target {self.kind!r}; use one of {', '.join(TARGET_KINDS)}"
            raise ValueError(msg)
        if not self.value.strip():
            msg = f"the {self.kind} to forget is empty; give the {self.kind} to remove"
            raise ValueError(msg)
        if self.kind == "match" and len(self.value) < MIN_MATCH_CHARS:
            msg = (
                f"a --match string must have at least {MIN_MATCH_CHARS} characters (got "
                f"{len(self.value)}): a shorter one would remove far more than meant"
            )
            raise ValueError(msg)
        if self.kind == "redact" and len(self.value) < MIN_CHARS:
            msg = (
                f"a --redact string must have at least {MIN_CHARS} characters (got "
                f"{len(self.value)}): a shorter one would match by accident, and its record would "
                "say what it was; --match removes the messages that hold a short one"
            )
            raise ValueError(msg)
        if self.kind == "before" and instant(self.value) is None:
            msg = f"--before needs an ISO-8601 time, e.g. 2026-02-11T00:00:00Z (got {self.value!r})"
            raise ValueError(msg)

    @property
    def audit_label(self) -> str:
        """The target as the audit records it: ids only, so a string to forget is never written."""
        quoted = self.kind in ("match", "redact")
        return f"{self.kind}:(text not recorded)" if quoted else f"{self.kind}:{self.value}"


@dataclass(frozen=True, kw_only=True)
class SessionCount:
    """What a plan removes from one session: chunks removed or rewritten, messages removed."""

    project: str
    session_id: str
    chunks: int
    messages: int
    whole: bool  # the session is forgotten whole (and its future lines with it)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What `forget` would remove for `target`, found without changing anything."""

    target: Target
    sessions: tuple[str, ...]  # forgotten whole
    streams: tuple[str, ...]  # removed whole
    messages: tuple[MessageRow, ...]  # removed one by one from streams that stay
    chunks: tuple[ChunkRow, ...]  # removed, or rewritten from the messages that stay
    counts: tuple[SessionCount, ...]
    snippets: tuple[str, ...]
    state_paths: tuple[str, ...]  # transcript files whose stored tool inputs quote the string
    edit_paths: int  # recorded file edits whose path contains the string
    # `--before`: the horizon the memory had when the plan was read (UTC text), None without one
    horizon: str | None = None

    @property
    def in_database(self) -> bool:
        """Whether anything of the target is still stored."""
        return bool(
            self.sessions_present
            or self.streams
            or self.messages
            or self.chunks
            or self.state_paths
            or self.edit_paths
        )

    @property
    def sessions_present(self) -> int:
        return sum(1 for c in self.counts if c.whole and (c.chunks or c.messages))

    def audit_targets(self) -> list[str]:
        """The target and the ids it covers (sessions, chunks), for the audit."""
        ids = [f"session:{s}" for s in self.sessions]
        ids += [f"chunk:{c}" for c in sorted({c.id for c in self.chunks})]
        return [self.target.audit_label, *ids]

    def summary(self) -> str:
        """Counts only (no text): for the audit and the progress lines."""
        return (
            f"{len(self.sessions)} whole sessions, {len({c.id for c in self.chunks})} chunks, "
            f"{sum(c.messages for c in self.counts)} messages, "
            f"{len(self.state_paths)} stream states, {self.edit_paths} file-edit paths"
        )


def partial_counts(
    messages: Sequence[MessageRow], chunks: Sequence[ChunkRow]
) -> tuple[SessionCount, ...]:
    """Per session, the chunks and messages a plan removes from it one by one. A message counts for
    the session its stream's chunks name (a transcript file renamed from its session id stores its
    messages under the file's name)."""
    owner = {c.stream: c.session_id for c in chunks}
    of = [owner.get(m.stream, m.session_id) for m in messages]
    return tuple(
        SessionCount(
            project=chunk_project(chunks, sid),
            session_id=sid,
            chunks=sum(1 for c in chunks if c.session_id == sid),
            messages=of.count(sid),
            whole=False,
        )
        for sid in sorted(set(of) | {c.session_id for c in chunks})
    )


def chunk_project(chunks: Sequence[ChunkRow], session_id: str) -> str:
    return next((c.project for c in chunks if c.session_id == session_id), "(unknown)")


def partial_plan(
    target: Target,
    messages: Sequence[MessageRow],
    chunks: Sequence[ChunkRow],
    *,
    snippets: Sequence[str] = (),
    state_paths: Sequence[str] = (),
    edit_paths: int = 0,
    horizon: str | None = None,
) -> Plan:
    """The plan of a target that takes messages one by one (no whole session or stream), with its
    counts per session."""
    return Plan(
        target=target,
        sessions=(),
        streams=(),
        messages=tuple(messages),
        chunks=tuple(chunks),
        counts=sorted_counts(partial_counts(messages, chunks)),
        snippets=tuple(snippets),
        state_paths=tuple(state_paths),
        edit_paths=edit_paths,
        horizon=horizon,
    )


def sorted_counts(counts: tuple[SessionCount, ...]) -> tuple[SessionCount, ...]:
    return tuple(sorted(counts, key=lambda c: (c.project, c.session_id)))


def rechunk(conn: sqlite3.Connection, stream: str, owner: tuple[str, str]) -> int:
    """Chunk a stream again from the messages it still holds; returns chunk rows changed.

    Packing is greedy from the stream's start, so under the chunking version the stream was chunked
    with, the chunks before the first removed message keep their ids and text (and a settle naming
    one stays true), and the ones after it are exactly what an import without the removed messages
    would have written: no removed text can remain under any id. That version is the one that keeps
    the most of the stored chunks (`engine.chunking.chunk_as_stored`): a stream imported before
    chunking version 2 is chunked again as version 1 chunked it.
    """
    session_id, project = owner
    messages = store.messages_from(conn, stream, 0)
    held = chunked_sql.stream_chunk_shas(conn, stream)
    chunks = chunk_as_stored(stream, session_id, messages, held)
    changed = store.put_chunks(conn, project, chunks, [text_sha256(c.text) for c in chunks])
    return changed + store.trim_chunks(conn, stream, len(chunks))

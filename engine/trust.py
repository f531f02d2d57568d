"""Typed corrections: two memories that disagree, settled as `corrected`, `changed` or `open`.

- `corrected`: the old chunk was wrong. Every search leaves it out (the read statements of
  `engine.reads`, the in-memory lexical snapshot and the vector catalog, through `engine.memory`),
  and a read by id still answers for it, with what replaced it and when (`ChunkRecord.settled`).
- `changed`: the old chunk was true then and the world moved on. It stays searchable; the final stage
  every built arm passes through (`arms.settled`) ranks its replacement above it.
- `open`: nobody knows yet. Both stay searchable and are shown together, marked.

A settle names two existing chunks by id (the replacement may be a short note the person writes,
`add_note`), is written with its audit row (`engine.audit`, action "settle") in one transaction, and
is undone, never deleted (action "undo"). An agent (`agent:<session id>`, the MCP tool) may undo only
the settles it made itself; the person may undo any. So an instruction injected into the model can
at worst hide a memory until the person looks (`recallbench corrections --pending`), never remove it.

Only ids, kinds, reasons, actors and times are stored; nothing here copies chunk text.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import uuid
from datetime import datetime

from engine import audit, reads, redacted_sql, sanitize, settle_moves, store, trust_sql
from engine.api import SETTLEMENT_KINDS, ChunkRecord, SettledAs, Settlement, SettlementKind
from engine.chunking import CHUNK_CHARS, chunk_id, text_sha256
from engine.model import Author, Chunk, CleanMessage
from engine.scope import Scope, require_scope

__all__ = [
    "MAX_REASON_CHARS",
    "NOTE_CHARS",
    "NOTE_PREFIX",
    "SETTLEMENT_KINDS",
    "SettledAs",
    "Settlement",
    "SettlementKind",
    "TrustError",
    "add_note",
    "carry_over",
    "is_note",
    "settle",
    "settlements",
    "undo_settle",
]

MAX_REASON_CHARS = 500
# A note is one chunk: at most one chunk's worth of characters.
NOTE_CHARS = CHUNK_CHARS
# A note's session (and stream) id: this prefix and a UUIDv5 of (project, time, text).
NOTE_PREFIX = "note-"
_NOTE_NAMESPACE = uuid.UUID("0b6f3d52-5e0c-5c8e-8f57-4d1b9a0c7e21")
_LIST_HINT = "`recallbench corrections` lists the settles and their ids"


class TrustError(ValueError):
    """A settle, undo or note the engine refuses; the message says what was wrong and what to do."""


def _kind(kind: str) -> SettlementKind:
    for known in SETTLEMENT_KINDS:
        if kind == known:
            return known
    msg = f"unknown settle kind {kind!r}; choose one of: {', '.join(SETTLEMENT_KINDS)}"
    raise TrustError(msg)


def _reason(reason: str) -> str:
    """The reason on one line, private spans and credentials replaced as import replaces them (a
    reason is stored in the settlement and the audit, which must not keep a secret; the strings the
    person redacted are replaced in the write transaction, `_forgotten`)."""
    text, _ = sanitize.scrub_private(" ".join(str(reason).split()))
    text, _ = sanitize.redact(text)
    if not text:
        msg = "a settle needs a reason (why the memories disagree), got an empty one"
        raise TrustError(msg)
    if len(text) > MAX_REASON_CHARS:
        msg = f"the reason is {len(text)} characters; keep it to {MAX_REASON_CHARS} at most"
        raise TrustError(msg)
    return text


def _forgotten(conn: sqlite3.Connection, text: str) -> str:
    """`text` with each string the person redacted (`forget --redact`) replaced, as import replaces
    it; read inside the caller's write transaction, so a redaction that commits first is applied."""
    return redacted_sql.redactions(conn).apply(text)[0]


def _checked(actor: str, now: datetime) -> tuple[str, str]:
    """(actor, time text), refused as TrustError when either is malformed."""
    try:
        return audit.check_actor(actor), audit.utc_text(now)
    except audit.AuditError as exc:
        raise TrustError(str(exc)) from None


def settle(
    conn: sqlite3.Connection,
    old: str,
    *,
    by: str,
    kind: str,
    reason: str,
    actor: str,
    now: datetime,
) -> Settlement:
    """Record that chunk `old` is `kind` with respect to chunk `by`, with its audit row.

    Raises:
        TrustError: an unknown kind, actor or chunk id, the same id twice, an empty or long reason, a
            pair already settled (either way round), a replacement that says what `old` says, or
            one that is itself corrected.
    """
    settled_kind = _kind(kind)
    why = _reason(reason)
    who, when = _checked(actor, now)
    if old == by:
        msg = f"a chunk cannot settle against itself (old and --by are both {old})"
        raise TrustError(msg)
    with store.write(conn):
        why = _forgotten(conn, why)
        known = trust_sql.chunk_projects(conn, [old, by])
        missing = [i for i in (old, by) if i not in known]
        if missing:
            msg = (
                f"no chunk {', '.join(missing)} in the memory; use a chunk id that "
                "`recallbench search` or the get_memory tool shows"
            )
            raise TrustError(msg)
        for row in trust_sql.active_between(conn, old, by):
            msg = (
                f"{row[1]} is already settled as {row[3]} by {row[2]} (settle {row[0]}); undo "
                f"that first (`recallbench correct --undo {row[0]}`)"
            )
            raise TrustError(msg)
        if by in trust_sql.same_text_ids(conn, old):
            msg = (
                f"{by} says what {old} says (the same text); a settle needs a replacement that "
                "says something else, such as a note (`--note TEXT`)"
            )
            raise TrustError(msg)
        hidden = [r for r in trust_sql.active_touching(conn, [by], None) if r[3] == "corrected"]
        hidden = [r for r in hidden if r[1] == by]
        if hidden:
            msg = (
                f"{by} is itself corrected (settle {hidden[0][0]}) and hidden from searches; "
                f"settle against its replacement {hidden[0][2]} instead"
            )
            raise TrustError(msg)
        sid = trust_sql.insert(conn, old, by, settled_kind, why, who, when)
        audit.record(
            conn,
            time=now,
            actor=who,
            action="settle",
            targets=[f"settlement:{sid}", old, by],
            reason=f"{settled_kind}: {why}",
        )
    return Settlement(id=sid, old=old, new=by, kind=settled_kind, reason=why, actor=who, time=when)


def undo_settle(
    conn: sqlite3.Connection,
    settlement_id: int,
    *,
    actor: str,
    now: datetime,
    reason: str = "",
) -> Settlement:
    """Take back an active settle, with its audit row. An agent may undo only its own settles.

    Raises:
        TrustError: an unknown id, a settle already undone, a malformed actor, or an agent undoing
            a settle someone else made.
    """
    who, when = _checked(actor, now)
    why = _reason(reason) if str(reason).strip() else ""
    with store.write(conn):
        why = _forgotten(conn, why)
        row = trust_sql.by_id(conn, int(settlement_id))
        if row is None:
            msg = f"no settle with id {settlement_id}; {_LIST_HINT}"
            raise TrustError(msg)
        found = reads.settlement(row)
        if not found.active:
            msg = f"settle {found.id} was already undone at {found.undone} by {found.undone_by}"
            raise TrustError(msg)
        if who not in (audit.PERSON, found.actor):
            msg = (
                f"{who} may undo only the settles it made; settle {found.id} was made by "
                f"{found.actor}. The person can undo it: `recallbench correct --undo {found.id}`"
            )
            raise TrustError(msg)
        trust_sql.mark_undone(conn, found.id, when, who)
        audit.record(
            conn,
            time=now,
            actor=who,
            action="undo",
            targets=[f"settlement:{found.id}", found.old, found.new],
            reason=why,
        )
    return dataclasses.replace(found, undone=when, undone_by=who)


def settlements(
    conn: sqlite3.Connection, scope: Scope, *, include_undone: bool = False
) -> list[Settlement]:
    """The settles whose old or new chunk lies in `scope`, oldest first (active ones unless
    `include_undone`)."""
    require_scope(scope)
    projects = None if scope.all_projects else sorted(scope.projects)
    return [reads.settlement(r) for r in trust_sql.listed(conn, projects, include_undone)]


def is_note(session_id: str) -> bool:
    """Whether a session id is one of the person's notes (`add_note`)."""
    return session_id.startswith(NOTE_PREFIX)


def _clean_note(text: str) -> str:
    """The note's text as import would store it: context blocks and private spans scrubbed,
    credentials redacted."""
    clean, _ = sanitize.scrub_context(str(text))
    clean, _ = sanitize.scrub_private(clean)
    clean, _ = sanitize.redact(clean)
    clean = clean.strip()
    if not clean:
        msg = "the note is empty; write the corrected fact in a sentence"
        raise TrustError(msg)
    if len(clean) > NOTE_CHARS:
        msg = f"the note is {len(clean)} characters; a note holds at most {NOTE_CHARS}"
        raise TrustError(msg)
    return clean


def add_note(conn: sqlite3.Connection, project: str, text: str, *, now: datetime) -> str:
    """Store the person's short note as a memory of its own in `project`; returns its chunk id.

    The note is one session (`note-<uuid>`, started and ended at `now`) of one User message and one
    chunk, sanitized like imported text (the strings the person redacted too), so every read path
    sees it like any other chunk. The same note at the same time in the same project is stored once.

    Raises:
        TrustError: the project has no recorded session, or the note is empty or too long.
    """
    clean = _clean_note(text)  # the credential rules, outside the write lock
    _, when = _checked(audit.PERSON, now)
    with store.write(conn):
        clean = _forgotten(conn, clean)
        session = NOTE_PREFIX + str(uuid.uuid5(_NOTE_NAMESPACE, f"{project}\n{when}\n{clean}"))
        message = CleanMessage(
            uuid=session,
            session_id=session,
            author=Author.USER,
            text=clean,
            timestamp=when,
            ordinal=0,
        )
        chunk = Chunk(
            id=chunk_id(session, 0),
            session_id=session,
            stream=session,
            index=0,
            text=clean,
            author=Author.USER,
            message_uuids=(session,),
            ts_start=when,
            ts_end=when,
        )
        if project not in reads.projects(conn):
            msg = f"no sessions are recorded for project {project!r}; a note belongs to a known project"
            raise TrustError(msg)
        store.upsert_session(conn, session, project, when, when, False)
        store.put_messages(conn, session, [message])
        sha = text_sha256(clean)
        if store.put_chunks(conn, project, [chunk], [sha]):
            store.bump_generation(conn)
    return chunk.id


def carry_over(old: sqlite3.Connection, new: sqlite3.Connection) -> tuple[int, int, int]:
    """Copy the person's notes and every settle (undone ones too, ids kept) from the database `old`
    into `new`, a database rebuilt from the transcripts; returns (notes, settles, moved): `moved`
    settles name a chunk another id holds now.

    Chunk ids are (stream, position), so a rebuild by the same code gives the same ids, but a newer
    chunker or parser may put a stream's messages at other positions, and an id may name other text:
    each settle names the chunks in its chunks' places (`engine.settle_moves`). The notes are in no
    transcript, so only this copy keeps them.
    """
    notes = 0
    with store.read(old):
        sessions = trust_sql.note_sessions(old, NOTE_PREFIX)
        held = [
            (
                project,
                started,
                store.messages_from(old, sid, 0),
                reads.chunks(old, [chunk_id(sid, 0)], Scope.everywhere()),
            )
            for sid, project, started in sessions
        ]
        settles = trust_sql.all_rows(old)
        places = trust_sql.chunk_places(
            old, sorted({r[1] for r in settles} | {r[2] for r in settles})
        )
    with store.write(new):
        for project, started, messages, records in held:
            if not messages or not records:
                continue
            record = records[0]
            store.upsert_session(new, record.session_id, project, started, started, False)
            store.put_messages(new, record.session_id, messages)
            store.put_chunks(new, project, [_as_chunk(record)], [record.sha256])
            notes += 1
        moved, _ = settle_moves.relocate(new, places)  # a chunk whose text is gone keeps its id
        carried = 0
        for row in settles:
            ids = settle_moves.moved_ids(row, moved)
            carried += ids != (row[1], row[2])
            trust_sql.insert_row(new, (row[0], *ids, *row[3:]))
        if notes:
            store.bump_generation(new)
    return notes, len(settles), carried


def _as_chunk(record: ChunkRecord) -> Chunk:
    return Chunk(
        id=record.id,
        session_id=record.session_id,
        stream=record.stream,
        index=record.index,
        text=record.text,
        author=record.author,
        message_uuids=record.message_uuids,
        ts_start=record.ts_start,
        ts_end=record.ts_end,
    )

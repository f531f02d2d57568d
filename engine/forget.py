"""Forget: remove a session, a project, a chunk, every text containing a string or everything written
before a time from the memory, or redact in place the credentials an older sanitizer let in, or a
string the person names, which every later import redacts too (`engine.forget_credentials`).

Owner only. `recallbench forget` is the one caller; nothing the server, the MCP tools or the hooks
reach imports this module (tests/recallbench/test_forget_imports.py), so the model can never delete.

`plan` says what a target covers, without changing anything. `forget` then works in stages, each
recorded in the audit (action ``forget.stage``, actor ``person``; ids and counts only, never text):

1. ``begin``: recorded before anything moves, with the ids the plan found;
2. ``rows``: one write transaction, with SQLite's `secure_delete` on: tombstones (ids only, see
   `engine.tombstone_sql`), then the messages and chunks go (their FTS5 rows leave both indexes by
   trigger), a stream that lost messages is re-chunked from its remaining messages, the vectors of
   removed texts that no other chunk shares go, tool inputs quoting the string leave the stored stream
   states, and the store's generation moves (a running server's snapshots stop answering);
3. ``fts``: both FTS5 indexes are merged into one segment, so no `_data` page keeps a removed term;
4. ``index``: the hnswlib partition files and manifests of this database go (rebuilt from SQLite on the
   next vector read), so no removed vector stays in a file;
5. ``backups``: the same forget in each copy `recallbench rebuild` kept (`memory.db.bak-<time>`);
6. the caller's own stages (the command line scrubs `hooks.log`);
7. ``vacuum``: WAL checkpoint (TRUNCATE), VACUUM, checkpoint again.

Every stage is idempotent, so a forget that failed half-way is finished by running it again: `forget`
raises `ForgetError` naming the stages left. Whole sessions (`--session`, `--project`) stay forgotten:
lines a transcript adds to a forgotten session later are not imported either. Forgetting a chunk or a
string removes the messages that held it; the rest of the session stays and its new lines import.
Forgetting what was written before a time (`--before`) removes those messages and moves the horizon
(`engine.tombstone_sql`): an import drops whatever it finds written before it, in any transcript.
After a target that takes messages one by one, a session left without any goes, and the others start
and end at their first and last message left.

A resumed or forked session's file starts with copies of the earlier lines (same uuids): every target
also takes the stored copies of what it removes, and tombstones keep later copies out (tombstone_sql).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from engine import (
    audit,
    checkout_sql,
    forget_sql,
    redacted_sql,
    settle_moves,
    store,
    tombstone_sql,
)
from engine.backups import backups
from engine.forget_parts import (
    Plan,
    SessionCount,
    Target,
    chunk_project,
    partial_counts,
    partial_plan,
    rechunk,
    sorted_counts,
)
from engine.forget_sql import ChunkRow, FileRow

ENGINE_STAGES: tuple[str, ...] = ("rows", "fts", "index", "backups")
FINAL_STAGE = "vacuum"
_ACTION = "forget.stage"


class ForgetError(RuntimeError):
    """A stage of a forget failed; `done` and `left` name the stages, the message says how to finish."""

    def __init__(self, message: str, *, failed: str, done: tuple[str, ...], left: tuple[str, ...]):
        super().__init__(message)
        self.failed = failed
        self.done = done
        self.left = left


@dataclass(frozen=True, kw_only=True)
class Stage:
    """A step of a forget: `run` does it (idempotently) and returns counts for the audit."""

    name: str
    run: Callable[[], str]


@dataclass(kw_only=True)
class ForgetReport:
    """What one `forget` call did: the plan it began from and each stage's counts."""

    plan: Plan
    stages: dict[str, str] = field(default_factory=dict)


# --- plan ------------------------------------------------------------------------------------------


def plan(conn: sqlite3.Connection, target: Target, *, snippets: int = 3, width: int = 160) -> Plan:
    """What forgetting `target` removes, read in one transaction; changes nothing.

    `--before` takes every message stamped before the time (an undated one never is).
    `--match` is an exact, case-sensitive substring of a message's or a chunk's text (a chunk that holds
    the string across two of its messages takes all of its messages). `--chunk` takes every message
    the chunk packs, whole. `--session` and `--project` take whole sessions, subagent streams included.
    Every target also takes the copies of its messages that other sessions hold (same uuid or API
    message id), one by one.
    """
    with store.read(conn):
        if target.kind in ("credentials", "redact"):  # rewritten in place
            from engine.forget_credentials import plan_credentials  # imports the sanitizer's rules

            return plan_credentials(conn, target)
        if target.kind in ("session", "project"):
            return _plan_sessions(conn, target, snippets, width)
        return _plan_messages(conn, target, snippets, width)


def preview(db_path: Path, target: Target, *, snippets: int = 3, width: int = 160) -> Plan:
    """`plan` on the database at `db_path` (opened, and migrated, for the call)."""
    conn = store.connect(db_path)
    try:
        return plan(conn, target, snippets=snippets, width=width)
    finally:
        conn.close()


def _plan_sessions(conn: sqlite3.Connection, target: Target, snippets: int, width: int) -> Plan:
    if target.kind == "session":
        sessions = [target.value] if forget_sql.session_known(conn, target.value) else []
    else:
        sessions = forget_sql.project_sessions(conn, target.value)
    streams = forget_sql.session_streams(conn, sessions)
    chunks = forget_sql.stream_chunks(conn, streams)
    messages = forget_sql.message_counts(conn, streams)
    projects = forget_sql.session_projects(conn, sessions)
    counts = tuple(
        SessionCount(
            project=projects.get(sid, chunk_project(chunks, sid)),
            session_id=sid,
            chunks=sum(1 for c in chunks if c.session_id == sid),
            messages=messages.get(sid, 0),
            whole=True,
        )
        for sid in sessions
    )
    # Copies of these sessions' messages that a resumed or forked session holds go too, one by one.
    whole = set(streams)
    own = forget_sql.stream_message_rows(conn, streams)
    copied = [m for m in forget_sql.copies(conn, own) if m.stream not in whole]
    by_stream: dict[str, set[str]] = {}
    for m in copied:
        by_stream.setdefault(m.stream, set()).add(m.uuid)
    copy_chunks = [
        c
        for stream, uuids in sorted(by_stream.items())
        for c in forget_sql.chunks_of_messages(conn, stream, uuids)
    ]
    counts += partial_counts(copied, copy_chunks)
    return Plan(
        target=target,
        sessions=tuple(sessions),
        streams=tuple(streams),
        messages=tuple(copied),
        chunks=(*chunks, *copy_chunks),
        counts=sorted_counts(counts),
        snippets=_snippets(conn, chunks, None, snippets, width),
        state_paths=(),
        edit_paths=0,
    )


def _plan_messages(conn: sqlite3.Connection, target: Target, snippets: int, width: int) -> Plan:
    text = target.value if target.kind == "match" else None
    by_stream: dict[str, set[str]] = {}
    if target.kind == "before":
        for m in forget_sql.messages_before(conn, target.value):
            by_stream.setdefault(m.stream, set()).add(m.uuid)
    elif text is None:
        found = forget_sql.chunk(conn, target.value)
        if found is not None:
            by_stream.setdefault(found.stream, set()).update(found.message_uuids)
    else:
        for m in forget_sql.messages_containing(conn, text):
            by_stream.setdefault(m.stream, set()).add(m.uuid)
        for c in forget_sql.chunks_containing(conn, text):
            held = by_stream.setdefault(c.stream, set())
            if held.isdisjoint(c.message_uuids):  # the string spans two of its messages
                held.update(c.message_uuids)
    chosen = [
        m for s, u in sorted(by_stream.items()) for m in forget_sql.stream_messages(conn, s, u)
    ]
    # These messages and the copies resumed or forked sessions hold of them (`copies` returns both).
    messages = forget_sql.copies(conn, chosen)
    for m in messages:
        by_stream.setdefault(m.stream, set()).add(m.uuid)
    chunks: list[ChunkRow] = []
    for stream, uuids in sorted(by_stream.items()):
        chunks.extend(forget_sql.chunks_of_messages(conn, stream, uuids))
    quoting = [] if text is None else [f.path for f in forget_sql.files(conn) if text in f.state]
    return partial_plan(
        target,
        messages,
        chunks,
        snippets=_snippets(conn, chunks, text, snippets, width),
        state_paths=quoting,
        edit_paths=0 if text is None else forget_sql.edit_paths_containing(conn, text),
        horizon=_horizon_text(conn) if target.kind == "before" else None,
    )


def _horizon_text(conn: sqlite3.Connection) -> str | None:
    held = tombstone_sql.horizon(conn)
    return None if held is None else audit.utc_text(held)


def _snippets(
    conn: sqlite3.Connection, chunks: Sequence[ChunkRow], text: str | None, n: int, width: int
) -> tuple[str, ...]:
    """A few lines of what goes, for the person to see (around the string, for `--match`)."""
    out: list[str] = []
    for body in forget_sql.chunk_texts(conn, [c.id for c in chunks[: max(n, 0)]]):
        at = body.find(text) if text is not None else -1
        start = max(0, at - width // 3) if at >= 0 else 0
        piece = " ".join(body[start : start + width].split())
        out.append(("…" if start else "") + piece + ("…" if start + width < len(body) else ""))
    return tuple(out)


# --- forget ----------------------------------------------------------------------------------------


def forget(
    db_path: Path,
    target: Target,
    *,
    now: datetime,
    extra: Sequence[Stage] = (),
    on_stage: Callable[[str, str], None] | None = None,
) -> ForgetReport:
    """Forget `target` in the database at `db_path`, stage by stage (see the module docstring).

    `extra` stages run after ``backups`` and before ``vacuum``; `on_stage(name, counts)` is called as
    each stage completes. Running it again after a failure completes it.

    Raises:
        ForgetError: a stage failed; nothing after it ran; the message names what is left.
    """
    conn = store.connect(db_path)
    try:
        forget_sql.secure_delete(conn)
        first = plan(conn, target)
        report = ForgetReport(plan=first)
        stages = [
            Stage(name="rows", run=lambda: _rows(conn, target, now)),
            Stage(name="fts", run=lambda: _optimize(conn)),
            Stage(name="index", run=lambda: _remove_index_files(db_path)),
            Stage(name="backups", run=lambda: _forget_in_backups(db_path, target, now)),
            *extra,
            Stage(name=FINAL_STAGE, run=lambda: _compact(conn)),
        ]
        names = ", ".join(s.name for s in stages)
        _record(conn, now, first, f"begin: {first.summary()}; stages: {names}", ids=True)
        for pos, stage in enumerate(stages):
            try:
                counts = stage.run()
                _record(conn, now, first, f"done {stage.name}: {counts}")
            except Exception as exc:
                raise _failed(conn, now, first, stages, pos, exc) from exc
            report.stages[stage.name] = counts
            if on_stage is not None:
                on_stage(stage.name, counts)
        forget_sql.checkpoint(conn)  # the last audit row leaves the WAL too (best effort)
        return report
    finally:
        conn.close()


def _record(
    conn: sqlite3.Connection, now: datetime, p: Plan, reason: str, *, ids: bool = False
) -> None:
    """One audit row of this forget: the `begin` row (`ids`) names every session and chunk the plan
    covers, the stage rows after it the target alone."""
    with store.write(conn):
        audit.record(
            conn,
            time=now,
            actor=audit.PERSON,
            action=_ACTION,
            targets=p.audit_targets() if ids else [p.target.audit_label],
            reason=reason,
        )


def _failed(
    conn: sqlite3.Connection,
    now: datetime,
    p: Plan,
    stages: Sequence[Stage],
    pos: int,
    exc: Exception,
) -> ForgetError:
    done = tuple(s.name for s in stages[:pos])
    left = tuple(s.name for s in stages[pos:])
    name = stages[pos].name
    # The error's type only (its text could quote what is being forgotten). The database itself may
    # be what failed; the message below says so whether or not this row could be written.
    with contextlib.suppress(Exception):
        _record(conn, now, p, f"failed {name}: {type(exc).__name__}; left: {', '.join(left)}")
    flag = f"--{p.target.kind}"
    msg = (
        f"forget stopped at stage {name!r}: {type(exc).__name__}: {exc}. "
        f"Done: {', '.join(done) or 'nothing'}; left: {', '.join(left)}. "
        f"Run the same `recallbench forget {flag} ...` again to finish: every stage can run twice."
    )
    return ForgetError(msg, failed=name, done=done, left=left)


# --- the stages ------------------------------------------------------------------------------------


def _rows(conn: sqlite3.Connection, target: Target, now: datetime) -> str:
    if target.kind in ("credentials", "redact"):  # in place, not removed (forget_credentials)
        from engine.forget_credentials import redact_rows

        return redact_rows(conn, target, now)
    return _remove_rows(conn, target, now)


def _remove_rows(conn: sqlite3.Connection, target: Target, now: datetime) -> str:
    """Tombstones, then the rows, in one transaction (the plan is read again inside it)."""
    at = audit.utc_text(now)
    with store.write(conn):
        p = plan(conn, target)
        spans = {f.stream: f for f in forget_sql.files(conn)}
        _tombstones(conn, p, spans, at)
        touched = {m.stream for m in p.messages} | {c.stream for c in p.chunks}
        before = forget_sql.stream_shas(conn, set(p.streams) | touched)
        owners = {s: forget_sql.stream_owner(conn, s) for s in sorted(touched)}
        settled = settle_moves.places(conn, sorted(touched))
        removed = forget_sql.delete_streams(conn, p.streams)
        forget_sql.delete_sessions(conn, p.sessions)
        checkout_sql.delete_orphans(conn)  # a project's place in git goes with its last session
        rewritten = 0
        for stream, owner in owners.items():
            uuids = [m.uuid for m in p.messages if m.stream == stream]
            forget_sql.delete_messages(conn, stream, uuids)
            if owner is not None:
                rewritten += rechunk(conn, stream, owner)
        taken = {m.uuid for m in p.messages}
        followed = settle_moves.follow(conn, settled, now=now, removed=taken)
        emptied = forget_sql.trim_sessions(conn, {c.session_id for c in p.chunks}, touched)
        states = _scrub_states(conn, p, list(spans.values()))
        edits = 0
        if target.kind == "match":
            edits = forget_sql.delete_edit_paths_containing(conn, target.value)
        if target.kind == "before":
            forget_sql.set_horizon(conn, target.value)
        vectors = forget_sql.delete_unshared_vectors(conn, before)
        sentences = forget_sql.delete_unshared_sentence_vectors(conn, before)
        store.bump_generation(conn)
    return (
        f"{p.summary()}; {removed} chunks deleted with their sessions, {rewritten} chunk rows "
        f"rewritten or trimmed, {emptied} sessions left empty, {vectors} vectors, "
        f"{sentences} sentence-vector rows, {states} stream states, {edits} file edits"
        f"{settle_moves.note(*followed)}"
    )


def _tombstones(conn: sqlite3.Connection, p: Plan, spans: dict[str, FileRow], at: str) -> None:
    def span(stream: str) -> tuple[str, int | None, int | None]:
        f = spans.get(stream)
        return ("", None, None) if f is None else (f.path, 0, f.offset)

    for sid in p.sessions:
        files = [f for f in spans.values() if f.session_id == sid or f.stream in p.streams]
        for where in [span(f.stream) for f in files] or [("", None, None)]:
            forget_sql.add_tombstone(
                conn, kind="session", session_id=sid, ref="", api_message_id=None, span=where, at=at
            )
    # A session forgotten whole also leaves a tombstone per message: a session resumed or forked from
    # it later is written under a new session id, with copies of these messages under their uuids.
    for m in [*forget_sql.stream_message_rows(conn, p.streams), *p.messages]:
        forget_sql.add_tombstone(
            conn,
            kind="message",
            session_id=m.session_id,
            ref=m.uuid,
            api_message_id=m.api_message_id,
            span=span(m.stream),
            at=at,
        )
    for c in p.chunks:
        forget_sql.add_tombstone(
            conn,
            kind="chunk",
            session_id=c.session_id,
            ref=c.id,
            api_message_id=None,
            span=span(c.stream),
            at=at,
        )


def _scrub_states(conn: sqlite3.Connection, p: Plan, files: Sequence[FileRow]) -> int:
    """Drop the stored tool inputs of whole sessions, or those quoting the string; returns files changed.

    A stream's state carries tool inputs so that a later tool result can name its command; a state
    that loses one renders that result without it.
    """
    text = p.target.value if p.target.kind == "match" else None
    # Which message issued a stored tool input is not recorded: a stream that loses messages written
    # before the horizon loses them all (a later result of an earlier call renders without it).
    dated = {m.stream for m in p.messages} if p.target.kind == "before" else set()
    changed = 0
    for f in files:
        whole = f.stream in p.streams or f.session_id in p.sessions or f.stream in dated
        if not whole and (text is None or text not in f.state):
            continue
        state = json.loads(f.state)
        if whole or text is None:
            state["tool_commands"] = {}
        else:
            state = _without(state, text)
        forget_sql.set_file_state(
            conn, f.path, json.dumps(state, sort_keys=True, ensure_ascii=False)
        )
        changed += 1
    return changed


def _without(value: object, text: str) -> object:
    """`value` with every string holding `text` dropped from its mappings and lists (None at the top)."""
    if isinstance(value, dict):
        return {k: _without(v, text) for k, v in value.items() if not _holds(v, text)}
    if isinstance(value, list):
        return [_without(v, text) for v in value if not _holds(v, text)]
    return value


def _holds(value: object, text: str) -> bool:
    return isinstance(value, str) and text in value


def _optimize(conn: sqlite3.Connection) -> str:
    with store.write(conn):
        forget_sql.optimize_fts(conn)
    return f"{len(forget_sql.FTS_TABLES)} FTS5 indexes merged"


def _remove_index_files(db_path: Path) -> str:
    """Remove every hnswlib partition, sidecar and manifest of this database (rebuilt on demand)."""
    prefix = f"{db_path.stem}."
    removed = 0
    if not db_path.parent.is_dir():
        return "0 index files"
    for path in sorted(db_path.parent.iterdir()):
        name = path.name.lstrip(".")
        if not name.startswith(prefix) or ".hnsw" not in name:
            continue
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)
            removed += 1
    return f"{removed} index files"


def _forget_in_backups(db_path: Path, target: Target, now: datetime) -> str:
    """The same forget in each kept backup: a copy must not keep what the person took back."""
    for backup in backups(db_path):
        try:
            forget(backup, target, now=now)
        except Exception as exc:
            msg = (
                f"the backup {backup} could not be forgotten in ({exc}); delete it "
                f"(rm {backup} {backup}-wal {backup}-shm) and run the forget again"
            )
            raise RuntimeError(msg) from exc
    return f"{len(backups(db_path))} backups"


def carry_tombstones(old_db: Path, new_db: Path) -> int:
    """Copy every tombstone of `old_db` into `new_db` (before a rebuild imports into it).

    `recallbench rebuild` imports the transcripts again into a new database; without the tombstones
    it would bring back everything ever forgotten. The horizon of `--before` goes with them, and the
    strings `--redact` keeps out (`engine.redacted_sql`), which the import then redacts. Returns the
    tombstones copied.
    """
    old = store.connect(old_db)
    try:
        with store.read(old):
            rows = tombstone_sql.rows(old)
            horizon = tombstone_sql.horizon(old)
            redacted = redacted_sql.rows(old)
    finally:
        old.close()
    new = store.connect(new_db)
    try:
        with store.write(new):
            if horizon is not None:
                forget_sql.set_horizon(new, audit.utc_text(horizon))
            forget_sql.put_redacted(new, redacted)
            return forget_sql.put_tombstones(new, rows)
    finally:
        new.close()


def _compact(conn: sqlite3.Connection) -> str:
    if not forget_sql.compact(conn):
        msg = (
            "another connection kept the write-ahead log open, so it could not be truncated "
            "(a running `recallbench serve` in a read?); run the same forget again"
        )
        raise sqlite3.OperationalError(msg)
    return "database vacuumed, write-ahead log checkpointed and truncated"

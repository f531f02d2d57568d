"""The write side of the engine: import transcript files into the store, embed what has no vector.

Import is incremental by byte offset and idempotent. Each file is parsed outside any lock, then
written in its own short transaction together with its new offset, so an import killed half-way loses
nothing already stored and the next import completes the work. A file's head and the tail of its
imported part are fingerprinted, so a rewritten file is re-imported cleanly instead of appended to.

A file's messages and chunks are kept under a stream keyed by its project and resolved path
(`engine.transcript_files.stored_stream`), so two files never share one; a file imported under an older
key is re-imported from the start under its new one, replacing what it had stored. One message stores
at most `max_message_bytes` of text; the rest is cut, with a marker, and counted as `message_cut`.

Embedding is by content hash: a text stored twice is embedded once, and a text already embedded for
an embedder is never embedded again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from engine import (
    checkout_sql,
    chunked_sql,
    moved_files,
    parsed_sql,
    reads,
    redacted_sql,
    sanitized_sql,
    sentence_sql,
    store,
    tombstone_sql,
)
from engine.checks import is_int
from engine.chunking import CHUNKING, check_chunking, chunk_as_stored, text_sha256
from engine.embed import Embedder
from engine.git_repo import Checkout, checkout_of, listed_checkouts
from engine.model import CleanMessage, Message, ToolUse
from engine.redacted_sql import Redactions
from engine.render import MAX_MESSAGE_BYTES, cap_message, precut_text_blocks
from engine.sanitize import redact_paths, sanitize
from engine.scope import Scope, is_inside
from engine.transcript_files import StreamState, TranscriptFile, discover, stored_stream
from engine.transcripts import file_edits, parse_file

# Bytes of a file's head and of the tail of the imported part that fingerprint it.
_HEAD_BYTES = 1 << 20
_TAIL_BYTES = 4096
# Times one file's import starts over after losing a race before it is reported as failed.
_RACE_RETRIES = 5


@dataclass(kw_only=True)
class ImportReport:
    """What one `import_paths` call did, with every skip and scrub counted per reason."""

    files_seen: int = 0
    files_imported: int = 0
    files_unchanged: int = 0
    files_reimported: int = 0
    files_moved: int = 0  # the same file at a new path, its old one gone (`engine.moved_files`)
    files_failed: dict[str, str] = field(default_factory=dict)
    messages: int = 0
    chunks_written: int = 0
    vectors_added: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    scrubbed: Counter[str] = field(default_factory=Counter)
    self_transcripts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "files_seen": self.files_seen,
            "files_imported": self.files_imported,
            "files_unchanged": self.files_unchanged,
            "files_reimported": self.files_reimported,
            "files_moved": self.files_moved,
            "files_failed": dict(sorted(self.files_failed.items())),
            "messages": self.messages,
            "chunks_written": self.chunks_written,
            "vectors_added": self.vectors_added,
            "skipped": dict(sorted(self.skipped.items())),
            "scrubbed": dict(sorted(self.scrubbed.items())),
            "self_transcripts": sorted(self.self_transcripts),
        }


class _ImportRacedError(RuntimeError):
    """Another process imported the same file between our read of it and our write."""


@dataclass(frozen=True)
class _Options:
    """How every file of one import is read and chunked (`import_paths`' arguments)."""

    max_bytes: int
    root: Path | None
    chunking: int


@dataclass(kw_only=True)
class _Resume:
    """Where one file's import starts: its stored record, offset and stream state."""

    key: str  # the resolved path, the files table's key
    record: store.FileRecord | None
    # What the stream key hashes: the resolved path, or the path below `stream_root` (`import_paths`)
    name: str = ""
    start: int = 0
    state: StreamState = field(default_factory=StreamState)
    stream: str | None = None  # the stored stream to continue; None: keyed once the project is read
    session_project: str | None = None  # a subagent's: its session's recorded project, if any
    # the stored part changed or its key is outdated: forget it, import from 0
    rewritten: bool = False
    moved_from: str | None = None  # the gone path of the file this one was (`engine.moved_files`)


@dataclass(frozen=True, kw_only=True)
class _Batch:
    """What one file adds, parsed and sanitized outside the write lock."""

    messages: list[CleanMessage]
    api_ids: dict[str, str | None]
    tool_ids: dict[str, tuple[str, ...]]  # message uuid -> ids of the tool calls it made
    continuation: Message | None
    edits: list[str]
    project: str
    stream: str
    session_id: str
    end_offset: int
    fingerprint: str
    skipped: Counter[str]
    scrubbed: Counter[str]


def _fingerprint(path: Path, offset: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        digest.update(fh.read(min(offset, _HEAD_BYTES)))
        tail_start = max(min(offset, _HEAD_BYTES), offset - _TAIL_BYTES)
        fh.seek(tail_start)
        digest.update(fh.read(offset - tail_start))
    digest.update(str(offset).encode())
    return digest.hexdigest()


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _file_key(record: store.FileRecord | None) -> tuple[int, str] | None:
    return None if record is None else (record.offset, record.prefix_sha256)


def _project(state: StreamState, session_project: str | None = None) -> str:
    """A stream's project: the first working directory its lines recorded; for a subagent's stream
    (`session_project` given), its session's project when that directory is the project or lies
    inside it. A subagent starts in whatever folder its session's shell was in (`cd assets` before a
    compaction), and filed under that folder its text would belong to no project anyone reads."""
    own = state.cwd or "(unknown)"
    if session_project is not None and (own == session_project or is_inside(own, session_project)):
        return session_project
    return own


# --- import -------------------------------------------------------------------------------------


def import_paths(
    conn: sqlite3.Connection,
    paths: Sequence[Path],
    *,
    progress: bool = False,
    on_file: Callable[[str], None] | None = None,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    stream_root: Path | None = None,
    chunking: int = CHUNKING,
) -> ImportReport:
    """Import transcripts under `paths` incrementally (by byte offset); idempotent.

    A file that cannot be read, parsed or written is recorded in `files_failed`, and so is a folder
    that cannot be listed; the others go on. One message stores at most `max_message_bytes` bytes of
    text (UTF-8) and a marker saying how much was cut.

    `stream_root`: key each file's stream (and so its chunk ids) by its path below this folder rather
    than its resolved path, so the same corpus gets the same chunk ids wherever the folder is (a
    benchmark corpus; arms break ties by chunk id). A database must be fed from one root only.

    `chunking`: the version (`engine.chunking`) that splits what this import stores; a stream that
    grows is chunked again from its last chunk that begins a message, under the version that keeps
    the most of the chunks stored from there (this one on a tie: `engine.chunking.chunk_as_stored`).

    Raises:
        ValueError: `max_message_bytes` is not a positive integer, or `chunking` is no version.
    """
    if not is_int(max_message_bytes) or max_message_bytes < 1:
        msg = f"max_message_bytes must be a positive number of bytes, got {max_message_bytes!r}"
        raise ValueError(msg)
    options = _Options(max_message_bytes, stream_root, check_chunking(chunking))
    report = ImportReport()
    unreadable: list[Path] = []
    files, discover_counts = discover([Path(p) for p in paths], unreadable)
    report.skipped.update(discover_counts)
    for folder in unreadable:
        report.files_failed[str(folder)] = "PermissionError: folder could not be listed; skipped"
    report.files_seen = len(files)
    bar = None
    if progress:
        from tqdm import tqdm  # only for a terminal: tqdm is not worth its import otherwise

        bar = tqdm(total=len(files), desc="import", unit="file", leave=False)
    for tf in files:
        if bar is not None:
            bar.update(1)
        try:
            _import_file(conn, tf, report, options)
        except (
            OSError,
            UnicodeError,
            ValueError,
            sqlite3.DatabaseError,
            _ImportRacedError,
        ) as exc:
            report.files_failed[str(tf.path)] = f"{type(exc).__name__}: {exc}"
        if on_file is not None:
            on_file(str(tf.path))
    if bar is not None:
        bar.close()
    _record_checkouts(conn)
    return report


def _record_checkouts(conn: sqlite3.Connection) -> None:
    """Record where each project without a record sits in git: for the folders that still exist (a
    store imported before the records were kept; a file's own import records its project), from the
    folder; for a deleted one, from a recorded repository that still lists it as a worktree. Replace
    a person's statement about a project whose folder exists again with what the folder says."""
    stated = checkout_sql.joined(conn)
    unrecorded = [p for p in checkout_sql.unrecorded(conn) if os.path.isabs(p)]
    found: dict[str, Checkout] = {}
    for project in (*unrecorded, *stated):
        checkout = checkout_of(project) if os.path.isabs(project) else None
        if checkout is not None:
            found[project] = checkout
    gone = [p for p in unrecorded if p not in found and not os.path.exists(p)]
    if gone:
        known = [*checkout_sql.checkouts(conn).values(), *found.values()]
        found.update(listed_checkouts(gone, {c.repository for c in known}))
    if found:
        with store.write(conn):
            checkout_sql.put_missing(conn, {p: c for p, c in found.items() if p not in stated})
            for project in stated.keys() & found.keys():
                checkout_sql.put(conn, project, found[project])


def _import_file(
    conn: sqlite3.Connection, tf: TranscriptFile, report: ImportReport, options: _Options
) -> None:
    """Import what is new in one file; start over if another process imported it meanwhile."""
    for _ in range(_RACE_RETRIES):
        try:
            _import_file_once(conn, tf, report, options)
            return
        except _ImportRacedError:
            continue
    msg = f"{tf.path} kept changing under concurrent imports; the next import completes it"
    raise _ImportRacedError(msg)


def _import_file_once(
    conn: sqlite3.Connection, tf: TranscriptFile, report: ImportReport, options: _Options
) -> None:
    resume = _resume_point(conn, tf, options.root)
    if resume is None:
        report.files_unchanged += 1
        return
    forgotten = redacted_sql.redactions(conn)
    batch = _read_batch(tf, resume, options.max_bytes, forgotten)
    # Read while the folder exists: a task's worktree is often gone by the next import.
    checkout = checkout_of(batch.project) if os.path.isabs(batch.project) else None
    with store.write(conn):
        report.files_moved += moved_files.move(conn, resume.moved_from, resume.key)
        # The file was parsed outside the write lock; if another process stored its lines since,
        # writing ours too would duplicate its messages' file edits, and if a `forget --redact` ran
        # since, ours could hold its string. Roll back and read again.
        if _file_key(store.get_file(conn, resume.key)) != _file_key(resume.record):
            raise _ImportRacedError(resume.key)
        if redacted_sql.redactions(conn) != forgotten:
            raise _ImportRacedError(resume.key)
        if resume.rewritten and resume.record is not None:
            store.forget_stream(conn, resume.key, resume.record.stream)
            report.files_reimported += 1
        sanitized_sql.record_version(conn)
        parsed_sql.record_version(conn)
        chunked_sql.record_version(conn, options.chunking)
        report.chunks_written += _write_batch(conn, resume, batch, options.chunking)
        if checkout is not None:
            checkout_sql.put(conn, batch.project, checkout)
    report.files_imported += 1
    report.messages += len(batch.messages)
    report.skipped.update(batch.skipped)
    report.scrubbed.update(batch.scrubbed)
    if resume.state.self_transcript and batch.session_id not in report.self_transcripts:
        report.self_transcripts.append(batch.session_id)


def _resume_point(
    conn: sqlite3.Connection, tf: TranscriptFile, root: Path | None = None
) -> _Resume | None:
    """Where to resume `tf` from; None when the file is exactly what was imported last time."""
    resolved = tf.path.resolve()
    key = str(resolved)
    name = key
    if root is not None and resolved.is_relative_to(root.resolve()):
        name = resolved.relative_to(root.resolve()).as_posix()
    size = tf.path.stat().st_size
    record = store.get_file(conn, key) or moved_files.moved_from(conn, tf, size, _fingerprint)
    resume = _Resume(key=key, record=record, name=name)
    resume.moved_from = None if record is None or record.path == key else record.path
    if tf.agent_id is not None:
        resume.session_project = reads.session_project(conn, tf.session_id, Scope.everywhere())
    if record is not None:
        if size >= record.offset and _fingerprint(tf.path, record.offset) == record.prefix_sha256:
            state = StreamState.from_json(record.state)
            project = _project(state, resume.session_project)
            stream = record.stream if resume.moved_from else stored_stream(tf, project, name)
            if record.stream != stream:
                # Stored under an older key (the bare session id, which two files could share),
                # keyed before the file named its project, or a subagent's filed under its own
                # folder inside its session's project: re-import it whole under its own key.
                resume.rewritten = True
            elif size == record.offset and resume.moved_from is None:
                return None
            else:
                resume.start, resume.state, resume.stream = record.offset, state, stream
        else:
            resume.rewritten = True
    if tf.agent_id is not None and reads.session_flagged(conn, tf.session_id):
        # a subagent's first prompt is written by its parent, not by our marker
        resume.state.self_transcript = True
    return resume


def _read_batch(
    tf: TranscriptFile, resume: _Resume, max_bytes: int, forgotten: Redactions
) -> _Batch:
    """Parse and sanitize what follows the resume point (updates `resume.state`); `forgotten`: the
    strings the person redacted."""
    state = resume.state
    parsed = parse_file(tf.path, resume.start, state, session_id=tf.session_id)
    scrubbed: Counter[str] = Counter()
    precut = [precut_text_blocks(m, max_bytes) for m in parsed.messages]
    clean = sanitize([m for m, _ in precut], state, scrubbed, forgotten)
    clean = _capped(clean, {m.uuid: n for m, n in precut if n}, max_bytes, parsed.skipped)
    project = _project(state, resume.session_project)
    return _Batch(
        messages=clean,
        api_ids={m.uuid: m.api_message_id for m in parsed.messages},
        tool_ids={
            m.uuid: tuple(b.id for b in m.blocks if isinstance(b, ToolUse)) for m in parsed.messages
        },
        continuation=parsed.messages[0] if parsed.continues_previous else None,
        edits=(
            []
            if state.self_transcript
            else redact_paths(file_edits(parsed.messages, state), scrubbed, forgotten)
        ),
        project=project,
        stream=resume.stream or stored_stream(tf, project, resume.name or resume.key),
        session_id=parsed.session_id or tf.session_id,
        end_offset=parsed.end_offset,
        fingerprint=_fingerprint(tf.path, parsed.end_offset),
        skipped=parsed.skipped,
        scrubbed=scrubbed,
    )


def _capped(
    clean: list[CleanMessage], precut: dict[str, int], max_bytes: int, skipped: Counter[str]
) -> list[CleanMessage]:
    """Messages over `max_bytes` cut to it with a marker (counted `message_cut`); the rest as they are."""
    out: list[CleanMessage] = []
    for m in clean:
        text = cap_message(m.text, max_bytes, precut.get(m.uuid, 0))
        if text is not None:
            skipped["message_cut"] += 1
        out.append(m if text is None else replace(m, text=text))
    return out


def _write_batch(conn: sqlite3.Connection, resume: _Resume, batch: _Batch, chunking: int) -> int:
    """Store one file's batch inside the caller's write transaction; returns chunk rows changed."""
    state, sid, stream = resume.state, batch.session_id, batch.stream
    # Read under the write lock: a forget that committed after this file was parsed still holds.
    gone = tombstone_sql.forgotten(
        conn,
        {sid, *(m.session_id for m in batch.messages)},
        (m.uuid for m in batch.messages),
        (a for a in batch.api_ids.values() if a is not None),
    )
    clean = [
        m
        for m in batch.messages
        if not gone.drops(sid, m.session_id, m.uuid, batch.api_ids.get(m.uuid), m.timestamp)
    ]
    if len(clean) < len(batch.messages):
        batch.skipped["forgotten"] += len(batch.messages) - len(clean)
        _drop_tool_inputs(state, batch, {m.uuid for m in clean})
    if batch.continuation is not None:
        clean = _merge_continuation(conn, stream, clean, batch.continuation)
    store.put_messages(conn, stream, clean, batch.api_ids)
    stamps = [m.timestamp for m in clean if m.timestamp]
    if clean or (state.self_transcript and sid not in gone.sessions):
        store.upsert_session(
            conn,
            sid,
            batch.project,
            min(stamps) if stamps else None,
            max(stamps) if stamps else None,
            bool(state.self_transcript),
        )
    changed = 0
    if clean:
        first_idx, first_ordinal = store.rechunk_start(conn, stream)
        tail = store.messages_from(conn, stream, first_ordinal)
        # Under the version that keeps the most of the chunks stored from there: a stream chunked
        # under an older one that grows keeps its earlier pieces, and the settles naming them.
        held = chunked_sql.stream_chunk_shas(conn, stream, first_idx)
        chunks = chunk_as_stored(stream, sid, tail, held, start_index=first_idx, prefer=chunking)
        changed = store.put_chunks(
            conn, batch.project, chunks, [text_sha256(c.text) for c in chunks]
        )
        changed += store.trim_chunks(conn, stream, first_idx + len(chunks))
        if changed:
            store.bump_generation(conn)
    store.add_file_edits(conn, stream, sid, [] if sid in gone.sessions else batch.edits)
    store.add_counts(conn, resume.key, "skip", dict(batch.skipped))
    store.add_counts(conn, resume.key, "scrub", dict(batch.scrubbed))
    record = store.FileRecord(
        path=resume.key,
        stream=stream,
        session_id=sid,
        offset=batch.end_offset,
        prefix_sha256=batch.fingerprint,
        state=state.to_json(),
    )
    store.put_file(conn, record, _now_iso())
    return changed


def _drop_tool_inputs(state: StreamState, batch: _Batch, kept: set[str]) -> None:
    """Forget the stored tool inputs of forgotten messages (the stream state would quote them)."""
    for uuid, ids in batch.tool_ids.items():
        if uuid not in kept:
            for tool_id in ids:
                state.tool_commands.pop(tool_id, None)


def _merge_continuation(
    conn: sqlite3.Connection,
    stream: str,
    clean: list[CleanMessage],
    continuation: Message,
) -> list[CleanMessage]:
    """Fold the first message into the stored one when it continues the same API message.

    An assistant API message is written over several lines; an import that stopped between them
    stored the first part, and this import's first message carries the rest.
    """
    if not clean or clean[0].uuid != continuation.uuid:
        return clean
    stored = store.last_message(conn, stream)
    if stored is None or stored[1] != continuation.api_message_id:
        return clean
    last = stored[0]
    merged = CleanMessage(
        uuid=last.uuid,
        session_id=last.session_id,
        author=max(last.author, clean[0].author),
        text=last.text + "\n" + clean[0].text,
        timestamp=last.timestamp or clean[0].timestamp,
        ordinal=last.ordinal,
    )
    rest = [
        CleanMessage(
            uuid=m.uuid,
            session_id=m.session_id,
            author=m.author,
            text=m.text,
            timestamp=m.timestamp,
            ordinal=last.ordinal + i,
        )
        for i, m in enumerate(clean[1:], start=1)
    ]
    return [merged, *rest]


# --- embedding ----------------------------------------------------------------------------------


def embed_pending(
    conn: sqlite3.Connection,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    progress: bool = False,
    sentences: bool = True,
) -> int:
    """Embed every stored chunk text that has no vector for `embedder` yet (by content hash).

    Each batch is stored in its own transaction, so an interrupted run keeps what it embedded. Then
    the sentences of person-written texts (`embed_sentences`; a store made before them catches up),
    unless `sentences` is False (a benchmark whose arms never read them).
    """
    pending = store.missing_vectors(conn, embedder.id)
    if not pending:
        if sentences:
            embed_sentences(conn, embedder, batch_size=batch_size, progress=progress)
        return 0
    bar = None
    if progress:
        from tqdm import tqdm  # only for a terminal: tqdm is not worth its import otherwise

        bar = tqdm(total=len(pending), desc="embed", unit="chunk", leave=False)
    for start in range(0, len(pending), batch_size):
        part = pending[start : start + batch_size]
        vectors = embedder.embed([text for _, text in part])
        store_vectors(conn, embedder.id, [sha for sha, _ in part], vectors)
        if bar is not None:
            bar.update(len(part))
    if bar is not None:
        bar.close()
    if sentences:
        embed_sentences(conn, embedder, batch_size=batch_size, progress=progress)
    return len(pending)


def embed_sentences(
    conn: sqlite3.Connection, embedder: Embedder, *, batch_size: int = 256, progress: bool = False
) -> int:
    """Embed the sentences (`engine.sentence_sql.split`) of every person-written chunk text that has
    no sentence row for `embedder` yet; returns the number of texts done.

    Texts are taken in groups of about `batch_size` sentences, each group stored in its own
    transaction, so an interrupted run keeps what it embedded; a text without a long enough sentence
    stores an empty row and is not split again.
    """
    pending = sentence_sql.missing(conn, embedder.id)
    if not pending:
        return 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(pending), desc="embed sentences", unit="text", leave=False)
    group: list[tuple[str, list[str]]] = []
    size = 0
    for i, (sha, text) in enumerate(pending):
        sentences = sentence_sql.split(text)
        group.append((sha, sentences))
        size += len(sentences)
        if size >= batch_size or i == len(pending) - 1:
            _store_sentences(conn, embedder, group)
            if bar is not None:
                bar.update(len(group))
            group, size = [], 0
    if bar is not None:
        bar.close()
    return len(pending)


def _store_sentences(
    conn: sqlite3.Connection, embedder: Embedder, group: Sequence[tuple[str, list[str]]]
) -> None:
    flat = [sentence for _, sentences in group for sentence in sentences]
    vectors = embedder.embed(flat) if flat else np.zeros((0, embedder.dim), dtype=np.float32)
    rows: list[tuple[str, NDArray[np.float32]]] = []
    at = 0
    for sha, sentences in group:
        rows.append((sha, np.asarray(vectors[at : at + len(sentences)], dtype=np.float32)))
        at += len(sentences)
    with store.write(conn):
        sentence_sql.put(conn, embedder.id, embedder.dim, rows)


def store_vectors(
    conn: sqlite3.Connection, embedder_id: str, shas: Sequence[str], vectors: NDArray[np.float32]
) -> None:
    """Store `vectors` for the texts with content hashes `shas` in one transaction."""
    with store.write(conn):
        store.put_vectors(conn, embedder_id, list(shas), vectors)
        store.bump_generation(conn)

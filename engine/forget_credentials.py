"""Forget `credentials`: redact, in place, every credential the running sanitizer finds in stored text.

A memory imported under an older sanitizer keeps what the newer one redacts (`engine.sanitized_sql`),
and `recallbench rebuild` can only read it again from transcripts Claude Code may have deleted. This
target rewrites the stored messages instead, each credential replaced by `[redacted:<kind>]` as an
import would (`engine.sanitize.redact`), and the rest of `engine.forget`'s stages follow: the streams
are chunked again from the rewritten messages, the vectors of the old texts that no chunk shares any
more go, tool inputs in the stored stream states are redacted the same way, both FTS5 indexes are
merged, the vector index files removed, the same done in the backups `rebuild` kept, and the file
vacuumed. Messages and sessions stay; nothing is tombstoned, since nothing is removed.

Which messages are read: a memory recorded under the running version holds none; one recorded under an
older version only those holding a trigger text of a later version (`engine.sanitize.VERSION_TRIGGERS`:
every credential a later version added holds one); one imported before versions were recorded, every
message. Once done, the memory records the version it was redacted under
(`engine.sanitized_sql.credentials_version`), so `status` and `doctor` count from there. Text that an
older import cut inside a credential (a long command in a `[Bash: …]` marker) is a fragment no rule
matches, and stays.

Forget `redact` (`recallbench forget --redact TEXT`) is the same in place rewrite for one string the
person names: every message holding it has it replaced by `[redacted:forgotten]`, and the string is
recorded (`engine.redacted_sql`: its first characters, length and SHA-256, never itself) so that every
later import, and a rebuild, redacts it too. A string that only two messages' texts make together (it
spans the join inside a chunk) is in no message, and stays.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime

from engine import forget_sql, sanitized_sql, settle_moves, store
from engine.audit import utc_text
from engine.forget_parts import Plan, Target, partial_plan, rechunk
from engine.forget_sql import MessageRow
from engine.redacted_sql import Redactions, Rule
from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, redact


def plan_credentials(conn: sqlite3.Connection, target: Target) -> Plan:
    """The messages holding what `target` redacts (a credential the running sanitizer redacts, or
    the `--redact` string), and their chunks; the caller holds a read (or write) transaction. Shows
    no snippet: the text is what must not be shown."""
    fix = _fix(target)
    messages = [m for m, _ in _holding(conn, target)]
    chunks = [
        c
        for stream in sorted({m.stream for m in messages})
        for c in forget_sql.chunks_of_messages(
            conn, stream, {m.uuid for m in messages if m.stream == stream}
        )
    ]
    states = [f.path for f in forget_sql.files(conn) if _redacted_state(f.state, fix) is not None]
    edits = forget_sql.edit_paths_containing(conn, target.value) if target.kind == "redact" else 0
    return partial_plan(target, messages, chunks, state_paths=states, edit_paths=edits)


def redact_rows(conn: sqlite3.Connection, target: Target, now: datetime) -> str:
    """The ``rows`` stage: in one write transaction, the messages rewritten with what `target`
    redacts replaced, their streams chunked again, the stream states redacted, the vectors of texts no
    chunk holds any more deleted; for `--redact`, its string recorded so that no import brings it back
    (`engine.redacted_sql`). Idempotent: a second run finds nothing."""
    fix = _fix(target)
    with store.write(conn):  # nothing is tombstoned
        if target.kind == "redact":
            forget_sql.put_redacted(conn, [Rule.of(target.value).row(utc_text(now))])
        found = _holding(conn, target)
        streams = sorted({m.stream for m, _ in found})
        before = forget_sql.stream_shas(conn, streams)
        owners = {s: forget_sql.stream_owner(conn, s) for s in streams}
        settled = settle_moves.places(conn, streams)
        for message, text in found:
            forget_sql.set_message_text(conn, message.stream, message.uuid, fix(text))
        rewritten = sum(rechunk(conn, s, owner) for s, owner in owners.items() if owner is not None)
        followed = settle_moves.follow(conn, settled, now=now)
        states = 0
        for f in forget_sql.files(conn):
            if (state := _redacted_state(f.state, fix)) is not None:
                forget_sql.set_file_state(conn, f.path, state)
                states += 1
        if target.kind == "redact":  # a recorded edit's path that holds it: not a path to keep
            forget_sql.delete_edit_paths_containing(conn, target.value)
        vectors = forget_sql.delete_unshared_vectors(conn, before)
        sentences = forget_sql.delete_unshared_sentence_vectors(conn, before)
        # every stored message is now as the running rules leave it
        if target.kind == "credentials":
            sanitized_sql.record_credentials(conn)
        store.bump_generation(conn)
    return (
        f"{target.kind}: {len(found)} messages redacted, {rewritten} chunk rows rewritten, "
        f"{vectors} vectors, {sentences} sentence-vector rows, {states} stream states"
        f"{settle_moves.note(*followed)}"
    )


def _fix(target: Target) -> Callable[[str], str]:
    """What `target` does to a text: the sanitizer's redaction, or `--redact`'s string replaced."""
    if target.kind == "redact":
        once = Redactions((Rule.of(target.value),))
        return lambda text: once.apply(text)[0]
    return lambda text: redact(text)[0]


def _holding(conn: sqlite3.Connection, target: Target) -> list[tuple[MessageRow, str]]:
    """The stored messages that `target` rewrites, with their text: those holding the `--redact`
    string, or those in which the running sanitizer finds a credential."""
    if target.kind == "redact":
        return forget_sql.message_texts(conn, [target.value])
    held = sanitized_sql.credentials_version(conn)
    if held is not None and int(held) >= int(SANITIZE_VERSION):
        return []
    needles = None
    if held is not None:  # only what later versions added: each such rule needs its trigger text
        needles = sorted({t for v, t in VERSION_TRIGGERS if int(v) > int(held)})
    rows = forget_sql.message_texts(conn, needles)
    return [(m, text) for m, text in rows if redact(text)[0] != text]


def _redacted_state(state: str, fix: Callable[[str], str]) -> str | None:
    """A stream state (JSON) with `fix` applied to every string, or None when it changes none."""
    try:
        value = json.loads(state)
    except ValueError:
        return None
    redacted = _redact_strings(value, fix)
    if redacted == value:
        return None
    return json.dumps(redacted, sort_keys=True, ensure_ascii=False)


def _redact_strings(value: object, fix: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {k: _redact_strings(v, fix) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_strings(v, fix) for v in value]
    return value

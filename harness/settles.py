"""A benchmark corpus's settles: what a person took back or replaced, applied before any arm runs.

A corpus folder may hold ``settles.json`` (the synthetic generator writes one when it plants corrected
and changed facts). Each settle names two *messages* by session id and message uuid, because chunk ids
exist only after import::

    {"version": 1, "actor": "person", "settled_at": "2026-02-16T00:00:00Z",
     "settles": [{"id": "settle-0001", "kind": "corrected", "reason": "...", "qid": "corrected-0001",
                  "old": {"session": "<sid>", "message": "<uuid>"},
                  "by": {"session": "<sid>", "message": "<uuid>"}}]}

The corpus manifest hashes the file (`harness.freeze.manifest`), so a run's corpus hash commits to its
settles too. `apply_settles` maps each message to the chunks covering it (`Memory.chunks_for_messages`)
and settles every chunk of the old message by the first chunk of the new one through the engine
(`Memory.settle`, with the file's actor and its one fixed time: deterministic). A database that already
holds a settle (a cached benchmark database) is not settled twice.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.scope import Scope

__all__ = [
    "KINDS",
    "SETTLES_FILE",
    "SETTLES_VERSION",
    "AppliedSettles",
    "MessageRef",
    "SettleSpec",
    "SettlesError",
    "SettlesFile",
    "apply_settles",
    "load_settles",
    "parse_settles",
]

SETTLES_FILE = "settles.json"
SETTLES_VERSION = 1
KINDS = ("corrected", "changed", "open")


class SettlesError(ValueError):
    """A settles file is malformed, or one of its settles cannot be applied."""


@dataclass(frozen=True, kw_only=True)
class MessageRef:
    """One message of the corpus: its session id and its uuid."""

    session: str
    message: str


@dataclass(frozen=True, kw_only=True)
class SettleSpec:
    """One settle as the file states it: `old` settled by `by` as `kind`, for `reason`."""

    id: str
    kind: str
    old: MessageRef
    by: MessageRef
    reason: str
    qid: str | None = None


@dataclass(frozen=True, kw_only=True)
class SettlesFile:
    """A parsed settles file and the sha256 of its bytes."""

    actor: str
    settled_at: dt.datetime
    settles: tuple[SettleSpec, ...]
    sha256: str


@dataclass(frozen=True, kw_only=True)
class AppliedSettles:
    """What `apply_settles` did: settles in the file (`count`), engine settles made now (`applied`) and
    found in the database already (`already`; one per chunk of an old message), settles skipped."""

    sha256: str
    count: int
    applied: int
    already: int
    skipped: tuple[str, ...]  # ids of settles whose session the run excluded

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": SETTLES_FILE,
            "sha256": self.sha256,
            "count": self.count,
            "applied": self.applied,
            "already": self.already,
            "skipped": list(self.skipped),
        }


class _Settled(Protocol):
    """What `apply_settles` reads of a settle the engine holds."""

    @property
    def old(self) -> str: ...
    @property
    def new(self) -> str: ...
    @property
    def kind(self) -> str: ...


class SettleTarget(Protocol):
    """The engine reads and write `apply_settles` uses (`engine.memory.Memory` is one)."""

    def chunks_for_messages(
        self, session_id: str, uuids: Sequence[str], scope: Scope
    ) -> dict[str, tuple[str, ...]]: ...

    def settle(
        self, old: str, *, by: str, kind: str, reason: str, actor: str, now: dt.datetime
    ) -> object: ...

    def settlements(self, scope: Scope, *, include_undone: bool = False) -> Sequence[_Settled]: ...


def load_settles(corpus_dir: Path) -> SettlesFile | None:
    """The corpus folder's settles file, or None when it has none.

    Raises:
        SettlesError: the file cannot be read or is malformed.
    """
    path = Path(corpus_dir) / SETTLES_FILE
    if not path.exists():
        return None
    try:
        raw = path.read_bytes()
        doc = json.loads(raw)
    except (OSError, ValueError) as exc:
        msg = f"settles file {path} cannot be read as JSON: {exc}; regenerate the corpus"
        raise SettlesError(msg) from exc
    return parse_settles(doc, sha256=hashlib.sha256(raw).hexdigest(), where=str(path))


def parse_settles(doc: Any, *, sha256: str, where: str) -> SettlesFile:
    """Check and convert a settles document (what `load_settles` read)."""
    if not isinstance(doc, dict) or doc.get("version") != SETTLES_VERSION:
        got = doc.get("version") if isinstance(doc, dict) else type(doc).__name__
        msg = f"{where}: expected a settles object with version {SETTLES_VERSION}, got {got!r}"
        raise SettlesError(msg)
    actor = doc.get("actor")
    if not isinstance(actor, str) or not actor:
        msg = f"{where}: actor must be a non-empty string such as 'person', got {actor!r}"
        raise SettlesError(msg)
    settled_at = _time(doc.get("settled_at"), where)
    items = doc.get("settles")
    if not isinstance(items, list):
        msg = f"{where}: settles must be a list, got {type(items).__name__}"
        raise SettlesError(msg)
    specs = tuple(_spec(item, f"{where}: settles[{i}]") for i, item in enumerate(items))
    ids = [s.id for s in specs]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        msg = f"{where}: settle id(s) {dupes} appear more than once; give each settle its own id"
        raise SettlesError(msg)
    return SettlesFile(actor=actor, settled_at=settled_at, settles=specs, sha256=sha256)


def _time(value: object, where: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        msg = f"{where}: settled_at must be an ISO time like 2026-02-16T00:00:00Z, got {value!r}"
        raise SettlesError(msg) from exc
    if moment.tzinfo is None:
        msg = f"{where}: settled_at must carry a UTC offset (end it with Z), got {value!r}"
        raise SettlesError(msg)
    return moment


def _spec(item: Any, where: str) -> SettleSpec:
    if not isinstance(item, dict):
        msg = f"{where} must be an object, got {type(item).__name__}"
        raise SettlesError(msg)
    for key in ("id", "kind", "reason"):
        if not isinstance(item.get(key), str) or not item[key]:
            msg = f"{where}: {key} must be a non-empty string, got {item.get(key)!r}"
            raise SettlesError(msg)
    if item["kind"] not in KINDS:
        msg = f"{where}: kind must be one of {list(KINDS)}, got {item['kind']!r}"
        raise SettlesError(msg)
    qid = item.get("qid")
    return SettleSpec(
        id=item["id"],
        kind=item["kind"],
        old=_ref(item.get("old"), f"{where}.old"),
        by=_ref(item.get("by"), f"{where}.by"),
        reason=item["reason"],
        qid=qid if isinstance(qid, str) else None,
    )


def _ref(value: Any, where: str) -> MessageRef:
    if not isinstance(value, Mapping) or not all(
        isinstance(value.get(k), str) and value[k] for k in ("session", "message")
    ):
        msg = (
            f"{where} must be {{'session': <session id>, 'message': <message uuid>}}, got {value!r}"
        )
        raise SettlesError(msg)
    return MessageRef(session=value["session"], message=value["message"])


def apply_settles(
    memory: SettleTarget, settles: SettlesFile, *, excluded: Collection[str] = ()
) -> AppliedSettles:
    """Settle, through the engine, every settle of `settles` that the database does not hold yet.

    A settle touching a session in `excluded` (the run's pre-declared exclusions) is skipped and
    counted. Every chunk of the old message is settled by the first chunk of the new one.

    Raises:
        SettlesError: a message of a settle is not in the database (the corpus and its settles file
            disagree), naming the settle, the session and the message; or the engine refused one.
    """
    everywhere = Scope.everywhere()
    held = {(s.old, s.new, s.kind) for s in memory.settlements(everywhere)}
    applied = already = 0
    skipped: list[str] = []
    for spec in settles.settles:
        if spec.old.session in excluded or spec.by.session in excluded:
            skipped.append(spec.id)
            continue
        olds = _chunks(memory, spec, spec.old, "old")
        by = _chunks(memory, spec, spec.by, "by")[0]
        for old in olds:
            if (old, by, spec.kind) in held:
                already += 1
                continue
            try:
                memory.settle(
                    old,
                    by=by,
                    kind=spec.kind,
                    reason=spec.reason,
                    actor=settles.actor,
                    now=settles.settled_at,
                )
            except ValueError as exc:  # engine.trust.TrustError: the engine refused this settle
                msg = (
                    f"settle {spec.id} ({old} {spec.kind} by {by}) was refused by the engine: {exc}"
                )
                raise SettlesError(msg) from exc
            held.add((old, by, spec.kind))
            applied += 1
    return AppliedSettles(
        sha256=settles.sha256,
        count=len(settles.settles),
        applied=applied,
        already=already,
        skipped=tuple(skipped),
    )


def _chunks(memory: SettleTarget, spec: SettleSpec, ref: MessageRef, role: str) -> tuple[str, ...]:
    found = memory.chunks_for_messages(ref.session, [ref.message], Scope.everywhere())
    chunks = found.get(ref.message, ())
    if not chunks:
        msg = (
            f"settle {spec.id}: its {role} message {ref.message} of session {ref.session} is in no "
            f"stored chunk; the corpus and its {SETTLES_FILE} disagree: regenerate the corpus, or "
            "check that the session was imported"
        )
        raise SettlesError(msg)
    return chunks

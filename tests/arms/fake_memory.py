"""An in-memory `engine.memory.ReadAPI` for arm tests: explicit vectors, texts, sessions, projects, edits.

It honours the same contract as the real engine where arms can tell the difference: every read takes a
`Scope` and filters by the chunk's (or session's) project; results are sorted by (−score, chunk id);
vectors are L2-normalised on the way in, as the real embedder's are. Every read is logged in `calls`.

Differences, on purpose:
- `lexical` is not BM25. It is a naive term-frequency overlap: text and query are both split on
  whitespace, each token keeps only letters, digits, `_` and `-`, is lower-cased, and dropped when shorter
  than 2 characters (the ARMS.md token rule); a chunk's score is the number of its tokens equal to some
  query token. Chunks scoring 0 are not hits. That is enough to rank fixtures whose answer is obvious.
  With `stem=True` both sides' tokens first lose one suffix of "ing", "ed" or "s" when at least 3
  characters remain, and a doubled last consonant left by "ing" or "ed" is halved: a stand-in for the
  engine's Porter index ("running", "runs" -> "run"), not Porter.
- `embed_query` has no model: a test registers each query's vector with `add_query`.
- settles (`settles`, filled by a test) are what `settlements_of` answers and what records'
  `settled` show; the fake's own `lexical` and `nearest` do not hide corrected chunks (the real
  engine's reads do, `engine.memory`): a test of the arms' final stage sees them arrive there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from engine.api import ChunkRecord, Scored, SettledAs, Settlement
from engine.model import Author
from engine.scope import Scope, require_scope


@dataclass(kw_only=True)
class FakeSession:
    id: str
    project: str
    start: str | None


@dataclass(kw_only=True)
class FakeChunk:
    id: str
    session_id: str
    index: int
    text: str
    author: Author
    ts: str | None
    vector: NDArray[np.float32] | None
    sentences: tuple[NDArray[np.float32], ...] = ()


@dataclass(kw_only=True)
class FakeMemory:
    """Sessions, chunks, file edits and query vectors held in dicts; see the module docstring."""

    sessions: dict[str, FakeSession] = field(default_factory=dict)
    chunk_map: dict[str, FakeChunk] = field(default_factory=dict)
    edits: dict[tuple[str, str], int] = field(default_factory=dict)
    queries: dict[str, NDArray[np.float32]] = field(default_factory=dict)
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)
    settles: list[Settlement] = field(default_factory=list)

    # --- building a fixture ---------------------------------------------------------------------

    def add_session(self, session_id: str, *, project: str, start: str | None) -> None:
        """Add a session of `project` that started at `start` (ISO-8601, or None)."""
        if session_id in self.sessions:
            msg = f"session {session_id!r} already exists in the fake"
            raise ValueError(msg)
        self.sessions[session_id] = FakeSession(id=session_id, project=project, start=start)

    def add_chunk(
        self,
        chunk_id: str,
        *,
        session: str,
        text: str,
        vector: Sequence[float] | None = None,
        author: Author = Author.ASSISTANT,
        ts: str | None = "session",
        sentences: Sequence[Sequence[float]] = (),
    ) -> None:
        """Add a chunk; `ts="session"` (the default) copies the session's start timestamp;
        `sentences` are its sentence vectors (`sentence_scores`), normalised here."""
        if session not in self.sessions:
            msg = f"add session {session!r} before its chunks"
            raise ValueError(msg)
        if chunk_id in self.chunk_map:
            msg = f"chunk {chunk_id!r} already exists in the fake"
            raise ValueError(msg)
        index = sum(1 for c in self.chunk_map.values() if c.session_id == session)
        stamp = self.sessions[session].start if ts == "session" else ts
        self.chunk_map[chunk_id] = FakeChunk(
            id=chunk_id,
            session_id=session,
            index=index,
            text=text,
            author=author,
            ts=stamp,
            vector=None if vector is None else _unit(vector),
            sentences=tuple(_unit(v) for v in sentences),
        )

    def add_edit(self, session_id: str, path: str, count: int = 1) -> None:
        """Record that `session_id` edited `path` `count` more times."""
        if session_id not in self.sessions:
            msg = f"add session {session_id!r} before its edits"
            raise ValueError(msg)
        key = (session_id, path)
        self.edits[key] = self.edits.get(key, 0) + count

    def add_query(self, text: str, vector: Sequence[float]) -> None:
        """Register the vector `embed_query(text)` returns."""
        self.queries[text] = _unit(vector)

    # --- ReadAPI --------------------------------------------------------------------------------

    def lexical(self, text: str, scope: Scope, limit: int, *, stem: bool = False) -> list[Scored]:
        """Term-frequency overlap with the query's tokens (not BM25; see the module docstring)."""
        scope = require_scope(scope)
        self.calls.append(("lexical", (text, scope, limit, stem)))
        wanted = set(_tokens(text, stem))
        if not wanted:
            return []
        found = []
        for chunk in self._visible(scope):
            score = sum(1 for token in _tokens(chunk.text, stem) if token in wanted)
            if score > 0:
                found.append(Scored(chunk_id=chunk.id, score=float(score)))
        return _top(found, limit)

    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]:
        """Exact cosine over the scoped chunks with vectors; keep score >= min_score."""
        scope = require_scope(scope)
        self.calls.append(
            ("nearest", (np.array(vector, dtype=np.float32), scope, limit, min_score))
        )
        found = []
        for chunk in self._visible(scope):
            score = _cosine(vector, chunk.vector)
            if score is not None and score >= min_score:
                found.append(Scored(chunk_id=chunk.id, score=score))
        return _top(found, limit)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The vector registered for `text` with `add_query`."""
        self.calls.append(("embed_query", (text,)))
        if text not in self.queries:
            msg = f"the fake has no vector for query {text!r}; call add_query(text, vector) first"
            raise KeyError(msg)
        return self.queries[text].copy()

    def sentence_scores(
        self, vector: NDArray[np.float32], ids: Sequence[str], scope: Scope
    ) -> dict[str, float]:
        """The best cosine of each scoped chunk of `ids` that has sentence vectors."""
        scope = require_scope(scope)
        self.calls.append(("sentence_scores", (tuple(ids), scope)))
        out: dict[str, float] = {}
        for chunk_id in ids:
            chunk = self.chunk_map.get(chunk_id)
            if chunk is None or not chunk.sentences:
                continue
            if not self._allows_session(chunk.session_id, scope):
                continue
            out[chunk_id] = max(float(np.dot(vector, s)) for s in chunk.sentences)
        return out

    def vector(self, chunk_id: str) -> NDArray[np.float32] | None:
        """The chunk's stored (unit) vector, or None."""
        self.calls.append(("vector", (chunk_id,)))
        chunk = self.chunk_map.get(chunk_id)
        if chunk is None or chunk.vector is None:
            return None
        return chunk.vector.copy()

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]:
        """Records in the order given; unknown or out-of-scope ids are omitted."""
        scope = require_scope(scope)
        self.calls.append(("chunks", (tuple(ids), scope)))
        out = []
        for cid in ids:
            chunk = self.chunk_map.get(cid)
            if chunk is not None and self._allows_session(chunk.session_id, scope):
                out.append(self._record(chunk))
        return out

    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]:
        """Files the session edited, most edits first, ties by path."""
        scope = require_scope(scope)
        self.calls.append(("files_for_session", (session_id, scope, limit)))
        if not self._allows_session(session_id, scope):
            return []
        counts = [(path, n) for (sid, path), n in self.edits.items() if sid == session_id]
        return [path for path, _ in sorted(counts, key=lambda pn: (-pn[1], pn[0]))][:limit]

    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]:
        """Sessions in scope that edited `path`, most recent start first (undated last), ties by id."""
        scope = require_scope(scope)
        self.calls.append(("sessions_for_file", (path, scope, limit, exclude)))
        ids = {
            sid
            for (sid, p) in self.edits
            if p == path and sid != exclude and self._allows_session(sid, scope)
        }
        dated = sorted(
            (s for s in ids if _when(self.sessions[s].start) is not None),
            key=lambda s: (-_stamp(self.sessions[s].start), s),
        )
        undated = sorted(s for s in ids if _when(self.sessions[s].start) is None)
        return (dated + undated)[:limit]

    def previous_session(self, session_id: str, scope: Scope) -> str | None:
        """The same project's session that started last before this one (ties by id)."""
        scope = require_scope(scope)
        self.calls.append(("previous_session", (session_id, scope)))
        if not self._allows_session(session_id, scope):
            return None
        me = self.sessions[session_id]
        start = _when(me.start)
        if start is None:
            return None
        earlier = [
            s
            for s in self.sessions.values()
            if s.project == me.project
            and s.id != session_id
            and (when := _when(s.start)) is not None
            and when < start
        ]
        if not earlier:
            return None
        return min(earlier, key=lambda s: (-_stamp(s.start), s.id)).id

    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None:
        """The session's chunk with the best exact cosine to `vector` (ties by chunk id)."""
        scope = require_scope(scope)
        self.calls.append(("best_in_session", (session_id, scope)))
        if not self._allows_session(session_id, scope):
            return None
        found = []
        for chunk in self.chunk_map.values():
            score = _cosine(vector, chunk.vector) if chunk.session_id == session_id else None
            if score is not None:
                found.append(Scored(chunk_id=chunk.id, score=score))
        top = _top(found, 1)
        return top[0] if top else None

    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]:
        require_scope(scope)
        self.calls.append(("settlements_of", (tuple(ids), scope)))
        visible = {c.id for c in self._visible(scope) if c.id in set(ids)}
        return [s for s in self.settles if s.active and (s.old in visible or s.new in visible)]

    # --- helpers --------------------------------------------------------------------------------

    def _links(self, chunk_id: str) -> tuple[SettledAs, ...]:
        links: list[SettledAs] = []
        for s in self.settles:
            if s.active and s.old == chunk_id:
                links.append(
                    SettledAs(settlement=s.id, kind=s.kind, role="old", other=s.new, time=s.time)
                )
            if s.active and s.new == chunk_id:
                links.append(
                    SettledAs(settlement=s.id, kind=s.kind, role="new", other=s.old, time=s.time)
                )
        return tuple(links)

    def calls_to(self, method: str) -> list[tuple[object, ...]]:
        """The argument tuples of every logged call to `method`, in order."""
        return [args for name, args in self.calls if name == method]

    def _allows_session(self, session_id: str, scope: Scope) -> bool:
        session = self.sessions.get(session_id)
        return session is not None and scope.allows(session.project)

    def _visible(self, scope: Scope) -> list[FakeChunk]:
        return [c for c in self.chunk_map.values() if self._allows_session(c.session_id, scope)]

    def _record(self, chunk: FakeChunk) -> ChunkRecord:
        session = self.sessions[chunk.session_id]
        return ChunkRecord(
            id=chunk.id,
            session_id=chunk.session_id,
            stream=chunk.session_id,
            index=chunk.index,
            project=session.project,
            text=chunk.text,
            author=chunk.author,
            message_uuids=(f"{chunk.id}-m0",),
            ts_start=chunk.ts,
            ts_end=chunk.ts,
            session_start=session.start,
            sha256=hashlib.sha256(chunk.text.encode()).hexdigest(),
            settled=self._links(chunk.id),
        )


def _tokens(text: str, stem: bool = False) -> list[str]:
    """Whitespace tokens with only letters, digits, `_` and `-` kept, lower-cased, length >= 2; with
    `stem`, each without one suffix "ing", "ed" or "s" when 3 characters or more remain (and a doubled
    last consonant that "ing" or "ed" leaves halved)."""
    out = []
    for piece in text.split():
        token = "".join(ch for ch in piece if ch.isalnum() or ch in "_-").lower()
        if stem:
            for suffix in ("ing", "ed", "s"):
                if token.endswith(suffix) and len(token) - len(suffix) >= 3:
                    token = token[: -len(suffix)]
                    if suffix != "s" and token[-1] == token[-2] and token[-1] not in "aeioulsz":
                        token = token[:-1]  # "runn" -> "run", as Porter's step 1b does
                    break
        if len(token) >= 2:
            out.append(token)
    return out


def _unit(vector: Sequence[float] | NDArray[np.float32]) -> NDArray[np.float32]:
    arr = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(arr))
    if norm == 0.0:
        msg = f"a fake vector must not be all zeros, got {list(arr)}"
        raise ValueError(msg)
    return (arr / norm).astype(np.float32)


def _cosine(a: NDArray[np.float32], b: NDArray[np.float32] | None) -> float | None:
    """Cosine similarity in float64 so that fixture numbers match hand arithmetic closely."""
    if b is None:
        return None
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    denom = float(np.linalg.norm(x) * np.linalg.norm(y))
    if denom == 0.0:
        return None
    return float(np.dot(x, y) / denom)


def _top(found: list[Scored], limit: int) -> list[Scored]:
    return sorted(found, key=lambda s: (-s.score, s.chunk_id))[: max(limit, 0)]


def _when(ts: str | None) -> datetime | None:
    if ts is None:
        return None
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _stamp(ts: str | None) -> float:
    when = _when(ts)
    return when.timestamp() if when is not None else float("-inf")


DIM = 8


def toward(cos: float, axis: int, dim: int = DIM) -> list[float]:
    """A unit vector whose cosine to e0 (the usual fixture query) is `cos`; the rest lies on `axis`."""
    if not (-1.0 <= cos <= 1.0) or not 1 <= axis < dim:
        msg = f"toward needs -1 <= cos <= 1 and 1 <= axis < {dim}, got cos={cos}, axis={axis}"
        raise ValueError(msg)
    out = [0.0] * dim
    out[0] = cos
    out[axis] = (1.0 - cos * cos) ** 0.5
    return out


def e0(dim: int = DIM) -> list[float]:
    """The unit vector on axis 0."""
    return [1.0] + [0.0] * (dim - 1)

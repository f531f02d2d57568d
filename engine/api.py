"""The engine's read API as arms and tools see it: the `ReadAPI` protocol and its values.

`Scored` and `ChunkRecord` are what every read returns; `ReadAPI` is the scoped read surface that
`engine.memory.Memory` implements and tests fake. Arms, the harness, tools and the application import
these names from here and nowhere else.

The module imports neither numpy nor any SQL module at run time, so the numpy-free read path (the
prompt hook's `engine.text_reads`) can share these types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from engine.model import Author
from engine.scope import Scope

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "SETTLEMENT_KINDS",
    "ChunkRecord",
    "ReadAPI",
    "Scored",
    "SettledAs",
    "Settlement",
    "SettlementKind",
]

SettlementKind = Literal["corrected", "changed", "open"]
# How two memories that disagree are settled (`engine.trust`): the old one was wrong (`corrected`:
# hidden from every search), the world changed (`changed`: ranked below its replacement), or nobody
# knows yet (`open`: both shown, together).
SETTLEMENT_KINDS: tuple[SettlementKind, ...] = ("corrected", "changed", "open")
# A text this long said again is the same statement (the same file read in another session or worktree,
# the same command output), whatever lines hold it; a shorter one ("Done.", "yes, go ahead") says too
# little to be one. A settle applies to such repeats as to its old chunk (`engine.trust_sql`).
MIN_SAME_TEXT = 100


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A chunk id with a score where higher is better."""

    chunk_id: str
    score: float


@dataclass(frozen=True, kw_only=True)
class Settlement:
    """One settle between two chunks, by id only: `old` is `kind` with respect to `new`.

    Times are ISO-8601 UTC to the second (``2026-05-01T09:30:00Z``), as the audit writes them;
    `undone`/`undone_by` are None while the settle is active.
    """

    id: int
    old: str
    new: str
    kind: SettlementKind
    reason: str
    actor: str
    time: str
    undone: str | None = None
    undone_by: str | None = None

    @property
    def active(self) -> bool:
        """Whether the settle is in force (not undone)."""
        return self.undone is None

    def to_dict(self) -> dict[str, object]:
        """The settle as JSON-ready values."""
        return {
            "id": self.id,
            "old": self.old,
            "new": self.new,
            "kind": self.kind,
            "reason": self.reason,
            "actor": self.actor,
            "time": self.time,
            "undone": self.undone,
            "undone_by": self.undone_by,
        }


@dataclass(frozen=True, kw_only=True)
class SettledAs:
    """A chunk's part in one active settle: `role` "old" (it was corrected / changed / is disputed by
    `other`) or "new" (it replaces, or disputes, `other`)."""

    settlement: int
    kind: SettlementKind
    role: Literal["old", "new"]
    other: str
    time: str

    def describe(self) -> str:
        """One line for a person: ``changed on 2026-05-01 (replaced by <id>)`` and the like."""
        day = self.time[:10]
        if self.kind == "open":
            return f"open since {day}: disputed with {self.other} (settle {self.settlement})"
        if self.role == "old":
            return f"{self.kind} on {day} (replaced by {self.other}, settle {self.settlement})"
        verb = "corrects" if self.kind == "corrected" else "replaces"
        return f"{verb} {self.other} since {day} (settle {self.settlement})"


@dataclass(frozen=True, kw_only=True)
class ChunkRecord:
    """A stored chunk with its provenance, as the read API returns it."""

    id: str
    session_id: str
    stream: str
    index: int
    project: str
    text: str
    author: Author
    message_uuids: tuple[str, ...]
    ts_start: str | None
    ts_end: str | None
    session_start: str | None  # the session's first timestamp (for primacy and ordering)
    sha256: str
    # The active settles this chunk takes part in (`engine.trust`), oldest first; () for almost all.
    settled: tuple[SettledAs, ...] = ()

    @property
    def status(self) -> SettledAs | None:
        """The latest active settle that judged this chunk (role "old"), or None."""
        judged = [s for s in self.settled if s.role == "old"]
        return judged[-1] if judged else None

    @property
    def corrected(self) -> bool:
        """Whether an active `corrected` settle hides this chunk from every search."""
        return any(s.role == "old" and s.kind == "corrected" for s in self.settled)

    @property
    def supersedes(self) -> bool:
        """Whether this chunk replaces another (it is `new` of an active changed/corrected settle)."""
        return any(s.role == "new" and s.kind != "open" for s in self.settled)


class ReadAPI(Protocol):
    """The scoped read surface that arms use; `Memory` implements it, tests may fake it."""

    def lexical(
        self, text: str, scope: Scope, limit: int, *, stem: bool = False
    ) -> list[Scored]: ...
    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]: ...
    def embed_query(self, text: str) -> NDArray[np.float32]: ...
    def sentence_scores(
        self, vector: NDArray[np.float32], ids: Sequence[str], scope: Scope
    ) -> dict[str, float]: ...
    def vector(self, chunk_id: str) -> NDArray[np.float32] | None: ...
    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def files_for_session(self, session_id: str, scope: Scope, limit: int) -> list[str]: ...
    def sessions_for_file(
        self, path: str, scope: Scope, limit: int, exclude: str | None = None
    ) -> list[str]: ...
    def previous_session(self, session_id: str, scope: Scope) -> str | None: ...
    def best_in_session(
        self, vector: NDArray[np.float32], session_id: str, scope: Scope
    ) -> Scored | None: ...
    def settlements_of(self, ids: Sequence[str], scope: Scope) -> list[Settlement]: ...

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
from typing import TYPE_CHECKING, Protocol

from engine.model import Author
from engine.scope import Scope

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["ChunkRecord", "ReadAPI", "Scored"]


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A chunk id with a score where higher is better."""

    chunk_id: str
    score: float


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


class ReadAPI(Protocol):
    """The scoped read surface that arms use; `Memory` implements it, tests may fake it."""

    def lexical(
        self, text: str, scope: Scope, limit: int, *, stem: bool = False
    ) -> list[Scored]: ...
    def nearest(
        self, vector: NDArray[np.float32], scope: Scope, limit: int, min_score: float = 0.0
    ) -> list[Scored]: ...
    def embed_query(self, text: str) -> NDArray[np.float32]: ...
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

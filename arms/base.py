"""The arm interface: a `Query` in, ranked `Hit`s out. Arms never see gold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from engine.scope import Scope


@dataclass(frozen=True, kw_only=True)
class Query:
    text: str
    scope: Scope
    now: datetime  # explicit; benchmarks pass the freeze time
    k: int = 10

    def __post_init__(self) -> None:
        scope: object = self.scope  # checked at run time: a caller may pass anything
        if not isinstance(scope, Scope):
            msg = f"Query.scope must be a Scope, got {self.scope!r}"
            raise TypeError(msg)
        text: object = self.text
        if not isinstance(text, str) or not text.strip():
            msg = f"the query is empty ({self.text!r}); say what to look for, in plain words"
            raise ValueError(msg)
        if self.k < 1:
            msg = f"Query.k must be >= 1, got {self.k}"
            raise ValueError(msg)
        if self.now.tzinfo is None:
            msg = f"Query.now must be timezone-aware, got {self.now.isoformat()}"
            raise ValueError(msg)


@dataclass(frozen=True, kw_only=True)
class Hit:
    chunk_id: str
    score: float
    via: str  # "fts", "vector", "rrf", "seed", "blend", "graph", "episode", "fallback-fts"


class Arm(Protocol):
    name: str

    def search(self, query: Query) -> list[Hit]: ...

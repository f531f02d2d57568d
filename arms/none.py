"""The `none` arm: returns nothing. The "no memory" baseline every memory-helps gate is measured against."""

from __future__ import annotations

from dataclasses import dataclass

from arms.base import Hit, Query
from engine.api import ReadAPI


@dataclass(frozen=True, kw_only=True)
class NoneParams:
    """No parameters: the baseline has nothing to tune."""


class NoneArm:
    """Answers every query with an empty list, without reading memory."""

    name = "none"

    def __init__(self, memory: ReadAPI, params: NoneParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else NoneParams()

    def search(self, query: Query) -> list[Hit]:
        """Always []."""
        return []

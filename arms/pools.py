"""A channel's candidate pool as the arms read it: best first, each chunk once, ties by chunk id."""

from __future__ import annotations

from collections.abc import Sequence

from engine.api import Scored

__all__ = ["ordered"]


def ordered(pool: Sequence[Scored]) -> list[Scored]:
    """A channel's hits by (−score, chunk id), each chunk once (its best entry).

    A backend should list a chunk once; this makes sure, so ranks computed from the list are ranks.
    """
    seen: set[str] = set()
    out: list[Scored] = []
    for s in sorted(pool, key=lambda s: (-s.score, s.chunk_id)):
        if s.chunk_id not in seen:
            seen.add(s.chunk_id)
            out.append(s)
    return out

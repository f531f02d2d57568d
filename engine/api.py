"""The engine's read API as arms and tools see it: `ReadAPI`, `Scored` and `ChunkRecord`.

Arms, the harness, tools and the application import these names from here and nowhere else.
"""

from __future__ import annotations

from engine.memory import ReadAPI
from engine.reads import ChunkRecord, Scored

__all__ = ["ChunkRecord", "ReadAPI", "Scored"]

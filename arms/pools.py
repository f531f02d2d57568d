"""A channel's candidate pool as the arms read it: best first, each chunk once, ties by chunk id; the
vector channel, optionally rescored by the person's sentence vectors; and the question's words as the
lexical channel reads them, optionally without function words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.api import ReadAPI, Scored
from engine.function_words import without_function_words
from engine.scope import Scope

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["SENTENCE_DEPTH", "lexical_text", "ordered", "vector_pool"]


def lexical_text(text: str, stop: bool) -> str:
    """What the lexical channel reads of a question: the question, or with `stop` its words less the
    function words (`engine.function_words`: "when", "did", "the", ...; kept when it has no others)."""
    return without_function_words(text) if stop else text


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


# How deep the vector channel reads before sentence vectors rescore it (`vector_pool(sentences=True)`):
# a chunk whose own cosine ranks below this is not looked at again. Measured on the synthetic training
# corpus (docs/arms.md, "Sentence vectors").
SENTENCE_DEPTH = 100


def vector_pool(
    memory: ReadAPI,
    vector: NDArray[np.float32],
    scope: Scope,
    pool: int,
    min_score: float,
    *,
    sentences: bool = False,
) -> list[Scored]:
    """The vector channel's pool: `nearest(vector, scope, pool, min_score)`, best first.

    With `sentences`, the channel reads `max(pool, SENTENCE_DEPTH)` nearest chunks whatever their
    cosine, scores each by the best of its own cosine and its sentence vectors' (`sentence_scores`:
    the person's chunks only), and keeps the `pool` best that reach `min_score`, ties by chunk id.
    """
    if not sentences:
        return ordered(memory.nearest(vector, scope, pool, min_score))
    near = memory.nearest(vector, scope, max(pool, SENTENCE_DEPTH), -1.0)
    best = memory.sentence_scores(vector, [s.chunk_id for s in near], scope)
    rescored = [
        Scored(chunk_id=s.chunk_id, score=max(s.score, best.get(s.chunk_id, s.score))) for s in near
    ]
    return [s for s in ordered(rescored) if s.score >= min_score][:pool]

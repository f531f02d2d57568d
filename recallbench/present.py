"""Hit rows: the one shape in which the application shows a search hit, and the text helpers it uses.

`recallbench search` (text and `--json`), the MCP tools (`search_memory`) and the prompt hook's
injected context all show hits as `HitRow`s, with these fields and no other names:

- `rank`: 1-based position among the hits shown.
- `chunk_id`: the chunk's id (`get_memory` reads it whole).
- `score`: the arm's score (higher is better), rounded to `SCORE_DIGITS` decimals.
- `via`: how the hit was found: the arm's label for it (`fts`, `vector`, `rrf`, `seed`, ...).
- `session_id`: the Claude Code session the chunk belongs to.
- `project`: the project (recorded working directory) of that session.
- `author`: who wrote the chunk (`User`, `Claude`, ...).
- `timestamp`: the chunk's first timestamp (ISO 8601), or None when the transcript had none.
- `text`: the chunk's whole text; a view that shows less clips it with `one_line` and `clip`.

Only the standard library is imported at run time: the prompt hook renders rows without numpy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from engine.api import ChunkRecord

SCORE_DIGITS = 6


class RankedHit(Protocol):
    """What a row needs of a hit: an arm's `Hit` has these, and so do the hook's served hits."""

    @property
    def chunk_id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def via(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class HitRow:
    """One search hit as it is shown; the fields are documented in the module docstring."""

    rank: int
    chunk_id: str
    score: float
    via: str
    session_id: str
    project: str
    author: str
    timestamp: str | None
    text: str

    def to_dict(self) -> dict[str, object]:
        """The row as a JSON-ready mapping with the documented field names."""
        return asdict(self)


def hit_rows(hits: Iterable[RankedHit], records: Iterable[ChunkRecord]) -> list[HitRow]:
    """Rows for `hits` in their order, ranked from 1; a hit without a record (out of scope) is left out."""
    by_id: Mapping[str, ChunkRecord] = {r.id: r for r in records}
    found = [(hit, by_id[hit.chunk_id]) for hit in hits if hit.chunk_id in by_id]
    return [
        HitRow(
            rank=rank,
            chunk_id=hit.chunk_id,
            score=round(float(hit.score), SCORE_DIGITS),
            via=hit.via,
            session_id=record.session_id,
            project=record.project,
            author=record.author.label,
            timestamp=record.ts_start,
            text=record.text,
        )
        for rank, (hit, record) in enumerate(found, start=1)
    ]


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(text.split())


def clip(text: str, size: int) -> str:
    """`text` cut to at most `size` characters, ending in an ellipsis when it was cut."""
    return text if len(text) <= size else text[: max(size - 1, 0)].rstrip() + "…"


def minute(iso: object) -> str:
    """An ISO timestamp shown to the minute (`2026-03-01 10:00`), or "unknown time"."""
    if not isinstance(iso, str) or not iso:
        return "unknown time"
    return iso.replace("T", " ")[:16]

"""Hit rows: the one shape in which the application shows a search hit, and the text helpers it uses.

`recallbench search` (text and `--json`), the MCP tools (`search_memory`) and the prompt hook's
injected context all show hits as `HitRow`s, with these fields and no other names:

- `rank`: 1-based position among the hits shown.
- `chunk_id`: the chunk's id (`get_memory` reads it whole).
- `score`: the arm's score (higher is better), rounded to `SCORE_DIGITS` decimals. It orders hits within
  one answer and means nothing across arms (an RRF score of 0.0325 is "first in both channels"), so the
  text views show `rank` and `via` instead (`header`).
- `via`: how the hit was found: the arm's label for it (`fts`, `vector`, `rrf (fts+vector)`, `seed`, ...).
- `session_id`: the Claude Code session the chunk belongs to.
- `project`: the project (recorded working directory) of that session.
- `author`: who wrote the chunk (`User`, `Claude`, ...).
- `timestamp`: the chunk's first timestamp (ISO 8601), or None when the transcript had none.
- `text`: the chunk's whole text; a view that shows less clips it with `one_line` and `clip`, or shows
  the part around the query's words with `snippet`.
- `status`: the chunk's part in active typed corrections (`engine.trust`), e.g. ``changed on
  2026-05-01 (replaced by <id>, settle 3)`` or ``open since 2026-05-01: disputed with <id> (settle
  4)``, several joined with "; "; None for a chunk no settle touches (almost all).
- `same_text`: the ids of the hits left out of the answer because this hit holds their words (the same
  text, or one found whole inside it: `recallbench.same_text`), best first; empty for almost all.
- `nearly_same`: the ids of the hits left out of the answer because this hit says nearly what they say
  and was written no earlier (the same file read again after a small edit: `recallbench.same_text`),
  best first; empty for almost all.

Only the standard library and `engine.render` (itself free of numpy) are imported at run time: the
prompt hook renders rows without numpy.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from engine.render import strip_terminal_control

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
    status: str | None = None
    same_text: tuple[str, ...] = ()
    nearly_same: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The row as a JSON-ready mapping with the documented field names."""
        return asdict(self)


def hit_rows(
    hits: Iterable[RankedHit],
    records: Iterable[ChunkRecord],
    same_text: Mapping[str, tuple[str, ...]] | None = None,
    nearly_same: Mapping[str, tuple[str, ...]] | None = None,
) -> list[HitRow]:
    """Rows for `hits` in their order, ranked from 1; a hit without a record (left out, or out of
    scope) is left out. `same_text`: a hit's id -> the ids left out because it holds their words;
    `nearly_same`: those left out because it says nearly the same, later."""
    by_id: Mapping[str, ChunkRecord] = {r.id: r for r in records}
    under = same_text or {}
    near = nearly_same or {}
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
            status=status_line(record),
            same_text=under.get(hit.chunk_id, ()),
            nearly_same=near.get(hit.chunk_id, ()),
        )
        for rank, (hit, record) in enumerate(found, start=1)
    ]


def status_line(record: ChunkRecord) -> str | None:
    """The chunk's part in every active settle, for a person or the model; None when it has none."""
    return "; ".join(s.describe() for s in record.settled) or None


# Claude Code stores a typed slash command as its three tags, in either order of the first two:
# `<command-message>x</command-message> <command-name>/x</command-name> <command-args>a</command-args>`.
_COMMAND_TAGS = re.compile(
    r"(?:<command-(?:message|name|args)>.*?</command-(?:message|name|args)>\s*)+", re.DOTALL
)
_COMMAND_TAG = re.compile(r"<command-(message|name|args)>(.*?)</command-\1>", re.DOTALL)


def _as_typed(match: re.Match[str]) -> str:
    """A run of slash-command tags as the person typed it: `/name args`."""
    parts = {kind: value.strip() for kind, value in _COMMAND_TAG.findall(match.group(0))}
    typed = " ".join(
        p for p in (parts.get("name") or parts.get("message", ""), parts.get("args")) if p
    )
    return f"{typed} " if typed else ""


# Claude Code's Read tool numbers each line it returns (`    94→    def run(self):`).
_LINE_NUMBER = re.compile(r"^[ \t]*\d+\u2192", re.MULTILINE)


def one_line(text: str) -> str:
    """`text` without terminal control sequences or control characters, a slash command's tags shown
    as it was typed (`/name args`), the Read tool's line numbers left out, and every run of
    whitespace (newlines included) collapsed to one space: what a terminal or the model is shown. On
    one line the numbers no longer mark lines, and they spend a hook's budget (18% of the characters
    of the spotter transcripts' Read results). The stored text keeps the tags and the numbers (`show`,
    `get_memory`)."""
    plain = without_line_numbers(strip_terminal_control(text))
    return " ".join(_COMMAND_TAGS.sub(_as_typed, plain).split())


def without_line_numbers(text: str) -> str:
    """`text` without the Read tool's line numbers (`    94→` at a line's start)."""
    return _LINE_NUMBER.sub("", text)


def clip(text: str, size: int) -> str:
    """`text` cut to at most `size` characters, ending in an ellipsis when it was cut."""
    return text if len(text) <= size else text[: max(size - 1, 0)].rstrip() + "…"


def ids_that_start(kind: str, shown: list[str], count: int) -> str:
    """`1 chunk id starts with it: <id>`, or `3 chunk ids start with it: <a>, <b> and 1 more`: the
    stored ids a short one begins, as `forget` and `show` name them."""
    ids = f"1 {kind} id starts" if count == 1 else f"{count} {kind} ids start"
    more = f" and {count - len(shown)} more" if count > len(shown) else ""
    return f"{ids} with it: {', '.join(shown)}{more}"


def counted(n: int, noun: str) -> str:
    """`n noun`, the noun plural unless n is 1 ("1 chunk", "2 chunks")."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def megabytes(n: int) -> str:
    """Bytes as megabytes with one decimal, as `status` shows the database size."""
    return f"{n / 1e6:.1f} MB"


def minute(iso: object, *, local: bool = False) -> str:
    """An ISO timestamp shown to the minute (`2026-03-01 10:00`), or "unknown time"; with `local`, in
    this machine's time zone (a time without an offset is UTC), else as written (UTC)."""
    if not isinstance(iso, str) or not iso:
        return "unknown time"
    if local:
        with contextlib.suppress(ValueError):
            return clock(datetime.fromisoformat(iso), local=True)
    return iso.replace("T", " ")[:16]


def clock(moment: datetime, *, local: bool = False) -> str:
    """`moment` to the minute, in this machine's time zone with `local`, else in UTC (a naive
    `moment` is UTC)."""
    aware = moment if moment.utcoffset() is not None else moment.replace(tzinfo=UTC)
    return (aware.astimezone() if local else aware.astimezone(UTC)).strftime("%Y-%m-%d %H:%M")


def header(row: HitRow, *, local: bool = False) -> str:
    """The line a person reads above a hit: rank and channel, then who, when, which session and
    project, and the chunk's id (what `recallbench show` prints whole).

    `#1 via rrf (fts+vector) · User · 2026-03-01 10:00 · session 5555… · /home/dev/alpha · chunk
    2d1c…`, then the row's `status` when it has one, and how many hits hold the same text.
    """
    return " · ".join(
        (
            f"#{row.rank} via {row.via}",
            row.author,
            minute(row.timestamp, local=local),
            f"session {row.session_id}",
            row.project,
            f"chunk {row.chunk_id}",
            *([row.status] if row.status else []),
            *([_same_text_note(len(row.same_text))] if row.same_text else []),
            *([_same_text_note(len(row.nearly_same), "nearly ")] if row.nearly_same else []),
        )
    )


def _same_text_note(n: int, nearly: str = "") -> str:
    """The header's note on the hits left out because a hit holds (or nearly says) their words."""
    return f"{nearly}the same text in {n} more {'hit' if n == 1 else 'hits'}"


def entry_label(row: HitRow) -> str:
    """The label of an entry in the prompt hook's injected context:

    `[1] 2026-03-01 10:00 · session 5555aaaa · User`, and the row's `status` last when it has one.
    """
    status = f" · {row.status}" if row.status else ""
    return f"[{row.rank}] {minute(row.timestamp)} · session {row.session_id[:8]} · {row.author}{status}"


def snippet(text: str, query: str, size: int) -> str:
    """About `size` characters of `text` on one line, around the first of the query's words it holds.

    The window starts a quarter of `size` before that word and never inside a word it cut (it moves on
    to the next word), and ends at a word boundary; "…" marks each side that was cut. Without a
    query word in the text the window starts at the beginning.
    """
    flat = one_line(text)
    start = _window_start(flat, query, size)
    end = start + size
    if end >= len(flat):
        body, tail = flat[start:], ""
    else:
        space = flat.rfind(" ", start + 1, end + 1)
        body, tail = flat[start : space if space > start else end].rstrip(), "…"
    return ("…" if start > 0 else "") + body + tail


def _window_start(flat: str, query: str, size: int) -> int:
    words = sorted(set(re.findall(r"\w{2,}", query.lower())), key=len, reverse=True)
    if not words:
        return 0
    found = re.search(r"\b(?:" + "|".join(map(re.escape, words)) + ")", flat, re.IGNORECASE)
    if found is None:
        return 0
    start = max(0, found.start() - size // 4)
    if start == 0 or flat[start - 1] == " ":
        return start
    space = flat.find(" ", start, found.start())
    return found.start() if space == -1 else space + 1

"""What the prompt hook injects, and how: the relevance rule, the settings and the formatted block.

Plain text work with no database, no numpy and no hook plumbing (`recallbench.hooks` runs it). A hit is
relevant when its stored vector's cosine to the prompt reaches `InjectSettings.min_cosine`, or when
enough of the prompt's content words occur in it; the relevant hits become numbered entries under one
header, wrapped in the context sentinels of `engine.markers` (so the importer scrubs them from later
transcripts), within a character budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.checks import is_int
from engine.function_words import FUNCTION_WORDS, WORD
from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN
from recallbench.present import HitRow, clip, entry_label, one_line

__all__ = [
    "MAX_PROMPT_CHARS",
    "WRAP_CHARS",
    "InjectSettings",
    "content_terms",
    "coverage",
    "format_context",
    "read_part",
    "relevant",
    "wrap",
]

# The most of a prompt that is searched: the server refuses a longer one (`recallbench.prompt_search`),
# and the hook reads a longer one through its two ends (`read_part`).
MAX_PROMPT_CHARS = 20_000


@dataclass(frozen=True, kw_only=True)
class InjectSettings:
    """What UserPromptSubmit injects.

    A hit is relevant when its stored vector's cosine to the prompt is at least `min_cosine`, or when at
    least `min_coverage` of the prompt's content words (3+ characters, not function words) occur in it.
    """

    min_prompt_chars: int = 15
    budget_chars: int = 2000
    limit: int = 5
    min_cosine: float = 0.35
    min_coverage: float = 0.5
    search_timeout_s: float = 1.0
    min_entry_chars: int = 120

    def __post_init__(self) -> None:
        for name in ("min_prompt_chars", "budget_chars", "limit", "min_entry_chars"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                msg = f"InjectSettings.{name} must be a positive int, got {value!r}"
                raise ValueError(msg)
        if not -1.0 <= self.min_cosine <= 1.0:
            msg = f"InjectSettings.min_cosine must be in [-1, 1], got {self.min_cosine!r}"
            raise ValueError(msg)
        if not 0.0 <= self.min_coverage <= 1.0:
            msg = f"InjectSettings.min_coverage must be in [0, 1], got {self.min_coverage!r}"
            raise ValueError(msg)
        if self.search_timeout_s <= 0:
            msg = f"InjectSettings.search_timeout_s must be > 0 seconds, got {self.search_timeout_s!r}"
            raise ValueError(msg)
        if self.budget_chars < len(CONTEXT_OPEN) + len(CONTEXT_CLOSE) + self.min_entry_chars:
            msg = (
                f"InjectSettings.budget_chars={self.budget_chars} cannot hold the sentinels and one "
                f"entry of {self.min_entry_chars} characters; raise it"
            )
            raise ValueError(msg)


WRAP_CHARS = len(CONTEXT_OPEN) + len(CONTEXT_CLOSE) + 2  # two newlines


def wrap(body: str) -> str:
    return f"{CONTEXT_OPEN}\n{body}\n{CONTEXT_CLOSE}" if body else ""


def content_terms(text: str) -> set[str]:
    """Lower-cased words of 3+ characters that are not function words."""
    # function words carry no evidence that a memory is about the prompt
    return {t for t in WORD.findall(text.lower()) if len(t) >= 3 and t not in FUNCTION_WORDS}


def coverage(prompt_terms: set[str], text: str) -> float:
    """The fraction of the prompt's content words that occur in `text`."""
    if not prompt_terms:
        return 0.0
    return len(prompt_terms & content_terms(text)) / len(prompt_terms)


def relevant(cosine: float | None, covered: float, settings: InjectSettings) -> bool:
    """Whether a hit is worth injecting: its cosine to the prompt (None when unknown) or the share of
    the prompt's content words it holds (`coverage`) reaches the settings' threshold."""
    return (
        cosine is not None and cosine >= settings.min_cosine
    ) or covered >= settings.min_coverage


def format_context(rows: Sequence[HitRow], settings: InjectSettings, running: str = "") -> str:
    """Hit rows as numbered entries under a header, wrapped in the sentinels, within `budget_chars`
    (`running`: the running session, whose rows come from before its last compaction)."""
    if not rows:
        return ""
    own = running and any(row.session_id == running for row in rows)
    whence = "this session before its last compaction and " if own else ""
    header = (
        f"Possibly relevant memory from {whence}earlier sessions in this project "
        "(recallbench; the `search_memory` tool finds more):"
    )
    room = settings.budget_chars - WRAP_CHARS
    body = header
    entries = 0
    for row in rows:
        label = f"\n{entry_label(row)}\n"
        space = room - len(body) - len(label)
        if space < settings.min_entry_chars:
            break
        body += label + clip(one_line(row.text), space)
        entries += 1
    return wrap(body) if entries else ""


def read_part(prompt: str, limit: int = MAX_PROMPT_CHARS) -> str:
    """`prompt` whole when it has at most `limit` characters; else its first and last parts joined by
    a newline, `limit` characters in all: a pasted log's head, and the question written after it."""
    if len(prompt) <= limit:
        return prompt
    head = (limit - 1) // 2
    return f"{prompt[:head]}\n{prompt[len(prompt) - (limit - 1 - head) :]}"

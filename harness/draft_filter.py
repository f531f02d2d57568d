"""The lexical-overlap filter: a drafted question must not copy its passage's rare words.

A question that repeats a passage's identifiers, file names or error strings is found by plain BM25 and
tells arms apart no better than a receipt does. Words are cut the way the engine's FTS5 ``unicode61``
tokenizer cuts them (runs of letters and digits, case-folded; ``parse_file`` is ``parse`` + ``file``), so
the filter sees what the lexical arm sees.

* A passage word is **rare** when at most ``max(1, floor(rare_share * N))`` of the corpus's ``N`` chunks
  contain it (chunk-level document frequency).
* A question's **content words** are its distinct words that are not stop words.
* Its **overlap** is the share of its content words that are rare words of its passage; the question is
  dropped when the overlap exceeds ``max_overlap`` (``0 < max_overlap <= 1``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "DEFAULT_MAX_OVERLAP",
    "DEFAULT_RARE_SHARE",
    "STOP_WORDS",
    "DocFreq",
    "Overlap",
    "content_words",
    "overlap",
    "terms",
]

# A quarter: in an eight-word question, two copied rare words pass and three do not.
DEFAULT_MAX_OVERLAP = 0.25
# Rare: in at most 2% of the chunks (and always: in one chunk only).
DEFAULT_RARE_SHARE = 0.02

_TERM = re.compile(r"[^\W_]+")
# Function words and the words every "where did we…" question uses; none of them tells a passage apart.
_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each few find for from further
    had has have having he her here hers him his how i if in into is it its itself just last me more
    most my myself no nor not now of off on once one only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those through to
    too under until up us very was we were what when where which while who whom why will with would
    you your yours ago time week weeks month months day days remember session sessions thing things
    work worked working way get got make made
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def terms(text: str) -> list[str]:
    """The words of `text` as the FTS5 ``unicode61`` tokenizer cuts them, case-folded."""
    return [t.casefold() for t in _TERM.findall(text)]


def content_words(text: str) -> frozenset[str]:
    """The distinct words of `text` that are not stop words."""
    return frozenset(t for t in terms(text) if t not in STOP_WORDS)


@dataclass(frozen=True, kw_only=True)
class DocFreq:
    """Chunk-level document frequency of every word of a corpus, and the rarity threshold."""

    chunks: int
    df: Mapping[str, int]
    rare_share: float = DEFAULT_RARE_SHARE

    def __post_init__(self) -> None:
        if not 0 < self.rare_share < 1:
            msg = f"rare_share must be a share of chunks between 0 and 1, got {self.rare_share!r}"
            raise ValueError(msg)
        object.__setattr__(self, "df", MappingProxyType(dict(self.df)))

    @classmethod
    def of(cls, texts: Iterable[str], rare_share: float = DEFAULT_RARE_SHARE) -> DocFreq:
        """Count, for each word, the texts (chunks) it occurs in."""
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            n += 1
            df.update(set(terms(text)))
        return cls(chunks=n, df=df, rare_share=rare_share)

    @property
    def rare_limit(self) -> int:
        """A word in at most this many chunks is rare."""
        return max(1, int(self.rare_share * self.chunks))

    def rare_words(self, passage: str) -> frozenset[str]:
        """The words of `passage` that are rare in the corpus (a word unseen in it counts as rare)."""
        return frozenset(t for t in terms(passage) if self.df.get(t, 0) <= self.rare_limit)


@dataclass(frozen=True, kw_only=True)
class Overlap:
    """How much of a question is copied rare passage words."""

    share: float
    copied: tuple[str, ...]  # the rare passage words the question uses, sorted
    content: int  # the question's content words


def overlap(question: str, passage: str, df: DocFreq) -> Overlap:
    """The share of `question`'s content words that are rare words of `passage` (0 with none)."""
    words = content_words(question)
    copied = tuple(sorted(words & df.rare_words(passage)))
    share = len(copied) / len(words) if words else 0.0
    return Overlap(share=share, copied=copied, content=len(words))

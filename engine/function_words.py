"""Function words: the words of a question that say nothing about what it asks.

One list, lower-case, of English words of three or more letters ("the", "when", "did", "about", ...),
fixed when the prompt hook's relevance rule was written (`recallbench.inject`: a memory is relevant when
it holds enough of the prompt's other words) and used unchanged since; it is a short list, not a
linguist's, and a few of its words ("new", "time", "long") can carry meaning. `without_function_words` drops
them from a question before a lexical read (`fts(stop=True)`, `rrf(stop=True)`, `ltr(stop=True)`):
BM25 weighs every word it is given, and in a corpus of one conversation "when", "did" or "what" occur in
enough chunks to add noise but not in so many that their weight falls to nothing. Only the standard
library is imported.
"""

from __future__ import annotations

import re

__all__ = ["FUNCTION_WORDS", "WORD", "without_function_words"]

_TEXT = """the and for are but not you all any can had her was one our out has him his how man new now
    old see two way who boy did its let put say she too use that with have this will your from they
    know want been good much some time very when come here just like long make many more only over
    such take than them well were what where which while would there their about into could should
    does doing done why also then these those because please still again"""
FUNCTION_WORDS: frozenset[str] = frozenset(_TEXT.split())

# The engine's word rule: runs of word characters and `-`. The lexical reads' query terms
# (`engine.reads.query_terms`), `ltr`'s `term_share` and the prompt hook's content words all split by it.
WORD = re.compile(r"[\w-]+", re.UNICODE)


def without_function_words(text: str) -> str:
    """`text`'s words (the engine's word rule) less the function words, joined by spaces; `text`
    itself when every word is one (a question of function words alone still asks something)."""
    words = WORD.findall(text)
    kept = [w for w in words if w.lower() not in FUNCTION_WORDS]
    return " ".join(kept) if kept else text

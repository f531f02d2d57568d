"""A deterministic stand-in for a model: reads the drafting prompt on stdin, prints a question.

Used as ``recallbench roster draft --generator "python tests/harness/draft_generator.py [MODE]"`` in tests
and in the README walkthrough, where no model may be called. Modes:

* ``paraphrase`` (the default): a question made only of common words, with the passage's length in words
  spelled as "short", "medium" or "long" -- never a word of the passage;
* ``copy``: the passage's first non-empty line, verbatim (the overlap filter's positive control);
* ``fail``: exits 3 without a question; ``empty``: prints nothing and exits 0;
* ``marked``: per passage, by a word in it: ``FAILME`` -> fail, ``EMPTYME`` -> empty, ``COPYME`` -> copy,
  anything else -> paraphrase (one run then meets every outcome).
"""

from __future__ import annotations

import sys

_OPEN, _CLOSE = "<passage>\n", "\n</passage>"


def passage_of(prompt: str) -> str:
    """The passage between the prompt's ``<passage>`` tags (the whole prompt when they are missing)."""
    start = prompt.find(_OPEN)
    if start < 0:
        return prompt
    end = prompt.rfind(_CLOSE)
    return prompt[start + len(_OPEN) : end if end > start else None]


def paraphrase(passage: str) -> str:
    """A question from common words only; which one depends on the passage's length in words."""
    words = len(passage.split())
    size = "short" if words < 60 else "medium" if words < 120 else "long"
    return f"where did we talk about that {size} change to the code we were fixing?"


def copy(passage: str) -> str:
    """The passage's first non-empty line."""
    return next((line.strip() for line in passage.splitlines() if line.strip()), "")


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "paraphrase"
    passage = passage_of(sys.stdin.read())
    if mode == "marked":
        marks = {"FAILME": "fail", "EMPTYME": "empty", "COPYME": "copy"}
        mode = next((m for word, m in marks.items() if word in passage), "paraphrase")
    if mode == "fail":
        print("generator failed on purpose", file=sys.stderr)
        return 3
    if mode == "empty":
        return 0
    print(copy(passage) if mode == "copy" else paraphrase(passage))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A prompt longer than the server takes (`MAX_PROMPT_CHARS`) is read through its two ends: the server
answers it instead of refusing it, and the question after a pasted log still counts."""

from __future__ import annotations

import json
from pathlib import Path

from engine.embed import HashEmbedder
from recallbench.inject import MAX_PROMPT_CHARS, read_part
from tests.recallbench.test_hooks import corpus, log_text, run, sample, serving

__all__ = ["corpus"]  # the fixture

QUESTION = "why does the flaky retry test fail on CI again?"


def test_read_part_keeps_the_two_ends_within_the_limit() -> None:
    assert read_part("abcdefghijklmnop", 10) == "abcd\nlmnop"  # 4 + newline + 5 = 10
    assert read_part("abcdefghij", 10) == "abcdefghij"  # control: at the limit, whole
    assert read_part("abcdefghijk", 11) == "abcdefghijk"
    long = "x" * 50_000
    assert len(read_part(long)) == MAX_PROMPT_CHARS == 20_000


def test_a_long_prompt_is_answered_by_the_server(corpus: Path, home: Path) -> None:
    # a pasted log of 40,000 characters (one-letter tokens: no word of its own), then the question
    pasted = "x y\n" * 10_000 + QUESTION
    assert len(pasted) > MAX_PROMPT_CHARS
    with serving(home, HashEmbedder()):
        result = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", prompt=pasted)))
    assert result.exit_code == 0
    assert "The retry decorator swallowed the timeout error." in result.stdout
    log = log_text(home)
    assert f"prompt of {len(pasted)} characters: its first and last parts read" in log
    assert "answered by the server at" in log  # before, the server refused it: "lexical read only"
    assert "lexical read only" not in log
    # control: a prompt within the limit is sent whole, and said nothing about
    with serving(home, HashEmbedder()):
        short = run("UserPromptSubmit", json.dumps(sample("user_prompt_submit", prompt=QUESTION)))
    assert "The retry decorator swallowed the timeout error." in short.stdout
    assert log_text(home).count("first and last parts read") == 1

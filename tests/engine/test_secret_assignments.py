"""The keyed-assignment rule (`engine.secret_keys.assignments`) reads each bare value once: it finds the
same values as reading every assignment with the whole pattern, and a run without a space holding many
`=` costs one read of the run, not one per `=`."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from engine import secret_keys
from engine.sanitize import redact

# The rule as it was written before: the bare value read by the pattern, to the run's end, at every match.
WHOLE = re.compile(
    secret_keys._KEY_OP
    + r"""(?:(?P<quote>\\*["'])(?P<quoted>(?:\\.|[^\\\n])*?)(?P=quote)|(?P<bare>[^\s"'`]+))"""
)
PIECES = [
    "password", "token", "api_key", "auth", "user", "a", "x.y", "db-password", "password_hint",
    "pwd", "sort_key", "=", "=", ":", ":=", "=>", "==", '"', "'", '\\"', "&", "?", "#", ";", ",",
    "$X", "hunter2", "Zq8vK2mN7pL4", "sk_live_9f8e7d6c5b4a", "(", ")", "`", "/", "-", " ", " ", "\n",
    "\t", "<x>", "true", "os.environ", "[", "]",
]  # fmt: skip


def _whole_pattern(view: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while (match := WHOLE.search(view, pos)) is not None:
        query = match.start() > 0 and view[match.start() - 1] in "?&;"
        span = secret_keys._value_span(match, view, query=query)
        pos = match.end("op") if span is None else span[1]
        if span is not None:
            yield span
    for match in secret_keys._FLAG.finditer(view):
        span = secret_keys._value_span(match, view, query=False)
        if span is not None:
            yield span


def _texts() -> Iterator[str]:
    rng = random.Random(20261205)
    for _ in range(3000):
        joiner = rng.choice(["", "", " "])
        yield joiner.join(rng.choice(PIECES) for _ in range(rng.randint(1, 30)))


def test_the_values_found_are_those_the_whole_pattern_finds() -> None:
    found = 0
    for text in _texts():
        expected = list(_whole_pattern(text))
        assert list(secret_keys.assignments(text)) == expected, text
        found += len(expected)
    assert found > 200  # control: the texts hold many secret values, not only misses


def test_the_hand_worked_line_reads_as_before() -> None:
    line = "?user=bob&password=Zq8vK2mN7pL4#top a=b,token=$T,api_key=sk_live_9f8e7d6c5b4a,x=1"
    spans = list(secret_keys.assignments(line))
    assert [line[a:b] for a, b in spans] == ["Zq8vK2mN7pL4", "sk_live_9f8e7d6c5b4a,x=1"]
    assert spans == list(_whole_pattern(line))


class _Counting:
    """A pattern that counts its `search` and `match` calls."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.search(text, pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.match(text, pos)


@pytest.mark.parametrize(
    ("text", "value_reads", "run_reads"),
    [
        ("a=b," * 300, 0, 0),  # no name names a secret: no value is read
        ("token=$T," * 300, 300, 1),  # 300 secret names, one run: its end found once
        ("token=$T, " * 300, 300, 300),  # control: 300 runs, one read each
    ],
)
def test_a_run_is_read_once(
    monkeypatch: pytest.MonkeyPatch, text: str, value_reads: int, run_reads: int
) -> None:
    assignment = _Counting(secret_keys._ASSIGNMENT)
    stop = _Counting(secret_keys._BARE_STOP)
    monkeypatch.setattr(secret_keys, "_ASSIGNMENT", assignment)
    monkeypatch.setattr(secret_keys, "_BARE_STOP", stop)
    assert list(secret_keys.assignments(text)) == []  # `$T` refers to a secret
    assert (assignment.calls, stop.calls) == (value_reads, run_reads)


def test_a_long_run_of_assignments_is_still_redacted_where_it_names_a_secret() -> None:
    run = "a=b," * 5000 + "password=Zq8vK2mN7pL4 " + "c=d," * 5000
    text, kinds = redact(run)
    assert text == "a=b," * 5000 + "password=[redacted:env_secret] " + "c=d," * 5000
    assert kinds == {"redacted:env_secret": 1}

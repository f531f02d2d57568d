"""The keyed-assignment rule (`engine.secret_keys.assignments`) reads each bare value once: it finds the
same values as reading every assignment with the whole pattern, and a run without a space holding many
`=` costs one read of the run, not one per `=`."""

from __future__ import annotations

import random
import re
from collections import Counter
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


def _random_text(rng: random.Random) -> str:
    alphabet = rng.choice(
        ["ab", "abc123", "aB3xZ9+/=", "0123456789abcdef", "AZaz09_-", "x1", "é٣ab²", "aaaaaaa1b"]
    )
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))


def test_looks_random_from_counts_is_looks_random() -> None:
    rng = random.Random(20261205)
    answers = set()
    for _ in range(3000):
        text = _random_text(rng)
        assert secret_keys._random_counts(Counter(text), len(text)) == secret_keys.looks_random(
            text
        ), text
        answers.add(secret_keys.looks_random(text))
    assert answers == {True, False}  # control: both answers were asked for
    # hand-worked: 8 distinct characters once each, 3 bits; 7 of them, one twice, 2.75 bits
    assert secret_keys.looks_random("ab12cd34")
    assert not secret_keys.looks_random("ab12cd3a")
    assert secret_keys._random_counts(Counter("ab12cd34"), 8)
    assert not secret_keys._random_counts(Counter("ab12cd3a"), 8)


def test_the_suffixes_of_a_run_are_counted_as_the_start_moves() -> None:
    rng = random.Random(7)
    for _ in range(300):
        view = _random_text(rng) * 3
        suffixes = secret_keys._Suffixes(view)
        end, start = len(view), 0
        for _ in range(10):
            if rng.random() < 0.2:  # another run: counted afresh
                end, start = rng.randint(0, len(view)), 0
            start = rng.randint(start, max(start, end))
            assert suffixes.looks_random(start, end) == secret_keys.looks_random(view[start:end])


def test_a_run_of_weak_names_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = []

    def entropy(value: str) -> float:
        counted.append(value)
        return 0.0

    monkeypatch.setattr(secret_keys._ENTROPY, "calculate_shannon_entropy", entropy)
    # `auth` is a weak name: its value counts only when it looks random; none here does
    assert list(secret_keys.assignments("auth=x1," * 300)) == []
    assert counted == []  # the run's counts answer, with the entropy computed from them
    # control: the `--auth VALUE` form asks detect-secrets for each value's entropy
    assert list(secret_keys.assignments("--auth x1b2c3d4e5 " * 3)) == []
    assert len(counted) == 3


def test_the_template_and_placeholder_checks_answer_as_the_pattern_and_the_set() -> None:
    rng = random.Random(11)
    seen = set()
    for _ in range(3000):
        value = "".join(rng.choice("<>a?&$%s{}x") for _ in range(rng.randint(1, 12)))
        expected = secret_keys._TEMPLATE.match(value) is not None
        assert secret_keys._template(value, bare=True) == expected, value
        seen.add(expected)
    assert seen == {True, False}  # control: templates and not
    words = [*secret_keys._PLACEHOLDER_WORDS, "None", "NULL", "İstr", "x" * 40, "Uint8Array", "pw"]
    for word in words:
        assert secret_keys._placeholder_word(word) == (
            word.lower() in secret_keys._PLACEHOLDER_WORDS
        )
    assert secret_keys._placeholder_word("SecretStr")
    assert not secret_keys._placeholder_word("hunter2")


def test_a_query_value_finds_its_end_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = _Counting(secret_keys._QUERY_STOP)
    monkeypatch.setattr(secret_keys, "_QUERY_STOP", stop)
    # `?auth=` is a query's parameter: its value ends at the next `&` or `#`; none here
    assert list(secret_keys.assignments("?auth=x" * 300)) == []
    assert stop.calls == 1
    stop.calls = 0  # control: `&` ends each value, so each is found
    text = "?auth=x&" * 300
    assert list(secret_keys.assignments(text)) == []
    assert stop.calls == 300

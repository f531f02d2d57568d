"""Strings the person redacted (`recallbench forget --redact`), and how every import redacts them.

`forget --redact TEXT` rewrites the stored messages that hold TEXT with `MARK` in its place
(`engine.forget_credentials`), and records TEXT here so that nothing brings it back: the import
(`engine.sanitize`) redacts it from every line read later, and `recallbench rebuild` carries the record
into the new database before it reads the transcripts again (`engine.forget.carry_tombstones`), which
still hold it: Claude Code's files are not changed. The record is never the text: its first `HEAD`
characters (what a search for it starts from), its length and its SHA-256. A string shorter than
`MIN_CHARS` is refused: it would match by accident, and its hash would say what it was. A benchmark's
corpus is imported into a memory of its own, which records none.

Only `engine.forget` writes the record (through `engine.forget_sql`); this module holds the schema
(`engine.store.MIGRATIONS`) and the read, so that the import, which the hooks reach, never imports the
module that deletes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass

SCHEMA = """
CREATE TABLE redacted_strings (
    sha256 TEXT PRIMARY KEY,
    head TEXT NOT NULL,
    length INTEGER NOT NULL,
    redacted_at TEXT NOT NULL
);
"""
# What stands in for a redacted string, in the stored text and in every later import.
MARK = "[redacted:forgotten]"
KIND = "redacted:forgotten"  # how an import counts it (`recallbench status`'s scrubbed line)
HEAD = 4
MIN_CHARS = 8


@dataclass(frozen=True)
class Rule:
    """One redacted string, as the memory records it."""

    head: str
    length: int
    sha256: str

    @classmethod
    def of(cls, text: str) -> Rule:
        return cls(head=text[:HEAD], length=len(text), sha256=_sha(text))

    def row(self, at: str) -> tuple[str, str, int, str]:
        """The table's row for this string, redacted at `at`."""
        return (self.sha256, self.head, self.length, at)


@dataclass(frozen=True)
class Redactions:
    """The redacted strings a memory records; `apply` puts `MARK` in each one's place."""

    rules: tuple[Rule, ...] = ()

    def apply(self, text: str) -> tuple[str, int]:
        """`text` with every occurrence of every rule's string replaced by `MARK`, and how many."""
        total = 0
        for rule in self.rules:
            text, n = _replace(text, rule)
            total += n
        return text, total


NONE = Redactions()


def redactions(conn: sqlite3.Connection) -> Redactions:
    """Every string this memory's person redacted, oldest first."""
    return Redactions(tuple(Rule(head=h, length=n, sha256=s) for s, h, n, _ in rows(conn)))


def rows(conn: sqlite3.Connection) -> list[tuple[str, str, int, str]]:
    """The table's rows (`Rule.row`), oldest first: what `rebuild` carries into a new database."""
    found = conn.execute(
        "SELECT sha256, head, length, redacted_at FROM redacted_strings ORDER BY redacted_at, sha256"
    ).fetchall()
    return [(str(s), str(h), int(n), str(at)) for s, h, n, at in found]


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM redacted_strings").fetchone()[0])


def _replace(text: str, rule: Rule) -> tuple[str, int]:
    pieces: list[str] = []
    start = found = 0
    at = text.find(rule.head)
    while at != -1:
        candidate = text[at : at + rule.length]
        if len(candidate) == rule.length and _sha(candidate) == rule.sha256:
            pieces.extend((text[start:at], MARK))
            start = at + rule.length
            found += 1
            at = text.find(rule.head, start)
        else:
            at = text.find(rule.head, at + 1)
    if not found:
        return text, 0
    pieces.append(text[start:])
    return "".join(pieces), found


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

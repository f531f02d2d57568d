"""`protocol instantiate --without NAME`: leave one of a template's rosters out, with all that reads it.

protocols/private.toml compares arms on masked receipts and on drafted questions; drafting needs a model
the person is willing to send passages to. Without that roster the template would not load (its gates
name it), so it could not be used at all. Leaving the roster out removes, before anything is filled in:

- its `[[rosters]]` entry;
- every `[[gates]]` entry on it (with its `[gates.readings]`);
- those gates from `[correction]`'s family (the section goes when no gate is left in it), so the Holm
  adjustment is over the gates that run;
- and its gates are read as NULL, which is what no evidence looks like, in every `[[ship.rules]]`
  entry: a condition that accepts NULL (`["PASS", "NULL"]`: not worse) is met and dropped from the
  rule; a rule with a condition that does not (it needed a PASS or a FAIL from that roster) could never
  fire and is removed, as is a rule left with no condition at all. Each rule kept ships exactly when
  it would have had the roster run and every gate on it come out NULL.

The new protocol says so in its first comment line, so the registered file records what was left out.
Nothing else changes: the arms still run and are reported.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from recallbench.toml_edit import block_end, set_in_section

# The array-of-tables entries this edits, and the sub-table prefix that still belongs to each entry.
ENTRY_TABLES = {
    "[[rosters]]": "[rosters.",
    "[[gates]]": "[gates.",
    "[[ship.rules]]": "[ship.rules.",
}


@dataclass(frozen=True)
class LeftOut:
    """What leaving a roster out removed from a template."""

    roster: str
    gates: tuple[str, ...]
    removed: tuple[int, ...]  # 1-based places of the ship rules removed, in the template's order
    narrowed: tuple[int, ...]  # 1-based places of the rules that lost conditions that read NULL
    n_rules: int  # the template's ship rules before

    def summary(self) -> str:
        """One line for the terminal and the protocol's first comment."""
        gates = ", ".join(self.gates) or "none"
        line = f'roster "{self.roster}" left out (--without {self.roster}); its gates {gates} read as NULL'
        if self.removed:
            line += f"; ship rule(s) {_places(self.removed)} of {self.n_rules} needed another verdict of them and are gone"
        if self.narrowed:
            line += f"; rule(s) {_places(self.narrowed)} lose their conditions on them"
        return line


def _places(places: tuple[int, ...]) -> str:
    return ", ".join(f"#{i}" for i in places)


def without_roster(text: str, name: str, template: Path) -> tuple[str, LeftOut]:
    """`text` (a template) without roster `name` and everything that reads it (module docstring).

    Raises:
        click.UsageError: the template has no such roster, it is the template's only one, or
            every gate is on it.
        click.ClickException: the template's layout cannot be edited line by line (`_drop_entries`).
    """
    doc = tomllib.loads(text)
    names = [r.get("name") for r in doc.get("rosters", [])]
    if name not in names:
        raise click.UsageError(
            f"--without {name}: {template} has rosters {', '.join(map(str, names))}"
        )
    if len(names) == 1:
        raise click.UsageError(
            f"--without {name}: it is {template}'s only roster; a protocol needs one to run"
        )
    all_gates: list[dict[str, Any]] = doc.get("gates", [])
    places = [i for i, g in enumerate(all_gates) if g.get("roster") == name]
    if all_gates and len(places) == len(all_gates):
        raise click.UsageError(
            f"--without {name}: every gate of {template} is on {name}; a protocol without "
            "gates decides nothing"
        )
    gate_ids = {all_gates[i]["id"] for i in places}
    rules: list[dict[str, Any]] = doc.get("ship", {}).get("rules", [])
    kept = {i: _read_as_null(r.get("when", {}), gate_ids) for i, r in enumerate(rules)}
    removed = [i for i, when in kept.items() if not when]
    narrowed = [i for i, when in kept.items() if when and len(when) < len(rules[i]["when"])]
    lines = text.splitlines(keepends=True)
    lines = _narrow_rules(lines, {i: kept[i] for i in narrowed}, len(rules), template)
    lines = _drop_entries(lines, "[[ship.rules]]", removed, len(rules), template)
    lines = _drop_entries(lines, "[[gates]]", places, len(all_gates), template)
    lines = _drop_entries(lines, "[[rosters]]", [names.index(name)], len(names), template)
    out = "".join(lines)
    correction = doc.get("correction")
    if correction is not None:
        out = _set_family(out, [g for g in correction.get("gates", []) if g not in gate_ids])
    left = LeftOut(
        roster=name,
        gates=tuple(all_gates[i]["id"] for i in places),
        removed=tuple(i + 1 for i in removed),
        narrowed=tuple(i + 1 for i in narrowed),
        n_rules=len(rules),
    )
    return f"# {left.summary()}\n{out}", left


def _read_as_null(when: dict[str, Any], gone: set[str]) -> dict[str, Any]:
    """A rule's conditions with the gates in `gone` read as NULL: a condition that accepts NULL is
    met and dropped; one that does not can never be met, so the rule is empty (removed). A rule left
    with no condition is removed too rather than shipping unconditionally."""
    out: dict[str, Any] = {}
    for gate, verdicts in when.items():
        if gate not in gone:
            out[gate] = verdicts
        elif "NULL" not in ([verdicts] if isinstance(verdicts, str) else verdicts):
            return {}
    return out


def _narrow_rules(
    lines: list[str], whens: dict[int, dict[str, Any]], count: int, template: Path
) -> list[str]:
    """The `[[ship.rules]]` entries at the keys of `whens` with their `when = {…}` line rewritten."""
    spans = _spans_of(lines, "[[ship.rules]]", count, template)
    out = list(lines)
    for place, when in whens.items():
        start, end = spans[place]
        line = next((i for i in range(start, end) if re.match(r"^\s*when\s*=\s*\{", out[i])), None)
        if line is None:
            raise click.ClickException(
                f"{template}: ship rule #{place + 1} has no one-line `when = {{…}}` to rewrite"
            )
        items = ", ".join(f"{_key(g)} = {json.dumps(v)}" for g, v in when.items())
        out[line] = f"when = {{ {items} }}\n"
    return out


def _key(gate: str) -> str:
    return gate if re.fullmatch(r"[A-Za-z0-9_-]+", gate) else json.dumps(gate)


def _entry_spans(lines: list[str], header: str) -> list[tuple[int, int]]:
    """(start, end) line spans of every `header` entry with its own sub-tables, in file order; comment
    lines at an entry's end stay (they introduce what follows it)."""
    sub = ENTRY_TABLES[header]
    spans: list[tuple[int, int]] = []
    for start, line in enumerate(lines):
        if line.strip() != header:
            continue
        end = start + 1
        while end < len(lines) and not _is_header(lines[end], sub):
            end += 1
        stop = end
        while stop > start + 1 and (not lines[stop - 1].strip() or _is_comment(lines[stop - 1])):
            stop -= 1
        while stop < end and not lines[stop].strip():
            stop += 1
        spans.append((start, stop))
    return spans


def _is_header(line: str, sub: str) -> bool:
    """A table header line that does not start a sub-table `sub…` of the entry."""
    stripped = line.lstrip()
    return stripped.startswith("[") and not stripped.startswith(sub)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _spans_of(lines: list[str], header: str, count: int, template: Path) -> list[tuple[int, int]]:
    """`_entry_spans`, checked against the number of entries TOML reads.

    Raises:
        click.ClickException: another number of lines that are exactly `header` (a header with a
            comment after it, say), so places could not be matched.
    """
    spans = _entry_spans(lines, header)
    if len(spans) != count:
        raise click.ClickException(
            f"{template}: {count} {header} entries, but {len(spans)} lines that are exactly "
            f"{header}; write each entry's header on a line of its own to leave a roster out"
        )
    return spans


def _drop_entries(
    lines: list[str], header: str, places: list[int], count: int, template: Path
) -> list[str]:
    """`lines` without the `header` entries at `places` (0-based, in file order)."""
    spans = _spans_of(lines, header, count, template)
    out = list(lines)
    for place in sorted(places, reverse=True):
        start, end = spans[place]
        del out[start:end]
    return out


def _set_family(text: str, kept: list[str]) -> str:
    """`[correction]`'s `gates` set to `kept`, or the section removed when `kept` is empty."""
    if kept:
        return set_in_section(text, "[correction]", {"gates": kept})
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.strip() == "[correction]")
    return "".join(lines[:start] + lines[block_end(lines, start) :])

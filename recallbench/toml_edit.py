"""Line edits of a protocol's TOML text that keep its comments and layout (a TOML writer would drop
them): set keys in the top level, in a table, in every table of a header or in one `[[rosters]]` entry.
`protocol instantiate` fills a template with them; `recallbench.template_without` sets the correction
family with them."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping

import click


def set_in_every(text: str, header: str, values: Mapping[str, object]) -> str:
    """Set keys inside every table whose header line is exactly `header` (last first, so indices hold)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.strip() == header]
    for start in reversed(starts):
        lines = _set_in_block(lines, start, values)
    return "".join(lines)


def set_top(text: str, key: str, value: str) -> str:
    """Set a top-level string key (before the first table), adding it at the top if absent."""
    pattern = re.compile(rf"^{key}\s*=.*$", re.MULTILINE)
    line = f"{key} = {json.dumps(value)}"
    first_table = re.search(r"^\[", text, re.MULTILINE)
    match = pattern.search(text)
    if match and (first_table is None or match.start() < first_table.start()):
        return text[: match.start()] + line + text[match.end() :]
    return line + "\n" + text


def set_in_section(text: str, header: str, values: Mapping[str, object]) -> str:
    """Set keys inside the first table whose header line is exactly `header`."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip() == header), None)
    if start is None:
        raise click.ClickException(f"template has no {header} section")
    return "".join(_set_in_block(lines, start, values))


def set_in_roster(text: str, name: str, values: Mapping[str, object]) -> str:
    """Set keys inside the `[[rosters]]` entry whose `name` is `name`."""
    lines = text.splitlines(keepends=True)
    for start, ln in enumerate(lines):
        if ln.strip() != "[[rosters]]":
            continue
        end = block_end(lines, start)
        for i in range(start + 1, end):
            m = re.match(r"^\s*name\s*=\s*(.+?)\s*$", lines[i])
            if m and _toml_string(m.group(1)) == name:
                return "".join(_set_in_block(lines, start, values))
    raise click.ClickException(f"template has no [[rosters]] entry named {name!r}")


def _toml_string(raw: str) -> str | None:
    try:
        value = tomllib.loads(f"v = {raw}").get("v")
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) else None


def block_end(lines: list[str], start: int) -> int:
    """The index of the first table header after line `start` (or the end): the table's last line + 1."""
    return next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines)
    )


def _set_in_block(lines: list[str], start: int, values: Mapping[str, object]) -> list[str]:
    lines = list(lines)
    end = block_end(lines, start)
    done: set[str] = set()
    i = start + 1
    while i < end:
        m = re.match(r"^(\s*)([A-Za-z_0-9]+)\s*=\s*(.*)$", lines[i])
        if m and m.group(2) in values:
            last = i
            if m.group(3).startswith("[") and "]" not in m.group(3):
                # a multi-line array: replace through its closing bracket
                while last + 1 < end and "]" not in lines[last]:
                    last += 1
            lines[i : last + 1] = [f"{m.group(1)}{m.group(2)} = {json.dumps(values[m.group(2)])}\n"]
            end -= last - i
            done.add(m.group(2))
        i += 1
    extra = [f"{k} = {json.dumps(v)}\n" for k, v in values.items() if k not in done]
    lines[start + 1 : start + 1] = extra
    return lines

"""`recallbench forget --redact TEXT`: a string of a format no sanitizer rule knows is replaced in place,
in every file of the home, the messages kept; every later import, and a rebuild, redacts it too."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine import store
from engine.redacted_sql import MARK, Redactions, Rule, redactions
from recallbench import forget_cli
from recallbench.cli import main
from tests.engine.fixtures_transcripts import (
    SESSION,
    append_jsonl,
    simple_session,
    tool_use_line,
    ts,
    user_line,
    write_jsonl,
)
from tests.engine.old_store import store_at_version

# An internal token the sanitizer has no rule for (control below: an import keeps it).
TOKEN = "corpnet-7Hq2-Zz91-wobble"
OTHER = "5e551011-0000-4000-8000-0000000000cc"
ENV = {"session_id": OTHER, "cwd": "/home/dev/my_proj"}
EDITED = "/srv/{}/app/config.py"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def raw_bytes(home: Path, needle: str) -> int:
    """How many times `needle` stands in the bytes of every file under `home`."""
    return sum(p.read_bytes().count(needle.encode()) for p in home.rglob("*") if p.is_file())


def texts(db: Path) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return " ".join(str(r[0]) for r in conn.execute("SELECT text FROM chunks"))


def edit_of(folder: str) -> dict[str, str]:
    return {"file_path": EDITED.format(folder), "old_string": "a", "new_string": "b"}


def edited(db: Path) -> list[str]:
    with closing(sqlite3.connect(db)) as conn:
        return [str(r[0]) for r in conn.execute("SELECT path FROM file_edits ORDER BY path")]


def test_redactions_replace_each_whole_occurrence_and_record_no_text() -> None:
    rule = Rule.of(TOKEN)
    assert (rule.head, rule.length) == ("corp", 24)
    assert TOKEN not in repr(rule)
    redact = Redactions((rule,))
    # two occurrences, one inside a word; "corp" alone and a prefix of the token are not it
    said = f"corp {TOKEN[:-1]} a{TOKEN}b, {TOKEN}."
    assert redact.apply(said) == (f"corp {TOKEN[:-1]} a{MARK}b, {MARK}.", 2)
    assert Redactions().apply(said) == (said, 0)  # control: no rule, no change


@pytest.fixture
def imported(home: Path, tmp_path: Path) -> Path:
    """SESSION's prompt and the Bash command of OTHER hold TOKEN; both imported as they are."""
    root = tmp_path / "t"
    write_jsonl(
        root / f"{SESSION}.jsonl",
        simple_session(f"Why does the VPN refuse {TOKEN} since Monday?", answer="It expired."),
    )
    lines = simple_session("Which host serves the wiki?", session_id=OTHER, prefix="o-")
    blocks = [
        b
        for line in lines
        if isinstance(line["message"]["content"], list)
        for b in line["message"]["content"]
    ]
    (call,) = [b for b in blocks if b.get("type") == "tool_use"]
    call["input"]["command"] = f"curl https://wiki.example/{TOKEN}/home"
    # an edit of a file under a folder named by it: the marker shows `app/config.py` only, the
    # recorded edit the whole path
    lines.append(
        tool_use_line(
            "o-t2", "Edit", edit_of(TOKEN), message_id="o-m9", uuid="o-a9", parent="o-a3", **ENV
        )
    )
    write_jsonl(root / f"{OTHER}.jsonl", lines)
    assert invoke("import", str(root)).exit_code == 0
    assert raw_bytes(home, TOKEN) >= 2  # control: no sanitizer rule redacts it
    assert "redacted strings" not in invoke("status").stdout  # none yet
    return root


def test_forget_redact_rewrites_in_place_and_every_later_import_redacts_it(
    imported: Path, home: Path
) -> None:
    db = home / "memory.db"
    dry = invoke("forget", "--redact", TOKEN, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines()[:3] == [
        f"forget --redact (the string given) in {db} replaces it with {MARK}, in place:",
        f"  /home/dev/my_proj  session {SESSION}: 1 message rewritten, 1 chunk chunked again",
        # the Bash call's marker, and its result's header, which names the command
        f"  /home/dev/my_proj  session {OTHER}: 2 messages rewritten, 1 chunk chunked again",
    ]
    assert dry.output.splitlines()[3] == (
        "  and the string in 1 stored tool inputs; 1 recorded file-edit paths that hold it go"
    )
    assert edited(db) == [EDITED.format(TOKEN)]
    assert TOKEN not in dry.output
    assert raw_bytes(home, TOKEN) >= 2  # the dry run changed nothing
    unasked = invoke("forget", "--redact", TOKEN)
    assert unasked.exit_code == 1
    assert "forget needs the string typed back on a terminal" in unasked.output
    short = invoke("forget", "--redact", "corpnet", "--confirm", "corpnet")
    assert short.exit_code == 2
    assert "a --redact string must have at least 8 characters (got 7)" in short.output

    done = invoke("forget", "--redact", TOKEN, "--confirm", TOKEN)

    assert done.exit_code == 0, done.output
    assert (
        "redacted: 0 whole sessions, 2 chunks, 3 messages, 1 stream states, 1 file-edit paths"
        in (done.output)
    )
    assert edited(db) == []
    again = invoke("forget", "--redact", TOKEN, "--dry-run")
    assert again.output.splitlines()[1] == "  no stored message holds it"
    assert "project path" not in again.output
    # a string a project's folder holds: that path stays, and the dry run says so
    folder = invoke("forget", "--redact", "/home/dev/my_proj", "--dry-run").output
    assert (
        "It is part of 1 project path (the folders sessions ran in), which stay: "
        "`recallbench forget --project PATH` removes a project."
    ) in folder.splitlines()
    assert raw_bytes(home, TOKEN) == 0
    stored = texts(db)
    assert f"Why does the VPN refuse {MARK} since Monday?" in stored  # the rest stays
    assert f"[Bash: curl https://wiki.example/{MARK}/home]" in stored
    assert f"[Bash result: curl https://wiki.example/{MARK}/home]" in stored
    found = invoke("search", "VPN refuse Monday", "--arm", "fts", "--all-projects", "--json")
    assert [h["session_id"] for h in json.loads(found.stdout)["hits"]] == [SESSION]
    gone = invoke("search", TOKEN, "--arm", "fts", "--all-projects", "--json")
    assert "wobble" not in gone.stdout
    audit = invoke("audit").output
    assert "redact:(text not recorded)" in audit
    assert TOKEN not in audit
    status = invoke("status").stdout
    assert (
        "redacted strings: 1 (`recallbench forget --redact`), kept out of every import as "
        "[redacted:forgotten]"
    ) in status.splitlines()
    assert json.loads(invoke("status", "--json").stdout)["redacted_strings"] == 1

    # a line written later that holds it is imported redacted
    append_jsonl(
        imported / f"{SESSION}.jsonl",
        [
            user_line(f"Rotate {TOKEN} today", uuid="u9", parent="a3", timestamp=ts(9)),
            tool_use_line("t9", "Edit", edit_of(TOKEN), message_id="m9", uuid="a9", parent="u9"),
        ],
    )
    later = invoke("import", str(imported), "--json")
    assert json.loads(later.stdout)["scrubbed"]["redacted:forgotten"] == 2  # the prompt, the path
    assert f"Rotate {MARK} today" in texts(db)
    assert edited(db) == [EDITED.format(MARK)]
    # and a rebuild, which reads every transcript again, keeps it out
    assert invoke("rebuild").exit_code == 0
    rebuilt = texts(db)
    assert f"Why does the VPN refuse {MARK} since Monday?" in rebuilt
    assert f"Rotate {MARK} today" in rebuilt
    assert raw_bytes(home, TOKEN) == 0
    assert TOKEN in (imported / f"{SESSION}.jsonl").read_text()  # Claude Code's file keeps it


def test_a_store_made_before_the_table_gets_it_on_open(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store_at_version(db, 10)
    with closing(sqlite3.connect(db)) as old:
        names = "SELECT name FROM sqlite_master WHERE name = 'redacted_strings'"
        assert old.execute(names).fetchall() == []
    migrated = store.connect(db)
    try:
        assert migrated.execute(names).fetchall() == [("redacted_strings",)]
        assert redactions(migrated) == Redactions()
    finally:
        migrated.close()


def test_on_a_terminal_the_person_types_the_string_back(
    imported: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forget_cli, "_interactive", lambda: True)
    runner = CliRunner()
    mistyped = runner.invoke(main, ["forget", "--redact", TOKEN], input="corpnet-7Hq2\n")
    assert mistyped.exit_code == 1
    assert "Type the string again to redact it" in mistyped.output
    assert "what was typed is not the string given; nothing was removed" in mistyped.output
    assert raw_bytes(home, TOKEN) >= 2
    typed = runner.invoke(main, ["forget", "--redact", TOKEN], input=f"{TOKEN}\n")
    assert typed.exit_code == 0, typed.output
    assert raw_bytes(home, TOKEN) == 0

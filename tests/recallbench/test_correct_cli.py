"""`recallbench correct` and `recallbench corrections`: the person's settles, notes and undos, the
agent's settles pending review, and the errors that say what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from engine import audit
from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench.cli import main
from tests.engine.test_trust_same_text import memory_of as same_text_memory
from tests.engine.trust_fixtures import SHOP, T0, T1, shop_memory, write_corpus

AGENT = "agent:5e551011-0000-4000-8000-0000000000aa"
QUERY = "orders database port"


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def memory_at(tmp_path: Path, home: Path) -> tuple[Memory, dict[str, str]]:
    """The corpus in the home's database, with vectors for the embedder the commands use too."""
    memory, ids = shop_memory(tmp_path, db=home / "memory.db")
    Memory(home / "memory.db", HashEmbedder()).embed_pending()
    return memory, ids


def searched(*extra: str) -> list[dict[str, Any]]:
    out = cli("search", QUERY, "--project", SHOP, "--json", *extra)
    assert out.exit_code == 0, out.output
    hits: list[dict[str, Any]] = json.loads(out.stdout)["hits"]
    return hits


def corrections(*args: str) -> list[dict[str, Any]]:
    out = cli("corrections", "--json", *args)
    assert out.exit_code == 0, out.output
    found: list[dict[str, Any]] = json.loads(out.stdout)
    return found


def test_correct_hides_a_corrected_memory_from_search_until_it_is_undone(
    tmp_path: Path, home: Path
) -> None:
    _, ids = memory_at(tmp_path, home)
    old, new = ids["old"], ids["new"]
    assert old in [h["chunk_id"] for h in searched()]  # control: found before
    out = cli("correct", old, "--by", new, "--kind", "corrected", "--reason", "the port moved")
    assert out.exit_code == 0, out.output
    assert out.stdout == (
        f"settle 1: {old} corrected by {new}\n"
        f"{old} is hidden from every search from now on (its id still reads it); "
        "`recallbench correct --undo 1` takes it back\n"
    )
    hits = searched()
    assert old not in [h["chunk_id"] for h in hits]
    assert new in [h["chunk_id"] for h in hits]  # the replacement is found
    undone = cli("correct", "--undo", "1", "--reason", "changed my mind")
    assert undone.exit_code == 0, undone.output
    assert undone.stdout == (f"settle 1 undone: {old} (corrected by {new}) is as it was before\n")
    assert old in [h["chunk_id"] for h in searched()]  # control: back after the undo
    rows = [(e.action, e.actor, e.reason) for e in audit.entries(Memory(home / "memory.db").conn)]
    assert rows == [
        ("settle", "person", "corrected: the port moved"),
        ("undo", "person", "changed my mind"),
    ]


def test_correct_changed_ranks_the_replacement_first_and_marks_the_old_one(
    tmp_path: Path, home: Path
) -> None:
    _, ids = memory_at(tmp_path, home)
    old, new = ids["old"], ids["new"]
    before = [h["chunk_id"] for h in searched()]
    assert before.index(old) < before.index(new)  # control: the old port ranks first
    out = cli("correct", old, "--by", new, "--kind", "changed", "--reason", "moved")
    assert out.exit_code == 0, out.output
    hits = searched()
    order = [h["chunk_id"] for h in hits]
    assert order.index(new) < order.index(old)
    status = {h["chunk_id"]: h["status"] for h in hits}
    assert status[old].startswith("changed on ")
    assert status[old].endswith(f"(replaced by {new}, settle 1)")
    text = cli("search", QUERY, "--project", SHOP).stdout
    assert f"(replaced by {new}, settle 1)" in text


def test_correct_with_a_note_stores_it_in_the_old_chunks_project_and_search_finds_it(
    tmp_path: Path, home: Path
) -> None:
    _, ids = memory_at(tmp_path, home)
    note = "The orders database port is 6543 since May."
    assert "May" not in json.dumps(searched())  # control: nothing says May yet
    out = cli(
        "correct", ids["old"], "--note", note, "--kind", "corrected", "--reason", "5432 was wrong"
    )
    assert out.exit_code == 0, out.output
    first = out.stdout.splitlines()[0]
    assert first.startswith("note stored as chunk ")
    note_id = first.removeprefix("note stored as chunk ")
    hits = {h["chunk_id"]: h for h in searched()}
    assert note_id in hits
    assert ids["old"] not in hits
    assert hits[note_id]["text"] == note
    assert hits[note_id]["project"] == SHOP
    assert hits[note_id]["author"] == "User"
    [settled] = corrections()
    assert (settled["old"], settled["new"], settled["kind"]) == (ids["old"], note_id, "corrected")


def test_correct_refuses_bad_usage_and_says_what_to_do(tmp_path: Path, home: Path) -> None:
    absent = cli("correct", "x", "--by", "y", "--kind", "open", "--reason", "r")
    assert absent.exit_code == 1
    assert f"no database at {home / 'memory.db'}; run `recallbench import` first" in absent.output
    _, ids = memory_at(tmp_path, home)
    old, new = ids["old"], ids["new"]
    cases = {
        ("correct",): "name the chunk to settle (OLD), or take a settle back with --undo ID",
        ("correct", old, "--kind", "open", "--reason", "r"): "--by NEW (a chunk id) or --note TEXT",
        ("correct", old, "--by", new, "--note", "n", "--kind", "open", "--reason", "r"): "not both",
        ("correct", old, "--by", new, "--reason", "r"): "--kind is required",
        ("correct", old, "--by", new, "--kind", "open"): "--reason is required",
        ("correct", old, "--by", new, "--kind", "wrong", "--reason", "r"): "'wrong' is not one of",
        ("correct", "--undo", "1", old): "--undo ID takes no OLD",
    }
    for args, message in cases.items():
        out = cli(*args)
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output, (args, out.output)
    unknown = cli("correct", "nope", "--by", new, "--kind", "open", "--reason", "r")
    assert unknown.exit_code == 1
    assert "no chunk nope in the memory" in unknown.output
    missing = cli("correct", "--undo", "7")
    assert missing.exit_code == 1
    assert "no settle with id 7; `recallbench corrections` lists" in missing.output
    assert corrections("--all") == []  # nothing was recorded by any refused call
    ok = cli("correct", old, "--by", new, "--kind", "open", "--reason", "r")  # control
    assert ok.exit_code == 0, ok.output
    assert len(corrections()) == 1


def test_corrections_pending_lists_every_agent_settle_still_in_force(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = memory_at(tmp_path, home)
    first = memory.settle(
        ids["old"], by=ids["new"], kind="corrected", reason="a", actor=AGENT, now=T0
    )
    memory.settle(ids["backup"], by=ids["pool"], kind="open", reason="b", actor=AGENT, now=T0)
    memory.settle(ids["pool"], by=ids["new"], kind="changed", reason="c", actor="person", now=T0)
    memory.settle(ids["blog"], by=ids["pool"], kind="open", reason="d", actor=AGENT, now=T0)
    memory.undo_settle(2, actor=AGENT, now=T1)
    assert [s["id"] for s in corrections()] == [1, 3, 4]  # control: all in force
    assert [s["id"] for s in corrections("--pending")] == [1, 4]
    assert [s["id"] for s in corrections("--all")] == [1, 2, 3, 4]
    assert [s["id"] for s in corrections("--pending", "--project", "/home/dev/blog")] == [4]
    shown = cli("corrections", "--pending").stdout
    assert (
        f"#1  2026-05-01T09:30:00Z  corrected  {ids['old']} -> {ids['new']}  by {AGENT}: a" in shown
    )
    assert "    old: /home/dev/shop · Which port is the orders database port?" in shown
    # The person undoes the agent's settle; it leaves the pending list.
    out = cli("correct", "--undo", str(first.id))
    assert out.exit_code == 0, out.output
    assert [s["id"] for s in corrections("--pending")] == [4]
    assert "--pending lists settles in force" in cli("corrections", "--pending", "--all").output
    # `status` names the agent's settles in force, for the person to review: 3 and 4 in force, 4 the
    # agent's (1 undone by the person, 2 by the agent)
    status = cli("status").stdout.splitlines()
    assert (
        "corrections: 2 in force, 1 of them made by an agent (flag_memory), which can hide a memory: "
        "`recallbench corrections --pending` lists them, `recallbench correct --undo ID` takes one "
        "back"
    ) in status
    assert json.loads(cli("status", "--json").stdout)["corrections"] == {"active": 2, "by_agent": 1}
    cli("correct", "--undo", "4")
    assert "corrections: 1 in force" in cli("status").stdout.splitlines()  # the person's only


def test_corrections_on_an_empty_memory_says_so(tmp_path: Path, home: Path) -> None:
    memory_at(tmp_path, home)
    assert cli("corrections").stdout == "no settles in any project\n"
    assert "corrections: 0 in force" in cli("status").stdout.splitlines()
    assert cli("corrections", "--pending", "--project", SHOP).stdout == (
        f"no pending agent settles in {SHOP}\n"
    )
    # --all-projects is the default, taken as search takes it; with --project it is refused
    assert cli("corrections", "--all-projects").stdout == "no settles in any project\n"
    both = cli("corrections", "--all-projects", "--project", SHOP)
    assert both.exit_code == 2
    assert "give --project or --all-projects, not both" in both.output


def test_rebuild_carries_the_notes_and_settles_over_into_the_new_database(
    tmp_path: Path, home: Path
) -> None:
    root = write_corpus(tmp_path / "projects")
    assert cli("import", str(root)).exit_code == 0
    hits = {h["text"].rsplit("\n", 1)[-1]: h["chunk_id"] for h in searched()}
    old = hits["The orders database port is port 5432."]
    pool = hits["The pool holds twenty orders database connections."]
    note_out = cli(
        "correct", old, "--note", "Port 6543 now.", "--kind", "corrected", "--reason", "r"
    )
    assert note_out.exit_code == 0, note_out.output
    note = note_out.stdout.splitlines()[0].removeprefix("note stored as chunk ")
    assert cli("correct", pool, "--by", note, "--kind", "open", "--reason", "r").exit_code == 0
    assert cli("correct", "--undo", "2").exit_code == 0
    before = corrections("--all")
    rebuilt = cli("rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "carried over 1 notes and 2 settles" in rebuilt.stdout
    assert corrections("--all") == before
    found = [h["chunk_id"] for h in searched()]
    assert old not in found  # still corrected after the rebuild
    assert note in found  # the note survived, embedded again
    (backup,) = [p for p in home.glob("memory.db.bak-*") if not p.name.endswith(("-wal", "-shm"))]
    assert Memory(backup).settlements(Scope.everywhere(), include_undone=True)  # control: source


def test_correct_names_the_chunks_that_say_the_same_and_search_finds_none_of_them(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = same_text_memory(tmp_path, home / "memory.db")
    memory.close()
    a, b, c = ids["read_a"], ids["read_b"], ids["read_c"]

    def shown() -> set[str]:
        """The hits' ids, and those listed under a hit as the same text."""
        out = cli("search", "zanzibarite", "--all-projects", "--json", "--in-process")
        assert out.exit_code == 0, out.output
        hits = json.loads(out.stdout)["hits"]
        return {h["chunk_id"] for h in hits} | {i for h in hits for i in h.get("same_text", [])}

    assert {a, b, c} <= shown()  # control: before the settle the search reaches all three
    out = cli("correct", a, "--by", ids["note"], "--kind", "corrected", "--reason", "a typo")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[-2:] == [
        f"hidden with it: 2 chunk(s) that say the same ({', '.join(sorted([b, c]))}): the same "
        "text stored again (another session's read of the same file, say), or a resumed session's "
        "copy",
        # read_c lies in BETA, the note in ALPHA
        f"{ids['note']} lies in /home/dev/alpha: a search of /home/dev/beta alone hides the chunks "
        "there and cannot show it",
    ]
    assert not {a, b, c} & shown()
    assert ids["note"] in shown()
    listed = cli("corrections").stdout.splitlines()
    assert listed[3] == f"    hides too: 2 chunk(s) that say the same: {', '.join(sorted([b, c]))}"
    (row,) = json.loads(cli("corrections", "--json").stdout)
    assert row["same_text"] == sorted([b, c])
    short = cli(
        "correct", ids["short_a"], "--by", ids["note"], "--kind", "corrected", "--reason", "r"
    )
    assert short.exit_code == 0, short.output
    assert "hidden with it" not in short.stdout  # 32 characters: a statement of its own
    assert " lies in " not in short.stdout


def test_correct_changed_ranks_the_replacement_above_every_chunk_that_says_the_same(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = same_text_memory(tmp_path, home / "memory.db")
    memory.close()
    a, b, c, note = ids["read_a"], ids["read_b"], ids["read_c"], ids["note"]

    def hits() -> list[dict[str, Any]]:
        out = cli("search", "zanzibarite retry budget nine", "--all-projects", "--json")
        assert out.exit_code == 0, out.output
        found: list[dict[str, Any]] = json.loads(out.stdout)["hits"]
        return found

    before = hits()
    # control: the three reads rank first, shown once (the other two listed under the first)
    assert before[0]["chunk_id"] in {a, b, c}
    assert {before[0]["chunk_id"], *before[0]["same_text"]} == {a, b, c}
    out = cli("correct", b, "--by", note, "--kind", "changed", "--reason", "three now")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[-2:] == [
        f"ranked below its replacement too: 2 chunk(s) that say the same "
        f"({', '.join(sorted([a, c]))}): the same text stored again (another session's read of "
        "the same file, say), or a resumed session's copy",
        f"{note} lies in /home/dev/alpha: a search of /home/dev/beta alone shows the chunks there "
        "marked, without it",
    ]
    after = hits()
    # the note first, then the reads, once, marked changed by it
    assert after[0]["chunk_id"] == note
    assert after[1]["chunk_id"] == before[0]["chunk_id"]
    assert after[1]["status"].startswith("changed on ")
    assert set(after[1]["same_text"]) == {a, b, c} - {after[1]["chunk_id"]}
    listed = cli("corrections").stdout.splitlines()
    assert (
        listed[3]
        == f"    ranks below too: 2 chunk(s) that say the same: {', '.join(sorted([a, c]))}"
    )


def test_correct_open_names_the_chunks_that_say_what_either_side_says(
    tmp_path: Path, home: Path
) -> None:
    memory, ids = same_text_memory(tmp_path, home / "memory.db")
    memory.close()
    b, c = ids["read_b"], ids["read_c"]
    out = cli("correct", ids["note"], "--by", ids["read_a"], "--kind", "open", "--reason", "?")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[-1].startswith(
        f"shown with the other one too: 2 chunk(s) that say the same ({', '.join(sorted([b, c]))})"
    )
    listed = cli("corrections").stdout.splitlines()
    assert listed[3] == f"    pairs too: 2 chunk(s) that say the same: {', '.join(sorted([b, c]))}"

"""A private store, a damaged store explained at the command line's edge, `doctor` and `rebuild`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recallbench.cli import main
from recallbench.store_failure import store_failure
from tests.engine.fixtures_transcripts import append_jsonl, user_line
from tests.engine.test_health import (
    damage_marker_pages,
    imported,
    loose_umask,
    mode,
    write_sessions,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "import sys; sys.argv[0] = 'recallbench'; from recallbench.entry import main; main()"


def recallbench(home: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """The console script in its own process, as a user runs it."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "RECALLBENCH_HOME": str(home),
        "RECALLBENCH_EMBEDDER": "hash",
    }
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def damage_the_middle(db: Path) -> None:
    """Overwrite the middle half of the file with garbage."""
    data = bytearray(db.read_bytes())
    quarter = len(data) // 4
    data[quarter : 3 * quarter] = b"\xa5" * (2 * quarter)
    db.write_bytes(bytes(data))


# --- item 3: a private store ------------------------------------------------------------------------


def test_every_recallbench_process_keeps_its_home_private_under_a_loose_umask(
    tmp_path: Path,
) -> None:
    root = write_sessions(tmp_path / "transcripts")
    home = tmp_path / "fresh-home"  # created by recallbench itself
    with loose_umask():
        control = tmp_path / "control.txt"
        control.write_text("x", encoding="utf-8")
        assert mode(control) == 0o644  # positive control: the umask really is loose
        runs = [
            recallbench(home, "import", str(root)),
            recallbench(home, "status"),
            recallbench(home, "search", "--all-projects", "retry flake"),
            recallbench(home, "hook", "UserPromptSubmit", stdin=b"{not json"),
        ]
    assert [r.returncode for r in runs] == [0, 0, 0, 0], [r.stderr for r in runs]
    assert "warning" not in runs[1].stderr
    found = {p.relative_to(home).as_posix(): mode(p) for p in home.rglob("*")}
    assert {"memory.db", "hooks.log"} <= set(found)  # the database and the hook's log
    assert mode(home) == 0o700
    assert found == dict.fromkeys(found, 0o600)


def test_status_warns_once_per_loose_path_and_doctor_fix_makes_them_private(
    home: Path, tmp_path: Path
) -> None:
    db = imported(home / "memory.db", write_sessions(tmp_path / "t"))
    os.chmod(home, 0o755)
    os.chmod(db, 0o644)
    status = invoke("status")
    assert status.exit_code == 0
    # While status has the database open, SQLite gives its -wal and -shm the file's mode.
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    assert status.stderr.splitlines() == [
        f"warning: {path} is mode {was:04o}, open to other users; "
        f"`recallbench doctor --fix` makes it {wanted:04o}"
        for path, was, wanted in [
            (home, 0o755, 0o700),
            (db, 0o644, 0o600),
            (shm, 0o644, 0o600),
            (wal, 0o644, 0o600),
        ]
    ]
    doctor = invoke("doctor")
    assert doctor.exit_code == 1
    assert f"PROBLEM  permissions: open to other users: {home} (0755), {db} (0644)," in (
        doctor.stdout
    )
    fixed = invoke("doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert f"fixed: {home} 0755 -> 0700" in fixed.stdout
    assert f"fixed: {db} 0644 -> 0600" in fixed.stdout
    assert f"fixed: {wal} 0644 -> 0600" in fixed.stdout
    assert "OK       permissions: " in fixed.stdout
    assert (mode(home), mode(db), mode(wal), mode(shm)) == (0o700, 0o600, 0o600, 0o600)
    assert invoke("status").stderr == ""  # nothing left to warn about


# --- item 10: a damaged database --------------------------------------------------------------------


def test_a_damaged_database_gets_a_clear_message_and_exit_2_never_a_traceback(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    root = write_sessions(tmp_path / "t")
    db = imported(home / "memory.db", root)
    assert invoke("--db", str(db), "status").exit_code == 0  # positive control: the sound store
    damage_the_middle(db)
    for args in (
        ["status"],
        ["search", "--all-projects", "retry"],
        ["sessions", "--all-projects"],
        ["import", str(root)],
    ):
        run = recallbench(home, *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "Traceback" not in run.stderr + run.stdout
        assert f"the memory database {db} cannot be used: " in run.stderr
        assert "`recallbench doctor`" in run.stderr
        assert "`recallbench rebuild`" in run.stderr


def test_a_database_damaged_past_its_schema_fails_a_command_that_reads_the_damage(
    home: Path, tmp_path: Path
) -> None:
    root = write_sessions(tmp_path / "t")
    db = imported(home / "memory.db", root)
    assert invoke("search", "--all-projects", "zebramarker").exit_code == 0  # control
    assert damage_marker_pages(db) >= 1
    # The schema is intact, so the store opens; status only counts rows, which indexes answer.
    assert invoke("status").exit_code == 0
    search = invoke("search", "--all-projects", "zebramarker")
    assert search.exit_code == 2, search.output
    assert isinstance(search.exception, SystemExit)  # not an exception escaping the command
    assert search.stderr.startswith(f"Error: the memory database {db} cannot be used: ")


def test_an_import_that_cannot_write_to_a_damaged_database_exits_2(
    home: Path, tmp_path: Path
) -> None:
    root = write_sessions(tmp_path / "t")
    other = tmp_path / "other" / "memory.db"
    imported(other, root)
    damage_marker_pages(other)
    write_sessions(tmp_path / "more", count=12)
    result = invoke("--db", str(other), "import", "--no-embed", str(tmp_path / "more"))
    assert result.exit_code == 2, result.output
    assert "failed: " in result.stderr  # the files are listed, then the database is blamed
    assert f"the memory database {other} cannot be used: " in result.stderr
    assert f"`recallbench doctor --db {other}`" in result.stderr
    assert invoke("import", "--no-embed", str(root)).exit_code == 0  # control: a sound store


def test_doctor_reports_every_check_ok_on_a_sound_store_and_names_the_failing_one(
    home: Path, tmp_path: Path
) -> None:
    db = imported(home / "memory.db", write_sessions(tmp_path / "t"))
    sound = invoke("doctor")
    assert sound.exit_code == 0, sound.output
    assert [line.split(":")[0] for line in sound.stdout.splitlines()] == [
        "OK       sqlite integrity",
        "OK       full-text index",
        "OK       vector index",
        "OK       permissions",
        "OK       credentials",
    ]
    damage_marker_pages(db)
    damaged = invoke("doctor")
    assert damaged.exit_code == 1
    lines = damaged.stdout.splitlines()
    assert lines[0].startswith("PROBLEM  sqlite integrity: ")
    assert lines[2] == "PROBLEM  vector index: not checked: the database is damaged"
    assert lines[3].startswith("OK       permissions: ")
    assert lines[4] == "PROBLEM  credentials: not checked: the database is damaged"
    assert "`recallbench rebuild`" in damaged.stderr


def search_json(db: Path, query: str) -> object:
    result = invoke("--db", str(db), "search", "--all-projects", "--json", query)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


QUERIES = ("retry flake", "wall clock loop", "zebramarker")


def backups(home: Path) -> list[Path]:
    """The backup databases (their -wal and -shm, when a connection had them, not counted)."""
    found = home.glob("memory.db.bak-*")
    return sorted(p for p in found if not p.name.endswith(("-wal", "-shm")))


def test_rebuild_of_a_damaged_store_answers_as_a_fresh_import_and_keeps_the_old_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    root = write_sessions(tmp_path / "claude" / "projects")
    db = imported(home / "memory.db", root)
    fresh = imported(tmp_path / "fresh" / "memory.db", root)
    damage_the_middle(db)
    damaged = db.read_bytes()
    assert invoke("search", "--all-projects", "retry").exit_code == 2  # control: it is damaged
    rebuilt = invoke("rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    # the recorded paths cannot be read from the damaged file: the default folder is imported
    assert "cannot read which transcripts" in rebuilt.stderr
    assert "rebuilt" in rebuilt.stdout
    assert "from 9 transcript files: 9 chunks, 9 vectors embedded, 0 files failed" in rebuilt.stdout
    assert "are not reused" in rebuilt.stderr  # nothing is taken from a damaged file
    [backup] = backups(home)
    assert backup.read_bytes() == damaged
    assert f"the old database is kept as {backup}" in rebuilt.stdout
    for query in QUERIES:
        assert search_json(db, query) == search_json(fresh, query)
    assert invoke("doctor").exit_code == 0


def test_rebuild_reads_the_transcript_paths_the_store_recorded(home: Path, tmp_path: Path) -> None:
    root = write_sessions(tmp_path / "elsewhere")
    db = imported(home / "memory.db", root)
    before = {query: search_json(db, query) for query in QUERIES}
    assert not (Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects").exists()  # no fallback
    rebuilt = invoke("rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert rebuilt.stderr == ""
    assert {query: search_json(db, query) for query in QUERIES} == before
    gone = next(root.rglob("*.jsonl"))
    gone.unlink()
    # Claude Code deleted a transcript: the memory alone holds its chunk; nothing is dropped unasked
    kept = db.read_bytes()
    refused = invoke("rebuild")
    assert refused.exit_code == 1
    assert " ".join(refused.stderr.split()) == (
        "Error: 1 of the 9 transcript files the database records no longer exist (Claude Code "
        "deletes transcripts after its cleanupPeriodDays, 30 by default): what they held (1 chunk) "
        f"is only in {db}, and a rebuild would leave it in the backup alone; nothing was changed. "
        "`recallbench rebuild --keep-missing` rebuilds from the rest and carries it over as "
        "stored; `--drop-missing` rebuilds without it; `recallbench forget --match TEXT` removes "
        "one text from this database without a rebuild"
    )
    assert db.read_bytes() == kept
    assert len(backups(home)) == 1
    again = invoke("rebuild", "--drop-missing")
    assert again.exit_code == 0, again.output
    assert "1 of the 9 transcript files the database records no longer exist" in again.stderr
    assert "from 8 transcript files" in again.stdout
    # two backups (this process still has the old files open, so each has its -wal and -shm)
    assert len(backups(home)) == 2


def test_status_names_the_backups_rebuild_kept_with_their_sizes(home: Path, tmp_path: Path) -> None:
    imported(home / "memory.db", write_sessions(tmp_path / "t"))
    before = invoke("status")
    assert "backups `recallbench rebuild` kept" not in before.stdout  # control: none yet
    assert json.loads(invoke("status", "--json").stdout)["backups"] == []
    assert invoke("rebuild").exit_code == 0
    [backup] = backups(home)
    size = sum(p.stat().st_size for p in (backup, *home.glob(f"{backup.name}-*")) if p.is_file())
    listed = json.loads(invoke("status", "--json").stdout)["backups"]
    assert listed == [{"path": str(backup), "bytes": size}]
    line = next(x for x in invoke("status").stdout.splitlines() if x.startswith("backups"))
    assert line.startswith(
        f"backups `recallbench rebuild` kept: 1, {size / 1e6:.1f} MB ({backup.name});"
    )


def test_a_lock_is_not_called_damage_and_a_harness_database_is_not_called_the_memory(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    busy = store_failure(db, sqlite3.OperationalError("database is locked"))
    assert busy.exit_code == 2
    assert busy.message.startswith(f"the memory database {db} is busy: ")
    assert "rebuild" not in busy.message
    damaged = store_failure(db, sqlite3.DatabaseError("database disk image is malformed"))
    assert "rebuild" in damaged.message  # control: damage does advise a rebuild
    other = store_failure(None, sqlite3.DatabaseError("file is not a database"))
    assert other.message == "a database this command uses cannot be used: file is not a database"


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def test_rebuild_reuses_the_vectors_of_texts_that_did_not_change(
    home: Path, tmp_path: Path
) -> None:
    root = write_sessions(tmp_path / "t")
    db = imported(home / "memory.db", root)
    sid = "77777777-0000-4000-8000-000000000001"
    append_jsonl(
        root / "p1" / f"{sid}.jsonl",
        [user_line("And the second flaky retry?", uuid="s1-u9", session_id=sid, cwd="/work/p1")],
    )

    rebuilt = invoke("rebuild")

    assert rebuilt.exit_code == 0, rebuilt.output
    # session 1's one chunk changed: its text is embedded, the other 8 texts' vectors are reused
    assert (
        "from 9 transcript files: 9 chunks, 1 vector embedded (8 reused from the old database), "
        "0 files failed"
    ) in rebuilt.stdout
    fresh = imported(tmp_path / "fresh" / "memory.db", root)
    for table in ("vectors", "sentence_vectors"):
        wanted = _rows(fresh, f"SELECT * FROM {table} ORDER BY embedder, sha256")
        assert wanted  # control: there is something to compare
        assert _rows(db, f"SELECT * FROM {table} ORDER BY embedder, sha256") == wanted
    for query in QUERIES:
        assert search_json(db, query) == search_json(fresh, query)

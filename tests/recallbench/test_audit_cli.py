"""`recallbench audit`, and the entries `ship` and `hooks install|uninstall` add to it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from engine.audit import AuditLog
from harness.runner import run
from recallbench.cli import main
from tests.harness.test_runner import build_repo, options
from tests.recallbench.test_hook_settings import user_settings  # noqa: F401 - a fixture used below

T0 = datetime(2026, 5, 1, 9, 30, 0, tzinfo=UTC)


def audit(*args: str) -> list[dict[str, object]]:
    out = CliRunner().invoke(main, ["audit", "--json", *args])
    assert out.exit_code == 0, out.output
    entries: list[dict[str, object]] = json.loads(out.stdout)
    return entries


def test_an_empty_audit_says_so_and_creates_no_database(home: Path) -> None:
    out = CliRunner().invoke(main, ["audit"])
    assert out.exit_code == 0, out.output
    assert out.stdout == f"no audit entries (no database at {home / 'memory.db'})\n"
    assert not (home / "memory.db").exists()
    assert audit() == []
    # control: a database that holds no entry is named as the one read
    AuditLog(home / "memory.db").close()
    out = CliRunner().invoke(main, ["audit"])
    assert out.stdout == f"no audit entries in {home / 'memory.db'}\n"


def test_ship_is_recorded_with_protocol_run_and_arm(tmp_path: Path, home: Path) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    assert not (home / "memory.db").exists()  # control: ship must create it to record
    out = CliRunner().invoke(main, ["ship", str(result.directory)])
    assert out.exit_code == 0, out.output
    assert "audit entry" not in out.output  # written, so no warning
    [entry] = audit()
    arm = result.summary.shipped_arm
    assert set(entry) == {"id", "time", "actor", "action", "targets", "reason"}
    assert entry["id"] == 1
    assert entry["actor"] == "person"
    assert entry["action"] == "ship"
    assert entry["targets"] == ["two", result.directory.name, arm]
    assert entry["reason"] == "pre-registered rule"
    assert isinstance(entry["time"], str)
    assert entry["time"].endswith("Z")
    shown = CliRunner().invoke(main, ["audit"]).stdout
    assert f"person       ship             two, {result.directory.name}, {arm}" in shown
    assert "(pre-registered rule)" in shown
    # `ship --show` only reads: nothing more is recorded.
    assert CliRunner().invoke(main, ["ship", "--show"]).exit_code == 0
    assert len(audit()) == 1


def test_real_hooks_install_and_uninstall_are_recorded_and_a_dry_run_is_not(
    user_settings: Path,  # noqa: F811 - the fixture imported above
) -> None:
    runner = CliRunner()
    dry = runner.invoke(main, ["hooks", "install", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert audit() == []
    assert runner.invoke(main, ["hooks", "install"]).exit_code == 0
    # A second install changes nothing ("already installed"), so it is not recorded either.
    assert "already installed" in runner.invoke(main, ["hooks", "install"]).stdout
    assert runner.invoke(main, ["hooks", "uninstall"]).exit_code == 0
    entries = audit()
    assert [(e["id"], e["action"], e["targets"]) for e in entries] == [
        (1, "hooks.install", [str(user_settings)]),
        (2, "hooks.uninstall", [str(user_settings)]),
    ]
    assert entries[0]["reason"] == f"installed in {user_settings}"
    assert {e["actor"] for e in entries} == {"person"}


def test_a_home_others_can_write_leaves_the_install_done_and_says_the_audit_was_not_written(
    user_settings: Path,  # noqa: F811 - the fixture imported above
    home: Path,
) -> None:
    home.chmod(0o777)
    try:
        out = CliRunner().invoke(main, ["hooks", "install"])
    finally:
        home.chmod(0o700)
    assert out.exit_code == 0, out.output
    assert "recallbench hooks installed" in out.stdout  # the install itself was done
    assert "warning: the audit entry for hooks.install could not be written" in out.stderr
    assert str(home) in out.stderr
    assert audit() == []  # nothing was recorded while the home was open to others
    # Positive control: with the home private again, the next change is recorded.
    assert CliRunner().invoke(main, ["hooks", "uninstall"]).exit_code == 0
    assert [e["action"] for e in audit()] == ["hooks.uninstall"]


def test_since_keeps_the_entries_at_or_after_the_time_oldest_first(home: Path) -> None:
    with AuditLog(home / "memory.db") as log:
        for day, action in ((3, "settle"), (1, "ship"), (2, "undo")):
            log.record(
                time=T0.replace(day=day), actor="agent:s-1", action=action, targets=[], reason=""
            )
    # Oldest first means in the order recorded (id), whatever the times.
    assert [e["action"] for e in audit()] == ["settle", "ship", "undo"]
    # Since May 2nd 09:30 UTC: the 3rd and the 2nd (exactly 09:30), not the 1st.
    assert [e["action"] for e in audit("--since", "2026-05-02T09:30:00Z")] == ["settle", "undo"]
    # 11:30 at +02:00 is 09:30 UTC: the same two.
    assert [e["action"] for e in audit("--since", "2026-05-02T11:30:00+02:00")] == [
        "settle",
        "undo",
    ]
    assert [e["action"] for e in audit("--since", "2026-05-03")] == ["settle"]
    none = CliRunner().invoke(main, ["audit", "--since", "2026-06-01"])
    assert none.stdout == f"no audit entries since 2026-06-01 in {home / 'memory.db'}\n"
    bad = CliRunner().invoke(main, ["audit", "--since", "yesterday"])
    assert bad.exit_code == 2
    assert "not an ISO-8601 time: 'yesterday'" in bad.output


def test_audit_reads_the_database_given_with_db(tmp_path: Path, home: Path) -> None:
    other = tmp_path / "other.db"
    with AuditLog(other) as log:
        log.record(time=T0, actor="person", action="ship", targets=["p", "r", "rrf()"], reason="x")
    assert [e["targets"] for e in audit("--db", str(other))] == [["p", "r", "rrf()"]]
    assert audit() == []  # control: the default database holds none


def test_a_line_names_eight_targets_and_counts_the_rest(home: Path) -> None:
    chunks = [f"chunk:{n:02d}" for n in range(10)]
    with AuditLog(home / "memory.db") as log:
        for targets in (["before:x", *chunks], ["before:x", *chunks[:7]]):
            log.record(time=T0, actor="person", action="forget.stage", targets=targets, reason="")
    out = CliRunner().invoke(main, ["audit"])
    assert out.exit_code == 0, out.output
    long, short = out.stdout.splitlines()
    # 11 targets: the first 8 (the target and chunks 00-06), then the 3 others counted.
    assert long.endswith(", chunk:06 and 3 more (--json lists them)")
    assert "chunk:07" not in long
    assert short.endswith(", chunk:06")  # control: 8 targets are all shown
    assert [len(e["targets"]) for e in audit()] == [11, 8]  # type: ignore[arg-type]

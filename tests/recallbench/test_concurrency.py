"""Several processes importing and searching one database at once, as concurrent Claude Code sessions do."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.memory import Memory
from tests.engine.fixtures_transcripts import simple_session, write_jsonl
from tests.recallbench.corpus import ALPHA, BETA

REPO = Path(__file__).resolve().parents[2]
IMPORTERS = 4
SEARCHERS = 2
ROUNDS = 8  # each importer appends and imports this many times
SEARCHES = 12

WORKER = r"""
import json, sys, time, traceback
from pathlib import Path

role, index, root, rounds = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
try:
    from engine.embed import HashEmbedder
    from engine.memory import Memory
    from engine.scope import Scope
    from recallbench.hooks import run_hook
    from tests.engine.fixtures_transcripts import append_jsonl, assistant_lines, text_block, ts, user_line

    def turn(path, sid, cwd, tag, n):
        env = {"session_id": sid, "cwd": cwd}
        lines = [user_line(f"note {tag} about zebra{tag} round {n}", uuid=f"{tag}-u", timestamp=ts(n % 60), **env)]
        lines += assistant_lines([text_block(f"ack {tag}")], message_id=f"m-{tag}", uuids=[f"{tag}-a"],
                                 parent=f"{tag}-u", timestamp=ts(n % 60, 30), **env)
        append_jsonl(path, lines)

    manifest = json.loads((root / "manifest.json").read_text())
    hits = 0
    if role == "import":
        own = manifest["own"][index]
        shared = manifest["shared"][index % 2]
        for n in range(rounds):
            turn(Path(own["path"]), own["sid"], own["cwd"], f"own{index}r{n}", n)
            turn(Path(shared["path"]), shared["sid"], shared["cwd"], f"sh{index}r{n}", n)
            targets = [own["path"], *(s["path"] for s in manifest["shared"])]
            if index < 2:  # through the Stop hook (serialised by its import lock)
                for target in targets:
                    run_hook("Stop", json.dumps({"transcript_path": target}).encode())
            else:  # straight through the engine, as `recallbench import --no-embed` does
                memory = Memory(Path(manifest["db"]))
                report = memory.import_paths([Path(t) for t in targets], embed=False)
                memory.close()
                if report.files_failed:
                    print("FAILED", report.files_failed)
    else:
        memory = Memory(Path(manifest["db"]), HashEmbedder())
        scope = Scope.everywhere()
        # Start once the first import has landed, so that the searches run while the others go on
        # (a searcher that started first could otherwise finish before any import, finding nothing).
        deadline = time.monotonic() + 120
        while int(memory.status()["chunks"]) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        for n in range(rounds):
            hits += len(memory.lexical(f"zebra note round {n}", scope, 5))
            prompt = {"prompt": f"what was the note about zebra in round {n}?", "cwd": manifest["alpha"],
                      "session_id": "searcher"}
            out = run_hook("UserPromptSubmit", json.dumps(prompt).encode())
            hits += out.count("\n[")
        memory.close()
    print(f"done {role} {index} hits={hits}")
except BaseException:
    traceback.print_exc()
    sys.exit(1)
"""


def _session(root: Path, name: str, sid: str, cwd: str) -> dict[str, str]:
    path = write_jsonl(
        root / name / f"{sid}.jsonl",
        simple_session(f"Start of {name}", session_id=sid, cwd=cwd, prefix=f"{name}-"),
    )
    return {"path": str(path), "sid": sid, "cwd": cwd}


def _chunks(db: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT id, session_id, project, text FROM chunks ORDER BY id"
        ).fetchall()
    return [(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]


@pytest.mark.slow
def test_concurrent_imports_and_searches_lose_nothing_and_never_surface_a_lock(
    tmp_path: Path, home: Path
) -> None:
    root = tmp_path / "projects"
    db = home / "memory.db"
    manifest = {
        "db": str(db),
        "alpha": ALPHA,
        "own": [
            _session(
                root, f"own{i}", f"0000000{i}-0000-4000-8000-000000000000", (ALPHA, BETA)[i % 2]
            )
            for i in range(IMPORTERS)
        ],
        "shared": [
            _session(root, "sharedA", "5a5a5a5a-0000-4000-8000-000000000000", ALPHA),
            _session(root, "sharedB", "5b5b5b5b-0000-4000-8000-000000000000", BETA),
        ],
    }
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    Memory(
        db
    ).close()  # the schema exists before the race starts, as it does after the first import
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "RECALLBENCH_HOME": str(home)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), role, str(i), str(root), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=REPO,
        )
        for role, count, rounds in (("import", IMPORTERS, ROUNDS), ("search", SEARCHERS, SEARCHES))
        for i in range(count)
    ]
    outputs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        outputs.append((proc.returncode, out))

    for code, out in outputs:
        assert code == 0, out
        assert "locked" not in out.lower(), out
        assert "Traceback" not in out, out
        assert "FAILED" not in out, out
    assert [out.split()[1:3] for _, out in outputs] == [
        *(["import", str(i)] for i in range(IMPORTERS)),
        *(["search", str(i)] for i in range(SEARCHERS)),
    ]
    # positive control: the searchers did find things while the imports ran
    assert sum(int(out.split("hits=")[1]) for _, out in outputs[IMPORTERS:]) > 0
    log = (home / "hooks.log").read_text(encoding="utf-8")
    assert " ERROR: " not in log

    fresh = tmp_path / "fresh.db"
    Memory(fresh).import_paths([root], embed=False)
    expected = _chunks(fresh)
    got = _chunks(db)
    # every appended turn is in the final files: 6 starting sessions + 4 x 8 x 2 turns
    with sqlite3.connect(fresh) as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            == 6 * 4 + IMPORTERS * ROUNDS * 2 * 2
        )
    assert len(got) == len(expected)
    assert got == expected

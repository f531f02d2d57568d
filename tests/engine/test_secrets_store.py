"""No planted credential reaches a byte under `$RECALLBENCH_HOME`, in any of the four places it can be.

Each credential of the planted corpus is written into a user prompt, an assistant reply, a tool call's
input (a Bash command, and the content of a Write call) and a tool result, beside a harmless marker. The
transcripts go through the real import (`Memory.import_paths`), the hash embedder and the vector index;
then every file under the home is read byte for byte (the database with its WAL and shared memory,
index files). The markers are the positive control: they sit next to the credentials and must be there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from tests.engine.fixtures_transcripts import (
    CWD,
    SESSION,
    assistant_lines,
    text_block,
    tool_result_line,
    tool_use_block,
    user_line,
    write_jsonl,
)
from tests.engine.test_secrets_corpus import PLANTED, Planted

PLACES = ("user", "assistant", "command", "result")
# Text that no rule may touch, written beside the credentials.
SURVIVORS = (
    "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",  # a full commit hash
    "short sha 3f2a9c1",
    "8c1e4f2a-5b7d-4e9f-a1c3-9d2b6e8f0a47",  # a UUID
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "reset your password in settings",
    "/home/dev/my_proj/src/auth/token_store.py",
    "version 2.1.74",
)


def _marker(index: int, place: str) -> str:
    return f"plantmark{index:02d}{place}"


def _session_lines(index: int, planted: Planted) -> list[dict[str, object]]:
    """One credential in all four places, each beside its own marker."""
    n = f"{index:02d}"
    command = f"echo {_marker(index, 'command')} {planted.text}"
    return [
        user_line(f"{_marker(index, 'user')} {planted.text}", uuid=f"u{n}"),
        *assistant_lines(
            [
                text_block(f"{_marker(index, 'assistant')} {planted.text}"),
                tool_use_block(f"t{n}", "Bash", {"command": command}),
                tool_use_block(
                    f"w{n}", "Write", {"file_path": f"{CWD}/.env", "content": planted.text}
                ),
            ],
            message_id=f"msg_{n}",
            uuids=[f"a{n}", f"b{n}", f"c{n}"],
            parent=f"u{n}",
        ),
        tool_result_line(
            f"t{n}", f"{_marker(index, 'result')} {planted.text}", uuid=f"r{n}", parent=f"b{n}"
        ),
    ]


def _write_corpus(root: Path) -> Path:
    lines: list[dict[str, object]] = [user_line("\n".join(SURVIVORS), uuid="u-survivors")]
    for index, planted in enumerate(PLANTED):
        lines.extend(_session_lines(index, planted))
    return write_jsonl(root / "projects" / "-home-dev-my-proj" / f"{SESSION}.jsonl", lines)


def _every_byte(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_no_planted_credential_reaches_any_byte_under_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path(os.environ["RECALLBENCH_HOME"])
    # A project gets an on-disk hnswlib partition only past this many vectors; build one for ours.
    monkeypatch.setattr("engine.catalog.EXACT_THRESHOLD", 4)
    _write_corpus(tmp_path)
    memory = Memory(home / "memory.db", HashEmbedder())
    report = memory.import_paths([tmp_path / "projects"])
    partitions = memory.ensure_index()
    hits = memory.lexical("plantmark00user", Scope.of(CWD), 5)
    index_files = [memory.index_path, memory.partition_path(CWD)]
    memory.close()

    data = _every_byte(home)

    assert report.files_failed == {}
    assert report.vectors_added > 0
    assert list(partitions) == [CWD]
    assert len(hits) == 1
    assert all(p.is_file() and p.is_relative_to(home) for p in index_files)
    leaked = [
        (planted.label, core)
        for planted in PLANTED
        for core in planted.cores
        if core.encode() in data
    ]
    assert leaked == []
    # Positive controls: every marker planted beside a credential is stored, in every place but the
    # Write content (which is never stored: only the file's path is), and the look-alikes survive;
    # but the result of `echo MARKER export BW_SESSION=$(bw unlock PASS --raw)`, which printed the
    # session key, is redacted whole (version 10), its marker with it, and so is the result of `echo
    # MARKER … | wc -c; echo -n ${DB_PASSWORD}` (version 11).
    missing = [
        _marker(i, place)
        for i in range(len(PLANTED))
        for place in PLACES
        if _marker(i, place).encode() not in data
    ]
    assert missing == [
        _marker(i, "result")
        for i, p in enumerate(PLANTED)
        if p.label in ("bitwarden", "echo-n-braced-variable")
    ]
    assert [s for s in SURVIVORS if s.encode() not in data] == []
    assert report.scrubbed[f"redacted:{PLANTED[0].kind}"] >= 4


def test_a_credential_in_an_edited_files_path_is_not_stored_but_the_path_is(tmp_path: Path) -> None:
    home = Path(os.environ["RECALLBENCH_HOME"])
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    secret_path = f"/home/dev/my_proj/tmp/{token}/notes.md"
    plain_path = "/home/dev/my_proj/src/editmarker_plain.py"
    blocks = [
        tool_use_block("t-secret", "Edit", {"file_path": secret_path}),
        tool_use_block("t-plain", "Write", {"file_path": plain_path, "content": "x = 1"}),
    ]
    lines = [user_line("edit two files", uuid="u0")]
    lines += assistant_lines(blocks, message_id="m0", uuids=["a0", "a1"], parent="u0")
    write_jsonl(tmp_path / "projects" / "p" / f"{SESSION}.jsonl", lines)
    memory = Memory(home / "memory.db", None)
    report = memory.import_paths([tmp_path / "projects"], embed=False)
    files = memory.files_for_session(SESSION, Scope.of(CWD), 10)
    memory.close()
    data = _every_byte(home)
    assert token.encode() not in data
    assert plain_path in files  # positive control: an ordinary path is stored as it was
    assert plain_path.encode() in data
    assert len(files) == 2
    assert report.scrubbed["redacted:github_token"] >= 1

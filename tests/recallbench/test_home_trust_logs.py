"""Logs record sizes, ids, reasons, counts and timings: never a prompt, a transcript or a secret."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.embed import HashEmbedder
from engine.memory import Memory
from engine.scope import Scope
from recallbench import hooks
from recallbench.search_service import SearchService, socket_path
from tests.engine.fixtures_transcripts import write_jsonl
from tests.recallbench.corpus import ALPHA, SID_A1, chat_session, import_corpus, write_corpus

INPUTS = Path(__file__).resolve().parent / "hook_inputs"
# A planted Anthropic key (not a real one) and prompt words that occur nowhere in the corpus.
KEY = "sk-ant-api03-" + "Qx7Vb2Lm9Tr4Wz8Kd1Hs6Np3Fy5Cj0Gu" * 3 + "-AbCdEfAA"
WORDS = ("marmalade", "quixotic", "zeppelin")
PROMPT = f"Deploy the marmalade quixotic zeppelin service with my key {KEY} please"
CURRENT = "c0ffee00-0000-4000-8000-00000000c0de"  # the session of the recorded hook inputs
SID_D1 = "dddddddd-0000-4000-8000-000000000001"
SAMPLE_NAMES = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "PreCompact": "pre_compact",
}


def sample(event: str, **override: object) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (INPUTS / f"{SAMPLE_NAMES[event]}.json").read_text(encoding="utf-8")
    )
    data.update(override)
    return data


def planted_inputs(event: str, transcript: Path) -> list[bytes]:
    """The event's payloads carrying the key and the prompt words, well-formed and not."""
    good = sample(event, prompt=PROMPT, cwd=ALPHA, transcript_path=str(transcript))
    prompt_json = json.dumps(PROMPT)
    return [
        json.dumps(good).encode(),
        json.dumps({**good, "session_id": KEY, "hook_event_name": PROMPT}).encode(),
        # cut off, as a crashed writer would leave it
        f'{{"session_id": "{SID_A1}", "prompt": {prompt_json}, "cwd": '.encode(),
        # an invalid escape: JSONDecodeError's own message quotes the input around it
        ('{"prompt": "\\q ' + PROMPT + '"}').encode(),
        json.dumps([PROMPT]).encode(),  # JSON, but not an object
    ]


def leaks(text: str) -> list[str]:
    return [word for word in (KEY, "sk-ant-api03", *WORDS) if word in text]


def test_no_hook_event_logs_the_prompt_or_a_planted_key_but_each_logs_its_sizes(
    tmp_path: Path, home: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # The transcript itself holds the secret, once in a line the importer cannot parse: importing it
    # must not put it in the log either.
    transcript = write_jsonl(
        tmp_path / "projects" / "-home-dev-alpha" / f"{SID_D1}.jsonl",
        chat_session(SID_D1, ALPHA, [(PROMPT, "Deployed.")]),
    )
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write("{" + PROMPT + "\n")
    write_corpus(tmp_path / "corpus")
    import_corpus(home / "memory.db", tmp_path / "corpus").close()
    sizes: list[int] = []
    emb = HashEmbedder()

    def failing_search(request: Mapping[str, Any]) -> Mapping[str, Any]:
        # An FTS5 syntax error quotes the query: the server's log must not.
        msg = f'fts5: syntax error near "{request["text"]}"'
        raise RuntimeError(msg)

    caplog.set_level(logging.DEBUG, logger="recallbench")
    with SearchService(emb, socket_path(home, emb.id), search=failing_search):
        for event in hooks.EVENTS:
            for stdin in planted_inputs(event, transcript):
                assert hooks.run_hook(event, stdin, now=None).count(KEY) == 0
                sizes.append(len(stdin))
        assert hooks.run_hook(KEY, b"{}") == ""  # a secret on the command line, as the event name

    log = (home / hooks.LOG_NAME).read_text(encoding="utf-8")
    captured = capfd.readouterr()
    assert leaks(log) == []
    assert leaks(captured.out + captured.err) == []
    assert leaks(caplog.text) == []
    # positive controls: the log says what happened, in sizes, ids and reasons
    good = len(
        json.dumps(sample("Stop", prompt=PROMPT, cwd=ALPHA, transcript_path=str(transcript)))
    )
    assert f"Stop INFO: stdin: {good} bytes, session '{CURRENT}'" in log
    assert f"session <{len(KEY)} characters>" in log
    assert f"stdin names event <{len(PROMPT)} characters>; handling it as 'Stop'" in log
    cut = len(f'{{"session_id": "{SID_A1}", "prompt": {json.dumps(PROMPT)}, "cwd": ')
    assert f"hook stdin of {cut} bytes is not JSON (error at line 1 column {cut + 1})" in log
    assert "must be a JSON object, got list" in log
    assert f"unknown hook event <{len(KEY)} characters>" in log
    # one prompt and its answer, one turn; the cut-off line is skipped
    assert "imported 1 file(s), 2 message(s), 1 chunk(s) written" in log
    assert "the service refused the request; lexical read only" in log
    assert "search failed: RuntimeError" in caplog.text
    assert len(sizes) == 5 * 5
    for size in sizes:
        assert f" {size} bytes" in log
    # and the prompt did reach the store, where it belongs: only the log is kept free of it
    memory = Memory(home / "memory.db")
    assert memory.lexical("marmalade zeppelin", Scope.of(ALPHA), 5) != []
    memory.close()


def test_an_exception_quoting_the_input_is_logged_by_its_type_and_place_only(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = write_corpus(tmp_path / "projects")[SID_A1]

    class Exploding:
        def import_paths(self, paths: object, *, embed: bool) -> object:
            msg = f"could not store {PROMPT!r}"
            raise RuntimeError(msg)

        def close(self) -> None:
            pass

    monkeypatch.setattr(hooks, "_open_memory", lambda ctx: Exploding())
    stdin = json.dumps(sample("Stop", transcript_path=str(transcript), cwd=ALPHA)).encode()
    assert hooks.run_hook("Stop", stdin) == ""
    log = (home / hooks.LOG_NAME).read_text(encoding="utf-8")
    assert leaks(log) == []
    # positive control: the failure is there, with where it happened
    assert "Stop ERROR: RuntimeError (at hooks.py:" in log
    assert "import_transcript" in log
    assert "import_paths" in log

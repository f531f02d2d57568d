"""End-to-end latency of the UserPromptSubmit hook, as Claude Code runs it: a new process per prompt.

Measured from process start to exit, with and without a running `recallbench serve` (whose Unix socket
answers the hook's search). The hook and the server are started as commands, exactly as the
installed settings start them; nothing here imports the application layer.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from arms.registry import full_canonical
from engine.embed import get_embedder
from engine.memory import Memory
from harness.synthetic import SyntheticConfig, generate
from perf.corpus import chunk_count
from perf.measures import summary

# The shipped-arm figure exists only when a run is shipped into the hook's home (`ship`).
SHIPPED = "with_server_shipped"
HOOK_TARGETS_MS = {"with_server": 300.0, "lexical_only": 150.0, SHIPPED: 300.0}
_SERVER_START_S = 180.0


def recallbench_command() -> list[str]:
    """The installed console script beside this interpreter, else the same entry point through -c."""
    script = Path(sys.executable).with_name("recallbench")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from recallbench.entry import main; main()"]


def process_env(home: Path, embedder: str) -> tuple[dict[str, str], bool]:
    """The environment of a measured `recallbench` process, and whether bytecode caching was disabled.

    Python caches compiled modules by default, and a user's command runs from that cache from its second
    run on. A machine that sets PYTHONDONTWRITEBYTECODE (as the project's CI machines do) with an
    editable install would instead recompile every module in every process (about 50 ms here); the
    warm-up runs write the cache, as a first run does.
    """
    env = {
        **os.environ,
        "RECALLBENCH_HOME": str(home),
        "RECALLBENCH_EMBEDDER": embedder,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    return env, env.pop("PYTHONDONTWRITEBYTECODE", None) is not None


def bytecode_note(disabled: bool) -> str:
    """How the measured processes ran, for the report."""
    return (
        "enabled for the measured processes (this environment disabled it)"
        if disabled
        else "enabled (Python's default)"
    )


def _payload(cwd: str, prompt: str, n: int) -> bytes:
    return json.dumps(
        {
            "session_id": f"perf-{n}",
            "transcript_path": "/nonexistent/perf.jsonl",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


# Lead-ins that make a repeated question a new prompt: the server keeps recent query vectors, and a
# measurement that asked the same few questions again would time that cache, not the search.
_LEAD_INS = ("", "Remind me: ", "Quick question: ", "From earlier work: ", "Do you recall: ")


def distinct_prompts(texts: Sequence[str], count: int) -> list[str]:
    """`count` different prompts: each text once, then again behind each lead-in in turn."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        msg = "distinct_prompts needs at least one text"
        raise ValueError(msg)
    prompts = [lead + text for lead in _LEAD_INS for text in unique][:count]
    if len(prompts) < count:
        msg = (
            f"only {len(prompts)} distinct prompts from {len(unique)} texts; {count} were asked for"
        )
        raise ValueError(msg)
    return prompts


def _time_hooks(
    env: dict[str, str], cwd: str, prompts: Sequence[str], warmup: int
) -> tuple[list[float], int]:
    """Wall milliseconds per hook process, and how many printed context."""
    command = [*recallbench_command(), "hook", "UserPromptSubmit"]
    times: list[float] = []
    injected = 0
    for n, prompt in enumerate(prompts):
        started = time.perf_counter()
        done = subprocess.run(
            command,
            input=_payload(cwd, prompt, n),
            capture_output=True,
            env=env,
            check=False,
            timeout=60,
        )
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            msg = (
                f"the hook exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}"
            )
            raise RuntimeError(msg)
        if n >= warmup:
            times.append(elapsed)
            injected += bool(done.stdout.strip())
    return times, injected


# What `recallbench serve` logs when its socket listens, and once its first lexical snapshot is held
# (`recallbench.mcp_server.LEXICAL_READY`; until then FTS5 answers and the build shares the CPU).
LISTENING = "listening on"
LEXICAL_READY = "lexical snapshot ready"
# What it logs when the search service could not start (`recallbench.mcp_server.SEARCH_NOT_STARTED`):
# the socket will never listen, so waiting for it would only run out the clock.
NOT_STARTED = "search service not started"


def start_server(
    env: dict[str, str], args: Sequence[str] = (), ready: Sequence[str] = (LISTENING,)
) -> subprocess.Popen[bytes]:
    """`recallbench serve --no-background-embed ARGS`, once its log has said every line of `ready`
    (else RuntimeError: it exited, logged `NOT_STARTED`, or `_SERVER_START_S` passed)."""
    waiting = set(ready)
    proc = subprocess.Popen(
        [*recallbench_command(), "serve", "--no-background-embed", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stderr is not None
    for line in _log_lines(proc.stderr.fileno(), time.monotonic() + _SERVER_START_S):
        if line is None:
            stop_server(proc)
            msg = f"recallbench serve exited before it logged {sorted(waiting)}"
            raise RuntimeError(msg)
        if NOT_STARTED in line:
            stop_server(proc)
            msg = f"recallbench serve cannot answer the prompt hook: {line.strip()}"
            raise RuntimeError(msg)
        waiting = {marker for marker in waiting if marker not in line}
        if not waiting:
            return proc
    stop_server(proc)
    msg = f"recallbench serve did not log {sorted(waiting)} within {_SERVER_START_S:.0f} s"
    raise RuntimeError(msg)


def _log_lines(fd: int, deadline: float) -> Iterator[str | None]:
    """The lines written to `fd` until `deadline` (`time.monotonic()`), then None once it is closed.
    Read unbuffered, a line at a time as it comes: a server that logs nothing more must not block the
    wait past its deadline, and lines already read must not wait on the next write."""
    pending = b""
    while True:
        while b"\n" not in pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return
            data = os.read(fd, 1 << 16)
            if not data:
                if pending:
                    yield pending.decode(errors="replace")
                yield None
                return
            pending += data
        line, pending = pending.split(b"\n", 1)
        yield line.decode(errors="replace")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 30 s; closes the pipes."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def measure_hook_latency(
    work: Path,
    *,
    seed: int,
    embedder: str,
    runs: int = 30,
    warmup: int = 3,
    ship: Path | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Hook latency on a small imported corpus, lexical-only (no server) and with the server; with
    `ship`, also with a server after `recallbench ship SHIP` (the arm that run chose) in the home."""
    corpus = work / "hook-corpus"
    home = work / "hook-home"
    for stale in (
        corpus,
        home,
    ):  # a kept --work-dir holds the last run's (the generator never overwrites)
        shutil.rmtree(stale, ignore_errors=True)
    generated = generate(corpus, SyntheticConfig.small(seed=seed))
    home.mkdir(parents=True, exist_ok=True)
    say(f"hook latency: importing a small corpus with {embedder}")
    memory = Memory(home / "memory.db", get_embedder(embedder))
    memory.import_paths([generated.projects_dir])
    memory.ensure_index()
    chunks = chunk_count(memory)
    memory.close()
    cwd = generated.project_cwds[0]
    texts: list[str] = []
    for name in sorted(generated.rosters):
        roster = json.loads(generated.rosters[name].read_text(encoding="utf-8"))
        texts += [
            q["text"] for q in roster["questions"] if q["scope"] == [cwd] and len(q["text"]) >= 15
        ]
    if not texts:
        msg = "the small corpus has no roster questions for its first project"
        raise RuntimeError(msg)
    prompts = distinct_prompts(texts, runs + warmup)
    env, bytecode_disabled = process_env(home, embedder)
    say("hook latency: lexical only (no server)")
    lexical, lexical_injected = _time_hooks(env, cwd, prompts, warmup)
    say("hook latency: with a running server")
    server = start_server(env)
    log = home / "hooks.log"
    before = (
        log.read_text(encoding="utf-8").count("answered by the server at") if log.exists() else 0
    )
    try:
        served, served_injected = _time_hooks(env, cwd, prompts, warmup)
    finally:
        stop_server(server)
    via_socket = log.read_text(encoding="utf-8").count("answered by the server at") - before
    extra: dict[str, Any] = {}
    targets = {k: v for k, v in HOOK_TARGETS_MS.items() if k != SHIPPED}
    if ship is not None:
        extra[SHIPPED] = _time_shipped(env, cwd, prompts, warmup, ship, say)
        targets[SHIPPED] = HOOK_TARGETS_MS[SHIPPED]
    return {
        "corpus_chunks": chunks,
        "embedder": embedder,
        "command": " ".join(recallbench_command()) + " hook UserPromptSubmit",
        "lexical_only": {**summary(lexical), "injected": lexical_injected},
        "with_server": {
            **summary(served),
            "injected": served_injected,
            "answered_by_server": via_socket,
        },
        **extra,
        "targets_ms": targets,
        "bytecode_cache": bytecode_note(bytecode_disabled),
    }


def _time_shipped(
    env: dict[str, str],
    cwd: str,
    prompts: Sequence[str],
    warmup: int,
    ship: Path,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The hooks timed against a server that answers with the arm `recallbench ship SHIP` chose."""
    arm = full_canonical(ship_into(env, ship))  # as the server names it in the hook's log
    say(f"hook latency: with a running server answering with the shipped {arm}")
    log = Path(env["RECALLBENCH_HOME"]) / "hooks.log"
    before = log.read_text(encoding="utf-8").count(f"arm {arm} gave") if log.exists() else 0
    server = start_server(env)
    try:
        times, injected = _time_hooks(env, cwd, prompts, warmup)
    finally:
        stop_server(server)
    return {
        **summary(times),
        "injected": injected,
        "answered_by_server": log.read_text(encoding="utf-8").count(f"arm {arm} gave") - before,
        "arm": arm,
        "results": str(ship),
    }


def ship_into(env: dict[str, str], results: Path) -> str:
    """`recallbench ship RESULTS` in `env`'s home, as a person ships a run; the shipped arm's spec.

    Run from the repository that holds RESULTS (`<root>/results/<protocol>/<run>`), whose protocol,
    lock and sealed rosters `ship` checks again.

    Raises:
        RuntimeError: the command refused (its message says why, e.g. another serving embedder).
    """
    done = subprocess.run(
        [*recallbench_command(), "ship", str(results)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=results.resolve().parents[2],
    )
    first = done.stdout.splitlines()[0] if done.stdout.strip() else ""
    if done.returncode != 0 or not first.startswith("shipped "):
        msg = f"`recallbench ship {results}` exited {done.returncode}: {done.stderr[-800:]}"
        raise RuntimeError(msg)
    return first.split()[1]

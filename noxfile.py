"""The single source of truth for how recallbench is tested, linted, benchmarked and measured."""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

# torch is pinned and installed first: on the project's machines 2.13.0 is a local CPU wheel, while an
# unpinned install lets sentence-transformers pull a multi-GB CUDA build from the registry.
TORCH = "torch==2.13.0"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _install(session: nox.Session, *extras: str) -> None:
    session.install(TORCH)
    target = f".[{','.join(extras)}]" if extras else "."
    session.install("-e", target)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the whole test suite (slow and model tests included); pass pytest args after --."""
    _install(session, "test")
    session.run("pytest", *session.posargs, env=OFFLINE)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and strict mypy over every package and the tests."""
    _install(session, "test", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


BENCH_PROTOCOLS = (
    "protocols/default-3.toml",
    "protocols/default-4.toml",
    "protocols/embedders-1.toml",
    "protocols/embedders-2.toml",
    "protocols/arms-v2.toml",
    "protocols/arms-v3.toml",
    "protocols/arms-v4.toml",
    "protocols/arms-v5.toml",
    "protocols/arms-v6.toml",
    "protocols/arms-v7.toml",
    "protocols/arms-v8.toml",
    "protocols/arms-v9.toml",
    "protocols/arms-v10.toml",
    "protocols/arms-v11.toml",
)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Verify and run the registered benchmarks (default-3, default-4, embedders-1, embedders-2, then
    arms-v2 to arms-v11); each writes a new results/<id>/<run-id>/. Pass a protocol after -- to run only
    that one."""
    _install(session)
    env = OFFLINE | {"RECALLBENCH_PROGRESS": "1"}
    if session.posargs:
        session.run("recallbench", "bench", "run", *session.posargs, env=env)
        return
    for protocol in BENCH_PROTOCOLS:
        session.run("recallbench", "bench", "run", protocol, env=env)


@nox.session(default=False)
def perf(session: nox.Session) -> None:
    """Measure the cost profile at 10k-100k chunks, a real-vector tier (vectors cached in
    $RECALLBENCH_PERF_CACHE, default ~/.cache/recallbench/perf) and `recallbench search` end to end."""
    _install(session, "test")
    session.run("python", "-m", "perf", *session.posargs, env=OFFLINE)


if os.environ.get("CI"):
    nox.options.error_on_missing_interpreters = True

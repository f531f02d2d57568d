"""Realistic tool output for the synthetic corpus: code listings, test runs, diffs, greps, logs.

Everything here draws identifiers from the filler pools in `vocab` only, so no planted fact can appear
by accident in filler output.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from harness.synthetic.vocab import CODE_NOUNS, CODE_VERBS, PARAMS, Profile

_TYPES = {
    "python": ("str", "int", "dict[str, Any]", "list[str]", "bytes", "float"),
    "typescript": ("string", "number", "Record<string, unknown>", "string[]", "Buffer", "boolean"),
    "rust": ("str", "u64", "Vec<u8>", "HashMap<String, String>", "Path", "Duration"),
    "go": ("string", "int", "[]byte", "map[string]string", "time.Duration", "bool"),
}


def snake(*words: str) -> str:
    """snake_case of words."""
    return "_".join(w.lower() for w in words)


def camel(*words: str) -> str:
    """camelCase of words."""
    first, *rest = (w.lower() for w in words)
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


def pascal(*words: str) -> str:
    """PascalCase of words."""
    return "".join(w[:1].upper() + w[1:].lower() for w in words)


def func_name(language: str, *words: str) -> str:
    """A function name in the language's convention."""
    if language in ("python", "rust"):
        return snake(*words)
    if language == "go":
        return pascal(*words)
    return camel(*words)


def random_func(rng: random.Random, language: str) -> str:
    """A filler function name."""
    return func_name(language, rng.choice(CODE_VERBS), rng.choice(CODE_NOUNS))


def module_of(path: str) -> str:
    """The dotted/slashed module name a path is imported as."""
    stem = path.rsplit(".", 1)[0]
    return stem.replace("src/", "", 1).replace("/", ".")


def short_path(path: str) -> str:
    """The last two parts of a path, as the importer's compact markers show it."""
    parts = path.split("/")
    return "/".join(parts[-2:])


def _python_func(rng: random.Random, name: str) -> list[str]:
    arg = rng.choice(CODE_NOUNS)
    var = rng.choice([n for n in CODE_NOUNS if n != arg])
    typ = rng.choice(_TYPES["python"])
    body = [
        f"def {name}({arg}: {typ}, *, strict: bool = False) -> {rng.choice(_TYPES['python'])}:",
        f'    """{name.replace("_", " ").capitalize()} for the current {rng.choice(CODE_NOUNS)}."""',
        f"    if not {arg}:",
        f'        raise ValueError("{arg} must not be empty")',
        f"    {var} = _{rng.choice(CODE_VERBS)}_{var}({arg})",
    ]
    if rng.random() < 0.5:
        body += [
            f"    for {arg}_item in list({var}):",
            f"        if strict and {arg}_item is None:",
            f'            log.warning("skipping empty {var} in {name}")',
            "            continue",
        ]
    if rng.random() < 0.5:
        body += [
            "    try:",
            f"        {var} = {rng.choice(CODE_VERBS)}_{rng.choice(CODE_NOUNS)}({var})",
            "    except KeyError as exc:",
            f'        raise LookupError(f"unknown {var}: {{exc}}") from exc',
        ]
    body += [f'    log.debug("{name} done", extra={{"{var}": {var}}})', f"    return {var}", "", ""]
    return body


def _ts_func(rng: random.Random, name: str) -> list[str]:
    arg = rng.choice(CODE_NOUNS)
    var = rng.choice([n for n in CODE_NOUNS if n != arg])
    typ = rng.choice(_TYPES["typescript"])
    body = [
        f"export async function {name}({arg}: {typ}, opts: Options = {{}}): Promise<{pascal(var)}> {{",
        f"  if (!{arg}) {{",
        f'    throw new Error("{arg} is required");',
        "  }",
        f"  const {var} = await {camel(rng.choice(CODE_VERBS), var)}({arg}, opts);",
    ]
    if rng.random() < 0.5:
        body += [
            f"  for (const entry of {var}.items ?? []) {{",
            "    if (opts.strict && entry == null) {",
            f'      logger.warn({{ entry }}, "skipping empty {var}");',
            "      continue;",
            "    }",
            "  }",
        ]
    if rng.random() < 0.5:
        body += [
            "  try {",
            f"    await {camel(rng.choice(CODE_VERBS), rng.choice(CODE_NOUNS))}({var});",
            "  } catch (err) {",
            f'    logger.error({{ err }}, "{name} failed");',
            "    throw err;",
            "  }",
        ]
    body += [f'  logger.debug({{ {var} }}, "{name}");', f"  return {var};", "}", ""]
    return body


def _rust_func(rng: random.Random, name: str) -> list[str]:
    arg = rng.choice(CODE_NOUNS)
    var = rng.choice([n for n in CODE_NOUNS if n != arg])
    typ = rng.choice(_TYPES["rust"])
    body = [
        f"pub fn {name}({arg}: &{typ}, strict: bool) -> anyhow::Result<{pascal(var)}> {{",
        f"    let {var} = {rng.choice(CODE_VERBS)}_{var}({arg})?;",
    ]
    if rng.random() < 0.5:
        body += [
            f"    for item in {var}.items.iter() {{",
            "        if strict && item.is_empty() {",
            f'            warn!("skipping empty {var} in {name}");',
            "            continue;",
            "        }",
            "    }",
        ]
    if rng.random() < 0.5:
        body += [
            f"    match {rng.choice(CODE_VERBS)}_{rng.choice(CODE_NOUNS)}(&{var}) {{",
            "        Ok(_) => {}",
            f'        Err(e) => anyhow::bail!("{name}: {{e}}"),',
            "    }",
        ]
    body += [f'    debug!(?{var}, "{name}");', f"    Ok({var})", "}", ""]
    return body


def _go_func(rng: random.Random, name: str) -> list[str]:
    arg = rng.choice(CODE_NOUNS)
    var = rng.choice([n for n in CODE_NOUNS if n != arg])
    typ = rng.choice(_TYPES["go"])
    body = [
        f"func {name}(ctx context.Context, {arg} {typ}) (*{pascal(var)}, error) {{",
        f"\t{var}, err := {camel(rng.choice(CODE_VERBS), var)}(ctx, {arg})",
        "\tif err != nil {",
        f'\t\treturn nil, fmt.Errorf("{name}: %w", err)',
        "\t}",
    ]
    if rng.random() < 0.5:
        body += [
            f"\tfor _, item := range {var}.Items {{",
            "\t\tif item == nil {",
            f'\t\t\tlogger.Warn("skipping empty {var}")',
            "\t\t\tcontinue",
            "\t\t}",
            "\t}",
        ]
    body += [f'\tlogger.Debug("{name}", zap.Any("{var}", {var}))', f"\treturn {var}, nil", "}", ""]
    return body


_FUNCS = {"python": _python_func, "typescript": _ts_func, "rust": _rust_func, "go": _go_func}


def function_lines(rng: random.Random, language: str, name: str) -> list[str]:
    """Source lines of one plausible function called `name`."""
    return _FUNCS[language](rng, name)


def _header(rng: random.Random, profile: Profile, path: str, consts: list[str]) -> list[str]:
    lang = profile.language
    if lang == "python":
        return [
            f'"""{module_of(path)}: {rng.choice(CODE_VERBS)} and {rng.choice(CODE_VERBS)} helpers."""',
            "",
            "from __future__ import annotations",
            "",
            "import logging",
            "from typing import Any",
            "",
            "log = logging.getLogger(__name__)",
            "",
            *consts,
            "",
            "",
        ]
    if lang == "typescript":
        return [
            'import { logger } from "../logger";',
            'import type { Options } from "../types";',
            "",
            *consts,
            "",
        ]
    if lang == "rust":
        return [
            "use std::collections::HashMap;",
            "use std::time::Duration;",
            "",
            "use tracing::{debug, warn};",
            "",
            *consts,
            "",
        ]
    pkg = path.rsplit("/", 2)[-2] if "/" in path else "main"
    return [
        f"package {pkg}",
        "",
        "import (",
        '\t"context"',
        '\t"fmt"',
        "",
        '\t"go.uber.org/zap"',
        ")",
        "",
        *consts,
        "",
    ]


def const_line(language: str, name: str, value: int) -> str:
    """A constant definition in the language's syntax."""
    if language == "python":
        return f"{name} = {value}"
    if language == "typescript":
        return f"export const {name} = {value};"
    if language == "rust":
        return f"pub const {name}: u64 = {value};"
    return f"const {name} = {value}"


def code_listing(
    rng: random.Random, profile: Profile, path: str, functions: int, extra: list[str] | None = None
) -> list[str]:
    """Source lines of a plausible file; `extra` lines are appended as written."""
    picks = rng.sample(range(len(PARAMS)), 2)
    consts = [const_line(profile.language, PARAMS[i][1], rng.choice(PARAMS[i][2])) for i in picks]
    lines = _header(rng, profile, path, consts)
    for _ in range(functions):
        lines += function_lines(rng, profile.language, random_func(rng, profile.language))
    if extra:
        lines += extra
    return lines


def cat_n(lines: list[str], start: int = 1) -> str:
    """Lines numbered the way Claude Code's Read tool shows them."""
    return "\n".join(f"{i:>6}→{line}" for i, line in enumerate(lines, start=start))


def grep_output(rng: random.Random, profile: Profile, needle: str, files: list[str]) -> str:
    """`path:line:text` hits for a pattern."""
    out = []
    for path in files:
        for _ in range(rng.randint(1, 3)):
            out.append(f"{path}:{rng.randint(8, 240)}:    {needle}({rng.choice(CODE_NOUNS)})")
    return "\n".join(out)


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What one test run reports, whatever the runner's language."""

    total: int
    failed: int
    passed: int
    secs: str
    detail: str
    label: str
    test_files: tuple[str, ...]


def runner_output(
    rng: random.Random, profile: Profile, *, failed: int = 0, detail: str = "", label: str = ""
) -> str:
    """A test runner transcript with `failed` failures."""
    total = rng.randint(40, 260)
    run = _Run(
        total=total,
        failed=failed,
        passed=total - failed,
        secs=f"{rng.uniform(0.8, 40):.2f}",
        detail=detail,
        label=label,
        test_files=tuple(
            [f for f in profile.extra_files if "test" in f] or [profile.components[0].path]
        ),
    )
    return _RUNNERS[profile.language](rng, profile, run)


def _pytest_output(rng: random.Random, profile: Profile, run: _Run) -> str:
    """pytest's console report."""
    failed, passed, secs, label, detail = run.failed, run.passed, run.secs, run.label, run.detail
    rows = []
    for f in run.test_files:
        n = rng.randint(8, 40)
        dots = "." * n if not failed else "." * (n - 1) + "F"
        rows.append(f"{f} {dots}{' ' * max(1, 60 - len(f) - n)}[{rng.randint(5, 100):3d}%]")
    head = [
        "============================= test session starts ==============================",
        f"platform linux -- Python 3.12.{rng.randint(1, 8)}, pytest-8.3.4, pluggy-1.5.0",
        f"rootdir: {profile.cwd}",
        "configfile: pyproject.toml",
        f"collected {run.total} items",
        "",
        *rows,
        "",
    ]
    if failed:
        head += [
            "=================================== FAILURES ===================================",
            f"_____________________________ {label or 'test_case'} _____________________________",
            detail,
            "=========================== short test summary info ============================",
            f"FAILED {run.test_files[0]}::{label or 'test_case'} - {detail.splitlines()[-1] if detail else 'AssertionError'}",
            f"========================= {failed} failed, {passed} passed in {secs}s =========================",
        ]
    else:
        head.append(
            f"============================== {passed} passed in {secs}s =============================="
        )
    return "\n".join(head)


def _vitest_output(rng: random.Random, profile: Profile, run: _Run) -> str:
    """vitest's console report."""
    failed, test_files = run.failed, run.test_files
    rows = [
        f" {'❯' if failed else '✓'} {f} ({rng.randint(3, 30)} tests) {rng.randint(10, 900)}ms"
        for f in test_files
    ]
    tail = [
        "",
        f" Test Files  {'1 failed | ' if failed else ''}{len(test_files) - (1 if failed else 0)} passed ({len(test_files)})",
        f"      Tests  {f'{failed} failed | ' if failed else ''}{run.passed} passed ({run.total})",
        f"   Start at  {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
        f"   Duration  {run.secs}s",
    ]
    mid = [f" FAIL  {test_files[0]} > {run.label}", run.detail] if failed else []
    return "\n".join([f" RUN  v2.1.8 {profile.cwd}", "", *rows, *mid, *tail])


def _cargo_output(rng: random.Random, profile: Profile, run: _Run) -> str:
    """`cargo test`'s console report."""
    failed, passed, secs, label = run.failed, run.passed, run.secs, run.label
    rows = [
        f"test {rng.choice(CODE_VERBS)}_{rng.choice(CODE_NOUNS)}_{rng.choice(CODE_NOUNS)} ... ok"
        for _ in range(rng.randint(6, 14))
    ]
    if failed:
        rows.append(f"test {label} ... FAILED")
        rows += ["", "failures:", "", f"---- {label} stdout ----", run.detail, ""]
    result = "FAILED" if failed else "ok"
    return "\n".join(
        [
            f"   Compiling {profile.slug} v0.{rng.randint(1, 9)}.{rng.randint(0, 20)} ({profile.cwd})",
            f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {secs}s",
            f"     Running unittests src/lib.rs (target/debug/deps/{profile.slug.replace('-', '_')}-{rng.getrandbits(64):016x})",
            "",
            f"running {run.total} tests",
            *rows,
            "",
            f"test result: {result}. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs}s",
        ]
    )


def _go_test_output(rng: random.Random, profile: Profile, run: _Run) -> str:
    """`go test ./...`'s per-package lines."""
    pkgs = sorted({c.path.rsplit("/", 1)[0] for c in profile.components})
    rows = []
    for p in pkgs:
        rows.append(f"ok  \tgithub.com/acme/{profile.slug}/{p}\t{rng.uniform(0.01, 3):.3f}s")
    if run.failed:
        rows.insert(0, f"--- FAIL: {run.label} ({rng.uniform(0, 1):.2f}s)\n    {run.detail}")
        rows.append(f"FAIL\tgithub.com/acme/{profile.slug}/{pkgs[0]}\t{run.secs}s")
    return "\n".join(rows)


_RUNNERS: dict[str, Callable[[random.Random, Profile, _Run], str]] = {
    "python": _pytest_output,
    "typescript": _vitest_output,
    "rust": _cargo_output,
    "go": _go_test_output,
}


def diff_output(path: str, before: list[str], after: list[str], start: int) -> str:
    """A unified diff of one hunk."""
    lines = [
        f"diff --git a/{path} b/{path}",
        "index 3a1f9c2..8e0b7d4 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -{start},{len(before)} +{start},{len(after)} @@",
    ]
    lines += [f"-{line}" for line in before]
    lines += [f"+{line}" for line in after]
    return "\n".join(lines)


def log_excerpt(rng: random.Random, component: str, error: str, day: str) -> str:
    """A few log lines around an error."""
    lines = []
    for i in range(rng.randint(4, 8)):
        level = "ERROR" if i == 3 else rng.choice(("INFO", "INFO", "DEBUG", "WARN"))
        msg = (
            error
            if level == "ERROR"
            else f"{rng.choice(CODE_VERBS)} {rng.choice(CODE_NOUNS)} id={rng.randint(1000, 99999)}"
        )
        lines.append(
            f"{day}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z "
            f"{level:<5} [{component.replace(' ', '-').lower()}] {msg}"
        )
    return "\n".join(lines)


def install_output(rng: random.Random, profile: Profile, lib: str, version: str) -> str:
    """Package-manager output for a bump."""
    lang = profile.language
    if lang == "python":
        return (
            f"Resolved {rng.randint(40, 140)} packages in {rng.randint(200, 1900)}ms\n"
            f"Prepared 1 package in {rng.randint(50, 900)}ms\n"
            f"Uninstalled 1 package in {rng.randint(2, 30)}ms\n"
            f"Installed 1 package in {rng.randint(2, 30)}ms\n - {lib}=={version.rsplit('.', 1)[0]}.0\n + {lib}=={version}"
        )
    if lang == "typescript":
        return (
            f"Packages: +1 -1\n+-\nProgress: resolved {rng.randint(300, 900)}, reused {rng.randint(300, 900)}, "
            f"downloaded 1, added 1, done\n\ndependencies:\n- {lib} {version.rsplit('.', 1)[0]}.0\n+ {lib} {version}\n\n"
            f"Done in {rng.uniform(1, 9):.1f}s"
        )
    if lang == "rust":
        return (
            f"    Updating crates.io index\n     Locking 1 package to latest compatible version\n"
            f"    Updating {lib} v{version.rsplit('.', 1)[0]}.0 -> v{version}"
        )
    return f"go: upgraded {lib} {version.rsplit('.', 1)[0]}.0 => {version}"


def git_status(rng: random.Random, branch: str, files: list[str]) -> str:
    """`git status` with modified files."""
    body = "\n".join(f"\tmodified:   {f}" for f in files)
    return (
        f"On branch {branch}\nYour branch is up to date with 'origin/{branch}'.\n\n"
        f'Changes not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n'
        f'  (use "git restore <file>..." to discard changes in working directory)\n{body}\n\n'
        'no changes added to commit (use "git add" and/or "git commit -a")'
    )

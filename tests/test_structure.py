"""Sizes a newcomer can hold: no source file over 600 lines, no function over 80 lines.

The limits are the renovation's targets (issue 12). Lines are counted as newline characters, a function
from its `def` line to its last line (decorators not counted), over every Python file of the packages,
the tests and the noxfile.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

SCANNED: tuple[str, ...] = (
    "engine",
    "arms",
    "harness",
    "recallbench",
    "perf",
    "tests",
    "noxfile.py",
)

# Files allowed past the file limit, each with the reason; functions have no exemptions.
EXEMPT_FILES: Mapping[str, str] = {
    # A data table: the synthetic corpus's word lists. Splitting it would only scatter the vocabulary,
    # and any edit risks the byte-identical corpus.
    "harness/synthetic/vocab.py": "data table (word lists)",
}


def python_files(root: Path, scanned: Iterable[str] = SCANNED) -> list[Path]:
    """The `.py` files under each scanned folder (or the scanned file itself) that exist."""
    files: list[Path] = []
    for name in scanned:
        path = root / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(sorted(path.rglob("*.py")))
    return files


def oversized_files(
    root: Path, files: Iterable[Path], exempt: Mapping[str, str] = EXEMPT_FILES
) -> list[str]:
    """Files over `MAX_FILE_LINES` lines that are not exempt."""
    out: list[str] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_FILE_LINES and rel not in exempt:
            out.append(f"{rel}: {lines} lines (limit {MAX_FILE_LINES})")
    return out


def long_functions(root: Path, files: Iterable[Path]) -> list[str]:
    """Functions and methods over `MAX_FUNCTION_LINES` lines."""
    out: list[str] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(
                        f"{rel}:{node.lineno} {node.name}: {length} lines (limit {MAX_FUNCTION_LINES})"
                    )
    return out


def _report(violations: list[str]) -> str:
    return f"{len(violations)} violation(s):\n" + "\n".join(violations)


def test_no_file_is_over_600_lines() -> None:
    files = python_files(ROOT)
    assert len(files) > 50  # the scan reads the project, not an empty folder
    violations = oversized_files(ROOT, files)
    assert not violations, _report(violations)


def test_no_function_is_over_80_lines() -> None:
    violations = long_functions(ROOT, python_files(ROOT))
    assert not violations, _report(violations)


def test_every_exempt_file_exists() -> None:
    # An exemption for a file that has gone would silently cover whatever takes its name later.
    assert all((ROOT / rel).is_file() for rel in EXEMPT_FILES), sorted(EXEMPT_FILES)


def test_the_size_rules_catch_a_planted_long_file_and_long_function(tmp_path: Path) -> None:
    pkg = tmp_path / "engine"
    pkg.mkdir()
    (pkg / "big.py").write_text("x = 1\n" * 601, encoding="utf-8")
    (pkg / "limit.py").write_text("x = 1\n" * 600, encoding="utf-8")
    body = "    x = 1\n"
    (pkg / "funcs.py").write_text(
        "def long():\n" + body * 80 + "\n\nclass C:\n    def fits(self):\n" + ("    " + body) * 79,
        encoding="utf-8",
    )
    files = python_files(tmp_path, ("engine", "perf"))
    assert oversized_files(tmp_path, files) == ["engine/big.py: 601 lines (limit 600)"]
    assert long_functions(tmp_path, files) == ["engine/funcs.py:1 long: 81 lines (limit 80)"]
    # Control: an exemption lifts the file limit, and only for the file it names.
    assert oversized_files(tmp_path, files, {"engine/big.py": "planted"}) == []

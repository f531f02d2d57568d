"""The MCP tools' import graph: nothing the model can call reaches a path that writes or deletes."""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# --- the read-only import graph -----------------------------------------------------------------

SERVING_PACKAGES = ("recallbench", "arms")
DENIED_NAMES = {
    "import_paths",
    "embed_pending",
    "forget_stream",
    "trim_chunks",
    "upsert_session",
    "add_file_edits",
    "add_counts",
    "bump_generation",
}
DENIED_IMPORTS = {"engine.store", "sqlite3"}
SQL_WRITE = re.compile(
    r"\b(INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|REPLACE\s+INTO|"
    r"DROP\s+(TABLE|INDEX|TRIGGER)|ALTER\s+TABLE)\b",
    re.IGNORECASE,
)


@dataclass
class Graph:
    modules: set[str] = field(default_factory=set)
    boundary: set[str] = field(default_factory=set)  # engine modules the serving modules import
    violations: list[str] = field(default_factory=list)


def _imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every module name an import statement may refer to (`from X import y` gives X and X.y)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            parts = module.split(".")
            base = parts if is_package else parts[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, node.module] if node.module else base)
        else:
            prefix = node.module or ""
        return [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]
    return []


def default_finder(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def walk(
    root: str,
    packages: tuple[str, ...] = SERVING_PACKAGES,
    finder: Callable[[str], Path | None] = default_finder,
) -> Graph:
    """Modules reachable from `root` through imports (also inside functions) within `packages`.

    The engine is the boundary: serving modules may use its scoped read API, never its write side,
    so a reachable module is flagged when it imports `engine.store` or `sqlite3`, names a write method
    (`import_paths`, `embed_pending`, `put_*`, ...), or holds an SQL string that writes.
    """
    graph = Graph()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in graph.modules:
            continue
        path = finder(name)
        if path is None:
            continue
        graph.modules.add(name)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported_names(node, name, path.name == "__init__.py"):
                top = target.split(".")[0]
                if target in DENIED_IMPORTS:
                    graph.violations.append(f"{name}: imports {target}")
                elif top in packages:
                    todo.append(target)
                elif top == "engine" and finder(target) is not None:
                    graph.boundary.add(target)
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in DENIED_NAMES or alias.name.startswith("put_"):
                        graph.violations.append(f"{name}: imports {alias.name}")
            elif isinstance(node, ast.Attribute):
                if node.attr in DENIED_NAMES or node.attr.startswith("put_"):
                    graph.violations.append(f"{name}:{node.lineno}: uses .{node.attr}")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL_WRITE.search(node.value)
            ):
                graph.violations.append(f"{name}:{node.lineno}: SQL write {node.value[:40]!r}")
    return graph


def test_the_mcp_tools_never_reach_a_write_or_delete_path() -> None:
    tools = walk("recallbench.mcp_tools")
    # the walk is real: it reaches the presenter and the engine read API the tools use
    assert {"recallbench.mcp_tools", "recallbench.present", "arms.base"} <= tools.modules
    assert {"engine.api", "engine.scope"} <= tools.boundary
    assert not any(
        m.startswith(("recallbench.hooks", "recallbench.mcp_server")) for m in tools.modules
    )
    assert tools.violations == []
    # the arms the wiring hands the tools read only too
    arms = walk("arms.registry")
    assert {"arms.registry", "arms.rrf", "arms.walk"} <= arms.modules
    assert arms.boundary & {
        "engine.api",
        "engine.memory",
    }  # the read API, wherever arms take it from
    assert arms.violations == []


def test_the_mcp_tools_import_neither_the_engine_write_side_nor_the_command_line() -> None:
    path = Path(__file__).resolve().parents[2] / "recallbench" / "mcp_tools.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        n for node in ast.walk(tree) for n in _imported_names(node, "recallbench.mcp_tools", False)
    }
    denied = {
        "engine.memory",
        "engine.ingest",
        "engine.store",
        "engine.reads",
        "recallbench.ship",
        "recallbench.cli",
        "recallbench.mcp_server",
    }
    assert "engine.api" in imported  # positive control: the listing is real
    assert imported & denied == set()


def test_the_write_path_checker_flags_modules_that_write() -> None:
    # real modules that import transcripts or fill vectors are flagged
    hook_violations = walk("recallbench.hooks").violations
    assert any(".import_paths" in v for v in hook_violations)
    serve_violations = walk("recallbench.mcp_server").violations
    assert any(".embed_pending" in v for v in serve_violations)
    assert any(".import_paths" in v for v in walk("recallbench.cli").violations)


def test_the_write_path_checker_follows_imports_into_a_module_that_writes(tmp_path: Path) -> None:
    sources = {
        "fake.server": "from fake import helpers\n\ndef tool():\n    return helpers.run()\n",
        "fake.helpers": ("def run():\n    from fake.deep import purge\n    return purge\n"),
        "fake.deep": (
            "from engine import store\n\n"
            "def purge(conn, memory):\n"
            "    conn.execute('delete from chunks where id = ?')\n"
            "    store.put_chunks(conn, 'p', [], [])\n"
            "    memory.import_paths([])\n"
        ),
        "fake.clean": "def read(memory, scope):\n    return memory.lexical('x', scope, 3)\n",
    }
    files: dict[str, Path] = {}
    for name, text in sources.items():
        path = tmp_path / (name.replace(".", "_") + ".py")
        path.write_text(text, encoding="utf-8")
        files[name] = path

    def finder(name: str) -> Path | None:
        if name in files:
            return files[name]
        return default_finder(name) if name.split(".", maxsplit=1)[0] == "engine" else None

    flagged = walk("fake.server", packages=("fake",), finder=finder)
    assert flagged.modules == {"fake.server", "fake.helpers", "fake.deep"}
    text = "\n".join(flagged.violations)
    assert (
        "fake.deep: imports engine.store" in text
    )  # `from engine import store` names engine.store
    assert "uses .put_chunks" in text
    assert "uses .import_paths" in text
    assert "SQL write 'delete from chunks" in text
    assert walk("fake.clean", packages=("fake",), finder=finder).violations == []


def test_the_one_write_the_mcp_tools_make_is_a_settle_through_the_flagger_handed_in() -> None:
    path = REPO / "recallbench" / "mcp_tools.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Every use of the flagger, whether held as `self._flagger` or a local `flagger`.
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and (
            (isinstance(node.value, ast.Name) and node.value.id == "flagger")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "_flagger")
        )
    }
    # a settle, its undo, and two listings (its settles; the chunks a settle applies to with its own)
    assert used == {"settle", "undo_settle", "settlements", "settled_with"}
    imported = {
        n for node in ast.walk(tree) for n in _imported_names(node, "recallbench.mcp_tools", False)
    }
    assert "engine.api" in imported  # control: the listing is real
    assert not any(
        m.startswith(("engine.trust", "engine.forget", "recallbench.forget")) for m in imported
    )
    # The wiring hands in the memory itself, whose settle and undo are those names.
    from engine.memory import Memory

    assert all(callable(getattr(Memory, name)) for name in used)

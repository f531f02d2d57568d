"""The layer rules, checked on the source: `recallbench -> harness -> arms -> engine`, SQL only in engine/.

Every `.py` file of the packages is parsed (never imported) and every import statement is collected,
wherever it sits: at module level, inside a function, under `if TYPE_CHECKING:` (a type-only import is
still a dependency, and a cycle hidden behind one is still a cycle). `from x import y` counts as an import
of `x.y` when `x.y` is a project module, else of `x`; relative imports are resolved against the importing
module's package.

Each rule is a plain function over the collected edges (or sources) that returns its violations as
sentences, so the positive controls below can feed it a small planted package under `tmp_path` and show
that it catches exactly what was planted.

`perf/` is tooling beside the layers, not one of them: it may import engine, arms and harness (it measures
the product), never the application, and no layer imports it. Outside `engine/` it is bound by the same
SQL rules as everyone else. Where `perf/` does not exist, its rules have nothing to check.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Lower layers first: a module may import its own layer and the ones below it, never one above.
LAYERS: tuple[str, ...] = ("engine", "arms", "harness", "recallbench")
TOOLS = "perf"
PACKAGES: tuple[str, ...] = (*LAYERS, TOOLS)
# What perf/ may import: the product it measures, never the application around it.
TOOL_MAY_IMPORT: frozenset[str] = frozenset({"engine", "arms", "harness", TOOLS})

# The modules that hold SQL; nothing outside engine/ may import them.
SQL_MODULES: frozenset[str] = frozenset(
    {
        "engine.store",
        "engine.reads",
        "engine.audit_sql",
        "engine.trust_sql",
        "engine.message_chunks_sql",
        "engine.tombstone_sql",
        "engine.forget_sql",
        "engine.lexical_sql",
        "engine.catalog_sql",
        "engine.vector_sql",
        "engine.sanitized_sql",
        "engine.chunked_sql",
        "engine.session_files_sql",
        "engine.parsed_sql",
        "engine.carry_sql",
    }
)

# Modules outside engine/ allowed to `import sqlite3`, each with the reason it needs it. Keep it empty:
# a module that wants SQLite wants a function in engine/ instead.
SQLITE3_ALLOWED: Mapping[str, str] = {
    # Names the SQLite library's version in the description of the machine a measurement ran on; it
    # opens no connection and runs no SQL.
    "perf.machine": "reads sqlite3.sqlite_version only",
}

# The MCP tools are what the model calls; they must not be able to reach a path that writes memory,
# settings or the shipped configuration.
MODEL_FACING = "recallbench.mcp_tools"
WRITE_PATHS: frozenset[str] = frozenset(
    {
        "engine.memory",
        "engine.ingest",
        "engine.store",
        "engine.reads",
        "recallbench.ship",
        "recallbench.cli",
        "recallbench.config_cli",
    }
)

# SQL keywords in upper case anywhere in a string, which is how the project writes SQL; or in any case
# at the very start of a string. English such as "select one from the list" inside a message must not
# trip the rule, while `conn.execute("select id from chunks")` must.
_SQL_SHAPES: tuple[str, ...] = (
    r"SELECT\b[\s\S]*?\bFROM\b",
    r"INSERT\s+(?:OR\s+\w+\s+)?INTO\b",
    r"UPDATE\s+\w+\s+SET\b",
    r"DELETE\s+FROM\b",
    r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b",
    r"DROP\s+(?:TABLE|INDEX|TRIGGER|VIEW)\b",
    r"ALTER\s+TABLE\b",
    r"PRAGMA\s+\w+",
)
_SQL_ANYWHERE = re.compile(r"\b(?:" + "|".join(_SQL_SHAPES) + r")")
_SQL_AT_START = re.compile(r"^\s*(?:" + "|".join(_SQL_SHAPES) + r")", re.IGNORECASE)
# FTS5's operator with a bound parameter (`... MATCH ?`) is SQL whatever the case.
_SQL_MATCH = re.compile(r"\bMATCH\s+\?", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Edge:
    """One import: `source` imports `target` at `path:line` (`in_function` when inside a def)."""

    source: str
    target: str
    path: str
    line: int
    in_function: bool

    def where(self) -> str:
        """`path:line`, marked when the import sits inside a function."""
        return f"{self.path}:{self.line}" + (" (inside a function)" if self.in_function else "")


@dataclass(frozen=True, kw_only=True)
class Source:
    """One parsed module of the project."""

    module: str
    path: str
    tree: ast.Module


def top(module: str) -> str:
    """The top-level package of a dotted module name."""
    return module.split(".", 1)[0]


def within(module: str, package: str) -> bool:
    """`module` is `package` or one of its submodules."""
    return module == package or module.startswith(package + ".")


# --- reading the tree -----------------------------------------------------------------------------


def collect_sources(root: Path, packages: Iterable[str] = PACKAGES) -> list[Source]:
    """Every `.py` file under `root/<package>/` for the packages that exist, parsed."""
    sources: list[Source] = []
    for package in packages:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(root)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(rel))
            sources.append(Source(module=".".join(parts), path=rel.as_posix(), tree=tree))
    return sources


def import_edges(sources: Iterable[Source]) -> set[Edge]:
    """Every import in every source, resolved to the module it loads."""
    sources = list(sources)
    known = {s.module for s in sources}
    edges: set[Edge] = set()
    for source in sources:
        is_package = source.path.endswith("__init__.py")
        for node, in_function in _imports(source.tree):
            for target in _targets(node, source.module, is_package, known):
                edges.add(
                    Edge(
                        source=source.module,
                        target=target,
                        path=source.path,
                        line=node.lineno,
                        in_function=in_function,
                    )
                )
    return edges


def _imports(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import node with whether a function encloses it."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child, in_function))
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, inside)

    visit(tree, False)
    return found


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]
) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    # `from engine import store` loads the module engine.store; `from engine.api import Scored` loads
    # engine.api. A name that is not a project module is an attribute of `base`.
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def string_literals(tree: ast.Module) -> list[tuple[int, str]]:
    """Every string literal but docstrings; an f-string is read with `{}` where its values go."""
    docstrings = {id(doc) for node in ast.walk(tree) if (doc := _docstring(node)) is not None}
    in_fstrings: set[int] = set()
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for value in node.values:
                in_fstrings.add(id(value))
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                else:
                    parts.append("{}")
            found.append((node.lineno, "".join(parts)))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and id(node) not in in_fstrings
        ):
            found.append((node.lineno, node.value))
    return sorted(found)


def _docstring(node: ast.AST) -> ast.Constant | None:
    """The docstring node of a module, class or function, if it has one."""
    if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.value if isinstance(first.value.value, str) else None
    return None


def looks_like_sql(text: str) -> bool:
    """A string shaped like an SQL statement (see `_SQL_SHAPES`)."""
    return bool(_SQL_ANYWHERE.search(text) or _SQL_AT_START.search(text) or _SQL_MATCH.search(text))


# --- the rules ------------------------------------------------------------------------------------


def layer_violations(edges: Iterable[Edge]) -> list[str]:
    """Imports that point up the layers, into the application from perf/, or into perf/ from a layer."""
    out: list[str] = []
    for e in sorted(edges, key=_order):
        src, dst = top(e.source), top(e.target)
        if src in LAYERS and dst in LAYERS and LAYERS.index(dst) > LAYERS.index(src):
            out.append(f"{e.where()}: {e.source} imports {e.target}, a layer above {src}/")
        elif src == TOOLS and dst in PACKAGES and dst not in TOOL_MAY_IMPORT:
            out.append(f"{e.where()}: {e.source} imports {e.target}; perf/ never imports {dst}/")
        elif src in LAYERS and dst == TOOLS:
            out.append(
                f"{e.where()}: {e.source} imports {e.target}; the product never imports perf/"
            )
    return out


def import_cycles(edges: Iterable[Edge]) -> list[str]:
    """One cycle per strongly connected group of project modules, each step with its import's place."""
    edges = [e for e in edges if top(e.target) in PACKAGES and e.source != e.target]
    graph: dict[str, dict[str, Edge]] = {}
    for e in sorted(edges, key=_order):
        graph.setdefault(e.source, {}).setdefault(e.target, e)
    out: list[str] = []
    for group in _strongly_connected(graph):
        if len(group) < 2:
            continue
        cycle = _a_cycle(graph, group)
        steps = [graph[a][b] for a, b in itertools.pairwise(cycle)]
        chain = " -> ".join(cycle)
        places = "; ".join(f"{s.source} -> {s.target} at {s.where()}" for s in steps)
        out.append(f"cycle {chain} ({places})")
    return out


def sql_text_violations(sources: Iterable[Source]) -> list[str]:
    """String literals shaped like SQL statements in any module outside engine/."""
    out: list[str] = []
    for s in sources:
        if within(s.module, "engine"):
            continue
        for line, text in string_literals(s.tree):
            if looks_like_sql(text):
                out.append(f"{s.path}:{line}: SQL outside engine/: {_excerpt(text)}")
    return out


def sqlite_violations(edges: Iterable[Edge]) -> list[str]:
    """`import sqlite3` outside engine/ and outside `SQLITE3_ALLOWED`."""
    return [
        f"{e.where()}: {e.source} imports {e.target}; SQLite belongs to engine/"
        for e in sorted(edges, key=_order)
        if within(e.target, "sqlite3")
        and top(e.source) != "engine"
        and e.source not in SQLITE3_ALLOWED
    ]


def sql_module_violations(edges: Iterable[Edge]) -> list[str]:
    """Imports of `engine.store` or `engine.reads` from outside engine/."""
    return [
        f"{e.where()}: {e.source} imports {e.target}; outside engine/ use engine.api or engine.text_reads"
        for e in sorted(edges, key=_order)
        if top(e.source) != "engine" and any(within(e.target, m) for m in SQL_MODULES)
    ]


def write_path_violations(edges: Iterable[Edge]) -> list[str]:
    """Imports by the model-facing MCP tools of a module that writes."""
    return [
        f"{e.where()}: {e.source} imports {e.target}, a write path the model must not reach"
        for e in sorted(edges, key=_order)
        if e.source == MODEL_FACING and any(within(e.target, w) for w in WRITE_PATHS)
    ]


def _order(e: Edge) -> tuple[str, int, str]:
    return (e.path, e.line, e.target)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 70 else flat[:67] + "...")


def _strongly_connected(graph: Mapping[str, Mapping[str, Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components, each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(groups)


def _a_cycle(graph: Mapping[str, Mapping[str, Edge]], group: list[str]) -> list[str]:
    """The shortest cycle through the group's first module, as `[a, ..., a]` (breadth-first)."""
    start = group[0]
    members = set(group)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier: list[str] = []
        for node in frontier:
            for nxt in sorted(graph.get(node, {})):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt in members and nxt not in parents:
                    parents[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    msg = f"no cycle through {start} in {group}"
    raise AssertionError(msg)


# --- the real tree --------------------------------------------------------------------------------

SOURCES = collect_sources(ROOT)
EDGES = import_edges(SOURCES)


def _report(violations: list[str]) -> str:
    return f"{len(violations)} violation(s):\n" + "\n".join(violations)


def test_the_scan_reads_every_layer_and_sees_imports_inside_functions() -> None:
    # A positive control for the real scan: an empty walk would pass every rule below.
    assert {top(s.module) for s in SOURCES} >= set(LAYERS)
    assert any(e.source == "arms.registry" and e.target == "arms.base" for e in EDGES)
    assert any(e.in_function for e in EDGES)


def test_the_tree_imports_only_down_the_layers() -> None:
    violations = layer_violations(EDGES)
    assert not violations, _report(violations)


def test_the_tree_has_no_import_cycles() -> None:
    cycles = import_cycles(EDGES)
    assert not cycles, _report(cycles)


def test_no_sql_is_written_outside_the_engine() -> None:
    violations = sql_text_violations(SOURCES) + sqlite_violations(EDGES)
    assert not violations, _report(violations)


def test_nothing_outside_the_engine_imports_its_sql_modules() -> None:
    violations = sql_module_violations(EDGES)
    assert not violations, _report(violations)


def test_the_mcp_tools_cannot_reach_a_write_path() -> None:
    violations = write_path_violations(EDGES)
    assert not violations, _report(violations)


# --- positive controls: a planted package under tmp_path ------------------------------------------


def _plant(root: Path, files: Mapping[str, str]) -> tuple[list[Source], set[Edge]]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in {Path(rel).parts[0] for rel in files}:
        init = root / package / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    sources = collect_sources(root)
    return sources, import_edges(sources)


def test_edges_resolve_from_imports_dotted_imports_and_relative_imports(tmp_path: Path) -> None:
    _, edges = _plant(
        tmp_path,
        {
            "engine/store.py": "",
            "engine/scope.py": "",
            "harness/sub/__init__.py": "from . import leaf\n",
            "harness/sub/leaf.py": "from ..sub import leaf\n",
            "harness/user.py": (
                "import engine.scope\n"
                "from engine import store, version\n"
                "def f():\n    from .sub import leaf\n"
            ),
        },
    )
    found = {(e.source, e.target, e.line, e.in_function) for e in edges}
    assert found == {
        ("harness.sub", "harness.sub.leaf", 1, False),
        ("harness.sub.leaf", "harness.sub.leaf", 1, False),
        ("harness.user", "engine.scope", 1, False),
        ("harness.user", "engine.store", 2, False),
        ("harness.user", "engine", 2, False),  # `version` is an attribute, not a module
        ("harness.user", "harness.sub.leaf", 4, True),
    }


def test_the_layer_rule_catches_an_upward_import_and_allows_downward_ones(tmp_path: Path) -> None:
    _, edges = _plant(
        tmp_path,
        {
            "engine/low.py": "def f():\n    from arms import high\n",
            "arms/high.py": "from engine import low\n",
            "harness/run.py": "import arms.high\nimport engine.low\n",
            "recallbench/app.py": "from harness.run import x\n",
            "perf/measure.py": "from harness import run\nfrom recallbench.app import y\n",
            "harness/bad.py": "import perf.measure\n",
        },
    )
    assert layer_violations(edges) == [
        "engine/low.py:2 (inside a function): engine.low imports arms.high, a layer above engine/",
        "harness/bad.py:1: harness.bad imports perf.measure; the product never imports perf/",
        "perf/measure.py:2: perf.measure imports recallbench.app; perf/ never imports recallbench/",
    ]


def test_the_cycle_rule_reports_a_cycle_closed_inside_a_function(tmp_path: Path) -> None:
    _, edges = _plant(
        tmp_path,
        {
            "harness/a.py": "def f():\n    from . import b\n",
            "harness/b.py": "from harness.a import x\n",
            "harness/c.py": "from harness import a, b\n",
        },
    )
    assert import_cycles(edges) == [
        "cycle harness.a -> harness.b -> harness.a "
        "(harness.a -> harness.b at harness/a.py:2 (inside a function); "
        "harness.b -> harness.a at harness/b.py:1)"
    ]
    # Control: without the function-level import there is no cycle, only the chain c -> a, c -> b -> a.
    acyclic = {e for e in edges if not e.in_function}
    assert import_cycles(acyclic) == []


def test_the_sql_rules_catch_statements_and_sqlite3_outside_the_engine_only(
    tmp_path: Path,
) -> None:
    sql = (
        'import sqlite3\nQ = "SELECT id FROM chunks WHERE x = ?"\n'
        "def f(t):\n"
        '    """SELECT x FROM y in a docstring is prose."""\n'
        '    return f"insert into {t} values (?)", "chunks_fts MATCH ?"\n'
    )
    sources, edges = _plant(
        tmp_path,
        {
            "engine/store.py": sql,
            "harness/sqlish.py": sql,
            "perf/machine.py": "import sqlite3\n",  # on the allow-list, with its reason
            "harness/prose.py": 'MSG = "pick one arm from the list, then update the set"\n',
        },
    )
    assert sql_text_violations(sources) == [
        "harness/sqlish.py:2: SQL outside engine/: 'SELECT id FROM chunks WHERE x = ?'",
        "harness/sqlish.py:5: SQL outside engine/: 'chunks_fts MATCH ?'",
        "harness/sqlish.py:5: SQL outside engine/: 'insert into {} values (?)'",
    ]
    assert sqlite_violations(edges) == [
        "harness/sqlish.py:1: harness.sqlish imports sqlite3; SQLite belongs to engine/"
    ]


def test_the_sql_module_rule_catches_the_app_importing_the_store(tmp_path: Path) -> None:
    _, edges = _plant(
        tmp_path,
        {
            "engine/store.py": "",
            "engine/reads.py": "from engine import store\n",
            "engine/api.py": "from engine.reads import Scored\n",
            "recallbench/hooks.py": "from engine import store\nfrom engine.api import Scored\n",
            "perf/lex.py": "import engine.reads\n",
        },
    )
    assert sql_module_violations(edges) == [
        "perf/lex.py:1: perf.lex imports engine.reads; outside engine/ use engine.api or engine.text_reads",
        "recallbench/hooks.py:1: recallbench.hooks imports engine.store; "
        "outside engine/ use engine.api or engine.text_reads",
    ]


def test_the_write_path_rule_catches_the_mcp_tools_importing_memory(tmp_path: Path) -> None:
    _, edges = _plant(
        tmp_path,
        {
            "engine/memory.py": "",
            "engine/api.py": "",
            "recallbench/ship.py": "",
            "recallbench/mcp_tools.py": (
                "from engine.api import ReadAPI\ndef f():\n    from engine.memory import Memory\n"
            ),
            "recallbench/serve.py": "from engine.memory import Memory\nfrom recallbench import ship\n",
        },
    )
    # serve.py wires the write side on purpose; only the tools the model calls are held to the rule.
    assert write_path_violations(edges) == [
        "recallbench/mcp_tools.py:3 (inside a function): recallbench.mcp_tools imports "
        "engine.memory, a write path the model must not reach"
    ]


def test_a_missing_perf_package_leaves_its_rules_nothing_to_check(tmp_path: Path) -> None:
    sources, edges = _plant(tmp_path, {"engine/low.py": "", "arms/high.py": "import engine.low\n"})
    assert {top(s.module) for s in sources} == {"engine", "arms"}
    assert layer_violations(edges) == []
    # Control: the same scan sees perf/ once it exists.
    sources, edges = _plant(tmp_path, {"perf/x.py": "import recallbench.cli\n"})
    assert "perf" in {top(s.module) for s in sources}
    assert len(layer_violations(edges)) == 1

"""The runtime's layering: a module imports only from its own group of modules or the layers below it.

Walks every module of the `runtime` package with `ast` (imports inside functions and under TYPE_CHECKING
count too) and fails on an import from a higher layer or from another group of the same layer, or on a
package or module missing from LAYERS; and on any import cycle between modules, inside a package too (an
import inside a function only hides a cycle from Python's import system, not from a reader).
"""

from __future__ import annotations

import ast
import functools
import graphlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import runtime

ROOT = Path(runtime.__file__).parent

# Lowest first. Each entry is one layer of one or more groups side by side; the names are the runtime's
# top-level modules and packages. A module may import its own group and the layers below, never another
# group of its own layer.
LAYERS: list[list[set[str]]] = [
    # the plugin API, leaf utilities
    [{"version", "api", "clock", "log_context", "log_levels", "daemon_executor", "embedded_broker"}],
    [{"data"}],  # Connect data in Java's forms (logical types, number and date text, Values)
    [{"converters"}, {"transforms"}],  # the data plugins, each on `data` alone
    # the plugins, Python and Java (a JVM host process per Python process that needs one)
    [{"worker_config", "plugins", "connectors", "config_providers", "connector_files", "java"}],
    [{"storage"}],  # the config, offset and status stores behind one interface
    [{"control"}],  # what the herder, the group member and the worker share: errors, restarts, target states
    [{"worker"}],  # connectors and tasks running
    [{"distributed", "metrics"}],  # the group membership; the metrics over the worker's counters
    [{"herder"}],  # the herder state machine with its standalone and distributed backends
    [{"rest"}],  # the REST API over the herder interface
    [{"bootstrap"}],  # assembling a worker process
    [{"cli", "entry"}],
]
# name -> (layer, group within the layer)
PLACE_OF = {
    name: (layer, group) for layer, groups in enumerate(LAYERS) for group, names in enumerate(groups) for name in names
}


def _allowed(source: str, target: str) -> bool:
    """Whether top-level module `source` may import from `target` (an unknown target: not a runtime module)."""
    if target not in PLACE_OF:
        return True
    (source_layer, source_group), (target_layer, target_group) = PLACE_OF[source], PLACE_OF[target]
    return target_layer < source_layer or (target_layer == source_layer and target_group == source_group)


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _top_level(path: Path) -> str | None:
    """The top-level module or package under runtime/ that a file belongs to (None: runtime/__init__.py)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return None if parts == ("__init__",) else parts[0]


def _imported(path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute dotted names this import statement reads from."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        package = list(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    if base == "runtime":  # `from runtime import x` / `from .. import x` at the top: x is the module
        return [f"runtime.{alias.name}" for alias in node.names]
    return [base]


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(node.lineno, name) for name in _imported(path, node) if name.startswith("runtime.")]
    return found


def test_every_top_level_module_has_a_layer() -> None:
    names = {_top_level(p) for p in _modules()} - {None}
    assert names - PLACE_OF.keys() == set(), "add the new module or package to LAYERS"


def test_no_module_imports_from_a_higher_layer_or_a_sibling_group() -> None:
    upward = []
    for path in _modules():
        source = _top_level(path)
        if source is None:
            continue
        for line, name in _runtime_imports(path):
            if not _allowed(source, name.split(".")[1]):
                upward.append(f"{path.relative_to(ROOT.parent)}:{line} imports {name}")
    assert upward == []


@pytest.mark.parametrize(
    "source, target, allowed",
    [
        ("transforms", "data", True),
        ("converters", "converters", True),
        ("converters", "transforms", False),
        ("transforms", "converters", False),
        ("data", "converters", False),
        ("worker", "converters", True),
    ],
)
def test_groups_of_one_layer_do_not_import_each_other(source: str, target: str, allowed: bool) -> None:
    assert _allowed(source, target) is allowed


@pytest.mark.parametrize(
    "source, statement, expected",
    [
        ("worker/offsets.py", "from ..herder.errors import ServerError", "runtime.herder.errors"),
        ("rest/routes/offsets.py", "from ...control import errors", "runtime.control"),
        ("worker/worker.py", "from .. import plugins", "runtime.plugins"),
        ("worker/worker.py", "import runtime.rest.app", "runtime.rest.app"),
    ],
)
def test_relative_imports_resolve(source: str, statement: str, expected: str) -> None:
    """The walk sees through relative imports (else the check above would pass vacuously)."""
    node = ast.parse(statement).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    assert _imported(ROOT / source, node) == [expected]


# ---- import cycles ----------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _import_graph() -> dict[str, frozenset[str]]:
    """Module -> the runtime modules it imports (`from package import module` names the module)."""
    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for base in _imported(path, node):
                if isinstance(node, ast.ImportFrom):
                    targets = [f"{base}.{alias.name}" for alias in node.names]
                    targets = [t if t in modules else base for t in targets]
                else:
                    targets = [base]
                graph[name] |= {t for t in targets if t in modules and t != name}
    return {name: frozenset(targets) for name, targets in graph.items()}


def _cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every cycle left after breaking each one found at its closing edge (one per independent cycle)."""
    graph = {name: set(targets) for name, targets in graph.items()}
    found = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as error:
            cycle = error.args[1]  # [a, b, ..., a]: each imported by the one after it
            found.append(cycle)
            graph[cycle[-1]].discard(cycle[-2])
        else:
            return found


def test_no_import_cycles() -> None:
    cycles = [" -> ".join(reversed(cycle)) for cycle in _cycles(_import_graph())]
    assert cycles == [], "import cycles (each module imports the next):\n" + "\n".join(cycles)


def test_the_cycle_check_sees_cycles_inside_a_package() -> None:
    graph = {"runtime.p.a": {"runtime.p.b"}, "runtime.p.b": {"runtime.p.c"}, "runtime.p.c": {"runtime.p.a"}}
    assert [sorted(cycle) for cycle in _cycles(graph)] == [
        sorted(["runtime.p.a", "runtime.p.b", "runtime.p.c", "runtime.p.a"])
    ]


@pytest.mark.parametrize(
    "importer, imported",
    [
        ("runtime.worker.task_processes", "runtime.worker.task_host"),  # from . import task_host
        ("runtime.worker.worker", "runtime.worker.task_processes"),  # from .task_processes import ...
        ("runtime.worker.task_host", "runtime.worker.task_protocol"),
        ("runtime", "runtime.version"),  # a package's __init__ is a module too
    ],
)
def test_the_import_graph_sees_every_form_of_import(importer: str, imported: str) -> None:
    assert imported in _import_graph()[importer]

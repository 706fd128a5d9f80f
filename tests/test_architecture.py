"""The layering of docs/architecture.md, checked on the code: every import
between olympus modules (top-level or inside a function) points down the
layers, import circles stay inside one folder, and jaxlib is imported only in
olympus/backends/xla."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "olympus"

# Bottom to top; a module may import its own layer and the layers below it.
# transforms and backends are one layer: neither imports the other's internals
# upward, and lax (above both) registers rules into their tables.
LAYERS = [
    ["olympus.config", "olympus.caches"],
    ["olympus.ir"],
    ["olympus.tracer"],
    ["olympus.transforms", "olympus.backends"],
    ["olympus.lax", "olympus.prng"],
    ["olympus.optimizer"],
    ["olympus.stages"],
    ["olympus.jit_function"],
    ["olympus.api"],
]
# Everything else (numpy, random, nn, autodiff, debug, ...) sits on top.
TOP = len(LAYERS)
MAX_CIRCLES = 3


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imported(name: str, path: pathlib.Path, node, modules) -> list[str]:
    """The olympus modules an import statement loads (the longest known prefix)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.module else base
        else:
            module = node.module or ""
        targets = [
            f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
            for alias in node.names
        ]
    found = []
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target.startswith("olympus") and target != name:
            found.append(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(_imported(name, path, node, modules))
    return graph


def layer_of(module: str) -> int:
    for level, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return TOP


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_points_up_the_layers():
    graph = import_graph()
    upward = [
        f"{a} -> {b}"
        for a, targets in sorted(graph.items())
        for b in sorted(targets)
        if layer_of(b) > layer_of(a)
    ]
    assert upward == []


def test_import_circles_are_few_and_each_inside_one_folder():
    found = circles(import_graph())
    assert len(found) <= MAX_CIRCLES, found
    for component in found:
        folders = {m.rsplit(".", 1)[0] for m in component}
        assert len(folders) == 1, component


def test_jaxlib_is_imported_only_by_the_xla_backend():
    outside = []
    for name, path in _modules().items():
        if name.startswith("olympus.backends.xla"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(n.split(".")[0] in ("jaxlib", "jax") for n in names):
                outside.append(name)
    assert outside == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from olympus.ir import core", {"olympus.ir.core"}),
        ("from olympus import lax", {"olympus.lax"}),
        ("import olympus.numpy", {"olympus.numpy"}),
        ("from . import printer", {"olympus.ir.printer"}),
    ],
)
def test_the_graph_reads_every_kind_of_import(source, expected):
    modules = _modules()
    node = ast.parse(source).body[0]
    path = PACKAGE / "ir" / "html.py"
    found = set(_imported("olympus.ir.html", path, node, modules))
    assert expected <= found

"""The house: the import graph between the subpackages of auditor (imports inside functions included,
imports only for type checkers excluded) has no cycles, and every module imports on its own."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "auditor"


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _runtime_imports(tree: ast.AST):
    """Imports that run: everything but the body of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _unit(module: str) -> str:
    """The unit of layering: a subpackage (auditor.static) or a top-level module (auditor.cli)."""
    return ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if node.level == 0 and node.module else []
            for target in targets:
                if target.startswith("auditor") and _unit(target) != _unit(name) and _unit(target) != "auditor":
                    graph.setdefault(_unit(name), set()).add(_unit(target))
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Every strongly connected group of two or more units (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.add(frozenset(group))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    found = cycles(package_graph())
    assert not found, f"import cycles between {[sorted(c) for c in found]}: move the shared piece down a layer"


def test_the_graph_sees_in_function_imports():
    # the pipeline imports the trace stage inside a function: a graph that missed such imports would
    # miss the cycles they hide
    assert "auditor.trace" in package_graph()["auditor.pipeline"]


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset({"a", "b", "c"})}


@pytest.mark.parametrize("module", sorted(_modules()))
def test_every_module_imports(module):
    importlib.import_module(module)

"""One node list per `ast` tree, shared by every reader of a file's module tree: the static passes (auditor/static/)
and the project readers (auditor/project/) that read the tree the engine parsed; and the one reading of a node's
position (its span, its lines) those readers share. Below both layers (it imports nothing of the tool), so neither
imports the other for it (tests/test_import_graph.py)."""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any, Union

# the nodes `ast` gives a position (lineno, col_offset, end_lineno, end_col_offset)
Positioned = Union[ast.stmt, ast.expr, ast.arg, ast.keyword, ast.excepthandler, ast.alias, ast.pattern]
# first line, first col (0-based), last line, end col (exclusive)
Span = tuple[int, int, int, int]


# a line or column past the end of any file or line: the end of a span that runs to the end of its line (or file)
END = 1 << 30
# The process environment as code names it (`os.environ`, or `environ` imported bare), and the calls that read one
# variable of it: every pass that reads environment use spells them from here.
ENVIRON = frozenset({"os.environ", "environ"})
ENV_GETS = frozenset({"os.environ.get", "os.getenv", "environ.get", "getenv"})


def node_span(first: Positioned, last: Positioned | None = None, open_end: bool = False) -> Span:
    """From the start of `first` to the end of `last` (`first` itself when no `last`); a node without an end position
    ends where it starts, or with `open_end`, at the end of its line."""
    end = first if last is None else last
    return first.lineno, first.col_offset, end.end_lineno or end.lineno, \
        end.end_col_offset or (END if open_end else end.col_offset)


def lines_span(first_line: int, last: Positioned) -> Span:
    """Whole lines: from the start of line `first_line` to the end of `last`'s last line."""
    return first_line, 0, last.end_lineno or last.lineno, END


def line_span(node: Positioned) -> tuple[int, int]:
    """(first line, last line) of a node."""
    return node.lineno, node.end_lineno or node.lineno


def node_lines(node: Positioned) -> range:
    """Every line a node covers."""
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def decorated_span(node: ast.stmt) -> tuple[int, int]:
    """(first line, last line) of a statement, a def's or class's decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]), node.end_lineno or node.lineno


def starts_in(f: Any, spans: Iterable[Span]) -> bool:
    """Whether a finding (1-based `line`, `col`) starts inside one of the spans."""
    return any((l1, c1) <= (f.line, f.col - 1) < (l2, c2) for l1, c1, l2, c2 in spans)


def computed_getattr(node: ast.AST) -> bool:
    """`getattr(obj, name)` with a name that is not a literal."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant))


def ast_dotted(node: ast.AST) -> str | None:
    """`a.b.c` for an attribute chain that starts from a name; None for anything else (a call, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def device_literal(node: ast.AST | None) -> str | None:
    """The device type a literal names: `"cpu"`, `"cuda:0"`, `torch.device("cpu")` -> "cpu", "cuda", "cpu"; None for
    anything computed. One reading for every pass that asks whether a value is the host device."""
    if isinstance(node, ast.Call) and ast_dotted(node.func) in ("torch.device", "device") and node.args:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(":")[0]
    return None


def walk_list(tree: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(tree))`, the same nodes in the same (breadth-first) order, in half the time: one list
    that grows while it is read, instead of ast.walk's deque and two generators per node."""
    out = [tree]
    append, node_type = out.append, ast.AST
    for node in out:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        append(item)
            elif isinstance(value, node_type):
                append(value)
    return out


def _runs_as_script(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either side first."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def is_main_guard(node: ast.AST) -> bool:
    """Whether the statement is `if __name__ == "__main__":` (either side first, or that comparison and further
    tests joined by `and`): its block runs only when the file runs as a script."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_runs_as_script(v) for v in test.values)
    return _runs_as_script(test)


def parents_of(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> the node that holds it, for every node below `tree` (keyed by id: nodes compare by identity, and
    a reader may add entries for nodes it builds)."""
    return {id(child): node for node in walk_list(tree) for child in ast.iter_child_nodes(node)}


# (tree, its nodes, its nodes by requested types) for the last two trees: one file's passes each read the module's
# every node (some also read a second tree: a chunked file's re-parsed statements), so it is walked once, not ~40 times
_INDEXED: list[tuple[ast.AST, list[ast.AST], dict[object, list]]] = []


def _index(tree: ast.AST) -> tuple[ast.AST, list[ast.AST], dict[object, list]]:
    for entry in _INDEXED:
        if entry[0] is tree:
            return entry
    entry = (tree, walk_list(tree), {})
    _INDEXED[:] = [entry, *_INDEXED[:1]]
    _SCOPES.clear()
    return entry


def module_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` in ast.walk's order, listed once per tree (a file's passes share the list; read it, never
    change it). Only for a tree that is not changed after its first read: the module a pass reads whole."""
    return _index(tree)[1]


def module_fact(tree: ast.AST, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`, a fact of the whole module `tree` that several passes read, computed once per tree (kept beside
    its node lists; read it, never change it)."""
    held = _index(tree)[2]
    if key not in held:
        held[key] = compute()
    return held[key]


def module_nodes_of(tree: ast.AST, types: type | tuple[type, ...]) -> list:
    """The nodes of `tree` that are instances of `types`, in ast.walk's order; one list per tree and `types`."""
    _, nodes, by_type = _index(tree)
    found = by_type.get(types)
    if found is None:
        found = by_type[types] = [n for n in nodes if isinstance(n, types)]
    return found


# id(definition) -> (the definition, its walk_list): a function or class the file's passes each walk whole (call
# defaults, setting reads, host scopes ...) is walked once; emptied when a new module is indexed (`_index`)
_SCOPES: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


def scope_nodes(node: ast.AST) -> list[ast.AST]:
    """`walk_list(node)` of a definition of a module tree that `module_nodes` reads (so never changed after its first
    read), listed once while that module is the file's: read it, never change it."""
    entry = _SCOPES.get(id(node))
    if entry is None or entry[0] is not node:
        if len(_SCOPES) > 100_000:
            _SCOPES.clear()
        entry = _SCOPES[id(node)] = (node, walk_list(node))
    return entry[1]


def literal_strings(node: ast.AST) -> list[str]:
    """The strings a literal names, in order: a string constant itself (`"cuda"`), the string elements of a tuple /
    list / set (`("cuda", "npu", 0)` -> cuda, npu); [] for anything else. One reading for the passes that decide
    what a literal of backend or platform names holds (backends, platform_predicates, vendor_dispatch,
    unselected_devices, host_paths), each with its own rule."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []

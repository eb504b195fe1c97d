"""Where a file may set an attribute: read by call_defaults (pd17: `if hasattr(self, "X") and self.X is not None:`
under a hook nothing sets) and by unreached_defs (pd19: `if self.X:` under a flag nothing turns on). One reading,
so the two passes agree on what "sets" means."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from auditor.static.astutil import module_nodes


def false_constant(node: ast.expr | None) -> bool:
    """`False`, `None`, `0`, `""`: a value that leaves an `if flag:` branch off."""
    return isinstance(node, ast.Constant) and not node.value


def setting_nodes(tree: ast.Module, name: str, false_stores: bool = True) -> Iterator[ast.AST]:
    """The nodes of the file that may set attribute `name`: an attribute or name store, a parameter or keyword of that
    name, `setattr(_, "name", ...)`, or the string anywhere but as hasattr's / getattr's attribute argument.
    `false_stores=False`: a plain `x.name = False` / `name = None` (a false constant) sets nothing that turns a
    branch on."""
    yield from setting_nodes_by_name(tree, {name}, false_stores).get(name, ())


def setting_nodes_by_name(tree: ast.Module, names: set[str], false_stores: bool = True) -> dict[str, list[ast.AST]]:
    """`setting_nodes` for several names in one walk of the file: {name: its nodes, in walk order} (a pass that asks
    for many names walks each file once, not once per name)."""
    probed = {id(n.args[1]) for n in module_nodes(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in ("hasattr", "getattr") and len(n.args) >= 2}
    off: set[int] = set() if false_stores else {
        id(t) for n in module_nodes(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and false_constant(n.value)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    found: dict[str, list[ast.AST]] = {}
    name: str | None
    for n in module_nodes(tree):
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
            name = n.attr
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            name = n.id
        elif isinstance(n, (ast.arg, ast.keyword)):
            name = n.arg
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in probed:
            name = n.value
        else:
            continue
        if name is not None and name in names and id(n) not in off:
            found.setdefault(name, []).append(n)
    return found


def may_set(tree: ast.Module, name: str) -> bool:
    """Whether the file may set attribute `name` (`setting_nodes`, false constants included)."""
    return any(True for _ in setting_nodes(tree, name))

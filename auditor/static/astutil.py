"""Small helpers over Python's `ast` shared by the static passes that read a file's tree without libcst."""
from __future__ import annotations

import ast


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

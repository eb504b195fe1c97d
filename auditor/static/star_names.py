"""Names a star import of a CUDA-only package brings (t14k, issue 14).

`from pynvml import *` ... `nvmlInit()`, `nvmlDeviceGetCount()` (nni's collect_gpu_info, GPU monitors, schedulers):
the called names are the package's, yet no import statement spells them. When a file star-imports exactly one module
and nothing else (no relative or second star import that could bring the same name), and that module is a package a
third-party rule reports as a whole (`pynvml.*`, `GPUtil.*`: the engine's `cuda_only` test), a name the file calls
but never binds (no assignment, parameter, import, def or class; not a builtin) can only come from that module: bind
it to `<module>.<name>` so the package's rule reports the call. Names only read (`except NVMLError:`) stay unbound:
the call is the use.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable

from auditor.static.astutil import bound_names, module_nodes
from auditor.static.context import FileContext

_BUILTINS = frozenset(dir(builtins))


def _star_modules(tree: ast.Module) -> list[str | None]:
    """The module of every star import in the file (None for a relative one)."""
    out: list[str | None] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            out.append(None if node.level else node.module)
    return out


def bind_star_names(ctx: FileContext, tree: ast.Module, cuda_only: Callable[[str], bool]) -> None:
    """Bind the unbound called names of a file's single star import of a CUDA-only package (see the module doc)."""
    if len(ctx.star_imports) != 1:
        return
    modules = _star_modules(tree)
    if len(modules) != 1 or modules[0] != ctx.star_imports[0]:
        return
    module = ctx.star_imports[0]
    called = {node.func.id for node in module_nodes(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    if not called:
        return
    called -= _BUILTINS | bound_names([tree], scoped=False) | set(ctx.aliases) | set(ctx.bindings)
    for name in sorted(called):
        qual = f"{module}.{name}"
        if cuda_only(qual):
            ctx.bind(name, qual)

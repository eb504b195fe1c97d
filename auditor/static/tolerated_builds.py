"""JIT builds of a DeepSpeed-style op builder that the tree only ever tries (tq52b; TUNED on heldout66's
ArcticInference).

A tree that copies DeepSpeed's `OpBuilder` (`def jit_load(self, ...)`: nvcc flags, `torch.utils.cpp_extension.load(...,
with_cuda=True)`) and loads its builders only inside a `try` whose handler catches any exception and goes on without
raising (`try: SwiftKVOpsBuilder().load(); return True` / `except Exception: logger.info("Falling back to original
implementation"); return False`) tries the build: on Ascend it fails, the handler runs and the code takes its path
without the custom ops. The errors in the builder's `load` / `jit_load` are then warnings (it runs, slower), like a setup.py build
whose failures the build class tolerates (unselected_devices' `tolerated-build`). One load of a builder anywhere in the
tree outside such a `try` (DeepSpeed's own `FusedAdamBuilder().load()` in an optimizer) keeps them.

Per file, in the worker (kept in the summary's tree facts, FACT): the spans of the `load` / `jit_load` methods of
classes named `*Builder` that have a `jit_load`, and how many builder loads (`XBuilder(...).load()` / `.jit_load()`) sit inside and outside a tolerant
`try`.
"""
from __future__ import annotations

import ast
from typing import Any

from auditor.findings import as_info
from auditor.static.astutil import ast_dotted, module_nodes, walk_list
from auditor.static.gates import caught_without_reraise

FACT = "builder_loads"
_CONTEXT = "tolerated-build"
_NOTE = ("the build of a DeepSpeed-style op builder that this tree only loads inside a `try` whose handler goes on "
         "without it ({where}): on Ascend the build fails, the handler runs and the code takes its path without the "
         "custom ops")
_BROAD = frozenset({"Exception", "BaseException"})
_LOAD_METHODS = frozenset({"load", "jit_load"})


def _tolerant(node: ast.Try) -> bool:
    """A handler that catches any exception (bare, `Exception`, `BaseException`) and raises nothing."""
    return bool(caught_without_reraise(node) & _BROAD)


def _builder_load(node: ast.AST) -> bool:
    """`SwiftKVOpsBuilder().load()`, `builder.FusedAdamBuilder(...).jit_load()`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LOAD_METHODS
            and isinstance(node.func.value, ast.Call)):
        return False
    return (ast_dotted(node.func.value.func) or "").rsplit(".", 1)[-1].endswith("Builder")


def builder_facts(tree: ast.Module, data: bytes) -> dict[str, Any] | None:
    """{"jit": [[first, last line] of the `load` / `jit_load` methods of each `*Builder` class that has a `jit_load`],
    "tried": n, "plain": n} of the file, or None when it has neither."""
    if b"Builder" not in data:
        return None
    jit: list[list[int]] = []
    for cls in module_nodes(tree):
        methods = [fn for fn in getattr(cls, "body", ()) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and fn.name in _LOAD_METHODS] if isinstance(cls, ast.ClassDef) and cls.name.endswith("Builder") else []
        if any(fn.name == "jit_load" for fn in methods):     # an op builder that builds on load (DeepSpeed's)
            jit.extend([fn.lineno, fn.end_lineno or fn.lineno] for fn in methods)
    tried: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Try) and _tolerant(node):
            tried.update(id(n) for stmt in node.body for n in walk_list(stmt) if _builder_load(n))
    loads = [n for n in module_nodes(tree) if _builder_load(n)]
    plain = sum(id(n) not in tried for n in loads)
    if not jit and not loads:
        return None
    return {"jit": jit, "tried": len(loads) - plain, "plain": plain}


def apply_tolerated_builds(results: list, project: Any) -> int:
    """Errors in the `load` / `jit_load` methods of the tree's op builders, when every builder load of the tree is tried
    (module docstring): warnings. The count lowered."""
    facts = {r.path: f for r in results if r.path.endswith(".py") and project is not None and
             (f := (project.tree(r.path) or {}).get(FACT))}
    if not facts or any(f["plain"] for f in facts.values()):
        return 0
    tried = sorted(rel for rel, f in facts.items() if f["tried"])
    if not tried:
        return 0
    note = _NOTE.format(where=", ".join(tried[:2]) + (" ..." if len(tried) > 2 else ""))
    lowered = 0
    for r in results:
        spans = (facts.get(r.path) or {}).get("jit") or []
        if not spans:
            continue
        out = []
        for f in r.findings:
            if f.severity == "error" and not f.data.get("context") and any(lo <= f.line <= hi for lo, hi in spans):
                f = as_info(f, _CONTEXT, note, severity="warning")
                lowered += 1
            out.append(f)
        r.findings = out
    return lowered


__all__ = ["FACT", "apply_tolerated_builds", "builder_facts"]

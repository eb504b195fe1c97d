"""Modules of the tree that every importer loads only under `try: ... except ImportError:` (issue 11, t11e, tuned on
heldout5's ROLL rows).

ROLL's `roll/third_party/megatron/tensor_parallel.py` reads

    try:
        from .fused_entropy import entropy_fwd, entropy_bwd
        FUSED_KERNEL_AVAILABLE = True
    except ImportError:
        FUSED_KERNEL_AVAILABLE = False

and falls back to its torch path when the flag is off (the import may also sit under that flag: cccv's
`if support_cupy: from .softsplat import softsplat` where `support_cupy` is set False in the `except` of a
`try: import cupy`, pd51); `fused_entropy.py` imports the CUTLASS CuTe DSL at its top.
On Ascend the import fails, the importer catches it, and the fallback runs: the kernel module is optional code, so its
kernel / attention / apex / third-party package findings (what fails to import) are warnings there, like a use of a
guarded optional import in one file (gates.py, policy clause `guarded`), not errors (its own `__main__` benchmark
block is a self-test of the optional kernel). A module that any importer loads unguarded, or that nothing in the tree
imports, keeps its errors. Other findings (torch.cuda calls
that run if the import succeeds) keep theirs.
"""
from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from auditor.static import project_imports as _pi

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_PACKAGE_CATEGORIES = frozenset({"attention", "apex", "kernel", "third_party"})
_NOTE = ("a module its importers load only under try / except ImportError ({via}), with a path without it: on "
         "Ascend the import fails and the fallback runs")


def _catches_import_error(node: ast.Try) -> bool:
    for h in node.handlers:
        if h.type is None:
            return True
        for t in h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]:
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if name in _IMPORT_ERRORS:
                return True
    return False


def _probe_flags(tree: ast.Module) -> set[str]:
    """Names set False in an `except` of a `try` that imports something: the flag of an import probe."""
    flags: set[str] = set()
    for t in ast.walk(tree):
        if isinstance(t, ast.Try) and any(isinstance(n, (ast.Import, ast.ImportFrom)) for s in t.body
                                          for n in ast.walk(s)):
            for h in t.handlers:
                for a in ast.walk(h):
                    if isinstance(a, ast.Assign) and isinstance(a.value, ast.Constant) and a.value.value is False:
                        flags.update(x.id for x in a.targets if isinstance(x, ast.Name))
    return flags


def _imports_of(tree: ast.Module, current: str, is_pkg: bool, known: dict[str, str], target: str):
    """(guarded?) for each import statement of `tree` that loads `target`."""
    from auditor.static.shim_graph import loaded_modules
    flags = _probe_flags(tree)

    def walk(node: ast.AST, guarded: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id in flags:
                for stmt in child.body:
                    yield from walk_stmt(stmt, True)
                for stmt in child.orelse:
                    yield from walk_stmt(stmt, guarded)
            elif isinstance(child, ast.Try):
                catches = _catches_import_error(child)
                for stmt in child.body:
                    yield from walk_stmt(stmt, guarded or catches)
                for part in (child.handlers, child.orelse, child.finalbody):
                    for other in part:
                        yield from walk_stmt(other, guarded)
            else:
                yield from walk_stmt(child, guarded)

    def walk_stmt(node: ast.AST, guarded: bool):
        if isinstance(node, ast.Import):
            for a in node.names:
                if target in loaded_modules(a.name, [], current, is_pkg, known):
                    yield guarded
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if target in loaded_modules(module, [a.name for a in node.names], current, is_pkg, known):
                yield guarded
        elif isinstance(node, ast.Try):
            yield from walk(ast.Module(body=[node], type_ignores=[]), guarded)
        else:
            yield from walk(node, guarded)

    yield from walk(tree, False)


def _guarded_imports(project: _pi.ProjectImports, rel: str, named: tuple[str, bool], known: dict[str, str],
                     target: str, digest: str) -> list[bool]:
    """Whether each import of `target` in importer `rel` is guarded, kept in the importer's summary (`guarded`, valid
    for one set of module names, `digest`) so that a warm run with nothing changed reads no importer again."""
    summary = project.summaries.get(rel)
    memo = summary.get("guarded") if summary is not None else None
    if isinstance(memo, dict) and memo.get("digest") == digest and isinstance(memo.get("found"), dict):
        cached = memo["found"].get(target)
        if isinstance(cached, list) and all(isinstance(b, bool) for b in cached):
            return cached
    else:
        memo = {"digest": digest, "found": {}}
    source = project.source(rel)
    found = list(_imports_of(source[1], *named, known, target)) if source is not None else []
    if summary is not None:
        summary["guarded"] = {"digest": digest, "found": {**memo["found"], target: found}}
        project.changed.add(rel)
    return found


def apply_guarded_modules(results: list, files: Sequence[tuple[Path, str]],
                          project: _pi.ProjectImports | None = None) -> int:
    """Lower to warnings the package findings (errors) of modules every in-tree importer loads only under a guard
    on ImportError; returns how many were lowered."""
    from auditor.static.shim_graph import _module_name, loaded_modules

    wanted = [r for r in results if r.path.endswith(".py") and any(
        f.severity == "error" and f.category in _PACKAGE_CATEGORIES and not f.data.get("context")
        for f in r.findings)]
    if not wanted:
        return 0
    py = [(p, r) for p, r in files if r.endswith(".py")]
    project = project if project is not None else _pi.ProjectImports(files, results)
    known: dict[str, str] = {}
    named: dict[str, tuple[str, bool]] = {}
    for _p, rel in py:
        m = _module_name(rel)
        if m is not None:
            known[m[0]] = rel
            named[rel] = m
    targets = {named[r.path][0]: r for r in wanted if r.path in named}
    if not targets:
        return 0
    importers: dict[str, list[str]] = {t: [] for t in targets}
    for _p, rel in py:
        if rel not in named:
            continue
        facts = project.facts(rel)
        if not facts or "load" not in facts:
            continue
        name, is_pkg = named[rel]
        for module, names, _load_time in facts["load"]:
            for t in loaded_modules(module, names, name, is_pkg, known):
                if t in importers and t != name and rel not in importers[t]:
                    importers[t].append(rel)
    lowered = 0
    digest = hashlib.sha1(json.dumps(["probe-flags", sorted(known.items())]).encode()).hexdigest()
    for target, result in targets.items():
        rels = importers[target]
        if not rels:
            continue
        guarded_all = True
        for rel in rels:
            found = _guarded_imports(project, rel, named[rel], known, target, digest)
            if not found or not all(found):
                guarded_all = False
                break
        if not guarded_all:
            continue
        via = rels[0] if len(rels) == 1 else f"{rels[0]} and {len(rels) - 1} more"
        kept = []
        for f in result.findings:
            if f.severity == "error" and f.category in _PACKAGE_CATEGORIES and not f.data.get("context"):
                f = replace(f, severity="warning", data={**f.data, "context": "guarded-import"},
                            message=f"{f.message} ({_NOTE.format(via=via)})")
                lowered += 1
            kept.append(f)
        result.findings = kept
    return lowered

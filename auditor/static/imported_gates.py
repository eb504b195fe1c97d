"""CUDA gates a file imports from another module of the tree (one project pass, after the per-file results).

Test suites keep their CUDA check in a helper module: `tests/sparse/_harness.py` sets `CUDA =
torch.cuda.is_available()` and defines `real_weights_available()` (`return CUDA and _ckpt_present(path)`) and
`real_qwen3_8b()` (None without CUDA); each test module imports them (`from _harness import CUDA`) and starts with
`if not CUDA: raise Skip("CUDA required")`, `if not real_weights_available(): pytest.skip(...)` or
`m = real_qwen3_8b()` / `if m is None: raise Skip(...)`. The per-file pass sees the gate but not that the name is
one, so the code behind it kept its errors. Code behind a CUDA gate is a warning (the gate is what fails on Ascend;
auditor/static/gates.py).

Two steps, cache-correct like auditor/static/crossfile.py: each file's summary (stored in its cache entry) lists the
gates it offers (`gates.module_gates`: top-level flags, probes `name()`, providers `name()?`); per run, the files
that import one of them by name (`from _harness import CUDA`, `... import real_qwen3_8b as _real`) and still hold an
error or a dtype hint are parsed again and their gates re-read with the imported names (`gates.apply_gate_regions`).
An import resolves by module name (packages with `__init__.py`, relative imports), else by a sibling file of the
importer's folder (a test folder without `__init__.py` that puts itself on sys.path).
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from auditor.findings import as_info
from auditor.static.module_paths import absolute_module, module_names
from auditor.static.deselected_marks import deselected_cuda_marks
from auditor.static.gates import _ATTR_SUFFIX, _COUNT_SUFFIX, DESELECTED_SUFFIX
from auditor.static.project_imports import ProjectImports
from auditor.static.astutil import module_nodes


def _offered(results: list) -> dict[str, list[str]]:
    out = {}
    for r in results:
        summary = getattr(r, "summary", None)
        if summary and summary.get("gates"):
            out[r.path] = list(summary["gates"])
    return out


def _imported_names(imports: list, me: str, is_package: bool, rel: str, by_module: dict[str, str],
                    offered: dict[str, list[str]]) -> set[str]:
    """The local names (with their `()` / `()?` marks) this file binds to another module's gates."""
    folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
    out: set[str] = set()
    for _line, level, module, names in imports:
        if level == -1 or not module and level == 0:
            continue
        target = None
        if level == 0 or "." in me or is_package:
            target = by_module.get(absolute_module(module, level, me, is_package))
        if target is None and level <= 1 and module:
            target = folder + module.replace(".", "/") + ".py"      # a sibling module on sys.path
        gates = offered.get(target or "")
        if not gates or target == rel:
            continue
        for name, alias in names:
            for gate in gates:
                base = gate.split("(", 1)[0].split("[", 1)[0]     # (`X[0]~`: a no-CUDA tuple, gates._no_cuda_tuples)
                if name == "*" or name == base:
                    out.add((base if name == "*" else alias) + gate[len(base):])
    return out


def _method_probes(offered: dict[str, list[str]]) -> dict[str, set[str]]:
    """Method probes (`self.use_cuda()`) the tree's modules define, with the settings each compares with "cuda"
    beside an availability check (`gates.method_probes`): a subclass in another module calls them on `self`."""
    out: dict[str, set[str]] = {}
    for gates in offered.values():
        for gate in gates:
            if gate.startswith("self.") and gate.endswith("()"):
                out.setdefault(gate, set())
        for gate in gates:
            if gate.endswith(_ATTR_SUFFIX):
                for method in [g for g in gates if g.startswith("self.") and g.endswith("()")]:
                    out[method].add(gate[:-len(_ATTR_SUFFIX)])
    return out


def _called_methods(text: str, tree: ast.Module, methods: dict[str, set[str]]) -> set[str]:
    """The tree's method probes this file calls on `self` and does not define again as something else."""
    if not methods:
        return set()
    own = {n.name for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {m for m in methods if m in text and m[5:-2] not in own}


def _lower_class_defaults(findings: list, tree: ast.Module, attrs: set[str]) -> list:
    """`_accelerator = "cuda"` in a class body, where a method probe the file calls compares that setting with
    "cuda" only beside an availability check (`self.accelerator == "cuda" and is_cuda_available()`): on Ascend the
    probe is false and the class runs its other (CPU) path: it differs, a warning, not an error (t11u)."""
    if not attrs or not any(f.severity == "error" and f.category == "device" for f in findings):
        return findings
    lines: dict[int, str] = {}
    for cls in module_nodes(tree):
        if isinstance(cls, ast.ClassDef):
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                        isinstance(stmt.targets[0], ast.Name) and "self." + stmt.targets[0].id in attrs and \
                        isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    lines[stmt.lineno] = stmt.targets[0].id
    out = []
    for f in findings:
        name = lines.get(f.line)
        if name and f.severity == "error" and f.category == "device" and not f.data.get("context"):
            f = as_info(f, "cuda-available-branch", f"`{name}` is a class default that the project's own CUDA "
                        f"predicate compares with \"cuda\" beside an availability check: on Ascend the predicate is "
                        f"false and the other path runs; port the predicate", "warning")
        out.append(f)
    return out


def apply_imported_gates(results: list, files: Sequence[tuple[Path, str]],
                         project: ProjectImports | None = None) -> int:
    """Re-read the gates of files that import another module's gates, and of test files using a CUDA marker the
    tree's test configuration deselects without CUDA (auditor/static/deselected_marks.py); returns how many findings
    changed."""
    from auditor.static.gates import apply_gate_regions

    offered = _offered(results)
    marks: frozenset[str] | None = None       # read once, when a file may use one
    rels = [rel for _, rel in files]
    modules = module_names(rels)
    by_module = {name: rel for rel, name in modules.items()}
    project = project if project is not None else ProjectImports(files, results)
    methods = _method_probes(offered)
    # `.X#count` (gates.class_count_attributes): a class attribute bound only to the CUDA device count, read through
    # any instance of the class (`config.total_visible_gpus`), so offered to every module that reads `.X`
    counts = {g for gates in offered.values() for g in gates if g.startswith(".") and g.endswith(_COUNT_SUFFIX)}
    changed = 0
    for r in results:
        summary = getattr(r, "summary", None)
        if not summary or not summary.get("imports") or r.error is not None or not r.path.endswith(".py") or \
                not any(f.severity == "error" or f.severity == "info" and f.category == "precision"
                        for f in r.findings):
            continue
        me = modules.get(r.path, r.path.rsplit("/", 1)[-1][:-3])
        is_package = r.path.endswith("/__init__.py") or r.path == "__init__.py"
        extra = _imported_names(summary["imports"], me, is_package, r.path, by_module, offered)
        marked = "test" in r.path.rsplit("/", 1)[-1] or "conftest" in r.path
        source = project.source(r.path) if extra or methods or counts or marked else None
        if source is None:
            continue
        tree = source[1]
        if marked and "mark." in source[0]:
            if marks is None:
                marks = deselected_cuda_marks(files, project)
            extra |= {m + DESELECTED_SUFFIX for m in marks if "mark." + m in source[0]}
        extra |= _called_methods(source[0], tree, methods)
        extra |= {g for g in counts if g[:-len(_COUNT_SUFFIX)] in source[0]}
        if not extra:
            continue
        before = [(f.severity, f.code, f.line) for f in r.findings]
        r.findings = _lower_class_defaults(apply_gate_regions(r.findings, tree, frozenset(extra)), tree,
                                           {a for m in extra if m in methods for a in methods[m]})
        changed += sum(a != b for a, b in zip(before, [(f.severity, f.code, f.line) for f in r.findings])) + \
            len(before) - len(r.findings)
    return changed


__all__ = ["apply_imported_gates"]

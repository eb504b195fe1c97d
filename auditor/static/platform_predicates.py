"""The project's own platform checks in Python (issue 11, t11p): CUDA code that only the CUDA arm of the tree's own
platform switch reaches, where that switch also has an NPU arm. Code already beside an NPU path is at most info and
never rewritten (the policy of `npu-path`, auditor/static/backends.py); this pass finds the switch when it is not an
if / elif chain in one file, which the per-file context reads, but a predicate the project defines for itself.

Recognised by structure, never by a project's names:
- a platform value: a module-level name compared, in the module that binds it, with a value naming the NPU
  (`COMPILED_PLATFORM = _C.get_platform()` / `if COMPILED_PLATFORM not in ("cuda", "ascend"):`);
- a CUDA predicate: a function without required arguments whose body returns a comparison of a platform value, or of
  another value that its module also compares with an NPU name, with a CUDA name (`def is_cuda(): return
  COMPILED_PLATFORM == "cuda"`);
- a CUDA requirer: a function whose first statement is `if not <predicate>(): raise ...` (`require_cuda(op)`).
In a file that defines or imports one by name, the CUDA arms are: the body of `if pred():` / `if PLATFORM == "cuda":`
(the `else` of `if not pred():`), the rest of a block after `if not pred(): return / raise` or after a requirer's
call, `x if pred() else y`'s `x`; and the body of a private function or method (`_name`) every call of which in
the file is inside a CUDA arm (`require_cuda("op"); return self._op_impl(...)`). Findings there are info.

One more form, read in each file with findings: a kernel choice in a package that already runs on Ascend.
`use_triton = ... and x.is_cuda and ...` (a tensor's `.is_cuda` tested in an `and`, not negated, bound to a flag the
function then tests: `if not use_triton:`) in a first-party package one of whose modules imports torch_npu: the
test picks the CUDA kernel, and its False arm (the native path) is the one the package runs on the NPU; the `.is_cuda`
test and the operands after it are info. A package without torch_npu keeps them (there the native path is only a
slower fallback the port should know about), and so does `.is_cuda` written straight into an `if` or an `assert`.
Applied once per run, after the per-file passes. What a module offers is kept in its cross-file summary
(`platform_facts`), so a warm run reads no file unless an importer has a CUDA arm.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from auditor.astnodes import END, Span, lines_span, node_span, walk_list
from auditor.backend_words import backends_in_text
from auditor.static.backends import as_info
from auditor.static.astutil import literal_strings, module_nodes
from auditor.static.module_paths import absolute_module

_NOTE = "only the CUDA arm of the project's own platform check ({how}) reaches this; its other arm is the NPU " \
        "path: left as is"
_KERNEL_NOTE = "`.is_cuda` picks the CUDA kernel here; its other arm is the path this package runs on the NPU " \
               "(it imports torch_npu): left as is"
_PYTHON = (".py",)
_ASCEND_MODULES = ("torch_npu",)
Region = Span


def _names(value: Any) -> set[str]:
    """The backends one string constant (or a tuple / list / set of them) names, by its exact value."""
    out: set[str] = set()
    for text in literal_strings(value):
        if len(text) <= 24:
            out |= backends_in_text(text.split(":", 1)[0])
    return out


def _compared(test: ast.expr) -> tuple[str, set[str]] | None:
    """`X == "cuda"` / `X in ("cuda", ...)` / `X != "ascend"`: (dump of X, backends named, negated?)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        for side, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
            names = _names(other)
            if names and not _names(side):
                return ast.dump(side), names
    return None


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def _no_required_args(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = fn.args
    return not a.posonlyargs and len(a.args) == len(a.defaults) and all(d is not None for d in a.kw_defaults)


class Offer:
    """What one module offers: platform values (names), CUDA predicates and CUDA requirers (function names)."""

    def __init__(self) -> None:
        self.values: set[str] = set()
        self.predicates: set[str] = set()
        self.requirers: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.values or self.predicates or self.requirers)


def offers(tree: ast.Module) -> Offer:
    """The platform values, CUDA predicates and requirers a module defines (read by structure)."""
    out = Offer()
    npu_keys: set[str] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Compare):
            found = _compared(node)
            if found and "npu" in found[1]:
                npu_keys.add(found[0])
    if not npu_keys:
        return out
    top = {t.id for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
           for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) if isinstance(t, ast.Name)}
    out.values = {name for name in top if ast.dump(ast.Name(id=name, ctx=ast.Load())) in npu_keys}
    functions = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:
        body = _body(fn)
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None and _no_required_args(fn):
            found = _compared(body[0].value)
            if found and found[0] in npu_keys and found[1] == {"cuda"} and \
                    isinstance(body[0].value, ast.Compare) and isinstance(body[0].value.ops[0], (ast.Eq, ast.In)):
                out.predicates.add(fn.name)
    for fn in functions:
        body = _body(fn)
        first = body[0] if body else None
        if isinstance(first, ast.If) and not first.orelse and first.body and \
                isinstance(first.body[-1], ast.Raise) and _negated_call(first.test, out.predicates):
            out.requirers.add(fn.name)
    return out


def platform_facts(tree: ast.Module, text: str) -> dict[str, list[str]] | None:
    """What a module offers, kept in its cross-file summary (crossfile.summarize) so that a warm run reads no file
    to find the tree's platform checks: None for a module that offers nothing."""
    low = text.lower()
    if "cuda" not in low or not any(word in low for word in ("npu", "ascend", "cann", "huawei")):
        return None
    offer = offers(tree)
    if not offer:
        return None
    return {"values": sorted(offer.values), "predicates": sorted(offer.predicates),
            "requirers": sorted(offer.requirers)}


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def _negated_call(test: ast.expr, predicates: set[str]) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _call_name(test.operand) in predicates


class _Known:
    """The predicates, requirers and platform values a file can name (its own and those it imports)."""

    def __init__(self, values: set[str], predicates: set[str], requirers: set[str]) -> None:
        self.values, self.predicates, self.requirers = values, predicates, requirers

    def _value_is_cuda(self, test: ast.expr, ops: tuple[type, ...]) -> bool:
        """`platform == "cuda"` (ops Eq / In) or `platform != "cuda"` (NotEq / NotIn) on one of the values."""
        found = _compared(test)
        return bool(found and found[1] == {"cuda"} and isinstance(test, ast.Compare) and
                    isinstance(test.ops[0], ops) and
                    any(isinstance(n, ast.Name) and n.id in self.values for n in (test.left, *test.comparators)))

    def cuda_test(self, test: ast.expr) -> bool:
        return _call_name(test) in self.predicates or self._value_is_cuda(test, (ast.Eq, ast.In))

    def negated(self, test: ast.expr) -> bool:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.cuda_test(test.operand)
        return self._value_is_cuda(test, (ast.NotEq, ast.NotIn))

    def requires(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            return name in self.requirers
        return False


def _exits(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def cuda_regions(tree: ast.Module, known: _Known) -> list[tuple[Region, str]]:
    """The CUDA arms of the project's own platform checks in one file, with how each is reached."""
    out: list[tuple[Region, str]] = []

    def block(body: list[ast.stmt]) -> None:
        for i, stmt in enumerate(body):
            rest = body[i + 1:]
            if isinstance(stmt, ast.If):
                if known.cuda_test(stmt.test) and stmt.body:
                    out.append((lines_span(stmt.body[0].lineno, stmt.body[-1]), ast.unparse(stmt.test)))
                elif known.negated(stmt.test):
                    if stmt.orelse:
                        out.append((lines_span(stmt.orelse[0].lineno, stmt.orelse[-1]), ast.unparse(stmt.test)))
                    elif _exits(stmt.body) and rest:
                        out.append((lines_span(rest[0].lineno, rest[-1]), ast.unparse(stmt.test)))
            elif known.requires(stmt) and rest:
                out.append((lines_span(rest[0].lineno, rest[-1]), ast.unparse(stmt).split("(", 1)[0] + "(...)"))
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    block(inner)
            for handler in getattr(stmt, "handlers", ()) or ():
                block(handler.body)
        for stmt in body:
            for node in walk_list(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                  ast.ClassDef)) else ():
                if isinstance(node, ast.IfExp) and known.cuda_test(node.test):
                    b = node.body
                    out.append((node_span(b, open_end=True),
                                ast.unparse(node.test)))

    block(tree.body)
    if out:
        out.extend(_reached_private(tree, out))
    return out


def _inside(regions: list[tuple[Region, str]], line: int, col: int) -> str | None:
    for (l1, c1, l2, c2), how in regions:
        if (l1, c1) <= (line, col) < (l2, c2):
            return how
    return None


def _reached_private(tree: ast.Module, regions: list[tuple[Region, str]]) -> list[tuple[Region, str]]:
    """Bodies of private functions / methods (`_name`) every call of which in the file is in a CUDA arm (or in
    another such body): reached only through the platform check. A private name referenced any other way (passed
    on, stored) keeps its body."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for node in module_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_") and \
                not node.name.startswith("__"):
            defs.setdefault(node.name, []).append(node)
    if not defs:
        return []
    uses: dict[str, list[tuple[int, int, bool]]] = {name: [] for name in defs}
    called: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Call):
            called.add(id(node.func))
    for node in module_nodes(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
            continue
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in uses:
            uses[name].append((node.lineno, node.col_offset, id(node) in called))
    added: list[tuple[Region, str]] = []
    done: set[str] = set()
    changed = True
    while changed:
        changed = False
        every = regions + added
        for name, sites in uses.items():
            if name in done or not sites or not all(c for _, _, c in sites):
                continue
            hows = [_inside(every, line, col) for line, col, _ in sites]
            if all(hows):
                for fn in defs[name]:
                    first = fn.body[0]
                    added.append((lines_span(first.lineno, fn),
                                  f"{hows[0]}, then {name}()"))
                done.add(name)
                changed = True
    return added


def _is_cuda_operand(v: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "is_cuda" for n in walk_list(v)) and \
        not any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) for n in walk_list(v))


def kernel_choices(tree: ast.Module) -> list[Region]:
    """`use_triton = (... and x.is_cuda and ...)` / `blackwell = bool(x.is_cuda and ...)`: an `and` holding a
    tensor's `.is_cuda` test (not negated), bound to a local flag that the same function then tests to choose a path
    (`if not use_triton:`, `128 if blackwell else 64`): the region from the `.is_cuda` operand to the end of the
    `and`. An `.is_cuda` test written straight into an `if` or an `assert` is not read as a choice (`if
    val.is_cuda: offload(val)` skips work on the NPU; an assert fails there)."""
    out: list[Region] = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        tested: set[str] = set()
        for node in walk_list(fn):
            test = node.test if isinstance(node, (ast.If, ast.IfExp)) else None
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = test.operand
            if isinstance(test, ast.Name):
                tested.add(test.id)
        for node in walk_list(fn):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1 or \
                    not isinstance(node.targets[0], ast.Name) or node.targets[0].id not in tested:
                continue
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "bool" and \
                    len(value.args) == 1:
                value = value.args[0]
            if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And)):
                continue
            for v in value.values:
                if _is_cuda_operand(v):
                    last = value.values[-1]
                    out.append(node_span(v, last, open_end=True))
                    break
    return out


class _Tree:
    """The tree's modules, their offers and each file's CUDA arms, read lazily once per run."""

    def __init__(self, results: list, project: Any) -> None:
        self.project = project
        self.modules: dict[str, str] = project.module_names()
        self.by_module = {name: rel for rel, name in self.modules.items()}
        self.summaries = {r.path: getattr(r, "summary", None) or {} for r in results}
        self._offers: dict[str, Offer] = {}
        self._regions: dict[str, list[tuple[Region, str]]] = {}
        self._importers: dict[str, list[tuple[str, str, str, int]]] | None = None

    def offer(self, rel: str) -> Offer:
        """From the module's summary (no read)."""
        if rel not in self._offers:
            facts = self.summaries.get(rel, {}).get("platform")
            offer = Offer()
            if isinstance(facts, dict):
                offer.values = set(facts.get("values") or ())
                offer.predicates = set(facts.get("predicates") or ())
                offer.requirers = set(facts.get("requirers") or ())
            self._offers[rel] = offer
        return self._offers[rel]

    def _targets(self, rel: str):
        """(target rel, imported name, local name) of each `from M import name` of a tree module (name "" for a
        module imported whole)."""
        me = self.modules.get(rel, "")
        is_package = rel.endswith("__init__.py")
        for line, level, module, pairs in self.summaries.get(rel, {}).get("imports") or []:
            if level < 0:
                for name, alias in pairs:
                    target = self.by_module.get(name)
                    if target is not None:
                        yield target, "", alias or name, line
                continue
            if level > 0 and not me:
                continue
            base = absolute_module(module, level, me, is_package)
            target = self.by_module.get(base)
            for name, alias in pairs:
                sub = self.by_module.get(f"{base}.{name}" if base else name)
                if sub is not None:
                    yield sub, "", alias, line
                elif target is not None:
                    yield target, name, alias, line

    def regions(self, rel: str) -> list[tuple[Region, str]]:
        if rel in self._regions:
            return self._regions[rel]
        self._regions[rel] = []
        values: set[str] = set()
        predicates: set[str] = set()
        requirers: set[str] = set()
        for target, name, alias, _line in self._targets(rel):
            if not name or target == rel:
                continue
            offer = self.offer(target)
            if offer:
                values |= {alias} if name in offer.values else set()
                predicates |= {alias} if name in offer.predicates else set()
                requirers |= {alias} if name in offer.requirers else set()
        own = self.offer(rel)
        values |= own.values
        predicates |= own.predicates
        requirers |= own.requirers
        if values or predicates or requirers:
            source = self.project.source(rel)
            if source is not None:
                self._regions[rel] = cuda_regions(source[1], _Known(values, predicates, requirers))
        return self._regions[rel]

    def importers(self, rel: str) -> list[tuple[str, str, str, int]]:
        """(importer, imported name, local name, line) of every import of the module `rel` in the tree."""
        if self._importers is None:
            self._importers = {}
            for other in self.summaries:
                if other.endswith(_PYTHON):
                    for target, name, alias, line in self._targets(other):
                        self._importers.setdefault(target, []).append((other, name, alias, line))
        return [(i, n, a, ln) for i, n, a, ln in self._importers.get(rel, [])]

    def cuda_only_module(self, rel: str) -> str | None:
        """A module imported only inside CUDA arms of its importers (`if PLATFORM == "cuda": from .legacy import
        Buffer`): how, or None."""
        found = self.importers(rel)
        if not found:
            return None
        hows = [_inside(self.regions(i), line, 1 << 20) for i, _n, _a, line in found]
        return hows[0] if all(hows) else None

    def reached_public(self, rel: str, tree: ast.Module) -> list[tuple[Region, str]]:
        """Bodies of public top-level functions of `rel` that every importer calls only inside a CUDA arm (or from
        a module imported only there), and that `rel` itself names only inside its own CUDA arms."""
        found = self.importers(rel)
        if not found or any(not name for _i, name, _a, _l in found):
            return []         # imported whole somewhere: its uses are not followed
        if not any(self.regions(i) or self.cuda_only_module(i) for i, _n, _a, _l in found):
            return []         # no importer has a CUDA arm: nothing is read
        own = self.regions(rel)
        out: list[tuple[Region, str]] = []
        for fn in tree.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name.startswith("_"):
                continue
            users = [(i, a) for i, n, a, _l in found if n == fn.name]
            if not users or not _uses(tree, fn.name, own, skip=fn):
                continue
            hows = []
            for importer, alias in users:
                whole = self.cuda_only_module(importer)
                if whole is not None:
                    hows.append(f"{importer}, imported only under {whole}")
                    continue
                source = self.project.source(importer)
                if source is None or not _uses(source[1], alias, self.regions(importer), needed=True):
                    break
                hows.append(importer)
            else:
                first = fn.body[0]
                out.append((lines_span(first.lineno, fn),
                            f"{fn.name}() is called only in CUDA arms: " + ", ".join(sorted(set(hows)))))
        return out


def _uses(tree: ast.Module, name: str, regions: list[tuple[Region, str]], skip: ast.AST | None = None,
          needed: bool = False) -> bool:
    """Whether every load of `name` in the file (outside `skip`) is a call inside one of `regions`; `needed`: and
    there is at least one (an importer that never calls the function says nothing about where it runs)."""
    called = {id(n.func) for n in module_nodes(tree) if isinstance(n, ast.Call)}
    inner = {id(n) for n in walk_list(skip)} if skip is not None else set()
    seen = False
    for node in module_nodes(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            if id(node) not in called or _inside(regions, node.lineno, node.col_offset) is None:
                return False
            seen = True
    return seen or not needed


def apply_platform_predicates(results: list, files: Sequence[tuple[Path, str]], project: Any) -> int:
    """Lower to info the findings in the CUDA arms of the project's own platform checks (see the module doc);
    returns how many were lowered."""
    todo = [r for r in results if r.path.endswith(_PYTHON) and
            any(f.severity != "info" and f.data.get("context") not in ("npu-path", "other-backend", "platform-class")
                for f in r.findings)]
    if not todo:
        return 0
    tree_ = _Tree(results, project)
    ascend_packages: dict[str, bool] = {}

    def package_runs_on_ascend(rel: str) -> bool:
        name = tree_.modules.get(rel)
        if not name or "." not in name:
            return False
        top = name.split(".", 1)[0]
        if top not in ascend_packages:
            ascend_packages[top] = any(
                (mod == top or mod.startswith(top + ".")) and _imports_ascend(tree_.summaries.get(other))
                for other, mod in tree_.modules.items())
        return ascend_packages[top]

    lowered = 0
    for result in todo:
        rel = result.path
        regions = list(tree_.regions(rel))
        if rel in tree_.modules and tree_.importers(rel):
            whole = tree_.cuda_only_module(rel)
            if whole is not None:
                regions = [((1, 0, END, END), f"imported only under {whole}")]
            elif any(tree_.regions(i) or tree_.cuda_only_module(i) for i, _n, _a, _l in tree_.importers(rel)):
                source = project.source(rel)
                if source is not None:
                    regions += tree_.reached_public(rel, source[1])
        kernels: list[Region] = []
        if any(f.name == "is-cuda-attribute" and f.severity != "info" for f in result.findings) and \
                package_runs_on_ascend(rel):
            source = project.source(rel)
            if source is not None and ".is_cuda" in source[0]:
                kernels = kernel_choices(source[1])
        if not regions and not kernels:
            continue
        kept = []
        for f in result.findings:
            if f.severity == "info" or f.data.get("context") in ("npu-path", "other-backend", "platform-class"):
                kept.append(f)
                continue
            col = f.col - 1
            how = _inside(regions, f.line, col)
            if how is not None:
                f = as_info(f, "npu-path", _NOTE.format(how=how))
            elif any((l1, c1) <= (f.line, col) < (l2, c2) for l1, c1, l2, c2 in kernels):
                f = as_info(f, "npu-path", _KERNEL_NOTE)
            else:
                kept.append(f)
                continue
            kept.append(f)
            lowered += 1
        result.findings = kept
    return lowered


def _imports_ascend(summary: dict | None) -> bool:
    for _line, _level, module, pairs in (summary or {}).get("imports", ()):
        names = [module] if module else [name for name, _ in pairs]
        if any(name.split(".", 1)[0] in _ASCEND_MODULES for name in names if name):
            return True
    return False

"""Functions and methods that every caller in the tree reaches only behind a CUDA gate (g3, session 35, issue 11).

A CUDA-graph runner's `capture()` called only from `capture_model()`, which every engine calls under `if device ==
"cuda":` in another file; a helper called only in the body of `if torch.cuda.is_available():`; a class constructed only
under such a gate: on Ascend the code's other path runs, so an error inside is what a gate makes of an error written
behind it (rules/severity_policy.yaml, auditor/static/gates.py): a warning, "the gate is what to port". The per-file
gates read one file; this pass reads the call sites of the whole tree.

Per file, in the worker (call_defaults.default_facts, fact `callers`): each name the file calls (as call_defaults
names calls: `f(...)` and `module.f(...)` as `f`, `obj.m(...)` / `self.m(...)` as `.m`, `cls(...)` and a construction
as the class name, a subclass built elsewhere as an unknown caller), with the definition holding each call (`f`,
`Class.method`, "" at module level) and the CUDA gate it sits behind (gates.build_gates), or "".

Per run (`lower_gated_callees`): a definition is CUDA-only when it has call sites in the tree and every one sits behind a
CUDA gate or inside a definition that is itself CUDA-only; a method is also CUDA-only when its class is constructed
only so. A gated site counts only where the tree runs the definition holding it (module level, or a definition called
or mentioned somewhere: a gate in a `main()` nothing calls leaves the helper the module's API), and a bare name in a
file that defines that name is that file's own (calls through an imported module, `mod.f()`, are kept apart). An
error (no context yet) in the body of a CUDA-only definition becomes a warning with context `cuda-available-branch`,
its message naming one gating site (file:line and the gate). Never dropped. A name handed on as a value counts where
it is taken (`mp.spawn(worker, ...)` behind the gate; a dispatch table's entry under a CUDA key, `{"cuda": run}`, is
gated by that key). Kept at its severity where any site is ungated or unknown: a definition called from nowhere (an
entry point), a method named as a string or taken without a call (`getattr(x, "run")`, `hooks.append(self.save)`),
decorated (a decorator may register it), a dunder or `forward` method (called through the instance) unless its class
is only constructed behind a gate, a class subclassed where the subclass's construction is not seen, a caller whose
gate is a distributed backend setting (`tp_backend == "nccl"`), and any name a file that does not parse mentions. The
tree's own sites decide (the labellers' reading: "the caller in x.py only calls it when CUDA is present"); only the
construction reading skips a class a package exports (in `__all__` or re-exported by an `__init__.py`), which users
outside the tree construct themselves.
"""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from auditor.astnodes import ast_dotted, computed_getattr, module_nodes
from auditor.static.call_defaults import FACT_CALLERS, FACT_DEFINITIONS, FACT_IMPORTS, FACT_REFS, FACT_UNPARSED, \
    MODULE_CALL, UNKNOWN_CALLER

_CONTEXT = "cuda-available-branch"      # what gates.apply_gate_regions gives an error behind a gate
_NOTE = ("every caller in this tree reaches it only behind a CUDA gate ({where}: `{how}`), so it does not run on "
         "Ascend as written; the gate is what to port: port the code behind it with it")
# decorators that neither register nor wrap a function for callers the tree cannot see
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "no_grad", "inference_mode", "lru_cache", "cache",
                               "torch.no_grad", "torch.inference_mode", "functools.lru_cache", "functools.cache",
                               "functools.wraps", "wraps", "abstractmethod", "abc.abstractmethod", "override"})
_DEPTH = 8          # callers of callers followed at most
# a test of the distributed backend a setting names (`if tp_backend == "nccl" and not supports_nccl():`): a
# configuration, not the hardware, chooses it, and an Ascend user who keeps the setting reaches the callee (heldout38's
# tabbyAPI `exllama_supports_nccl`, labelled true at error); the per-file gates keep reading it as a CUDA test
_BACKEND_SETTING = re.compile(r"(?i)nccl")


def _collected_test(rel: str, caller: str) -> bool:
    """A test pytest collects and runs itself: `test*` functions (and `Test*` classes' `test*` methods) of
    `test_*.py` / `*_test.py` files (https://docs.pytest.org/en/stable/explanation/goodpractices.html, "Conventions
    for Python test discovery"); `spawn_multiprocess_job(size=torch.cuda.device_count(), job=partial(_test_x, ...))`
    in one is a gated site the tree runs (tq40)."""
    stem = rel.rsplit("/", 1)[-1]
    owner, _, name = caller.rpartition(".")
    return (stem.startswith("test_") or stem.endswith("_test.py")) and name.startswith("test") \
        and (not owner or owner.startswith("Test"))


def _decorator(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return ast.unparse(target)


class _Def:
    """A top-level function or a method of a top-level class, from the file's `definitions` fact: its key (`f`,
    `Class.method`), body span, whether a decorator may hand it to callers unseen, and for a method its class and
    kind."""

    def __init__(self, fact: list[Any]) -> None:
        self.key, first, last, self.registered, self.instance, self.class_registered = fact
        self.owner, _, self.name = self.key.rpartition(".")
        self.owner = self.owner or None
        self.body = (first, last)


def definition_facts(tree: ast.Module) -> dict[str, Any]:
    """In the worker (call_defaults.default_facts): the file's top-level functions and the methods of its top-level
    classes, [key, first body line, last line, registered by a decorator, instance method, class decorated], and the
    names of its literal `__all__`, and the top-level class and function names (`tops`); kept in the cache so that a
    warm run parses nothing."""
    defs: list[list[Any]] = []

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None) -> None:
        names = [_decorator(d) for d in node.decorator_list]
        defs.append([f"{owner.name}.{node.name}" if owner is not None else node.name, node.body[0].lineno,
                     node.end_lineno or node.body[-1].lineno, any(n not in _PLAIN_DECORATORS for n in names),
                     not any(n in ("staticmethod", "classmethod") for n in names),
                     owner is not None and bool(owner.decorator_list)])

    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(stmt, None)
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(item, stmt)
    out: dict[str, Any] = {}
    if defs:
        out["defs"] = defs
    listed = sorted(_all_names(tree))
    if listed:
        out["all"] = listed
    # the names of the top-level classes and functions, those without methods too (stale_keywords' definitions)
    tops = sorted({stmt.name for stmt in tree.body
                   if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))})
    if tops:
        out["tops"] = tops
    # top-level classes that subclass nothing but `object` and carry no decorator or metaclass: no library calls
    # their methods back by name (unreached_defs' dead methods, tq57a)
    plain = sorted(stmt.name for stmt in tree.body if isinstance(stmt, ast.ClassDef) and not stmt.decorator_list
                   and not stmt.keywords and all(ast_dotted(b) == "object" for b in stmt.bases))
    if plain:
        out["plain"] = plain
    # an attribute read by a computed name (`getattr(self, name)`) may call any method
    if any(computed_getattr(n) for n in module_nodes(tree)):
        out["computed_getattr"] = True
    return out


def _all_names(tree: ast.Module) -> set[str]:
    """The names a module lists in a literal `__all__`."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])) and \
                isinstance(stmt.value, (ast.List, ast.Tuple)):
            out.update(e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


class _Tree:
    """The tree's call sites by name, the names handed on as values, the names package `__init__.py` files import,
    and each file's definitions (parsed on demand through the project)."""

    def __init__(self, facts: dict[str, dict[str, Any]], project: Any) -> None:
        self.project = project
        self.sites: dict[str, list[tuple[str, str, int, str]]] = {}
        self.refs: set[str] = set()
        self.reexported: set[str] = set()
        self.unparsed = [rel for rel, f in facts.items() if f.get(FACT_UNPARSED)]
        for rel, f in facts.items():
            for name, found in (f.get(FACT_CALLERS) or {}).items():
                self.sites.setdefault(name, []).extend((rel, c, line, how) for c, line, how in found)
            self.refs.update(f.get(FACT_REFS) or ())
            if rel == "__init__.py" or rel.endswith("/__init__.py"):
                self.reexported.update(i for i in f.get(FACT_IMPORTS) or () if ":" in i)
        self.facts = facts
        self._defs: dict[str, tuple[dict[str, _Def], set[str]] | None] = {}
        self._memo: dict[tuple[str, str], tuple[str, int, str] | None] = {}
        self._mentioned: dict[str, bool] = {}

    def defs(self, rel: str) -> tuple[dict[str, _Def], set[str]] | None:
        if rel not in self._defs:
            f = self.facts.get(rel)
            held = (f or {}).get(FACT_DEFINITIONS)
            self._defs[rel] = None if f is None or f.get(FACT_UNPARSED) else \
                ({d.key: d for d in map(_Def, (held or {}).get("defs") or ())}, set((held or {}).get("all") or ()))
        return self._defs[rel]

    def _mentioned_unparsed(self, name: str) -> bool:
        """Whether a file that did not parse names `name` (its calls are unknown)."""
        if name not in self._mentioned:
            from auditor.source import SourceError
            from auditor.static.project_imports import read_counted

            found = False
            for rel in self.unparsed:
                try:
                    found = name.encode() in read_counted(self.project, self.project.paths.get(rel))
                except (OSError, SourceError):
                    found = True
                if found:
                    break
            self._mentioned[name] = found
        return self._mentioned[name]

    def _exported(self, rel: str, name: str, listed: set[str]) -> bool:
        stem = rel.rsplit("/", 1)[-1].removesuffix(".py")
        return name in listed or f"{stem}:{name}" in self.reexported or f"{stem}:*" in self.reexported

    def gated(self, rel: str, key: str, depth: int = 0) -> tuple[str, int, str] | None:
        """(file, line, gate) of a gating call when every call site of definition `key` of `rel` is behind a CUDA
        gate or in a CUDA-only definition; None when some caller is ungated or unknown."""
        at = (rel, key)
        if at in self._memo:
            return self._memo[at]
        self._memo[at] = None           # (a cycle through this definition is not a gate)
        found = self.defs(rel)
        d = found[0].get(key) if found is not None else None
        out = None
        if d is not None and depth < _DEPTH and not d.registered:
            listed = found[1] if found is not None else set()
            if d.owner is None:
                out = self._all_gated([d.name], depth, rel)     # (its calls, and where it is handed on as a value)
            else:
                built = not d.class_registered      # every construction is a call or a value seen
                if not (d.name.startswith("__") and d.name != "__init__") and d.name != "forward" and \
                        "." + d.name not in self.refs and (built or d.name != "__init__"):
                    out = self._all_gated([d.owner] if d.name == "__init__" else ["." + d.name], depth, rel)
                if out is None and built and d.instance and d.name != "__init__" and \
                        not self._exported(rel, d.owner, listed):
                    # a class constructed only behind a gate (not one a package exports: users build it too); for
                    # a method nothing in the tree calls, a test's own object never reaches it (tq54c)
                    uncalled = "." + d.name not in self.sites and "." + d.name not in self.refs
                    out = self._all_gated([d.owner], depth, rel, uncalled)
            if out is not None and self.unparsed and self._mentioned_unparsed(d.name):
                out = None
        self._memo[at] = out
        return out

    def _runs(self, rel: str, caller: str) -> bool:
        """Whether the tree itself runs the definition holding a gated site: module level (a script's `__main__`
        block too), or a definition the tree calls or mentions somewhere. A gate inside a `main()` nothing calls (a
        library module without a `__main__` block) says nothing about how the tree reaches the callee, which is then
        the module's API for callers outside the tree (pd44's library-module control)."""
        if caller == "" or _collected_test(rel, caller):
            return True
        owner, _, name = caller.rpartition(".")
        names = ["." + name, owner] if owner else [name]
        return any(s for n in names for s in (*self.sites.get(n, ()), *self.sites.get(MODULE_CALL + n, ()))
                   if (s[0], s[1]) != (rel, caller))

    def _defines(self, rel: str, name: str) -> bool:
        """Whether file `rel` defines `name` itself (a top-level function, or a top-level class with methods)."""
        found = self.defs(rel)
        return found is not None and any(name in (d.key, d.owner) for d in found[0].values())

    def _all_gated(self, names: list[str], depth: int, home: str,
                   skip_tests: bool = False) -> tuple[str, int, str] | None:
        # a bare name in a file that defines a function or class of that name is that file's own (the example
        # scripts that each define and call their own `demo_sp`): sites elsewhere are the home file's only where the
        # file does not define the name itself. `skip_tests`: the sites in tests pytest collects do not count
        # (TransferQueue's lock-only test builds the GDR staging class whose stream helper nothing calls)
        sites = [s for n in names for s in self.sites.get(n, ())
                 if n.startswith(".") or s[0] == home or not self._defines(s[0], n)]
        sites += [s for n in names if not n.startswith(".") for s in self.sites.get(MODULE_CALL + n, ())]
        if skip_tests:
            sites = [s for s in sites if not _collected_test(s[0], s[1])]
        if not sites:
            return None                 # called from nowhere in the tree: an entry point or an API
        first = None
        for rel, caller, line, how in sites:
            if how and not _BACKEND_SETTING.search(how) and self._runs(rel, caller):
                first = first or (rel, line, how)
                continue
            if caller in ("", UNKNOWN_CALLER):
                return None
            through = self.gated(rel, caller, depth + 1)
            if through is None:
                return None
            first = first or through
        return first


def lower_gated_callees(results: list, project: Any) -> int:
    """Errors in definitions every caller in the tree reaches only behind a CUDA gate, as warnings (module doc).
    Reads the per-file `callers` facts; the count lowered."""
    wanted = [r for r in results if r.path.endswith(".py") and
              any(f.severity == "error" and not (f.data or {}).get("context") for f in r.findings)]
    if not wanted:
        return 0
    facts = {r.path: project.calls(r.path) for r in results if r.path.endswith(".py")}
    if any(f is None for f in facts.values()):
        return 0        # a file without facts (an older cache entry): its calls are unknown
    tree = _Tree(facts, project)
    lowered = 0
    for r in wanted:
        found = tree.defs(r.path)
        if found is None:
            continue
        spans = sorted((d.body, d.key) for d in found[0].values())
        for i, f in enumerate(r.findings):
            if f.severity != "error" or (f.data or {}).get("context"):
                continue
            key = next((k for (a, b), k in spans if a <= f.line <= b), None)
            gate = tree.gated(r.path, key) if key is not None else None
            if gate is None:
                continue
            where, line, how = gate
            data = {**f.data, "context": _CONTEXT, "gated_caller": f"{where}:{line}"}
            note = _NOTE.format(where=f"{where}:{line}", how=how)
            r.findings[i] = replace(f, severity="warning", data=data, message=f"{f.message} ({note})")
            lowered += 1
    return lowered


__all__ = ["lower_gated_callees"]

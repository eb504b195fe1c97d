"""CUDA switches passed to the tree's own class or function that takes no such keyword (tq44a, session 44; TUNED on
heldout49's pytorch-grad-cam).

pytorch-grad-cam's tutorials still build `GradCAM(model=model, target_layers=target_layers, use_cuda=True)` and
`AblationCAM(..., use_cuda=torch.cuda.is_available())`, while the tree's own `BaseCAM.__init__` dropped `use_cuda`
(the CAM classes follow the model's device). NPU038 reads `use_cuda=True` as a switch that turns a CUDA path on; but
a keyword the callee does not take switches nothing: Python raises TypeError at the call on any machine (the
language reference, "Calls": an unmatched keyword argument is an error unless the callee has `**kwargs`). Such a
finding, and a CUDA probe that is only the keyword's value, are info ("a stale argument: drop it"), never dropped.

Read per run, only for files holding an NPU038 finding above info (or, tq50a, an NPU003 CUDA device string that is
`map_location`'s whole value: `load_local_or_remote_file(path, map_location="cuda")` where rlkit's own loader takes no
`map_location`; the finding carries its keyword, so other device strings cost no read): the call around the keyword (a notebook's cell
read alone, magics blanked), its callee a bare name the file imports from a module of the tree (`from
pytorch_grad_cam import GradCAM`) or defines itself; the callee's definitions in the tree by that name, in modules
under the imported one: a function, or a class whose first `__init__` along its bases (resolved by name in the tree)
lists the parameters. The keyword is stale when every such definition is known and none takes it (no parameter of
that name, no `**kwargs`). Left as they are: a callee outside the tree, a class whose `__init__` comes from a base
outside the tree, a dataclass, a decorated function, a `__new__`, and a call through an attribute (`cams.GradCAM`).
"""
from __future__ import annotations

import ast
import re
from typing import Any

from auditor.astnodes import walk_list
from auditor.findings import as_info

_RULE = "cuda-switch-value"
# tq50a: a CUDA device string that is a keyword's whole value (`load_local_or_remote_file(path, map_location="cuda")`,
# where rlkit's own loader takes no map_location): the same stale keyword, so nothing is placed on a device
_VALUE_RULE = "cuda-device-string"
_CONTEXT = "stale-keyword"
_NOTE = "`{keyword}` is no parameter of {callee} ({where}) in this tree: the call passes a keyword it does not take, " \
        "so nothing is switched; a stale argument to drop"
_MAGIC = re.compile(r"^(\s*)[!%?]")


def _cell_tree(source: str) -> ast.Module | None:
    """A notebook cell as Python, its IPython lines (`!pip ...`, `%matplotlib inline`) blanked to `pass`."""
    lines = [m.group(1) + "pass" if (m := _MAGIC.match(ln)) else ln for ln in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _modules(project: Any, rel: str) -> list[tuple[int, ast.Module]]:
    """(line offset, tree) of the file's Python: the file, or each code cell of a notebook."""
    if not rel.endswith(".ipynb"):
        held = project.source(rel)
        return [(0, held[1])] if held is not None else []
    from auditor.project.notebook import code_cells
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        cells = code_cells(read_counted(project, project.paths.get(rel)).decode("utf-8", errors="replace"))
    except (OSError, SourceError, ValueError):
        return []
    out, offset = [], 0
    for _number, source in cells:
        tree = _cell_tree(source)
        if tree is not None:
            out.append((offset, tree))
        offset += len(source.splitlines() or [""])
    return out


def _imported(trees: list[tuple[int, ast.Module]]) -> dict[str, str]:
    """Local name -> the absolute module it is imported from (`from pytorch_grad_cam import GradCAM`)."""
    out: dict[str, str] = {}
    for _, tree in trees:
        for n in walk_list(tree):
            if isinstance(n, ast.ImportFrom) and n.module and not n.level:
                out.update((a.asname or a.name, n.module) for a in n.names if a.name != "*")
    return out


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
               for n in tree.body)


def _takes(fn: ast.FunctionDef | ast.AsyncFunctionDef, keyword: str) -> bool:
    a = fn.args
    return a.kwarg is not None or keyword in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


class _Definitions:
    """Top-level classes and functions of the tree's Python files by name: the names each file defines from its
    cached facts, then the file parsed only where a name asked for is defined."""

    _TOP = re.compile(rb"^(?:async[ \t]+)?(?:class|def)[ \t]+(\w+)", re.M)

    def __init__(self, project: Any) -> None:
        self.project = project
        self.names = project.module_names()
        self.found: dict[str, list[tuple[str, ast.stmt]]] = {}
        self._files: dict[str, list[str]] | None = None

    def _defining(self) -> dict[str, list[str]]:
        """name -> the Python files that may define it at top level: from each file's cached definition facts
        (`caller_gates.definition_facts`' `tops`; a file that did not parse defines nothing `of` could read), else
        from the file's bytes (a summary without them)."""
        if self._files is None:
            from auditor.source import SourceError
            from auditor.static.call_defaults import FACT_DEFINITIONS, FACT_UNPARSED
            from auditor.static.project_imports import read_counted

            self._files = {}
            for rel, path in self.project.paths.items():
                if not rel.endswith(".py"):
                    continue
                facts = self.project.calls(rel)
                if facts is not None:
                    names = set() if facts.get(FACT_UNPARSED) else \
                        set((facts.get(FACT_DEFINITIONS) or {}).get("tops") or ())
                else:
                    try:
                        data = read_counted(self.project, path)
                    except (OSError, SourceError):
                        continue
                    names = {m.group(1).decode("ascii", "replace") for m in self._TOP.finditer(data)}
                for name in names:
                    self._files.setdefault(name, []).append(rel)
        return self._files

    def of(self, name: str) -> list[tuple[str, ast.stmt]]:
        if name not in self.found:
            out: list[tuple[str, ast.stmt]] = []
            for rel in self._defining().get(name, ()):
                held = self.project.source(rel)
                if held is not None:
                    out += [(rel, n) for n in held[1].body if isinstance(
                        n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
            self.found[name] = out
        return self.found[name]

    def takes(self, node: ast.stmt, keyword: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the definition may take `keyword` (True where unknown)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return bool(node.decorator_list) or _takes(node, keyword)
        assert isinstance(node, ast.ClassDef)
        if node.decorator_list or node.keywords or node.name in seen:
            return True         # a dataclass builds its `__init__`; a metaclass may build anything
        methods = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if "__new__" in methods:
            return True
        if "__init__" in methods:
            return _takes(methods["__init__"], keyword)
        if not node.bases:
            return False        # object's `__init__` takes no keyword
        base = node.bases[0]
        name = base.id if isinstance(base, ast.Name) else None
        found = self.of(name) if name else []
        return not found or any(self.takes(d, keyword, seen | {node.name}) for _, d in found)


def _spelled_by_path(rel: str, module: str) -> bool:
    """Whether the file's path spells the module (`rlkit/util/io.py` for `rlkit.util.io`, its folders namespace
    packages without `__init__.py`)."""
    dotted = rel[:-3].replace("/", ".") if rel.endswith(".py") else ""
    return dotted == module or "." in module and dotted.endswith("." + module)


def _keyword_calls(tree: ast.Module) -> dict[tuple[int, int], tuple[ast.Call, ast.keyword]]:
    """{(line, col): (call, keyword)} at each keyword of a call, and at a keyword's value where it is a constant."""
    out: dict[tuple[int, int], tuple[ast.Call, ast.keyword]] = {}
    for n in walk_list(tree):
        if isinstance(n, ast.Call):
            for k in n.keywords:
                if k.arg is not None:
                    out[(k.lineno, k.col_offset)] = (n, k)
                    if isinstance(k.value, ast.Constant):
                        out.setdefault((k.value.lineno, k.value.col_offset), (n, k))
    return out


def lower_stale_keywords(results: list, project: Any) -> int:
    """NPU038 (or NPU003 as `map_location`'s value) on a keyword the tree's own callee does not take, and the findings
    inside its value, to info (module doc); the count lowered."""
    lowered = 0
    definitions: _Definitions | None = None
    for r in results:
        switches = [f for f in r.findings if f.severity != "info" and (
            # (a device string only as `map_location`'s whole value: a run reads only such files again, review50)
            f.name == _RULE or f.name == _VALUE_RULE and f.data.get("keyword") == "map_location")]
        if not switches or not r.path.endswith((".py", ".ipynb")):
            continue
        trees = _modules(project, r.path)
        imported = _imported(trees)
        calls = [_keyword_calls(tree) for _, tree in trees]
        spans: list[tuple[tuple[int, int], tuple[int, int], str]] = []     # the stale keywords, with the note
        for f in switches:
            for (offset, tree), keywords in zip(trees, calls):
                found = keywords.get((f.line - offset, f.col - 1))
                if found is None:
                    continue
                call, keyword = found
                if not isinstance(call.func, ast.Name):
                    break
                callee = call.func.id
                module = imported.get(callee)
                local = module is None and _defines(tree, callee)
                if module is None and not local:
                    break
                definitions = definitions or _Definitions(project)
                own = [(rel, d) for rel, d in definitions.of(callee) if local and rel == r.path or module and (
                    definitions.names.get(rel, "") == module or definitions.names.get(rel, "").startswith(module + ".")
                    or _spelled_by_path(rel, module))]
                if own and not any(definitions.takes(d, str(keyword.arg)) for _, d in own):
                    end = (keyword.value.end_lineno or keyword.lineno, keyword.value.end_col_offset or 0)
                    spans.append(((keyword.lineno + offset, keyword.col_offset), (end[0] + offset, end[1]),
                                  _NOTE.format(keyword=keyword.arg, callee=callee, where=own[0][0])))
                break
        for i, f in enumerate(r.findings):
            if f.severity == "info" or f.category != "device":
                continue
            note = next((n for start, end, n in spans if start <= (f.line, f.col - 1) < end), None)
            if note is not None:
                r.findings[i] = as_info(f, _CONTEXT, note)
                lowered += 1
    return lowered

"""Helper functions of a tree's examples that no file of those examples names (tq48b, heldout58).

An `examples/` folder holds programs a user runs one at a time and the helper modules they share (PyTorch Geometric
Temporal's `examples/indexBatching/A3TGCN/utils.py`, star-imported by each `*_main.py`). A top-level function of such
a helper module (one another file of the folder imports; a program's own functions are its own) whose name no Python
file or notebook of the examples folder spells (outside the function itself and other modules' definitions of the
same name) is called by no example: `collect_metrics`, an NVML memory probe the mains never call, runs for no one. Its findings
are lowered to info (context `unreached`), never dropped: a user who copies the helper meets the line. What may call
it is the examples folder and every other file of the tree that imports the helper module (a test or a benchmark:
`from examples.common.utils import collect_metrics`, review48 item 7); a name spelled anywhere there (a call, a
string, `__all__`) keeps the function's findings. Each file's names and imported modules are kept in its cached
summary (`example_names`, project_imports.kept_fact), so a warm run reads only the helper module itself.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from auditor.findings import as_info
from auditor.static.project_imports import kept_fact

_CONTEXT = "unreached"
_NOTE = "no example of this tree calls it: a helper of the examples nothing names; port it if you use it"
_EXAMPLES = "examples"
_TEXT_SUFFIXES = (".py", ".ipynb")
_CALLS_BY_NAME = ("Fire(", "globals()", "getattr(sys.modules")
_FACT = "example_names"
_WORD = re.compile(r"(?<!def )\b[A-Za-z_]\w*")
_IMPORT = re.compile(r"(?m)^\s*(?:from\s+([\w.]+)\s+import\s+([\w, ()*]+)|import\s+([\w., ]+))")


def _examples_root(rel: str) -> str | None:
    parts = rel.split("/")
    return "/".join(parts[:parts.index(_EXAMPLES) + 1]) + "/" if _EXAMPLES in parts[:-1] else None


def _text(project: Any, rel: str) -> str:
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        return read_counted(project, project.paths[rel]).decode("utf-8", errors="replace")
    except (OSError, SourceError, KeyError):
        return ""


def _names(text: str) -> dict[str, list[str]]:
    """A file's fact: the names it spells (not a `def`'s own name) and the last parts of the modules it imports."""
    imported: set[str] = set()
    for m in _IMPORT.finditer(text):
        for part in ([m.group(1)] + re.split(r"[\s,()]+", m.group(2))) if m.group(1) else m.group(3).split(","):
            words = part.split()
            if words:
                imported.add(words[0].rsplit(".", 1)[-1])
    return {"words": sorted(set(_WORD.findall(text))), "imports": sorted(imported)}


def _names_of(project: Any, rel: str) -> dict[str, list[str]]:
    summaries = getattr(project, "summaries", {})       # a file without one: computed for this run only
    return kept_fact(summaries.get(rel), _FACT, lambda held: isinstance(held, dict) and "words" in held,
                     lambda: _names(_text(project, rel)), project.changed, rel)


def _importers(project: Any, stem: str, root: str, own: str) -> list[str]:
    """The other files of the examples folder, and the tree's Python files outside it whose import facts import a
    module named `stem` (a test, a benchmark)."""
    out = [rel for rel in project.paths if rel != own and rel.startswith(root) and rel.endswith(_TEXT_SUFFIXES)]
    for rel in project.paths:
        if rel.startswith(root) or not rel.endswith(".py"):
            continue
        facts = project.facts(rel) or {}
        if any(stem == module.rsplit(".", 1)[-1] or stem in names for module, names, *_ in facts.get("load") or []):
            out.append(rel)
    return out


def lower_unnamed_example_helpers(results: list, project: Any) -> int:
    """Lower to info the findings inside top-level functions of an examples folder's modules that no file of that
    folder, and no file of the tree importing the module, names; returns how many."""
    candidates = [r for r in results if r.path.endswith(".py") and _examples_root(r.path) and not
                  r.path.rsplit("/", 1)[-1].startswith("test") and
                  any(f.severity != "info" for f in r.findings)]
    if not candidates or project is None:
        return 0
    lowered = 0
    for r in candidates:
        root = _examples_root(r.path) or ""
        stem = r.path.rsplit("/", 1)[-1][:-3]
        others = {rel: _names_of(project, rel) for rel in _importers(project, stem, root, r.path)}
        if not any(stem in names["imports"] for names in others.values()):
            continue        # a program of its own (a demo's functions), not a helper module the examples share
        own = _text(project, r.path)
        if any(call in own for call in _CALLS_BY_NAME):
            continue        # `fire.Fire()` exposes every function; `globals()[name]` calls one by a computed name
        try:
            tree = ast.parse(own)
        except (SyntaxError, ValueError):
            continue
        lines = own.splitlines()
        for fn in tree.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list:
                continue
            first, last = fn.lineno, fn.end_lineno or fn.lineno
            if not any(f.severity != "info" and first <= f.line <= last for f in r.findings):
                continue
            # (another module's own `def collect_metrics` names its own function, not this one)
            word = re.compile(rf"(?<!def )\b{re.escape(fn.name)}\b")
            outside = "\n".join(lines[:first - 1] + lines[last:])
            if word.search(outside) or any(fn.name in names["words"] for names in others.values()):
                continue
            for i, f in enumerate(r.findings):
                if first <= f.line <= last and not (f.severity == "info" and (f.data or {}).get("context")):
                    r.findings[i] = as_info(f, _CONTEXT, _NOTE)
                    lowered += 1
    return lowered


__all__ = ["lower_unnamed_example_helpers"]

"""Helper functions of a tree's examples that no file of those examples names (tq48b, heldout58).

An `examples/` folder holds programs a user runs one at a time and the helper modules they share (PyTorch Geometric
Temporal's `examples/indexBatching/A3TGCN/utils.py`, star-imported by each `*_main.py`). A top-level function of such
a helper module (one another file of the folder imports; a program's own functions are its own) whose name no Python
file or notebook of the examples folder spells (outside the function itself and other modules' definitions of the
same name) is called by no example: `collect_metrics`, an NVML memory probe the mains never call, runs for no one. Its findings
are lowered to info (context `unreached`), never dropped: a user who copies the helper meets the line. The library's
own code never imports its examples, so the examples folder is the whole of what may call it; a name spelled
anywhere there (a call, a string, `__all__`) keeps the function's findings.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from auditor.findings import as_info

_CONTEXT = "unreached"
_NOTE = "no example of this tree calls it: a helper of the examples nothing names; port it if you use it"
_EXAMPLES = "examples"
_TEXT_SUFFIXES = (".py", ".ipynb")
_CALLS_BY_NAME = ("Fire(", "globals()", "getattr(sys.modules")


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


def lower_unnamed_example_helpers(results: list, project: Any) -> int:
    """Lower to info the findings inside top-level functions of an examples folder's modules that no file of that
    folder names; returns how many."""
    candidates = [r for r in results if r.path.endswith(".py") and _examples_root(r.path) and not
                  r.path.rsplit("/", 1)[-1].startswith("test") and
                  any(f.severity != "info" for f in r.findings)]
    if not candidates or project is None:
        return 0
    texts: dict[str, dict[str, str]] = {}       # examples root -> rel -> text
    lowered = 0
    for r in candidates:
        root = _examples_root(r.path) or ""
        if root not in texts:
            texts[root] = {rel: _text(project, rel) for rel in getattr(project, "paths", {})
                           if rel.startswith(root) and rel.endswith(_TEXT_SUFFIXES)}
        own = texts[root].get(r.path, "")
        stem = re.escape(r.path.rsplit("/", 1)[-1][:-3])
        imported = re.compile(rf"(?m)^\s*(?:from\s+[\w.]*\b{stem}\s+import|import\s+[\w.]*\b{stem}\b)")
        if not any(imported.search(text) for rel, text in texts[root].items() if rel != r.path):
            continue        # a program of its own (a demo's functions), not a helper module the examples share
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
            if word.search(outside) or any(word.search(text) for rel, text in texts[root].items() if rel != r.path):
                continue
            for i, f in enumerate(r.findings):
                if first <= f.line <= last and not (f.severity == "info" and (f.data or {}).get("context")):
                    r.findings[i] = as_info(f, _CONTEXT, _NOTE)
                    lowered += 1
    return lowered


__all__ = ["lower_unnamed_example_helpers"]

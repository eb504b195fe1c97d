"""Reads of a device variable the tree set itself (issue 11, tq50c; the lead's decision (v), docs/precision.md).

CRSLab's `Config.__init__` runs `os.environ['CUDA_VISIBLE_DEVICES'] = gpu` (its `--gpu` option) and its systems read
the variable back to count the devices they were given; a launch script exports `CUDA_VISIBLE_DEVICES=0,1,2,3` and
reads `$CUDA_VISIBLE_DEVICES` to size `--nproc_per_node`. The value read is the one the tree wrote, so the read works
as written on Ascend; what must change is the line that sets it (torch_npu reads ASCEND_RT_VISIBLE_DEVICES), which
keeps its finding. So a warning / error on a read of a variable the rule's table gives an Ascend twin is info
(context `set-here`) where
- the same file sets it before the read (a shell script: `export X=...`, or `X=...` on a line of its own, on an
  earlier line; Python: `os.environ["X"] = ...`, `os.environ.setdefault("X", ...)`, `os.putenv("X", ...)` as a
  statement of the read's own function body on an earlier line, or of module code or the `__main__` block, which run
  before the file's functions are called), or
- (Python) another module of the same top-level package sets it, at the one place that package sets it, outside
  any `if` / loop / `try` / `with` of its function or module, and one process both sets and reads (review50 item 2):
  the setting module imports the reader (directly or through the tree's imports), or sets it in module code and the
  reader imports it, or an entry script of the tree (an `if __name__ == "__main__":` block) imports both (CRSLab's
  `run_crslab.py`: `Config(...)` sets it, `run_crslab` builds the systems that read it). A module run in another
  process (`python -m pkg.evaluate` from a scheduler's script) reads the scheduler's value and keeps its finding.
A read of a value the tree never sets (the user's environment, a scheduler's, Ray's per-worker value) keeps its
finding, and so do a read in another function than the setting's (a parent that splits the user's devices among
workers which each set their own), a setting under a condition (verl's ROCm arm), and a package that sets it in
several places.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from auditor.discover import MAX_FILE_BYTES
from auditor.findings import as_info
from auditor.source import SourceError
from auditor.static.module_paths import module_names
from auditor.static.own_env_switches import with_ascend_twin
from auditor.static.project_imports import ProjectImports, kept_fact, read_counted
from auditor.static.shim_graph import loaded_modules

# [[line, variable, "set" | "set-if" | "read" | "other", scope]] of every code line naming a twinned variable (not only
# this run's hit lines, which earlier tree passes decide: review50 item 14), kept in the file's summary
SUMMARY_KEY = "env_readbacks"
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh")
_PY_SET = r"""environ\[\s*['"]{0}['"]\s*\]\s*=(?!=)|environ\.setdefault\(\s*['"]{0}['"]|putenv\(\s*['"]{0}['"]"""
_SH_SET = r"""^\s*(?:export\s+|declare\s+-\w*x\w*\s+)?{0}=(?:"[^"\n]*"|'[^'\n]*'|[^\s;#]*)\s*(?:[;#].*)?$"""
# reads, named positively (review50 item 1): anything else on a hit line (a command prefix `X=v cmd`, a per-worker
# env dict's key `child["X"] = gpu`, `{**os.environ, "X": ""}`) sets a value and keeps its finding
_SH_READ = r"""\$(?:{0}\b|\{{#?{0}[}}:#%/^,@\[-])"""
_SH_ASSIGN = r"""(?:^|[\s;&|(`])(?:export\s+|declare\s+-\w*\s+|local\s+)?{0}="""
_PY_READ = (r"""environ\.get\(\s*['"]{0}['"]|getenv\(\s*['"]{0}['"]|environ\[\s*['"]{0}['"]\s*\](?!\s*[-+*/|&]?=(?!=))"""
            r"""|['"]{0}['"]\s+(?:not\s+)?in\s+(?:os\.)?environ\b""")
_BLOCK_OPENERS = re.compile(r"\s*(?:if|elif|else|for|while|try|except|finally|with|async\s+(?:for|with)|match|case)\b")
_FUNCTION = re.compile(r"\s*(?:async\s+)?def\s")
_MAIN = re.compile(r"""\s*if\s+__name__\s*==\s*['"]__main__['"]\s*:""")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _scope(lines: list[str], at: int) -> tuple[int, bool]:
    """(first line of the function holding line `at` (0-based), 0 for module code and the `__main__` block; whether
    the line is a statement of that body itself, under no `if`, loop, `try` or `with`). Read by indentation: the
    nearest less-indented line above a line opens its block."""
    depth, plain = _indent(lines[at]), True
    for above in range(at - 1, -1, -1):
        if depth == 0:
            break
        text = lines[above]
        if not text.strip() or text.lstrip().startswith(("#", "@")) or _indent(text) >= depth:
            continue
        if _FUNCTION.match(text):
            return above + 1, plain
        if _MAIN.match(text):
            depth = _indent(text)
        elif _BLOCK_OPENERS.match(text) or text.rstrip().endswith(":"):
            depth, plain = _indent(text), False
        # else a continuation line of a bracketed expression above: keep looking for the block opener
    return 0, plain


def _kinds(project, path: Path, twinned: frozenset[str], shell: bool) -> list[list]:
    """[line, variable, kind, scope] of each code line naming a variable of `twinned` (read once per file): kind "set" (a statement of its body
    itself), "set-if" (under a condition), "read" (an expansion / lookup of the variable) or "other" (any other
    setting: it keeps its finding); scope the first line of its function, 0 for module code."""
    try:
        lines = read_counted(project, path, MAX_FILE_BYTES).decode("utf-8", "replace").splitlines()
    except (OSError, SourceError):
        return []
    named = [(number, name) for number, text in enumerate(lines, 1) if not text.lstrip().startswith("#")
             for name in sorted(twinned) if name in text and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text)]
    out = []
    for line, name in named:
        text = lines[line - 1]
        scope, plain = (0, True) if shell else _scope(lines, line - 1)
        var = re.escape(name)
        if shell:
            if re.match(_SH_SET.format(var), text):
                kind = "set"
            elif re.search(_SH_ASSIGN.format(var), text) or not re.search(_SH_READ.format(var), text):
                kind = "other"
            else:
                kind = "read"
        elif re.search(_PY_SET.format(var), text):
            kind = "set" if plain else "set-if"
        elif re.search(_PY_READ.format(var), text) and not text.lstrip().startswith("del "):
            kind = "read"
        else:
            kind = "other"
        out.append([line, name, kind, scope])
    return out


def apply_env_readbacks(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower reads of a twinned device variable the same file or package set; returns how many findings changed."""
    twinned = with_ascend_twin()
    if not any(f.symbol in twinned and f.severity != "info" for r in results for f in r.findings):
        return 0
    where = {rel: path for path, rel in files}
    project = project if project is not None else ProjectImports(files, results)
    changed_summaries = project.changed if project is not None else set()
    facts: dict[str, list[list]] = {}
    for result in results:
        shell = result.path.endswith(_SHELL_SUFFIXES)
        if not (shell or result.path.endswith(".py")) or result.path not in where:
            continue
        hits = [f for f in result.findings if f.symbol in twinned]
        if not hits:
            continue
        facts[result.path] = kept_fact(result.summary, SUMMARY_KEY, lambda held: isinstance(held, list),
                                       lambda: _kinds(project, where[result.path], twinned, shell),
                                       changed_summaries, result.path)
    if not any(kind in ("set", "set-if") for held in facts.values() for _, _, kind, _ in held):
        return 0
    # the one place each top-level package sets a variable, when it sets it there only and unconditionally
    modules = module_names([rel for _, rel in files])
    package_sets: dict[tuple[str, str], list[tuple[str, int, str, int]]] = {}
    for rel, held in facts.items():
        dotted = modules.get(rel, "")
        if "." in dotted:
            for line, name, kind, at in held:
                if kind in ("set", "set-if"):
                    package_sets.setdefault((dotted.split(".")[0], name), []).append((rel, line, kind, at))
    graph = _ImportGraph(project, modules)
    changed = 0
    for result in results:
        own = facts.get(result.path)
        if not own:
            continue
        reads = {(line, name): scope for line, name, kind, scope in own if kind == "read"}
        kept = []
        for f in result.findings:
            if f.severity != "info" and (f.line, f.symbol) in reads:
                note = _set_before(result.path, f, reads[(f.line, f.symbol)], own, package_sets,
                                   modules.get(result.path, ""), graph)
                if note:
                    f = as_info(f, "set-here", note)
                    changed += 1
            kept.append(f)
        result.findings = kept
    return changed


def _set_before(rel: str, f, scope: int, held: list[list], package_sets: dict, dotted: str,
                graph: _ImportGraph) -> str:
    """Why the read at `f` (in the function starting on line `scope`, 0 for module code) reads the tree's own value
    ("" when it does not): a setting of the same body before it, or of module code / the `__main__` block that runs
    before the file's functions are called; else the one setting of its package."""
    earlier = [line for line, name, kind, at in held if name == f.symbol and kind == "set"
               and ((at == scope and line < f.line) or (at == 0 and scope != 0))]
    if earlier:
        return (f"this file sets {f.symbol} itself on line {earlier[0]} and reads its own value back: the read works "
                f"as written on Ascend; the setting line is the one to port")
    if "." not in dotted:
        return ""
    sets = package_sets.get((dotted.split(".")[0], f.symbol), [])
    if len(sets) == 1 and sets[0][2] == "set" and sets[0][0] != rel and graph.one_process(sets[0][0], sets[0][3] == 0,
                                                                                         rel):
        return (f"package `{dotted.split('.')[0]}` sets {f.symbol} itself ({sets[0][0]}:{sets[0][1]}, its one "
                f"setting) and reads its own value back here: the read works as written on Ascend; the setting line "
                f"is the one to port")
    return ""


class _ImportGraph:
    """The tree's imports (at load time and inside functions, with the parent packages an import runs), built from
    the files' import facts (summaries on a warm run) on the first question only."""

    def __init__(self, project: ProjectImports, modules: dict[str, str]) -> None:
        self._project, self._modules = project, modules
        self._edges: dict[str, set[str]] | None = None
        self._entries: set[str] = set()
        self._reached: dict[str, set[str]] = {}

    def _graph(self) -> dict[str, set[str]]:
        if self._edges is None:
            known = {name: rel for rel, name in self._modules.items()}
            self._edges = {}
            for rel, name in self._modules.items():
                facts = self._project.facts(rel) or {}
                if facts.get("main"):
                    self._entries.add(name)
                deps: set[str] = set()
                for module, names, _load_time in facts.get("load", ()):
                    for target in loaded_modules(module, names, name, rel.endswith("__init__.py"), known):
                        parts = target.split(".")
                        deps.update(p for p in (".".join(parts[:k]) for k in range(1, len(parts) + 1)) if p in known)
                self._edges[name] = deps
        return self._edges

    def _reaches(self, start: str) -> set[str]:
        if start in self._reached:
            return self._reached[start]
        edges, seen, todo = self._graph(), {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        self._reached[start] = seen
        return seen

    def one_process(self, setter_rel: str, at_import: bool, reader_rel: str) -> bool:
        """Whether the module `setter_rel` (its setting in module code: `at_import`) and the reader run in one
        process: the setter imports the reader, the reader imports a setter that sets at import, or an entry script
        imports both."""
        setter, reader = self._modules.get(setter_rel), self._modules.get(reader_rel)
        if setter is None or reader is None:
            return False
        if reader in self._reaches(setter) or (at_import and setter in self._reaches(reader)):
            return True
        return any({setter, reader} <= self._reaches(entry) for entry in sorted(self._entries))

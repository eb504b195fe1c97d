"""Adapters a tree keeps per release of another library, chosen by the installed release (issue 11, tq50c; the lead's
decision (u), docs/precision.md).

verl's `third_party/vllm/__init__.py` reads the installed vLLM (`package_version = get_version("vllm")`, through
`importlib.metadata.version`) and imports one sibling subpackage per release: `if package_version == "0.3.1": from
.vllm_v_0_3_1.llm import LLM elif package_version == "0.4.2": from .vllm_v_0_4_2 ... elif vs.parse(package_version)
>= vs.parse("0.7.0"): from vllm import LLM`. An import runs only when its arm does, so a subpackage is loaded only
with the releases its arms name. vLLM Ascend exists only for vLLM 0.7 and later, so an Ascend run never loads the
adapters for vLLM 0.3-0.6: they are members of a per-release set the Ascend stack cannot choose, and their error /
warning findings are info (context `per-release`), as (k)'s per-backend members.

Read from the code: a package `__init__` or module that binds the installed release of a library of
FIRST_ASCEND_RELEASE (`version("vllm")`, `get_version(package_name)` with `package_name = "vllm"`,
`importlib.metadata.version(...)`, `vllm.__version__`), and an if / elif chain whose arms compare it (`==`, `in`,
`.startswith(...)`, `<`, through `packaging.version.parse` too) with literal releases. A sibling subpackage that
only arms naming releases below the library's first Ascend release import (and nothing else in the dispatcher
imports) is such a member. An arm that admits a newer release (`>=`, an `else`) keeps its subpackage's findings, and
so does a dispatch whose every release has an Ascend build (control).
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from packaging.version import InvalidVersion, Version

from auditor.discover import MAX_FILE_BYTES
from auditor.findings import above_info, lower_findings
from auditor.source import SourceError
from auditor.static.astutil import ast_dotted, if_chains
from auditor.static.chosen_members import arm_imports
from auditor.static.module_paths import absolute_module, module_names
from auditor.static.project_imports import kept_fact, read_counted

# library -> (its first release the Ascend stack runs, the source's name). vLLM: vLLM Ascend's versioning policy, from
# vLLM 0.7.x on vLLM Ascend is released matching vLLM's versions, with a compatibility matrix (as the lead's decision
# (u) reads it): https://docs.vllm.ai/projects/ascend/zh-cn/latest/community/versioning_policy/
FIRST_ASCEND_RELEASE: dict[str, tuple[Version, str]] = {
    "vllm": (Version("0.7.0"), "vLLM Ascend's versioning policy"),
}
# {"module": the dispatcher's dotted name, "members": [[subpackage folder, library, "r1, r2 only"]]}, in its summary:
# kept for that module name only, its folders checked against this run's file list (review50 item 14)
SUMMARY_KEY = "release_members"
_NOTE = ("an adapter for {library} {releases}, which `{dispatcher}` imports by the installed {library} release: "
         "{library} on Ascend starts at {first} ({source}), so an Ascend run never loads it")


def _release(node: ast.AST) -> list[str] | None:
    """The literal releases of a comparison's other side: "0.5.4", `vs.parse("0.5.4")`, a list / tuple of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _release(node.args[0])
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out: list[str] = []
        for elt in node.elts:
            got = _release(elt)
            if got is None:
                return None
            out += got
        return out
    return None


class _Dispatch:
    """The installed-release bindings of one module and what its arms admit."""

    def __init__(self, tree: ast.AST):
        self.names: dict[str, str] = {}       # a name bound to an installed release -> the library
        literals: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    literals[name] = value.value
                library = self.library_of(value, literals)
                if library:
                    self.names[name] = library

    def library_of(self, node: ast.AST, literals: dict[str, str] | None = None) -> str | None:
        """The library whose installed release `node` is: `version("vllm")`, `vs.parse(package_version)`,
        `vllm.__version__`, a name bound to one of these."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "__version__":
            dotted = ast_dotted(node.value) or ""
            return dotted if dotted in FIRST_ASCEND_RELEASE else None
        if isinstance(node, ast.Call) and len(node.args) == 1:
            func = (ast_dotted(node.func) or "").rsplit(".", 1)[-1].lower()
            arg = node.args[0]
            if "version" in func:      # version("vllm"), get_version(package_name), package_version("vllm")
                name = arg.value if isinstance(arg, ast.Constant) else (literals or {}).get(getattr(arg, "id", ""))
                if name in FIRST_ASCEND_RELEASE:
                    return name
            if func in ("parse", "version", "looseversion", "strictversion") or "version" in func:
                return self.library_of(arg, literals)     # vs.parse(package_version)
        return None

    def admits(self, test: ast.AST) -> tuple[str, list[str]] | None:
        """(library, releases) when the arm's test admits only those literal releases of one library's installed
        release (`== "0.5.4"`, `.startswith("0.6.3")`, `in [...]`, `< "0.7.0"` as that bound); None otherwise."""
        if isinstance(test, ast.BoolOp):
            parts = [self.admits(v) for v in test.values]
            known = [p for p in parts if p is not None]
            if isinstance(test.op, ast.Or) and (len(known) != len(parts) or len({p[0] for p in known}) != 1):
                return None
            if not known or len({p[0] for p in known}) != 1:
                return None
            return known[0][0], list(dict.fromkeys(r for p in known for r in p[1]))
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
                and len(test.args) == 1:
            library, releases = self.library_of(test.func.value), _release(test.args[0])
            return (library, releases) if library and releases else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            library = self.library_of(test.left)
            releases = _release(test.comparators[0])
            op = test.ops[0]
            if not library or not releases or not isinstance(op, (ast.Eq, ast.In, ast.Lt, ast.LtE)):
                return None
            if isinstance(op, (ast.Lt, ast.LtE)):
                # a bound only through a version parser: as strings "0.10.1" <= "0.6.3" (review50 item 14)
                if not isinstance(test.left, ast.Call) or len(releases) != 1:
                    return None
                return library, [("<=" if isinstance(op, ast.LtE) else "<") + releases[0]]
            return library, releases
        return None


def _below_first(library: str, releases: list[str]) -> bool:
    """Whether every release (`"0.5.4"`, or a bound `"<=0.5.4"` / `"<0.7.0"`) is below the first Ascend release."""
    first = FIRST_ASCEND_RELEASE[library][0]
    try:
        return all(Version(r[1:]) <= first if r.startswith("<") and not r.startswith("<=") else
                   Version(r.lstrip("<=").split("+")[0]) < first for r in releases)
    except InvalidVersion:
        return False


def _releases_text(releases: list[str]) -> str:
    """The releases for the note: "0.5.4, 0.6.3 only", "0.5.4 and older", "older than 0.7.0"."""
    words = [f"{r[2:]} and older" if r.startswith("<=") else f"older than {r[1:]}" if r.startswith("<") else r
             for r in releases]
    return ", ".join(words) + ("" if any(r.startswith("<") for r in releases) else " only")


def dispatched_members(tree: ast.AST, rel: str, me: str) -> list[list[str]]:
    """[[subpackage folder, library, releases]] of the sibling folders the module `rel` (dotted name `me`) imports
    only in arms that admit releases of a library below its first Ascend release (whether each folder is a
    subpackage of this run's tree the caller checks)."""
    dispatch = _Dispatch(tree)
    if not dispatch.names:
        return []
    is_package = rel.endswith("__init__.py")
    package = me if is_package else me.rpartition(".")[0]
    folder = rel.rpartition("/")[0]

    def subpackage(level: int, module: str) -> str | None:
        dotted = absolute_module(module, level, me, is_package) if me or not level else ""
        if not package or not dotted.startswith(package + "."):
            return None
        sub = dotted[len(package) + 1:].split(".")[0]
        return f"{folder}/{sub}" if folder else sub

    old: dict[str, tuple[str, list[str]]] = {}
    elsewhere: set[str] = set()
    branched = False        # a chain with another arm or an `else` beside an arm that names releases
    in_old_arms: set[int] = set()
    for chain in if_chains(tree):
        for arm in chain:
            admitted = dispatch.admits(arm.test)
            subs = {s for s in (subpackage(level, module) for level, module in arm_imports(arm.body)) if s}
            branched |= admitted is not None and (len(chain) > 1 or bool(chain[-1].orelse))
            if admitted is not None and _below_first(*admitted):
                in_old_arms.update(id(n) for stmt in arm.body for n in ast.walk(stmt))
                for s in subs:
                    library, releases = old.get(s, (admitted[0], []))
                    old[s] = (library, releases + [r for r in admitted[1] if r not in releases])
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in in_old_arms:
            spelled = [(node.level, node.module or "")] if isinstance(node, ast.ImportFrom) else \
                [(0, a.name) for a in node.names]
            elsewhere.update(s for s in (subpackage(level, module) for level, module in spelled) if s)
    if not branched:
        return []
    return [[s, library, _releases_text(releases)] for s, (library, releases) in sorted(old.items())
            if s not in elsewhere]


def _facts(project, path: Path, rel: str, me: str) -> dict:
    fact: dict = {"module": me, "members": []}
    try:
        text = read_counted(project, path, MAX_FILE_BYTES)
    except (OSError, SourceError):
        return fact
    if not any(library.encode() in text for library in FIRST_ASCEND_RELEASE):
        return fact
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return fact
    return {**fact, "members": dispatched_members(tree, rel, me)}


def apply_release_members(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the error / warning findings of per-release adapters the Ascend stack never loads; returns how many."""
    open_folders = {r.path.rpartition("/")[0] for r in results
                    if r.path.endswith(".py") and any(f.severity != "info" for f in r.findings)}
    if not open_folders:
        return 0
    rels = [rel for _, rel in files]
    present = set(rels)
    where = {rel: path for path, rel in files}
    # dispatchers: Python files beside a subpackage that holds an open finding
    parents = {above.rpartition("/")[0] for folder in open_folders for above in _and_above(folder)
               if f"{above}/__init__.py" in present}
    by_path = {r.path: r for r in results}
    names: dict[str, str] | None = None
    members: dict[str, str] = {}        # subpackage folder -> note
    changed_summaries = project.changed if project is not None else set()
    for rel in rels:
        if not rel.endswith(".py") or rel.rpartition("/")[0] not in parents:
            continue
        if names is None:
            names = module_names(rels)
        result = by_path.get(rel)
        me = names.get(rel, "")
        held = kept_fact(result.summary if result is not None else None, SUMMARY_KEY,
                         lambda got: isinstance(got, dict) and got.get("module") == me,
                         lambda: _facts(project, where[rel], rel, me), changed_summaries, rel)
        for folder, library, releases in held["members"]:
            if f"{folder}/__init__.py" not in present:
                continue
            members[folder + "/"] = _NOTE.format(library=library, releases=releases, dispatcher=rel,
                                                 first=FIRST_ASCEND_RELEASE[library][0],
                                                 source=FIRST_ASCEND_RELEASE[library][1])
    if not members:
        return 0
    changed = 0
    for result in results:
        note = next((n for folder, n in members.items() if result.path.startswith(folder)), None)
        if note is None:
            continue
        changed += lower_findings(result, partial(above_info, ("per-release", note)))
    return changed


def _and_above(folder: str) -> list[str]:
    """`folder` and each folder above it (a/b/c, a/b, a)."""
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]

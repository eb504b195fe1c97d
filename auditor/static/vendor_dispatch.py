"""Vendor literals compared in a dispatch that has an Ascend arm, and vendor data in migrations (t14n, issue 11;
tuned on the precision trees deeplink.framework and gpustack, which t14l read).

NPU076 (rules/device_cuda_name_strings.yaml) reports `if vendor == "NVIDIA":`: on Ascend the test answers False and the NVIDIA
branch is skipped. Two structures make such a comparison no port problem:
- the same value is also compared with an Ascend / NPU name (`dipu.vendor_type == "NPU"`, `match vendor: case
  "Ascend":`, `vendor in ("NVIDIA", "Ascend")`): the comparison is one arm of a vendor dispatch that already has an
  NPU arm, the multi-backend context `npu-path` of auditor/static/backends.py (whose backend words, _classify and
  note this reuses): info, never rewritten. "The same value" is the compared expression: a bare name within one
  function, an attribute chain (its last two parts, `dipu.vendor_type`) anywhere in the file, and across the tree's
  files (DIPU compares `dipu.vendor_type` with "NPU" in amp.py, with "CUDA" in its tests' config loader).
- a database migration (an alembic revision: top-level `upgrade()` and `downgrade()` beside an alembic import; a
  Django `class Migration(migrations.Migration)`) rewrites stored rows about vendors: it selects no device, so
  NPU076 is dropped there.
- the program's own CPU / CUDA setting (pd16, session 18, on tuned_t18g's ReActor rows): a value the file sets to
  "CPU" itself, or a test whose branch picks an ONNX Runtime execution provider, is a choice of the user, not a name
  a device reports; the CUDA side of that choice is reported where it is made (the `torch.cuda.is_available()` gate,
  NPU033 on the provider), so NPU076 is dropped there.
- a board probe (pd20, heldout24's Crystools): a comparison in a function that reads the device tree's model file
  (`"NVIDIA" in open('/proc/device-tree/model').read()`, a Jetson test) answers False on an Ascend host, rightly.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from auditor.astnodes import node_lines, walk_list
from auditor.backend_words import backends_in_text
from auditor.source import SourceError
from auditor.static.astutil import literal_strings, module_nodes_of
from auditor.static.backends import _NOTES, _classify, as_info
from auditor.static.project_imports import held_tree, read_counted

RULE = "cuda-vendor-literal-compared"      # NPU076
_TEXT_METHODS = frozenset({"lower", "upper", "strip", "casefold", "title"})
_MAX_BYTES = 2_000_000


def _names_npu(value: str) -> bool:
    """An Ascend / NPU / Huawei name (`"NPU"`, `"ascend"`, `"Huawei"`)."""
    return _classify(backends_in_text(value)) == "npu" or "huawei" in value.lower()


def _key(node: ast.AST, scope: int) -> tuple | None:
    """The compared value: `vendor` (a name, keyed by its function), `dipu.vendor_type` (an attribute chain, its
    last two parts, keyed file- and tree-wide); `.lower()` and the like are looked through."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TEXT_METHODS \
            and not node.args:
        node = node.func.value
    if isinstance(node, ast.Name):
        return ("name", scope, node.id)
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    if len(parts) < 2:
        return None     # `e.device_type().name`: one attribute of a call says too little to be "the same value"
    return ("attr", ".".join(reversed(parts[:2])))


def npu_compared(tree: ast.AST, attrs_only: bool = False) -> set[tuple]:
    """Keys of the values this tree compares with an Ascend / NPU name (comparisons and match statements).
    `attrs_only`: only the attribute-chain keys are read (vendor_facts), which need no scope: the module's shared
    node list is read instead of a walk that tracks the enclosing function."""
    out: set[tuple] = set()

    def check(child: ast.AST, scope: int) -> None:
        if isinstance(child, ast.Compare):
            operands = [child.left, *child.comparators]
            if any(_names_npu(s) for o in operands for s in literal_strings(o)):
                out.update(k for o in operands if not literal_strings(o) for k in [_key(o, scope)] if k is not None)
        elif isinstance(child, ast.Match):
            values = [s for case in child.cases for p in walk_list(case.pattern) if isinstance(p, ast.MatchValue)
                      for s in literal_strings(p.value)]
            key = _key(child.subject, scope)
            if key is not None and any(_names_npu(s) for s in values):
                out.add(key)

    if attrs_only:
        for node in module_nodes_of(tree, (ast.Compare, ast.Match)):
            check(node, 0)
        return {k for k in out if k[0] == "attr"}
    _visit_scoped(tree, check)
    return out


def _cuda_compared(tree: ast.AST, attrs_only: bool = False) -> dict[int, set[tuple]]:
    """{line: keys of the values compared there with a CUDA / NVIDIA literal}; `attrs_only` as in npu_compared."""
    out: dict[int, set[tuple]] = {}

    def check(child: ast.AST, scope: int) -> None:
        if isinstance(child, ast.Compare):
            operands = [child.left, *child.comparators]
            if any(backends_in_text(s) == {"cuda"} for o in operands for s in literal_strings(o)):
                keys = {k for o in operands if not literal_strings(o) for k in [_key(o, scope)] if k is not None
                        and (not attrs_only or k[0] == "attr")}
                for line in node_lines(child):
                    out.setdefault(line, set()).update(keys)

    if attrs_only:
        for node in module_nodes_of(tree, ast.Compare):
            check(node, 0)
    else:
        _visit_scoped(tree, check)
    return out


def _visit_scoped(tree: ast.AST, check: Callable[[ast.AST, int], None]) -> None:
    """`check(node, scope)` for every node below `tree`, `scope` the id of its innermost enclosing function or
    lambda (0 outside any)."""
    def visit(node: ast.AST, scope: int) -> None:
        for child in ast.iter_child_nodes(node):
            inner = id(child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
            check(child, scope)
            visit(child, inner)

    visit(tree, 0)


_ALEMBIC_IMPORT = re.compile(r"^(?:from|import)\s+alembic\b", re.M)
_TOP_DEF = re.compile(r"^(?:async\s+)?def\s+(upgrade|downgrade)\s*\(", re.M)
_DJANGO_MIGRATION = re.compile(r"^class\s+Migration\s*\([^)]*\bmigrations\.Migration\s*\)", re.M)


def data_migration(text: str) -> bool:
    """An alembic revision (top-level `upgrade` and `downgrade` beside a top-level alembic import) or a Django
    migration (`class Migration(migrations.Migration)`): code that rewrites stored data. Read from the file's text,
    not its tree, so that a file parsed in pieces (static/largefile.py) is judged as a whole."""
    if _ALEMBIC_IMPORT.search(text) and {m.group(1) for m in _TOP_DEF.finditer(text)} == {"upgrade", "downgrade"}:
        return True
    return _DJANGO_MIGRATION.search(text) is not None


# what a string naming Ascend / NPU (_names_npu) needs in the source: one of its words, or a spelling that hides it
# (an escape, a backslash-newline, implicit concatenation `"N" "PU"`); a file without any has no NPU comparison
_NPU_HINT = re.compile(r"""(?i:npu|ascend|hccl|huawei|accelerator)|\\(?:[xuUN0-7]|\r|\n)|["']\s*["']""")


def vendor_facts(tree: ast.AST, text: str, cuda_rule: bool) -> dict[str, Any]:
    """A Python file's facts for apply_vendor_dispatch_tree (project_imports.TREE, cache FORMAT 13), from the `ast`
    tree the engine parsed from the whole file (engine.py; never a chunked or lowered one): `vendor_npu`, the
    attribute chains it compares with an Ascend / NPU name (npu_compared); for a file with NPU076 findings
    (`cuda_rule`), `vendor_cuda`, {line: the attribute chains compared there with a CUDA / NVIDIA literal}. Only
    attribute chains: the tree pass matches nothing else across files. Only non-empty facts are written."""
    out: dict[str, Any] = {}
    if _NPU_HINT.search(text):
        npu = sorted({k[1] for k in npu_compared(tree, attrs_only=True)})
        if npu:
            out["vendor_npu"] = npu
    if cuda_rule:
        cuda = {str(line): sorted({k[1] for k in keys if k[0] == "attr"})
                for line, keys in _cuda_compared(tree, attrs_only=True).items()}
        cuda = {line: keys for line, keys in cuda.items() if keys}
        if cuda:
            out["vendor_cuda"] = cuda
    return out


def _lower(findings: list, tree: ast.AST | None, npu_keys: set[tuple], where: str,
           cuda: dict[int, set[tuple]] | None = None) -> list:
    cuda = _cuda_compared(tree) if cuda is None and tree is not None else cuda or {}
    out = []
    for f in findings:
        if f.name == RULE and f.severity != "info" and cuda.get(f.line, set()) & npu_keys:
            f = as_info(f, "npu-path", f"the value is also compared with an Ascend / NPU name {where}: "
                                       f"{_NOTES['npu-path']}")
        out.append(f)
    return out


_PROVIDER_SUFFIX = "ExecutionProvider"


def _own_cpu_settings(tree: ast.AST) -> set[str]:
    """Names the file itself sets to "CPU" (`last_device = "CPU"`, `available_devices = ["CPU", "CUDA"]`): a
    CPU / CUDA choice of the program (ReActor's ONNX Runtime device setting), not a name a device reports."""
    out: set[str] = set()
    for node in walk_list(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                and "CPU" in literal_strings(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _own_setting_lines(tree: ast.AST) -> set[int]:
    """Lines of comparisons that test the program's own CPU / CUDA setting rather than a device's vendor name:
    an operand the file sets to "CPU" itself (_own_cpu_settings), or an `if` / conditional expression whose branch
    picks an ONNX Runtime execution provider (`["CUDAExecutionProvider"] if device == "CUDA" else [...]`; the
    provider line is NPU033's)."""
    settings = _own_cpu_settings(tree)
    out: set[int] = set()

    def add(compare: ast.Compare) -> None:
        out.update(node_lines(compare))

    for node in walk_list(tree):
        if isinstance(node, ast.Compare) and any(isinstance(o, ast.Name) and o.id in settings
                                                 for o in [node.left, *node.comparators]):
            add(node)
        elif isinstance(node, (ast.If, ast.IfExp)):
            branches = node.body if isinstance(node.body, list) else [node.body, node.orelse]
            if any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith(_PROVIDER_SUFFIX)
                   for b in branches for c in walk_list(b)):
                for c in walk_list(node.test):
                    if isinstance(c, ast.Compare):
                        add(c)
    return out


# the board's model string of a device tree (Jetson: "NVIDIA Jetson ..."), and L4T's release file
_BOARD_FILES = re.compile(r"^/(?:proc/device-tree|sys/firmware/devicetree/base)/model$|nv_tegra_release$")


def _board_probe_lines(tree: ast.AST) -> set[int]:
    """pd20: lines of comparisons in a function that reads the board's model file (Crystools' `is_jetson()`: `with
    open('/proc/device-tree/model') as f: ... return "NVIDIA" in model`): the test asks which board the host is, not
    which accelerator runs; on an Ascend host it answers False, the right answer, and the accelerator code the probe
    selects is reported where it runs."""
    out: set[int] = set()
    for fn in walk_list(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(c, ast.Constant) and isinstance(c.value, str) and _BOARD_FILES.search(c.value)
                for c in walk_list(fn)):
            out.update(line for c in walk_list(fn) if isinstance(c, ast.Compare)
                       for line in node_lines(c))
    return out


def apply_vendor_dispatch(findings: list, tree: ast.AST, text: str) -> list:
    """Per file: drop NPU076 in a data migration and on the program's own CPU / CUDA setting (_own_setting_lines),
    lower it where the file compares the value with an NPU name."""
    if not any(f.name == RULE for f in findings) or not isinstance(tree, ast.Module):
        return findings
    if data_migration(text):
        return [f for f in findings if f.name != RULE]
    own = _own_setting_lines(tree) | _board_probe_lines(tree)
    if own:
        findings = [f for f in findings if f.name != RULE or f.line not in own]
    if not any(f.name == RULE and f.severity != "info" for f in findings):
        return findings
    return _lower(findings, tree, npu_compared(tree), "in this file")


def _parse(data: bytes | None) -> ast.Module | None:
    try:
        return ast.parse(data) if data is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def apply_vendor_dispatch_tree(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Across the tree: an NPU076 warning whose attribute chain (`dipu.vendor_type`) another Python file compares
    with an Ascend / NPU name is info. Only files that hold the chain's last name are parsed. Each file's
    comparisons come from its per-file facts (vendor_facts, ProjectImports.tree); a file without them (`vendor_unread`,
    no summary) is read and parsed now, counted in `project.reads`. Returns how many findings were lowered."""
    open_ = [r for r in results if r.path.endswith(".py")
             and any(f.name == RULE and f.severity != "info" for f in r.findings)]
    if not open_:
        return 0

    def facts_of(rel: str) -> dict[str, Any] | None:
        facts = held_tree(project, rel)
        return None if facts is None or facts.get("vendor_unread") else facts

    def read(path: Path) -> bytes | None:
        try:
            return read_counted(project, path, _MAX_BYTES)
        except (SourceError, OSError):
            return None

    cudas: dict[str, dict[int, set[tuple]]] = {}
    by_rel = {rel: path for path, rel in files}
    wanted: set[tuple] = set()
    for r in open_:
        path = by_rel.get(r.path)
        facts = facts_of(r.path) if path is not None else None
        if facts is not None:
            cuda = {int(line): {("attr", k) for k in keys} for line, keys in (facts.get("vendor_cuda") or {}).items()}
        else:
            tree = _parse(read(path)) if path is not None else None
            if tree is None:
                continue
            cuda = _cuda_compared(tree)
        cudas[r.path] = cuda
        # `self.vendor` names a different object in each class: only module-level chains count across files
        wanted |= {k for f in r.findings if f.name == RULE for k in cuda.get(f.line, ())
                   if k[0] == "attr" and k[1].split(".")[0] not in ("self", "cls")}
    if not wanted:
        return 0
    needles = {k[1].rsplit(".", 1)[-1].encode() for k in wanted}
    npu_keys: set[tuple] = set()
    for path, rel in files:
        if not rel.endswith(".py"):
            continue
        facts = facts_of(rel)
        if facts is not None:
            npu_keys |= {("attr", k) for k in facts.get("vendor_npu") or ()} & wanted
            continue
        data = read(path)
        if data is None or not any(n in data for n in needles):
            continue
        tree = _parse(data)
        if tree is not None:
            npu_keys |= {k for k in npu_compared(tree) if k in wanted}
    if not npu_keys:
        return 0
    lowered = 0
    for r in open_:
        if r.path not in cudas:
            continue
        before = sum(f.severity == "info" for f in r.findings)
        r.findings = _lower(r.findings, None, npu_keys, "in another file of the tree", cudas[r.path])
        lowered += sum(f.severity == "info" for f in r.findings) - before
    return lowered

"""Values computed only to be shown in an environment report (tk43, tuned on test105's ODISE collect_env.py).

detectron2's `collect_env_info()` (copied into ODISE, fast-reid, AdelaiDet, vissl and their descendants) builds a
table of `(label, value)` rows and prints it. Two shapes around those rows read CUDA facts only to show them:

    cuda_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)     # read only for the row below
    if cuda_arch_list:
        data.append(("TORCH_CUDA_ARCH_LIST", cuda_arch_list))
    msg = " - invalid!" if not (CUDA_HOME and os.path.isdir(CUDA_HOME)) else ""
    data.append(("CUDA_HOME", str(CUDA_HOME) + msg))
    data.append(("CUDA compiler", _C.get_cuda_version()))          # the build's version, shown

Lead decision 49: a value shown in a message is a message line, even a CUDA fact; reading an environment variable or
a path to show it cannot fail and changes nothing. So a name whose every read in its function is a report row's value
(or the test of an `if` around such rows) is shown, not used: the findings of its binding statement are dropped when
that statement calls nothing but environment reads, path predicates and string conversions. A row whose value is a
no-argument version getter (`get_cuda_version()`, not a torch API) is shown the same way, and so is a value of a
report dict (diffusers' `env` command: `xformers_version = xformers.__version__` shown as `"xFormers version":
xformers_version`; tq44b). A CUDA call in a message
stays a finding (decision 48): a binding that calls anything else keeps its findings.
"""
from __future__ import annotations

import ast

from auditor.static.astutil import ast_dotted, walk_list

# calls that only read a value to show: environment reads, path predicates, conversions
_READ_ONLY_CALLS = frozenset({"os.environ.get", "os.getenv", "os.path.isdir", "os.path.exists", "os.path.isfile",
                              "str", "bool", "len", "repr"})


def _report_row(node: ast.AST) -> ast.expr | None:
    """The shown value of `rows.append(("label", value))`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
            and len(node.args) == 1 and not node.keywords and isinstance(row := node.args[0], ast.Tuple) \
            and len(row.elts) == 2 and isinstance(row.elts[0], ast.Constant) and isinstance(row.elts[0].value, str):
        return row.elts[1]
    return None


# a report dict: this many string-labelled entries at least (diffusers' `diffusers-cli env`: 18)
_REPORT_DICT_ROWS = 8


def _report_dict_values(node: ast.AST) -> list[ast.expr]:
    """The shown values of a report dict (`info = {"xFormers version": xformers_version, ...}` in diffusers' and
    transformers' `env` commands; tq44b): a dict display whose keys are all labels, many of them, versions among them."""
    if not isinstance(node, ast.Dict):
        return []
    labels = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if len(labels) >= _REPORT_DICT_ROWS and len(labels) == len(node.keys) and \
            sum("version" in label.lower() for label in labels) >= 2:
        return list(node.values)
    return []


# a function with this many rows of one dict builds an environment report (gates.py's note, the rows below)
REPORT_DICT_MIN_ROWS = 5


def _report_dicts(nodes: list) -> dict[str, int]:
    """The rows of each report dict the function builds and returns (pd55, dev32's sleap-nn `get_system_info_dict`:
    `info = {"python_version": ..., "cuda_available": torch.cuda.is_available(), ...}`, then `info["cuda_version"] =
    torch.version.cuda` ... `return info`): a local bound to a dict literal, its string keys and the string-keyed
    assignments into it, in a function that also reads versions (`torch.__version__`, `sys.version`, `platform.*()`).
    Only a returned local: `os.environ["X"] = ...` sets something and is no row; a settings dict reads no versions."""
    returned = {n.value.id for n in nodes if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    keys: dict[str, int] = {}
    for n in nodes:
        if not isinstance(n, ast.Assign) or len(n.targets) != 1:
            continue
        target = n.targets[0]
        if isinstance(target, ast.Name) and target.id in returned and isinstance(n.value, ast.Dict):
            keys[target.id] = keys.get(target.id, 0) + sum(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in n.value.keys)
        elif (row := _dict_row(n)) is not None and row[0] in returned:
            keys[row[0]] = keys.get(row[0], 0) + 1
    versions = any(isinstance(n, ast.Attribute) and (n.attr == "__version__" or ast_dotted(n) == "sys.version")
                   or isinstance(n, ast.Call) and (ast_dotted(n.func) or "").startswith("platform.") for n in nodes)
    return keys if versions else {}


def report_dict_rows(nodes: list) -> int:
    """The most rows of one report dict among `nodes` (a function's nodes); 0 when it builds none."""
    return max(_report_dicts(nodes).values(), default=0)


def _dict_row(node: ast.AST) -> tuple[str, ast.expr, int] | None:
    """The dict's name, the value and the line of `info["label"] = value` (a string-keyed row of a local dict), else
    None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(target := node.targets[0], ast.Subscript) \
            and isinstance(target.value, ast.Name) and isinstance(target.slice, ast.Constant) \
            and isinstance(target.slice.value, str):
        return target.value.id, node.value, node.lineno
    return None


def _shown_read(value: ast.expr) -> bool:
    """`CUDA_HOME`, `torch.version.cuda`, `str(CUDA_HOME)`: a value read to be shown, no call of its own."""
    if isinstance(value, ast.Call) and ast_dotted(value.func) == "str" and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    return isinstance(value, (ast.Name, ast.Attribute)) and ast_dotted(value) is not None


def _reads_only(value: ast.expr) -> bool:
    return all(not isinstance(n, ast.Call) or ast_dotted(n.func) in _READ_ONLY_CALLS for n in ast.walk(value))


def _version_getter(value: ast.expr) -> bool:
    """`_C.get_cuda_version()`: a no-argument getter of a version, not torch's own API."""
    if not isinstance(value, ast.Call) or value.args or value.keywords:
        return False
    name = ast_dotted(value.func) or ""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("get_") and last.endswith("version") and not name.startswith("torch.")


def _holds_rows(nodes: list) -> bool:
    """Whether a file's nodes hold a report row, a report dict display or a report dict of REPORT_DICT_MIN_ROWS rows:
    a function's nodes are a part of the file's, so without any no function of the file holds one."""
    return any(_report_row(n) is not None or _report_dict_values(n) for n in nodes) or \
        report_dict_rows(nodes) >= REPORT_DICT_MIN_ROWS


_ENV_READS = frozenset({"os.environ.get", "os.getenv"})


def _env_snapshot_names(tree: ast.Module) -> set[int]:
    """Lines of a module-level tuple / list of variable names (`_ENV_VARS = ("CUDA_HOME", "TORCH_CUDA_ARCH_LIST",
    ...)`) that the module reads only into a snapshot dict `{name: os.environ.get(name) for name in _ENV_VARS}`
    (AReno's `areno env` support report; tq52c, heldout67): the names are shown with their values, nothing is set
    or built with them."""
    tables = {stmt.targets[0].id: stmt for stmt in tree.body
              if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
              and isinstance(stmt.value, (ast.Tuple, ast.List)) and len(stmt.value.elts) >= 2
              and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.value.elts)}
    if not tables:
        return set()
    snapshots: set[int] = set()      # ids of the Name each snapshot iterates
    loads: dict[str, list[int]] = {}
    for node in walk_list(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in tables:
            loads.setdefault(node.id, []).append(id(node))
        elif isinstance(node, ast.DictComp) and len(node.generators) == 1 and \
                isinstance(gen := node.generators[0], ast.comprehension) and isinstance(gen.iter, ast.Name) and \
                isinstance(gen.target, ast.Name) and not gen.ifs and isinstance(node.key, ast.Name) and \
                node.key.id == gen.target.id and isinstance(node.value, ast.Call) and \
                ast_dotted(node.value.func) in _ENV_READS and node.value.args and \
                isinstance(node.value.args[0], ast.Name) and node.value.args[0].id == gen.target.id:
            snapshots.add(id(gen.iter))
    out: set[int] = set()
    for name, stmt in tables.items():
        if loads.get(name) and all(u in snapshots for u in loads[name]):
            out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return out


def report_only_lines(tree: ast.AST) -> set[int]:
    """Lines of the statements whose CUDA reads are only shown in report rows (module docstring)."""
    out: set[int] = _env_snapshot_names(tree) if isinstance(tree, ast.Module) else set()
    if not _holds_rows(walk_list(tree)):
        return out      # (the walks per function below would find nothing)
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        shown: set[int] = set()       # ids of Name nodes inside a row's value or an `if` test around rows
        rows = 0
        for node in ast.walk(func):
            value = _report_row(node)
            if value is not None and isinstance(node, ast.expr):
                rows += 1
                shown.update(id(n) for n in ast.walk(value) if isinstance(n, ast.Name))
                if _version_getter(value):
                    out.add(node.lineno)
            elif isinstance(node, ast.If) and any(_report_row(n) is not None for s in node.body for n in ast.walk(s)):
                shown.update(id(n) for n in ast.walk(node.test) if isinstance(n, ast.Name))
            for shown_value in _report_dict_values(node):
                rows += 1
                shown.update(id(n) for n in ast.walk(shown_value) if isinstance(n, ast.Name))
        reports = {name for name, count in _report_dicts(walk_list(func)).items() if count >= REPORT_DICT_MIN_ROWS}
        for node in ast.walk(func):
            # `env_info['CUDA_HOME'] = CUDA_HOME` in mmcv's / mmdet's collect_env (qdtrack's copy; tk47): a row of the
            # returned report dict that shows a value read elsewhere; the label is a name, the value only shown
            row = _dict_row(node)
            if row is not None and row[0] in reports and _shown_read(row[1]):
                out.add(row[2])
        if not rows:
            continue
        loads: dict[str, list[int]] = {}
        for n in ast.walk(func):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                loads.setdefault(n.id, []).append(id(n))
        for stmt in ast.walk(func):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                uses = loads.get(stmt.targets[0].id, [])
                if uses and all(u in shown for u in uses) and _reads_only(stmt.value):
                    out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return out


def drop_report_only_reads(findings: list, tree: ast.AST) -> list:
    """Findings on the statements `report_only_lines` finds: shown in an environment report, not used."""
    if not findings or not isinstance(tree, ast.Module):
        return findings
    lines = report_only_lines(tree)
    if not lines:
        return findings
    return [f for f in findings if f.line not in lines]

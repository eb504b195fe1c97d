"""Settings whose only job is to feed a torch.backends switch that the tree sets itself (lead decision 7 in
docs/recall.md, session 22: "a configuration value that only feeds a backend switch set elsewhere in the code base is
not a finding of its own; the switch line is the finding").

VAR's `class Args(Tap): tf32: bool = True` reaches `torch.backends.cudnn.allow_tf32 = bool(tf32)` in the same file
through `args.set_tf32(args.tf32)`; AlignProp's `allow_tf32: bool = True` config field and ddpo-pytorch's
`config.allow_tf32 = True` are read by their trainers' `if self.config.allow_tf32: torch.backends.cuda.matmul.allow_tf32
= True` (test88, test90); EDM's `c.update(cudnn_benchmark=opts.bench, enable_tf32=opts.tf32)` hands options to its own
training loop, which writes them into the switches (test93). The switch line carries NPU206 / NPU006, which is where a
port writes the HF32 setting; the setting's own NPU248 (or NPU042 for `cudnn_benchmark`-style names) says the same
thing a second time. This pass drops those two settings findings when some Python file of the audited tree assigns a
torch.backends switch from an expression that reads a name of the setting, or under an `if` whose test reads it. When
the tree never sets the switch (the value goes to a library that does: `TrainingArguments(tf32=True)`, or is handed to
a call through an imported name), the finding stays: the value is the finding there (decision 7's second sentence).
The visitor's `params_fed_to_backend_switches` is the same decision for a parameter written straight into a switch
inside its own function; this pass reads the whole tree.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from auditor.static.astutil import ast_dotted, import_bound_names

# the settings rules whose values the torch.backends switches take (rules/settings.yaml, rules/device.yaml), and
# the fp16 switch whose value the tree's own Apex calls take (tk42, below)
SETTING_RULES = frozenset({"tf32-setting-value", "cudnn-switch-value", "fp16-switch"})
# tk42 (test101: DenseCL's `use_fp16 = True` configs read by openselfsup/apis/train.py `if 'use_fp16' in cfg and
# cfg.use_fp16: model, optimizer = apex.amp.initialize(...)` and by its DistOptimizerHook's `if self.use_fp16: with
# apex.amp.scale_loss(...)`; CAE's `optimizer_config = dict(type="DistOptimizerHook", ..., use_fp16=True)`, the
# Swin-Transformer-Object-Detection hook that BEiT, CAE, ViT-Adapter and CBNetV2 copy): a setting that only chooses
# whether the tree's own code calls Apex's amp is decided at that call, which carries the apex finding (decision 7)
_APEX_AMP_CALLS = frozenset({"initialize", "scale_loss"})
# the switch attributes a setting feeds: torch.backends.cudnn.{allow_tf32, benchmark, deterministic, enabled},
# torch.backends.cuda.matmul.allow_tf32, the fp32_precision switches of PyTorch 2.9
_SWITCHES = frozenset({"allow_tf32", "benchmark", "deterministic", "enabled", "fp32_precision"})
# torch.set_float32_matmul_precision("high" if tf32 else "highest"): the same switch by call
_SWITCH_CALLS = frozenset({"set_float32_matmul_precision"})


def _is_switch(target: ast.expr) -> bool:
    """`torch.backends.cuda.matmul.allow_tf32`, `cudnn.benchmark` (after `from torch.backends import cudnn`)."""
    dotted = ast_dotted(target)
    if not dotted or "." not in dotted:
        return False
    parts = dotted.split(".")
    return parts[-1] in _SWITCHES and ("backends" in parts or parts[0] == "cudnn")


def _names_read(node: ast.AST) -> set[str]:
    """Identifiers an expression reads: bare names, attribute names and names given as strings (`bool(tf32)` -> tf32;
    `self.config.allow_tf32` -> self, config, allow_tf32; mmflow's `cfg.get('cudnn_benchmark', False)` ->
    cudnn_benchmark), not the names of the functions it calls."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    out: set[str] = set()
    for n in ast.walk(node):
        if id(n) in called and isinstance(n, ast.Name):
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and id(n) not in called:
            out.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)
    return out


def _calls_apex_amp(stmt: ast.stmt) -> bool:
    """`model, optimizer = apex.amp.initialize(...)`, `with amp.scale_loss(loss, optimizer) as scaled:`: the statement
    itself (not a nested block) calls Apex's amp."""
    heads: list[ast.AST] = [item.context_expr for item in stmt.items] if isinstance(stmt, (ast.With, ast.AsyncWith)) \
        else [stmt.value] if isinstance(stmt, (ast.Assign, ast.Expr)) else []
    for head in heads:
        for node in ast.walk(head):
            dotted = ast_dotted(node.func) if isinstance(node, ast.Call) else None
            if dotted and "." in dotted and dotted.rsplit(".", 1)[-1] in _APEX_AMP_CALLS \
                    and dotted.split(".")[-2] == "amp":
                return True
    return False


def fed_names(tree: ast.Module) -> set[str]:
    """Names that feed a torch.backends switch in this module: read by the value assigned to the switch, by the
    arguments of `torch.set_float32_matmul_precision(...)`, or by the test of an `if` that holds the assignment (or
    that holds a call of Apex's amp, tk42)."""
    out: set[str] = set()

    def visit(body: list[ast.stmt], tests: list[ast.expr]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign) and any(_is_switch(t) for t in stmt.targets):
                out.update(_names_read(stmt.value))
                for test in tests:
                    out.update(_names_read(test))
            elif _calls_apex_amp(stmt):
                for test in tests:
                    out.update(_names_read(test))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    (ast_dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in _SWITCH_CALLS:
                for arg in stmt.value.args:
                    out.update(_names_read(arg))
            if isinstance(stmt, ast.If):
                visit(stmt.body, [*tests, stmt.test])
                visit(stmt.orelse, [*tests, stmt.test])
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    visit([s for s in inner if isinstance(s, ast.stmt)] +
                          [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body], tests)

    visit(tree.body, [])
    return out


def _modules(project: Any, rel: str, data: bytes | None = None) -> list[tuple[int, ast.Module]]:
    """(line offset, tree) of each Python unit of a file: a `.py` file whole (the project's shared parse), a notebook's
    code cells one by one, at the offset where a finding's line counts them (auditor/project/notebook.py; a cell that
    does not parse alone, a `!pip` line or a magic, is skipped)."""
    if rel.endswith(".py"):
        source = project.source(rel)
        return [(0, source[1])] if source is not None else []
    from auditor.project.notebook import code_cells
    from auditor.source import SourceError
    from auditor.static.project_imports import as_text, read_counted

    try:
        cells = code_cells(as_text(data if data is not None else read_counted(project, project.paths.get(rel))))
    except (OSError, SourceError, ValueError):
        return []
    out: list[tuple[int, ast.Module]] = []
    offset = 0
    for _number, code in cells:
        try:
            out.append((offset, ast.parse(code)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        offset += len(code.splitlines() or [""])
    return out


# the summary key of a Python file's part of this pass (switch_facts), kept in the cache so a warm run reads no file
FACT = "switch_fed"


def _mentions_switch(data: bytes) -> bool:
    # `amp.` (not `amp`, which "example" and "sample" hold): _calls_apex_amp needs a dotted `....amp.<call>`
    return b"backends" in data or b"cudnn" in data or b"set_float32_matmul_precision" in data or b"amp." in data


def switch_facts(data: bytes, tree: ast.AST | None, findings: Sequence[Any], rel: str = "") -> dict[str, Any]:
    """A Python file's or notebook's part of this pass, computed in the worker: `fed`, the names that feed a switch
    here (fed_names, for a file that mentions one), and `bound`, each name of the file's own settings findings with
    the lines where the file binds it (binding_lines; a notebook's lines as the notebook pass counts them). Empty when
    the file has neither."""
    names = {f.symbol for f in findings if getattr(f, "name", None) in SETTING_RULES}
    mentions = _mentions_switch(data)
    if not names and not mentions:
        return {}
    if rel.endswith(".ipynb"):
        units = _modules(None, rel, data)
    elif isinstance(tree, ast.Module):
        units = [(0, tree)]
    else:
        from auditor.static.project_imports import as_text

        try:
            units = [(0, ast.parse(as_text(data)))]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
    out: dict[str, Any] = {}
    if mentions:
        fed = {name for _offset, unit in units for name in fed_names(unit)}
        if fed:
            out["fed"] = sorted(fed)
    if names:
        lines: dict[str, list[int]] = {name: [] for name in sorted(names)}
        for name, line in sorted({(name, offset + line) for offset, unit in units
                                  for name, line in binding_lines(unit, names)}):
            lines[name].append(line)
        out["bound"] = lines
    return out


def _held(project: Any, rel: str) -> dict[str, Any] | None:
    """A Python file's or notebook's switch_facts from its summary, or None when no summary holds them (then the file
    is read)."""
    if not rel.endswith((".py", ".ipynb")):
        return None
    summary = getattr(project, "summaries", {}).get(rel)
    facts = summary.get(FACT) if isinstance(summary, dict) else None
    return facts if isinstance(facts, dict) else None


def drop_switch_fed_settings(results: list, project: Any) -> int:
    """Drop NPU248 / NPU042 / NPU247 findings whose setting name feeds a torch.backends switch (or an Apex amp call)
    that the tree makes (module doc). Reads only the tree's Python files and notebooks that mention such a switch and
    one of the settings' names, once each. Returns how many were dropped."""
    wanted = {f.symbol for r in results for f in r.findings if f.name in SETTING_RULES}
    if not wanted:
        return 0
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    fed: set[str] = set()
    units: dict[str, list[tuple[int, ast.Module]]] = {}    # each file's parsed units, for both loops (a notebook's cells)
    for rel, path in project.paths.items():
        if not rel.endswith((".py", ".ipynb")):
            continue
        held = _held(project, rel)
        if held is not None:
            fed |= set(held.get("fed", ()))
            continue
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            continue
        if not _mentions_switch(data):
            continue
        if not any(name.encode() in data for name in wanted):
            continue
        units[rel] = _modules(project, rel, data)
        for _offset, tree in units[rel]:
            fed |= fed_names(tree)
    if not fed & wanted:
        return 0
    dropped = 0
    for r in results:
        if not r.path.endswith((".py", ".ipynb")) or \
                not any(f.name in SETTING_RULES and f.symbol in fed for f in r.findings):
            continue
        held = (_held(project, r.path) or {}).get("bound")
        needed = {f.symbol for f in r.findings if f.name in SETTING_RULES} & fed & wanted
        if isinstance(held, dict) and needed <= held.keys():
            bound = {(name, line) for name in needed for line in held[name]}
        else:
            if r.path not in units:
                units[r.path] = _modules(project, r.path)
            bound = {(name, offset + line) for offset, tree in units[r.path]
                     for name, line in binding_lines(tree, fed & wanted)}
        kept = [f for f in r.findings if not (f.name in SETTING_RULES and (f.symbol, f.line) in bound)]
        dropped += len(r.findings) - len(kept)
        r.findings = kept
    return dropped


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def binding_lines(tree: ast.Module, names: set[str]) -> set[tuple[str, int]]:
    """(name, line) of each place the module binds one of `names` as a setting of its own: a class field or an
    assignment (`tf32: bool = True`, `config.allow_tf32 = True`), a parameter default (`def setup(tf32=True)`), or a
    keyword argument of a call that is not made through an imported name (EDM's `c.update(cudnn_benchmark=opts.bench)`,
    the options its own training loop writes into the switch). A keyword of a call through an imported name hands the
    value to another package, which may set the switch itself (`TrainingArguments(tf32=True)`); a dict key is left too."""
    imported = import_bound_names(tree, absolute_only=True)   # a relative import is the tree's own module
    out: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _root_name(node.func) not in imported:
            out.update((k.arg, k.value.lineno) for k in node.keywords if k.arg in names)
            out.update((k.arg, k.lineno) for k in node.keywords if k.arg in names)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = target.id if isinstance(target, ast.Name) else \
                    target.attr if isinstance(target, ast.Attribute) else None
                if name in names:
                    out.update((name, line) for line in range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.arg) and node.arg in names:
            out.add((node.arg, node.lineno))
    return out

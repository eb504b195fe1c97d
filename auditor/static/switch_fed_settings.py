"""Settings whose only job is to feed a torch.backends switch that the tree sets itself (lead decision 7 in
docs/recall.md, session 22: "a configuration value that only feeds a backend switch set elsewhere in the code base is
not a finding of its own; the switch line is the finding").

VAR's `class Args(Tap): tf32: bool = True` reaches `torch.backends.cudnn.allow_tf32 = bool(tf32)` in the same file
through `args.set_tf32(args.tf32)`; AlignProp's `allow_tf32: bool = True` config field and ddpo-pytorch's
`config.allow_tf32 = True` are read by their trainers' `if self.config.allow_tf32: torch.backends.cuda.matmul.allow_tf32
= True` (test88, test90). The switch line carries NPU206 / NPU006, which is where a port writes the HF32 setting; the
field's own NPU248 (or NPU042 for `cudnn_benchmark`-style names) says the same thing a second time. This pass drops
those two settings findings when some Python file of the audited tree assigns a torch.backends switch from an
expression that reads a name of the setting, or under an `if` whose test reads it. When the tree never sets the
switch (the value goes to a library that does: `TrainingArguments(tf32=True)`), the finding stays: the value is the
finding there (decision 7's second sentence). The visitor's `params_fed_to_backend_switches` is the same decision for
a parameter written straight into a switch inside its own function; this pass reads the whole tree.
"""
from __future__ import annotations

import ast
from typing import Any

from auditor.static.astutil import ast_dotted

# the settings rules whose values the torch.backends switches take (rules/settings.yaml, rules/device.yaml)
SETTING_RULES = frozenset({"tf32-setting-value", "cudnn-switch-value"})
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
    """Identifiers an expression reads: bare names and attribute names (`bool(tf32)` -> tf32; `self.config.allow_tf32`
    -> self, config, allow_tf32), not the names of the functions it calls."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    out: set[str] = set()
    for n in ast.walk(node):
        if id(n) in called and isinstance(n, ast.Name):
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and id(n) not in called:
            out.add(n.attr)
    return out


def fed_names(tree: ast.Module) -> set[str]:
    """Names that feed a torch.backends switch in this module: read by the value assigned to the switch, by the
    arguments of `torch.set_float32_matmul_precision(...)`, or by the test of an `if` that holds the assignment."""
    out: set[str] = set()

    def visit(body: list[ast.stmt], tests: list[ast.expr]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign) and any(_is_switch(t) for t in stmt.targets):
                out.update(_names_read(stmt.value))
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


def drop_switch_fed_settings(results: list, project: Any) -> int:
    """Drop NPU248 / NPU042 findings whose setting name feeds a torch.backends switch the tree sets (module doc).
    Reads only the tree's Python files that mention such a switch, once each. Returns how many were dropped."""
    wanted = {f.symbol for r in results for f in r.findings if f.name in SETTING_RULES}
    if not wanted:
        return 0
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    fed: set[str] = set()
    for rel, path in project.paths.items():
        if not rel.endswith(".py"):
            continue
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            continue
        if b"backends" not in data and b"cudnn" not in data and b"set_float32_matmul_precision" not in data:
            continue
        if not any(name.encode() in data for name in wanted):
            continue
        source = project.source(rel)
        if source is not None:
            fed |= fed_names(source[1])
    if not fed & wanted:
        return 0
    dropped = 0
    for r in results:
        if not r.path.endswith(".py") or not any(f.name in SETTING_RULES and f.symbol in fed for f in r.findings):
            continue
        source = project.source(r.path)
        if source is None:
            continue
        bound = binding_lines(source[1], fed & wanted)
        kept = [f for f in r.findings if not (f.name in SETTING_RULES and (f.symbol, f.line) in bound)]
        dropped += len(r.findings) - len(kept)
        r.findings = kept
    return dropped


def binding_lines(tree: ast.Module, names: set[str]) -> set[tuple[str, int]]:
    """(name, line) of each place the module binds one of `names` as a setting of its own: a class field or an
    assignment (`tf32: bool = True`, `config.allow_tf32 = True`) or a parameter default (`def setup(tf32=True)`).
    Not a keyword argument or a dict key: those hand the value to a callee, which may be a library that sets the
    switch itself (mmengine's `env_cfg = dict(cudnn_benchmark=True)`, `TrainingArguments(tf32=True)`)."""
    out: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = target.id if isinstance(target, ast.Name) else \
                    target.attr if isinstance(target, ast.Attribute) else None
                if name in names:
                    out.update((name, line) for line in range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.arg) and node.arg in names:
            out.add((node.arg, node.lineno))
    return out

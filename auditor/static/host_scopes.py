"""Dtype hints that choose nothing on a device, by the scope they sit in (issue 11, t11j, session 10; tuned on
heldout3..heldout7, policies (a) and (e) in docs/precision.md). host_paths.py reads whole test modules; this reads
one function at a time:

- a parameter default that the function never reads (`def build(..., out_dtype=torch.bfloat16)` whose body never
  names `out_dtype`): the default selects nothing (lmdeploy's dlinfer MoE builder, t11g's "unused default" rows);
- a torch dtype in a test function that places nothing on a device, directly or through the same file's helpers it
  calls, takes no device-like parameter, and hands nothing to worker processes (`torch.randn(8, 16,
  dtype=torch.bfloat16)` in a CPU unit test of a file whose other tests run on the NPU; vllm-ascend's mocked-op unit
  tests, AReaL's torch.compile router test, torchair's stub-backend system tests): host values (policy (e)).

Only precision findings are dropped; anything else (a `.cuda()`, a CUDA-only package) is kept.
"""
from __future__ import annotations

import ast
import re

# placement or a device runtime, read case-insensitively on one function's text (host_paths._PLACES, widened: a
# `.to(<anything but a dtype>)`, an upper-case DEVICE constant, a device-like name passed on)
_PLACES = re.compile(
    r"""\.(?:cuda|npu|xpu|mlu|musa|hpu|mps)\(|\bdevice\s*=\s*(?!\s*['"]cpu['"])[^=\s,)]"""
    r"""|\.to\(\s*(?!(?:torch\.)?(?:u?int\d*|float\d*\w*|bfloat16|half|double|bool|long|complex\d*|\w*dtype\w*)\s*[,)])"""
    r"""(?!['"]cpu['"])"""
    r"""|\bset_(?:default_)?device\(|torch\.device\(\s*(?!['"]cpu['"])|\btorch\.(?:cuda|npu|xpu)\b|\bdevice_map\b"""
    r"""|\b(?:current_)?device\(\)|\bget_accelerator\(|\bdevice_type\b""", re.I)
# a test that hands its tensors to other processes or to a compiled graph run by an accelerator backend
_HANDS_OFF = re.compile(r"\b(?:spawn|Process|start_processes|submit|remote|launch|distributed|dist\.|run_graph)\b"
                        r"|backend\s*=\s*(?!['\"](?:eager|aot_eager|inductor)['\"])", re.I)
_TEST_NAME = re.compile(r"^test|_test$")
_DEVICE_PARAM = re.compile(r"(?i)device|dev$|rank|npu|cuda|gpu")


def _outer_functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and methods of top-level classes (a nested closure belongs to its outer function)."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif isinstance(node, ast.ClassDef):
            out += [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return out


def _span(node: ast.AST) -> tuple[int, int]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, getattr(node, "end_lineno", None) or node.lineno


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs] + [x for x in (a.vararg, a.kwarg) if x is not None]


def _called_names(fn: ast.AST) -> set[str]:
    """Names the function calls as `f(...)` or `self.f(...)` / `cls.f(...)`."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id in ("self", "cls"):
                out.add(func.attr)
    return out


def _unused_defaults(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """(line, col, end line, end col) of parameter defaults whose parameter the function body never reads."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
        pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        if not pairs:
            continue
        body_names = set()
        dynamic = False
        for stmt in fn.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name):
                    body_names.add(node.id)
                    if node.id in ("locals", "vars"):       # `**locals()` forwards every parameter
                        dynamic = True
        if dynamic or _abstract(fn):
            continue
        for arg, default in pairs:
            if arg.arg not in body_names:
                out.append((default.lineno, default.col_offset, default.end_lineno or default.lineno,
                            default.end_col_offset or default.col_offset))
    return out


def _abstract(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A stub whose signature is an interface (`...`, `pass`, `raise NotImplementedError`, a docstring only): an
    overriding implementation reads the parameter; an `@overload` / `@abstractmethod` alike."""
    names = {d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else "" for d in
             fn.decorator_list}
    if names & {"overload", "abstractmethod"}:
        return True
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, (ast.Pass, ast.Raise)) for s in body)


def _host_test_functions(tree: ast.AST, lines: list[str]) -> list[tuple[int, int]]:
    """Spans of test functions that keep their tensors on the host."""
    functions = _outer_functions(tree)
    by_name: dict[str, list] = {}
    for fn in functions:
        by_name.setdefault(fn.name, []).append(fn)
    memo: dict[int, bool] = {}

    def placing(fn, depth: int = 0) -> bool:
        key = id(fn)
        if key in memo:
            return memo[key]
        memo[key] = True        # a cycle counts as placing (conservative)
        lo, hi = _span(fn)
        text = "\n".join(lines[lo - 1:hi])
        result = bool(_PLACES.search(text) or _HANDS_OFF.search(text)) or depth > 4 or any(
            placing(callee, depth + 1) for name in _called_names(fn) for callee in by_name.get(name, ()))
        memo[key] = result
        return result

    out = []
    for fn in functions:
        if not _TEST_NAME.search(fn.name) or any(_DEVICE_PARAM.search(p.arg) for p in _params(fn)):
            continue
        if not placing(fn):
            out.append(_span(fn))
    return out


def drop_host_scopes(findings: list, rel: str, text: str, tree: ast.AST) -> list:
    """The file's findings without dtype hints on unread parameter defaults and in host-only test functions (per
    file, in the worker: cached with the file's result)."""
    if not rel.endswith(".py") or not any(f.category == "precision" for f in findings):
        return findings
    from auditor.static.backend_files import test_file

    lines = text.splitlines()
    defaults = _unused_defaults(tree)
    host_tests = _host_test_functions(tree, lines) if test_file(rel) else []
    kept = []
    for f in findings:
        if f.category == "precision":
            col = (getattr(f, "col", 1) or 1) - 1       # findings count columns from 1, ast from 0
            if any((lo, lc) <= (f.line, col) < (hi, hc) for lo, lc, hi, hc in defaults):
                continue
            if (f.symbol or "").startswith("torch.") and any(lo <= f.line <= hi for lo, hi in host_tests):
                continue
        kept.append(f)
    return kept

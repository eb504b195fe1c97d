"""Values that stay on the host where the file says so, for the float64 hint (NPU208) and the host-sync hints (NPU702
data-dependent shape, NPU703 `.item()`): policy (e) of rules/severity_policy.yaml (a host value is not a device
value). Each reader names the construct it reads (tq56d, tuned on heldout75's SimpleSpeech and DeePTB)."""
from __future__ import annotations

import ast
import re

from auditor.astnodes import device_literal, line_span, walk_list
from auditor.static.astutil import ast_dotted, module_nodes

_FLOAT64 = "NPU208"
_HOST_SYNC = frozenset({"NPU702", "NPU703"})


def _drop_in(findings: list, codes: frozenset[str], spans: list[tuple[int, int]]) -> list:
    if not spans:
        return findings
    return [f for f in findings if f.code not in codes or not any(a <= f.line <= b for a, b in spans)]


# thop's counters: `profile()` registers `total_ops` / `total_params` as buffers of each module after the model is
# placed and its hooks add `torch.DoubleTensor([int(n)])` to them (thop/vision/basic_hooks.py, e.g. `count_convNd`)
_THOP_COUNTERS = frozenset({"total_ops", "total_params"})


def drop_flop_counter_doubles(findings: list, tree: ast.AST) -> list:
    """NPU208 on `m.total_ops += torch.DoubleTensor([ops])` in a thop counting hook (guided-diffusion's
    `count_flops_attn`, copied into latent-diffusion trees): the legacy `torch.DoubleTensor` constructor always makes
    a CPU tensor (the device one is `torch.cuda.DoubleTensor`), added to a profiler's bookkeeping buffer; nothing
    computes in float64 on the NPU. A DoubleTensor assigned anywhere else keeps the hint."""
    if not isinstance(tree, ast.Module) or not any(f.code == _FLOAT64 for f in findings):
        return findings
    spans = [line_span(n) for n in module_nodes(tree) if isinstance(n, ast.AugAssign)
             and isinstance(n.target, ast.Attribute) and n.target.attr in _THOP_COUNTERS
             and isinstance(n.value, ast.Call) and (ast_dotted(n.value.func) or "").rsplit(".", 1)[-1] == "DoubleTensor"
             and ".cuda." not in f".{ast_dotted(n.value.func)}"]
    return _drop_in(findings, frozenset({_FLOAT64}), spans)


def _self_attr(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _converted(call: ast.AST, name: str) -> bool:
    """`self.N.to(self.dtype).to(self.device)`: a `.to(...)` chain on `self.N` that names no float64."""
    saw_to = False
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        if any(w in ast.unparse(a).lower() for a in [*call.args, *(k.value for k in call.keywords)]
               for w in ("float64", "double")):
            return False
        saw_to, call = True, call.func.value
    return saw_to and _self_attr(call, name)


def drop_converted_class_constants(findings: list, tree: ast.AST) -> list:
    """NPU208 on a class-level constant `A = torch.tensor([...], dtype=torch.float64)` that the module's code
    replaces on the instance by a converted copy before use (xitorch's Runge-Kutta tableaux: `class RK45(
    RKAdaptiveStepSolver): C = torch.tensor(..., dtype=torch.float64)`, and the base's `__init__` does `self.C =
    self.C.to(self.dtype).to(self.device)`): the float64 tensor is a host constant, the solve runs in the caller's
    dtype. A constant the module never converts that way, or converts to float64, keeps the hint."""
    if not isinstance(tree, ast.Module) or not any(f.code == _FLOAT64 for f in findings):
        return findings
    converted = {t.attr for n in module_nodes(tree) if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Attribute) and _self_attr(t, t.attr) and _converted(n.value, t.attr)}
    if not converted:
        return findings
    spans = [line_span(s) for c in module_nodes(tree) if isinstance(c, ast.ClassDef) for s in c.body
             if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
             and s.targets[0].id in converted]
    return _drop_in(findings, frozenset({_FLOAT64}), spans)


def drop_raise_message_reads(findings: list, tree: ast.AST) -> list:
    """NPU702 / NPU703 in a block that always raises, on the values it reads only to word the exception (DeePTB's
    `OrbitalMapper.transform_bond`: `if z.min() < self._min_Z or ...: bad_set = set(torch.unique(z).cpu().tolist())
    - self._valid_set; raise ValueError(f"... {bad_set} ...")`): the read runs once, on a path that ends the call
    with an error, so there is no per-step sync or dynamic shape to port or tune. The `if` test itself, and a block
    that does anything but assign names and raise, keep the hints."""
    if not isinstance(tree, ast.Module) or not any(f.code in _HOST_SYNC for f in findings):
        return findings
    spans = []
    for n in module_nodes(tree):
        if not isinstance(n, ast.If):
            continue
        for body in (n.body, n.orelse):
            if body and isinstance(body[-1], ast.Raise) and all(
                    isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) for s in body[:-1]):
                spans.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno))
    return _drop_in(findings, _HOST_SYNC, spans)


# any device other than the host's, named in a test module's text (outside comments)
_OTHER_DEVICES = re.compile(r"(?i)cuda|\bnpu|\bgpu|\bmps\b|\bxla|\bxpu|\bhpu|device_map|accelerat|get_device|"
                            r"current_device|lightning|deepspeed|\.to\(\s*\d")
_COMMENT = re.compile(r"#.*$", re.M)


def _test_module(tree: ast.Module) -> bool:
    """pytest / unittest collects something here: a top-level `test*` function or a `Test*` / `*TestCase` class."""
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
               or isinstance(n, ast.ClassDef) and (n.name.startswith("Test") or any(
                   (ast_dotted(b) or "").endswith("TestCase") for b in n.bases)) for n in tree.body)


def _device_param(fn: ast.AST) -> bool:
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test") and any(
        "device" in a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs])


def drop_host_test_float64(findings: list, tree: ast.AST, text: str) -> list:
    """NPU208 (float64) in a test module that places its work on the host by name (DeePTB's tests:
    `OrbitalMapper(..., device="cpu")`, `Eigh(..., device=torch.device("cpu"))`, `self.device = 'cpu'` handed to the
    calculator) and names no other device: no CUDA / NPU / GPU word, no `.to(0)`, and no test takes a `device`
    fixture or parameter. Its float64 references and inputs are host values compared on the host (policy (e)). A
    test module that names no device at all keeps the hint (a library default may place it), as does one that
    names any other device."""
    if not isinstance(tree, ast.Module) or not any(f.code == _FLOAT64 for f in findings) or not _test_module(tree):
        return findings
    if _OTHER_DEVICES.search(_COMMENT.sub("", text)):
        return findings
    nodes = walk_list(tree)
    if any(_device_param(n) for n in nodes):
        return findings
    # the host named as a device: a `device=` argument, `torch.device("cpu")`, or `device = "cpu"` / `self.device`
    named = [v for n in nodes for v in (
        [k.value for k in n.keywords if k.arg and "device" in k.arg] if isinstance(n, ast.Call) else
        [n.value] if isinstance(n, ast.Assign) and any("device" in (ast_dotted(t) or "") for t in n.targets) else [])]
    if not any(device_literal(v) == "cpu" for v in named):
        return findings
    return [f for f in findings if f.code != _FLOAT64]

"""Constructs that run but select nothing (r2d, session 36; TUNED on heldout39).

- A context manager called as a bare statement: `torch.backends.cuda.sdp_kernel("flash")` on a line of its own
  (Style-Bert-VITS2's train_ms.py). `torch.backends.cuda.sdp_kernel` and `torch.nn.attention.sdpa_kernel` are
  `@contextlib.contextmanager` generators (torch/backends/cuda/__init__.py, torch/nn/attention/__init__.py): the call
  only builds the context-manager object, the generator body that sets the SDPA flags runs at `__enter__`, so
  without `with` (or use as a decorator) no flag is set on any backend. NPU349's "sets torch's CUDA SDPA backend
  flags" is not true of the line: dropped. The `enable_*_sdp(...)` setters are plain functions and keep theirs.
- A ctypes structure's field list: `_fields_ = [("flash_attn", c_bool), ...]` in a `ctypes.Structure` / `Union`
  subclass, or `Params._fields_ = [...]` after the class (fastsdcpu's stable-diffusion.cpp binding mirrors
  `sd_ctx_params_t`). The string names a member of a C struct layout (ctypes docs, "Structures and unions": each
  entry is a (field name, field type) pair); it selects no attention implementation, whatever the C library does
  with the member. String findings (NPU386 and the like) on such a field name are dropped.
- The expected value of a test table (tq38, tuned on heldout41's verl copy): `{"name": "no_override_config",
  "config": {}, "expected": "flash_attention_2"}` in a list of cases a test loops over, compared with what the code
  under test chose (`self.assertEqual(attn_implementation, test["expected"])`). The string is the answer the test
  expects, selected by nothing; the choice is where the code under test reads its config (lead decision 52: a
  comparison with an attention name reads a choice made elsewhere). NPU386 on the value of a dict entry keyed
  `expected` / `expected_*` (a string, or strings in a list / tuple) is dropped.
- A block whose test is a false constant (tq39, tuned on heldout42's rf-detr): `if False:` (or `if 0:`, `if None:`,
  `if False and x:`, `if not True:`, `while False:`) around code kept for later (rf-detr's `TRTInference.get_bindings`
  keeps its PyCUDA `cuda.mem_alloc` bindings under `if False:` and runs the `else:` arm). Python never runs such a
  body on any machine (the language reference, "The if statement": the suite of the first true expression runs, the
  `else` suite only when none is true), so nothing there needs a port: every finding in it
  is dropped. The `else:` arm always runs and keeps its findings; so does the body of `if True:`, whose `else:` arm is
  dropped instead. A name that holds False (`DEBUG = False`) is a setting, not a constant: not read here. typing's
  `TYPE_CHECKING` is such a constant (tq47b): "False at runtime" (typing docs), so the imports of an `if
  TYPE_CHECKING:` block (type-annotation names) never run and their findings are dropped.
- The default of `getattr(torch, device_type, torch.cuda)` (tq53a, tuned on heldout67's AgentCPM offloading patch;
  PyTorch's own `torch.autograd.graph.save_on_cpu.__init__` has the line). getattr returns the default only when torch
  has no attribute of that name; `torch.cuda` is a module every torch build ships, so evaluating it fails nothing,
  and for "npu" (torch_npu imported) torch has the attribute. The CUDA choice is where the name is chosen (a
  `device_type="cuda"` default, reported there); the fallback's finding is dropped. A constant name
  (`getattr(torch, "cuda", torch.cuda)`) is not read.
- A tensor conversion whose result is thrown away (tq60a, tuned on heldout79's DanceGRPO sampling loop): `z.to(
  torch.bfloat16)` as a statement of its own. `Tensor.to` / `.bfloat16()` / `.half()` return a new tensor and leave
  the receiver as it was (torch docs, "torch.Tensor.to": "returns a copy"), so the dtype named there reaches no
  tensor on any backend; the precision finding (NPU201 and the like) is dropped. `nn.Module.to` converts in place,
  so the receiver must be a tensor by its function's own use of it: an operand of arithmetic, a member of the list
  `torch.cat` / `torch.stack` joins, or a name bound by a torch factory (`torch.randn(...)`). A device move in the
  same call still runs (and fails without CUDA): only precision findings go.
- A member of a typing union (tq60a, tuned on heldout79's pipegoose bucket module): `DistOperator = Union[dist.
  broadcast, dist.scatter, ...]` names the values a parameter may take for a type checker; subscripting `Union` /
  `Optional` runs none of its members (typing docs: a special form), so `dist.scatter` there calls no collective.
  A finding on a member that is a plain reference (not a call) is dropped; the calls are where a value is passed.
"""
from __future__ import annotations

import ast

from auditor.astnodes import node_span, starts_in
from auditor.static.astutil import ast_dotted, module_nodes

# torch's context-manager-only SDPA backend choosers (a bare call of one is a no-op)
_CONTEXT_ONLY_CALLS = frozenset({"sdp_kernel", "sdpa_kernel"})
# typing.TYPE_CHECKING: "False at runtime", True only for static type checkers (typing docs): an `if TYPE_CHECKING:`
# block's imports never run (ART's `from unsloth_zoo.vllm_lora_request import LoRARequest`, used in annotations)
_TYPE_CHECKING = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING", "t.TYPE_CHECKING"})
_CTYPES_BASES = frozenset({"Structure", "Union", "BigEndianStructure", "LittleEndianStructure",
                           "BigEndianUnion", "LittleEndianUnion"})


def _last_name(node: ast.AST) -> str:
    name = ast_dotted(node) or ""
    return name.rsplit(".", 1)[-1]


def bare_context_manager_calls(tree: ast.AST) -> list[ast.Call]:
    """`sdp_kernel(...)` / `sdpa_kernel(...)` calls that are whole expression statements (never entered)."""
    return [n.value for n in module_nodes(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
            and _last_name(n.value.func) in _CONTEXT_ONLY_CALLS]


def _ctypes_classes(nodes: list[ast.AST]) -> set[str]:
    return {n.name for n in nodes if isinstance(n, ast.ClassDef)
            and any(_last_name(b) in _CTYPES_BASES for b in n.bases)}


def ctypes_field_names(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, 0-based column) of the name strings of `_fields_` entries of ctypes structures / unions: in the class
    body, or assigned as `Struct._fields_` to a class of the file derived from a ctypes structure."""
    nodes = module_nodes(tree)
    structs = _ctypes_classes(nodes)
    values: list[ast.expr] = []
    for n in nodes:
        if isinstance(n, ast.ClassDef) and n.name in structs:
            values += [s.value for s in n.body if isinstance(s, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id == "_fields_" for t in s.targets)]
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "_fields_"
                                               and isinstance(t.value, ast.Name) and t.value.id in structs
                                               for t in n.targets):
            values.append(n.value)
    out: set[tuple[int, int]] = set()
    for v in values:
        if not isinstance(v, (ast.List, ast.Tuple)):
            continue
        for entry in v.elts:
            if isinstance(entry, ast.Tuple) and entry.elts and isinstance(entry.elts[0], ast.Constant) \
                    and isinstance(entry.elts[0].value, str):
                out.add((entry.elts[0].lineno, entry.elts[0].col_offset))
    return out


_ATTENTION_NAME_RULES = frozenset({"flash-attention-implementation-string"})


def expected_values(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, 0-based column) of the strings a dict entry keyed `expected` / `expected_*` holds (module doc)."""
    out: set[tuple[int, int]] = set()
    for n in module_nodes(tree):
        if not isinstance(n, ast.Dict):
            continue
        for k, v in zip(n.keys, n.values):
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and \
                    (k.value == "expected" or k.value.startswith("expected_")):
                for e in (v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]):
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        out.add((e.lineno, e.col_offset))
    return out


def _constant_truth(test: ast.expr) -> bool | None:
    """The truth of a test made of constants only (`False`, `0`, `None`, `not True`, `False and x`, `True or x`), or
    None when the test reads anything else. typing's `TYPE_CHECKING` is False at run time (tq47b)."""
    if isinstance(test, ast.Constant) and isinstance(test.value, (bool, int, type(None))):
        return bool(test.value)
    if isinstance(test, (ast.Name, ast.Attribute)) and (ast_dotted(test) or "") in _TYPE_CHECKING:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _constant_truth(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        # `False and x` is false and `True or x` true whatever x is (x is not even evaluated)
        decisive = isinstance(test.op, ast.Or)
        return decisive if any(_constant_truth(v) is decisive for v in test.values) else None
    return None


def never_run_spans(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """The spans of the suites Python never runs: the body of `if` / `while` under a false constant test, the
    `else:` arm of `if` under a true one (module doc)."""
    out: list[tuple[int, int, int, int]] = []
    for n in module_nodes(tree):
        if not isinstance(n, (ast.If, ast.While)):
            continue
        truth = _constant_truth(n.test)
        dead = n.body if truth is False else n.orelse if truth is True and isinstance(n, ast.If) else []
        if dead:
            out.append(node_span(dead[0], dead[-1]))
    return out


_TORCH_DEVICE_MODULES = frozenset({"torch.cuda"})


def getattr_defaults(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, 0-based column) of the `torch.cuda` default of `getattr(torch, <name>, torch.cuda)` (module doc)."""
    out: set[tuple[int, int]] = set()
    for n in module_nodes(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" and len(n.args) == 3 \
                and not n.keywords and ast_dotted(n.args[0]) == "torch" and not isinstance(n.args[1], ast.Constant) \
                and ast_dotted(n.args[2]) in _TORCH_DEVICE_MODULES:
            out.add((n.args[2].lineno, n.args[2].col_offset))
    return out


# out-of-place conversions of a tensor (a module's `.to` / `.half()` convert the module itself)
_CONVERSIONS = frozenset({"to", "bfloat16", "half", "float", "double", "type"})
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})
_FACTORIES = frozenset({"randn", "rand", "randn_like", "rand_like", "zeros", "ones", "empty", "full", "zeros_like",
                        "ones_like", "empty_like", "full_like", "tensor", "arange", "linspace"})


def _tensor_names(scope: ast.AST) -> set[str]:
    """Names `scope` uses as tensors: operands of arithmetic, members of a `torch.cat` / `torch.stack` list, names a
    torch factory binds (module doc)."""
    out: set[str] = set()
    for n in module_nodes(scope):
        if isinstance(n, ast.BinOp):
            out.update(side.id for side in (n.left, n.right) if isinstance(side, ast.Name))
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], (ast.List, ast.Tuple)) and \
                ast_dotted(n.func) in _JOINS:
            out.update(e.id for e in n.args[0].elts if isinstance(e, ast.Name))
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and \
                (ast_dotted(n.value.func) or "").split(".")[:1] == ["torch"] and \
                _last_name(n.value.func) in _FACTORIES:
            out.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return out


def discarded_conversions(tree: ast.AST) -> list[ast.Call]:
    """`t.to(torch.bfloat16)` / `t.half()` calls that are whole expression statements on a tensor (module doc)."""
    out: list[ast.Call] = []
    for scope in module_nodes(tree):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        bare = [n.value for n in module_nodes(scope) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in _CONVERSIONS
                and isinstance(n.value.func.value, ast.Name)]
        if bare:
            tensors = _tensor_names(scope)
            out += [c for c in bare if c.func.value.id in tensors]     # type: ignore[attr-defined]
    return out


_TYPE_FORMS = frozenset({"Union", "Optional"})


def union_members(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, 0-based column) of the references a `Union[...]` / `Optional[...]` subscript lists (module doc)."""
    out: set[tuple[int, int]] = set()
    for n in module_nodes(tree):
        if isinstance(n, ast.Subscript) and _last_name(n.value) in _TYPE_FORMS:
            members = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            out.update((m.lineno, m.col_offset) for m in members if isinstance(m, (ast.Attribute, ast.Name)))
    return out


def drop_inert_constructs(findings: list, tree: ast.AST, text: str) -> list:
    """Findings on a never-entered SDPA context manager, on a ctypes field name, (NPU386) on a test table's expected
    value, on the `torch.cuda` default of a `getattr(torch, ...)`, in a suite Python never runs, on a typing union's
    member, or (precision) in a tensor conversion whose result is thrown away, dropped (module doc)."""
    if not findings:
        return findings
    if any(word in text for word in ("False", "True", "None", "if 0", "while 0", "TYPE_CHECKING")):
        dead = never_run_spans(tree)
        if dead:
            findings = [f for f in findings if not starts_in(f, dead)]
    drop: list[tuple[tuple[int, int], tuple[int, int]]] = []
    if "_kernel" in text:
        for call in bare_context_manager_calls(tree):
            end = (call.end_lineno or call.lineno, call.end_col_offset or 0)
            drop.append(((call.lineno, call.col_offset), end))
    fields = ctypes_field_names(tree) if "_fields_" in text else set()
    expected = expected_values(tree) if "expected" in text and any(
        f.name in _ATTENTION_NAME_RULES for f in findings) else set()
    defaults = getattr_defaults(tree) if "getattr(" in text and "torch.cuda" in text else set()
    thrown = [(call.lineno, call.col_offset, call.end_lineno or call.lineno, call.end_col_offset or 0)
              for call in discarded_conversions(tree)] if any(f.category == "precision" for f in findings) and \
        any(f"{attr}(" in text for attr in _CONVERSIONS) else []
    if thrown:
        findings = [f for f in findings if not (f.category == "precision" and starts_in(f, thrown))]
    if ("Union[" in text or "Optional[" in text) and (members := union_members(tree)):
        findings = [f for f in findings if (f.line, (f.col or 1) - 1) not in members]
    if not drop and not fields and not expected and not defaults:
        return findings

    def inert(f) -> bool:
        at = (f.line, (f.col or 1) - 1)
        if at in fields or f.name in _ATTENTION_NAME_RULES and at in expected or \
                at in defaults and f.symbol in _TORCH_DEVICE_MODULES:
            return True
        return any(start <= at < end and f.symbol.rsplit(".", 1)[-1] in _CONTEXT_ONLY_CALLS for start, end in drop)

    return [f for f in findings if not inert(f)]

"""Host-only code the per-file pass cannot see as such (issue 11, t11i, tuned on heldout7; policies (a) and (e) in
docs/precision.md). A dtype hint (NPU201 bf16, NPU202 fp16, NPU203 fp8, ...: category precision) is about device
compute; on values that never leave the host it is false (policy (e)), and a table or chain that maps dtype NAMES
to dtypes chooses nothing (policy (a)). Four structures, read per file after the per-file pass:

- a test module (it defines tests) that places nothing on a device (no `.cuda()` / `.npu()` / `.to(device)`, no `device=` other than
  "cpu", no `set_device`, no `torch.cuda.*` / `torch.npu.*`): its tensors are host tensors (torchair's system tests
  that export a GE graph through a stub backend, slime's CPU-only tests with `NUM_GPUS = 0`): there only the torch
  dtypes of tensors (`dtype=torch.float16`, `.to(torch.float8_e4m3fn)`) are host values; a setting (`kv_cache_dtype =
  "fp8"`) may reach an engine that picks the device itself;
- a function that places nothing on a device and is a CPU path by its name (`run_speculative_cpu`, `cpu_forward`)
  or runs its work under `torch.autocast("cpu")` / `torch.cpu.amp.autocast()` (ipex-llm's all-in-one benchmark);
- a converter chain: a function with at least four `if <x> == <A>: return <dtype>` arms (torchair's
  `_ge_dtype_to_torch_dtype`, `if dtype == DataType.DT_FLOAT8_E8M0: ... return torch.float8_e8m0fnu`): the returns
  name the dtype a GE enum stands for;
- a data-type constant built from its name (`DT_BF16 = UnquantizedDataType('BF16')`, policy (a));
- the body of `with FakeTensorMode():` (torchair's pattern passes build example inputs there);
- a tensor or module built on the `meta` device (t11l, tuned on heldout9): `torch.empty(..., device="meta",
  dtype=torch.bfloat16)`, the body of `with torch.device("meta"):` / `with init_empty_weights():` /
  `with init_on_device(torch.device("meta")):` (not `torch.nn.utils.skip_init`: it materialises on the device it
  is given, with the dtype): a meta tensor holds a shape and a
  dtype, nothing is computed (msmodeling's simulator tests; policy (e));
- a dtype -> name / number table (t11s, tuned on heldout11; policy (a)): a dict literal of at least two entries
  whose keys are all torch dtypes and whose values are all string or number constants (`{torch.bfloat16:
  "bfloat16", torch.float16: "float16", ...}` that serialises a dtype, `{torch.float8_e4m3fn: 1, ...}` of element
  sizes), or whose keys are all dtype-name strings and whose values are all numbers (`HARDWARE_TFLOPS = {"fp32":
  ..., "bf16": 191 / 2, ...}`): it names dtypes, it chooses none;
- a mock of the torch.cuda module (`monkeypatch.setattr(torch.cuda, "synchronize", fake)`,
  `mock.patch.object(torch.cuda, "is_available", ...)`): the module is named to be replaced, nothing calls CUDA.

The precision findings there (and the `torch.cuda` reference of a mock) are dropped. Anything else (a `.cuda()`,
a CUDA-only package) is kept: those are not hints on values.
"""
from __future__ import annotations

import ast
from dataclasses import replace
import re
from auditor.astnodes import line_span, node_span
from auditor.static.astutil import literal_strings, module_nodes

# a line that places a tensor or module on a device, or uses a device runtime
_PLACES = re.compile(
    r"""\.(?:cuda|npu|xpu|mlu|musa|hpu|mps)\(|\bdevice\s*=\s*(?!\s*['"]cpu['"])[^=\s,)]"""
    r"""|\.to\(\s*(?:['"](?!cpu['"])|f['"]|[\w.]*(?:device|dev|rank)\b)|\bset_(?:default_)?device\("""
    r"""|torch\.device\(\s*(?!['"]cpu['"])|\btorch\.(?:cuda|npu|xpu)\.|\bdevice_map\b""")
_CPU_NAME = re.compile(r"(?i)(?:^|_)cpu(?:_|$)")
_CPU_AUTOCAST = re.compile(r"""autocast\(\s*(?:device_type\s*=\s*)?['"]cpu['"]|\btorch\.cpu\.amp\.autocast\(""")
# r2b (test71's tapnet `track_frame`: `torch.amp.autocast("cuda", dtype=dtype) if (autocast and ...) else
# torch.amp.autocast("cpu", enabled=False)`): a function that also opens a CUDA autocast chooses between the two regions;
# it is no CPU path
_CUDA_AUTOCAST = re.compile(r"""autocast\(\s*(?:device_type\s*=\s*)?['"]cuda['"]|\btorch\.cuda\.amp\.autocast\(""")
_CUDA_MOCK = re.compile(r"""\b(?:setattr|patch\.object|object)\(\s*torch\.cuda\s*,""")
_MIN_ARMS = 4
# a data-type enum constant built from the name (llama.cpp's converter, copied into many trees: `DT_BF16 =
# UnquantizedDataType('BF16')`): it names a checkpoint format, chooses nothing (policy (a))
_DTYPE_CONSTANT = re.compile(r"""\b\w*(?:DataType|DType|Dtype)\(\s*(?:name\s*=\s*)?['"]\w+['"]""")
# a module that defines tests (a script under tests/ that builds a model at top level is not read as one)
_TESTS = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*\(|^[ \t]*class[ \t]+\w*Test\w*\b", re.M)


def _test_file(rel: str) -> bool:
    from auditor.static.backend_files import test_file

    return test_file(rel)


def places_on_device(text: str) -> bool:
    return _PLACES.search(text) is not None


def _functions(tree: ast.AST):
    return [n for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _cpu_functions(tree: ast.AST, lines: list[str]) -> list[tuple[int, int]]:
    """Spans of functions that are CPU paths (by name or autocast("cpu")) and place nothing on a device."""
    out = []
    for fn in _functions(tree):
        text = "\n".join(lines[fn.lineno - 1:fn.end_lineno or fn.lineno])
        if not (_CPU_NAME.search(fn.name) or _CPU_AUTOCAST.search(text) and not _CUDA_AUTOCAST.search(text)) \
                or places_on_device(text):
            continue
        out.append(line_span(fn))
    return out


def _returns_value(body: list[ast.stmt]) -> bool:
    """An arm's body: a `return <name / attribute / constant>`, possibly behind a probe (`if hasattr(...):`)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            return isinstance(stmt.value, (ast.Attribute, ast.Name, ast.Constant))
        if isinstance(stmt, ast.If) and _returns_value(stmt.body):
            continue
        return False
    return False


def equality_arms(fn: ast.AST, returns) -> list[tuple[int, int]]:
    """Line spans of the arms of a function's if / elif chains that test one `==` / `is` comparison and whose body
    `returns(body)` accepts: the converter chains of host_paths and host_scopes' op mappings."""
    arms = []
    stack = list(getattr(fn, "body", []))
    while stack:
        stmt = stack.pop()
        if not isinstance(stmt, ast.If):
            continue
        test = stmt.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)) \
                and returns(stmt.body):
            arms.append((stmt.lineno, stmt.body[-1].end_lineno or stmt.lineno))
        stack.extend(s for s in stmt.orelse if isinstance(s, ast.If))        # elif
    return arms


def _converter_arms(tree: ast.AST) -> list[tuple[int, int]]:
    """Spans of the arms of dtype converter chains (`if dtype == DataType.DT_BF16: return torch.bfloat16`)."""
    out = []
    for fn in _functions(tree):
        arms = equality_arms(fn, _returns_value)
        if len(arms) >= _MIN_ARMS:
            out += arms
    return out


_MIN_TABLE = 2      # HARDWARE_TFLOPS = {"trn1": {"fp32": 48 / 2, "bf16": 191 / 2}, ...}


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return _number(node.left) and _number(node.right)
    return isinstance(node, ast.UnaryOp) and _number(node.operand)


def _dtype_key(node: ast.AST | None) -> bool:
    """`torch.bfloat16`, `torch.float8_e4m3fn`: an attribute of `torch` (the dtype, not a module below it)."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch" \
        and not node.attr.startswith("_") and node.attr[0].islower() and node.attr not in _NOT_DTYPES


_NOT_DTYPES = frozenset({"cuda", "npu", "nn", "distributed", "ops", "backends", "device", "tensor", "Tensor"})
_DTYPE_NAME = re.compile(r"(?i)^(?:torch\.)?(?:b?float\d*|bf16|fp\d+|f\d+|half|double|int\d+|uint\d+|i\d+|u\d+|"
                         r"f8_e\dm\d\w*|"
                         r"float8\w*|fp8\w*|e4m3\w*|e5m2\w*|tf32|mxfp\d+|nvfp4|bool|complex\d*)$")


def _dtype_tables(tree: ast.AST) -> list[tuple[int, int]]:
    """Spans of dtype -> name / number tables, dtype-name -> number / dtype tables and record tables (module doc)."""
    out = []
    for node in module_nodes(tree):
        if not isinstance(node, ast.Dict) or len(node.keys) < _MIN_TABLE or any(k is None for k in node.keys):
            continue
        keys, values = node.keys, node.values
        by_dtype = all(_dtype_key(k) for k in keys) and all(
            isinstance(v, ast.Constant) and isinstance(v.value, str) or _number(v) for v in values)
        names = all(isinstance(k, ast.Constant) and isinstance(k.value, str) and _DTYPE_NAME.match(k.value)
                    for k in keys)
        by_name = names and all(_number(v) for v in values)
        # `{"F16": torch.float16, "F64": torch.float64, ...}[info["dtype"]]`: a file format's dtype names read into
        # torch dtypes (safetensors / GGUF headers); the file chose them, the table converts (t11t, policy (a))
        to_dtype = names and all(_dtype_key(v) for v in values) and all(
            isinstance(k, ast.Constant) and str(k.value).upper() == k.value for k in keys)
        if by_dtype or by_name or to_dtype:
            out.append(line_span(node))
    # a table of records (`[{"res": 768, "total_vram": 23, "bs": 18, "dtype": torch.float16}, ...]`: batch sizes
    # measured per resolution, memory and dtype, looked up with the dtype the caller chose): at least two dict
    # literals with the same string keys, every value a number, a string or a torch dtype (t11t, policy (a))
    for node in module_nodes(tree):
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) < _MIN_TABLE or not all(
                isinstance(e, ast.Dict) and e.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                           for k in e.keys) for e in node.elts):
            continue
        rows = [e for e in node.elts if isinstance(e, ast.Dict)]
        shapes = {tuple(sorted(str(getattr(k, "value", "")) for k in e.keys)) for e in rows}
        if len(shapes) == 1 and all(_number(v) or _dtype_key(v) or isinstance(v, ast.Constant) and isinstance(
                v.value, str) for e in rows for v in e.values) and any(_dtype_key(v) for e in rows for v in e.values) \
                and any(_number(v) for e in rows for v in e.values):
            out.append(line_span(node))
    return out


# Host casts and reinterpretations (t11t, tuned on heldout13; policies (e) and (a)):
# - `w.detach().cpu().contiguous().half()`, `value.cpu().to(torch.float16)`: a cast AFTER the chain brought the
#   tensor to the host (no move back in between) converts a host copy, mostly for saving a state dict; no device
#   computes in that dtype (ai-toolkit's LoRA extraction and checkpoint shrinking);
# - `d.view(torch.float16)`: a dtype view reinterprets the bytes of a packed buffer as the file format lays them out
#   (GGUF block scales); the cast that follows picks the compute dtype. Only info hints (fp16 / fp64 / bf16): an fp8
#   view is the fp8 use itself and keeps its finding;
# - `FP8_E4M3 = "fp8_e4m3"`: a constant whose string is its own name (an enum member, a quantisation-type label)
#   names a dtype, it chooses nothing.
_CASTS = frozenset({"half", "float", "bfloat16", "double", "to", "type"})
_MOVES_BACK = frozenset({"cuda", "npu", "xpu", "to", "mlu", "musa", "pin_memory"})


def _to_host_chain(node: ast.AST) -> bool:
    """Whether the receiver chain holds `.cpu()` (or `.numpy()`) with no move to a device after it."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("cpu", "numpy"):
                return True
            if node.func.attr in _MOVES_BACK and not (node.func.attr == "to" and node.args and _dtype_key(
                    node.args[0]) and len(node.args) == 1 and not node.keywords):
                return False
            node = node.func.value
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return False


def _to_cpu_with_dtype(call: ast.Call) -> bool:
    """`x.to(dtype=torch.float16, device="cpu")`, `x.to("cpu", torch.float16)`: the move to the host and the cast in
    one call (ChatTTS' speaker encoding before `.numpy()`, pd43): the dtype applies to the host copy."""
    device = next((k.value for k in call.keywords if k.arg == "device"), call.args[0] if call.args else None)
    rest = [a for a in call.args if a is not device] + [k.value for k in call.keywords if k.arg != "device"]
    return _str_value(device) == "cpu" and bool(rest) and all(_dtype_key(a) or isinstance(a, ast.Constant)
                                                              and isinstance(a.value, bool) for a in rest)


def _str_value(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _host_casts(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """(line, col, end line, end col) of host casts, dtype views and self-named dtype constants (above)."""
    out: list[tuple[int, int, int, int]] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            host_cast = attr in _CASTS and _to_host_chain(node.func.value) and (attr != "to" or all(
                _dtype_key(a) for a in node.args) and all(k.arg == "dtype" for k in node.keywords)) or \
                attr == "to" and _to_cpu_with_dtype(node)
            view = attr == "view" and len(node.args) == 1 and _dtype_key(node.args[0]) and \
                not ast.unparse(node.args[0]).startswith(("torch.float8", "torch.float4"))
            if host_cast:
                out.append(node_span(node))
            elif view:      # the dtype named in the view only, not the receiver chain (`x.to(torch.float16).view(u8)`)
                arg = node.args[0]
                out.append(node_span(arg))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and \
                node.value.value.lower() == node.targets[0].id.lower():
            out.append((node.lineno, 0, node.end_lineno or node.lineno, 1 << 30))
    return out


def _fake_blocks(tree: ast.AST, text: str) -> list[tuple[int, int]]:
    """Spans of `with FakeTensorMode():` / `with fake_mode:` bodies (`fake_mode = FakeTensorMode()` in the file):
    tensors made there are fake, example inputs for tracing or pattern registration."""
    if "FakeTensorMode" not in text:
        return []
    bound = {t.id for n in module_nodes(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             and _callee(n.value) == "FakeTensorMode" for t in n.targets if isinstance(t, ast.Name)}
    out = []
    for node in module_nodes(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and _callee(i.context_expr) == "FakeTensorMode" or
                isinstance(i.context_expr, ast.Name) and i.context_expr.id in bound for i in node.items):
            out.append(line_span(node))
    return out


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


_SCALAR_FACTORIES = frozenset({"tensor", "as_tensor", "scalar_tensor", "full", "ones", "zeros"})


def _host_scalars(tree: ast.AST) -> list[tuple[int, int, int]]:
    """(line, first col, end col) of each one-line tensor built on the host only to read a Python number back:
    `torch.tensor(eps, dtype=torch.bfloat16, device="cpu").item()` rounds a scalar the way a dtype would (MindIE-SD's
    fusion patterns; t11k, tuned on heldout8): the dtype there is a host value (policy (e)). A tensor without a
    device argument or on "cpu"; `.item()` straight on the call, so nothing else keeps the tensor."""
    out: list[tuple[int, int, int]] = []
    for node in module_nodes(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item"
                and not node.args and isinstance(node.func.value, ast.Call)):
            continue
        made = node.func.value
        if not (isinstance(made.func, ast.Attribute) and isinstance(made.func.value, ast.Name)
                and made.func.attr in _SCALAR_FACTORIES):
            continue            # `torch.tensor(x, dtype=...).cuda().item()`: the tensor went to a device first
        device = next((k.value for k in made.keywords if k.arg == "device"), None)
        if device is not None and not (isinstance(device, ast.Constant) and device.value == "cpu"):
            continue
        if made.lineno == (made.end_lineno or made.lineno):
            out.append((made.lineno, made.col_offset + 1, (made.end_col_offset or 0) + 1))
    return out


# a file that later gives meta-built modules real storage: the dtype chosen under meta then reaches the device.
# tk42 (test102: PrefixQuant's eval.py `with init_empty_weights(): model = AutoModelForCausalLM.from_pretrained(...,
# torch_dtype=torch.float16)` ... `load_checkpoint_in_model(model, checkpoint=..., device_map=device_map)`, the loader
# EfficientQAT's and its descendants' quantized-model loading shares): accelerate's `load_checkpoint_in_model` "loads
# a (potentially sharded) checkpoint inside a model, potentially sending weights to a given device as they are loaded"
# (https://huggingface.co/docs/accelerate/package_reference/big_modeling)
_MATERIALISES = re.compile(r"\bto_empty\(|\bload_checkpoint_and_dispatch\(|\bdispatch_model\("
                           r"|\bset_module_tensor_to_device\(|\bassign\s*=\s*True|\bload_checkpoint_in_model\(")


def _is_meta(node: ast.AST | None) -> bool:
    """`"meta"` or `torch.device("meta")`."""
    if isinstance(node, ast.Constant):
        return node.value == "meta"
    return isinstance(node, ast.Call) and _callee(node) == "device" and bool(node.args) and _is_meta(node.args[0])


def _meta_scope(node: ast.AST) -> bool:
    """`torch.device("meta")`, `init_empty_weights()` (accelerate), `init_on_device(torch.device("meta"))`."""
    if _is_meta(node):
        return True
    if not isinstance(node, ast.Call):
        return False
    name = _callee(node)
    if name == "init_on_device":
        device = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
        return _is_meta(device)
    return name == "init_empty_weights"


def _meta_spans(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """(first line, first col, last line, end col) of each call that builds on the meta device (`device="meta"`;
    not `torch.nn.utils.skip_init`, which materialises on the device it is given) and of each
    `with torch.device("meta"):` / `with init_empty_weights():` body. The caller reads them only in files that
    never materialise such modules (`to_empty`, `load_checkpoint_and_dispatch`, ...)."""
    out: list[tuple[int, int, int, int]] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and any(k.arg == "device" and _is_meta(k.value) for k in node.keywords):
            out.append((node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                        (node.end_col_offset or 0) + 1))
        elif isinstance(node, (ast.With, ast.AsyncWith)) and node.body and any(
                _meta_scope(i.context_expr) for i in node.items):
            out.append((node.body[0].lineno, 0, node.end_lineno or node.lineno, 1 << 30))
    return out


def _in_meta(spans: list[tuple[int, int, int, int]], line: int, col: int) -> bool:
    return any((l0, c0) <= (line, col) < (l1, c1) for l0, c0, l1, c1 in spans)


def _inside(spans: list[tuple[int, int]], line: int) -> bool:
    return any(lo <= line <= hi for lo, hi in spans)


def drop_host_paths(findings: list, rel: str, text: str, tree: ast.AST) -> list:
    """The file's findings without precision findings on host-only code and torch.cuda references of mocks (per
    file, in the worker: the answer is cached with the file's result)."""
    if not rel.endswith(".py") or not any(f.category == "precision" or f.symbol == "torch.cuda" for f in findings):
        return findings
    lines = text.splitlines()
    host_file = _test_file(rel) and _TESTS.search(text) is not None and not places_on_device(text)
    precision = any(f.category == "precision" for f in findings)
    cpu = _cpu_functions(tree, lines) if precision and not host_file and "cpu" in text else []
    arms = _converter_arms(tree) + _fake_blocks(tree, text) + _dtype_tables(tree) \
        if precision and not host_file else []
    scalars = _host_scalars(tree) if precision and not host_file and ".item()" in text else []
    meta = _meta_spans(tree) if precision and ("meta" in text or "init_empty_weights" in text) \
        and not _MATERIALISES.search(text) else []
    casts = _host_casts(tree) if precision and not host_file else []
    kept = []
    for f in findings:
        line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        if f.category == "precision" and (host_file and (f.symbol or "").startswith("torch.") or
                                          _inside(cpu, f.line) or _inside(arms, f.line)):
            continue
        if f.category == "precision" and any(line_ == f.line and lo <= f.col < hi for line_, lo, hi in scalars):
            continue
        if f.category == "precision" and _in_meta(meta, f.line, f.col):
            continue
        if f.category == "precision" and any((l0, c0) <= (f.line, f.col - 1) < (l1, c1) for l0, c0, l1, c1 in casts):
            continue
        if f.category == "precision" and _DTYPE_CONSTANT.search(line):
            continue
        if f.symbol == "torch.cuda" and _CUDA_MOCK.search(line):
            continue
        kept.append(f)
    return kept


_CUDA_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.random.manual_seed",
                         "torch.cuda.random.manual_seed_all"})
_GLOBAL_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
_RESEED_NOTE = (" (torch.manual_seed(...) earlier in the same block already seeds every device, the NPU included, and "
                "torch.cuda's seeding is silently ignored without CUDA: nothing fails; drop the line or seed "
                "torch.npu alike)")


# the test of `if torch.cuda.is_available(): torch.cuda.manual_seed_all(seed)` after `torch.manual_seed(seed)`
# chooses nothing on Ascend (InstaNovo's test conftest, heldout31; pd38): without the torch.manual_seed before it,
# the NPU stays unseeded and the test keeps its finding
_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})
_RESEED_GATE_NOTE = "the gate guards only a re-seed of CUDA's generators after `torch.manual_seed`, which already " \
    "seeds every device's (the NPU's too): nothing differs on Ascend"


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _seed_call(stmt: ast.stmt, aliases: dict[str, str] | None = None) -> str:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        head, dot, tail = _dotted(stmt.value.func).partition(".")
        return (aliases or {}).get(head, head) + dot + tail
    return ""


def _torch_aliases(tree: ast.AST) -> dict[str, str]:
    """`import torch as th` -> {"th": "torch"}: aps' `th.random.manual_seed(seed)` is torch's global seed (tq55c)."""
    return {a.asname: a.name for node in module_nodes(tree) if isinstance(node, ast.Import) for a in node.names
            if a.asname and a.name in ("torch", "torch.cuda", "torch.random")}


def _reseed_lines(tree: ast.AST) -> tuple[set[int], set[int]]:
    """Lines of `torch.cuda.manual_seed(...)` / `manual_seed_all(...)` statements that follow a
    `torch.manual_seed(...)` statement in the same block (a `set_seed` helper's usual lines), also as the whole body
    of an `if` there (`if torch.cuda.is_available():`); and the lines of such an `if`'s test."""
    out: set[int] = set()
    tests: set[int] = set()
    aliases = _torch_aliases(tree)
    for node in module_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            seeded = False
            for stmt in block:
                name = _seed_call(stmt, aliases) if isinstance(stmt, ast.stmt) else ""
                if name in _GLOBAL_SEEDS:
                    seeded = True
                elif seeded and name in _CUDA_SEEDS:
                    out.add(stmt.lineno)
                elif seeded and isinstance(stmt, ast.If) and not stmt.orelse and all(
                        _seed_call(s, aliases) in _CUDA_SEEDS for s in stmt.body):
                    # `if torch.cuda.is_available(): torch.cuda.manual_seed_all(seed)`: the same re-seed, guarded (t11z)
                    out.update(s.lineno for s in stmt.body)
                    tests.update(range(stmt.test.lineno, (stmt.test.end_lineno or stmt.test.lineno) + 1))
    return out, tests


def demote_reseeds(findings: list, tree: ast.AST) -> list:
    """`torch.cuda.manual_seed(seed)` right after `torch.manual_seed(seed)`: the global seed already reached every
    device's generator (torch seeds CUDA and the registered custom device, torch_npu's NPU) and torch.cuda's
    seeding is a documented no-op without CUDA, so the line neither fails nor changes behaviour on Ascend: a hint
    (info), not an error (t11l, tuned on heldout9; fbgemm-ascend's test helpers)."""
    if not any(f.symbol in _CUDA_SEEDS | _PROBES and f.severity != "info" for f in findings):
        return findings
    from auditor.static.backends import as_info

    lines, tests = _reseed_lines(tree)
    flags = _reseed_flags(tree, tests) if tests else set()
    return [replace(f, severity="info", message=f.message + _RESEED_NOTE)
            if f.symbol in _CUDA_SEEDS and f.line in lines and f.severity != "info" else
            as_info(f, "redundant-reseed", _RESEED_GATE_NOTE)
            if f.symbol in _PROBES and f.line in tests and f.severity != "info" else
            as_info(f, "redundant-reseed", _RESEED_FLAG_NOTE)
            if f.symbol in _PROBES and f.line in flags and f.severity != "info" else f for f in findings]


_RESEED_FLAG_NOTE = "the flag it sets is only printed and tests a re-seed of CUDA's generators after " \
    "`torch.manual_seed`, which already seeds every device's (the NPU's too): nothing differs on Ascend; the device " \
    "is chosen elsewhere"
_PRINTS = frozenset({"print", "info", "debug", "warning", "log"})


def _reseed_flags(tree: ast.AST, tests: set[int]) -> set[int]:
    """Lines of `args.cuda = torch.cuda.is_available()` whose flag is read only by the test of a re-seed gate
    (`if args.cuda: torch.cuda.manual_seed(args.seed)` after `torch.manual_seed(args.seed)`, `tests`) or inside a
    print / log call (`print('cuda: %s' % args.cuda)`): DeepRobust's example scripts (tq55b, heldout72). A flag read
    anywhere else (`if args.cuda: model.cuda()`), or whose object is passed on whole (`train(args)`), keeps it."""
    probes: dict[str, list[int]] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and any(
                isinstance(n, ast.Call) and _dotted(n.func) in _PROBES for n in ast.walk(node.value)):
            name = _dotted(node.targets[0])
            if name:
                probes.setdefault(name, []).append(node.lineno)
    if not probes:
        return set()
    allowed: set[int] = set()       # ids of nodes inside a print / log call's arguments
    bases: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and (node.func.attr if isinstance(node.func, ast.Attribute) else
                                           node.func.id if isinstance(node.func, ast.Name) else "") in _PRINTS:
            allowed |= {id(n) for a in [*node.args, *(k.value for k in node.keywords)] for n in ast.walk(a)}
        if isinstance(node, ast.Attribute):
            bases.add(id(node.value))
    out: set[int] = set()
    for name, assigned in probes.items():
        root = name.split(".", 1)[0]
        reads = [n for n in module_nodes(tree) if isinstance(n, (ast.Name, ast.Attribute)) and
                 isinstance(n.ctx, ast.Load) and _dotted(n) == name]
        whole = "." in name and any(isinstance(n, ast.Name) and n.id == root and isinstance(n.ctx, ast.Load) and
                                    id(n) not in bases for n in module_nodes(tree))
        if reads and not whole and all(n.lineno in tests or id(n) in allowed for n in reads):
            out.update(assigned)
    return out


# platform names that are no torch device type: a collection or a call that holds one beside "cuda" names platforms
# (a benchmark report's label, a parity matrix), it selects no device
_PLATFORM_LABELS = frozenset({"ascend", "nvidia", "huawei", "rocm", "cann"})
_FAKE_CALLEE = re.compile(r"^_*(?:Fake|Mock|MagicMock|Dummy|Stub|fake|mock|dummy|stub)(?:_|[A-Z]|$)")


def _cuda_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cuda"


def _label_points(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, col) of "cuda" literals that are data, not devices:
    - an element of a tuple / list / set literal that also holds a platform name that is no device type
      (`for platform in ("cuda", "ascend")`);
    - the same positional argument of a function the module also calls with such a platform name
      (`_report_fixture("cuda", ...)` beside `_report_fixture("ascend", ...)`);
    - an argument of a fake / mock / stub class or factory (`_FakeTensor("cuda", (1, 16))`,
      `MagicMock(device="cuda")`): a test double touches no device;
    - a value set on an attribute of such a double (`context = MagicMock(spec=Context)` ... `context.device.type =
      "cuda"`, `mock_context.device.type = "cuda"`: anemoi-inference's cluster tests; pd56)."""
    points: set[tuple[int, int]] = set()
    labelled: set[tuple[str, int]] = set()
    calls: list[ast.Call] = []
    doubles: set[str] = set()       # names bound to a fake / mock call
    settings: list[ast.Assign] = []     # `x.attr = "cuda"`
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _FAKE_CALLEE.match(_callee(node.value)):
            doubles.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Assign) and _cuda_literal(node.value) and \
                any(isinstance(t, ast.Attribute) for t in node.targets):
            settings.append(node)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = {text.lower() for text in literal_strings(node)}
            if names & _PLATFORM_LABELS:
                points |= {(e.lineno, e.col_offset + 1) for e in node.elts if _cuda_literal(e)}
        elif isinstance(node, ast.Call):
            calls.append(node)
            callee = _callee(node)
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                        and arg.value.lower() in _PLATFORM_LABELS:
                    labelled.add((callee, i))
            if _FAKE_CALLEE.match(callee):
                points |= {(a.lineno, a.col_offset + 1) for a in [*node.args, *(k.value for k in node.keywords)]
                           if _cuda_literal(a)}
    for call in calls:
        callee = _callee(call)
        points |= {(a.lineno, a.col_offset + 1) for i, a in enumerate(call.args)
                   if _cuda_literal(a) and (callee, i) in labelled}
    for node in settings:
        roots = [_root_name(t) for t in node.targets if isinstance(t, ast.Attribute)]
        if any(r in doubles or _FAKE_CALLEE.match(r) for r in roots if r):
            points.add((node.value.lineno, node.value.col_offset + 1))
    return points


def _root_name(node: ast.AST) -> str:
    """`mock_context` of `mock_context.device.type`; "" when the chain starts with no name (`self`'s is `self`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def drop_platform_labels(findings: list, tree: ast.AST) -> list:
    """The findings without device strings that are data (`_label_points`) and without dtype hints on the arguments
    of test doubles (`_fake_spans`; t11l, tuned on heldout9's benchmark contract tests and fake-runtime API tests),
    and without profiler column names that label the code's own table (`_own_columns`; pd53)."""
    if not any(f.name == "cuda-device-string" and f.symbol == "cuda" or f.category == "precision"
               or f.name == _PROFILER_COLUMN for f in findings):
        return findings
    points = _label_points(tree)
    columns = _own_columns(tree) if any(f.name == _PROFILER_COLUMN for f in findings) else set()
    fakes = _fake_spans(tree) if any(f.category == "precision" for f in findings) else []
    return [f for f in findings if not (f.name == "cuda-device-string" and (f.line, f.col) in points)
            and not (f.name == _PROFILER_COLUMN and (f.line, f.col) in columns)
            and not (f.category == "precision" and _in_meta(fakes, f.line, f.col))]


_PROFILER_COLUMN = "profiler-cuda-column"


def _own_columns(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, col) of strings that name a column of the code's own table: a dict key (`{"cuda_time_total":
    event.device_time_total}`), a set member (`expected_columns = {"name", "self_cuda_time_total"}`) or a subscript
    (`df["self_cuda_time_total"]`, `df.loc[rows, "self_cuda_time_total"]`). The profiler takes its column names as
    call arguments (`table(sort_by="cuda_time_total")`, `export_stacks(path, "self_cuda_time_total")`) and gives its
    events attributes, never keys: a string keyed or indexed by the code is its own data (itwinai's profiler report,
    filled from the device columns)."""
    out: set[tuple[int, int]] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Dict):
            keys: list[ast.expr | None] = list(node.keys)
        elif isinstance(node, ast.Set):
            keys = list(node.elts)
        elif isinstance(node, ast.Subscript):
            keys = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        else:
            continue
        out |= {(k.lineno, k.col_offset + 1) for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return out


def _fake_spans(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """Spans of the arguments of fake / mock / stub callees (`_FakeTensor("npu", (2, 16), torch.bfloat16)`): a dtype
    handed to a test double is a host value (policy (e))."""
    out: list[tuple[int, int, int, int]] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and _FAKE_CALLEE.match(_callee(node)):
            out += [(a.lineno, a.col_offset + 1, a.end_lineno or a.lineno, (a.end_col_offset or 0) + 1)
                    for a in [*node.args, *(k.value for k in node.keywords)]]
    return out

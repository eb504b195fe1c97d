"""Findings whose construct the code only reads, names or runs on the host (t11x, tuned on bench/precision/heldout15,
checked on heldout10..14's labels; docs/precision.md, "t11x: host values, stand-ins and names on heldout15").

- Host operands: an operator hint (NPU501 / NPU502 unsupported or unverified torch API, NPU702 data-dependent
  shape) on `torch.<op>(x, ...)` whose first tensor input is made on the host (`torch.quantize_per_tensor(
  torch.tensor([-1.0, 0.0, 1.0]), ...)` in a state-dict unit test, `torch.unique_consecutive(torch.zeros_like(x,
  device="cpu"))` in a meta-tracing stub): torch runs the op where its input is, on the CPU; nothing reaches the NPU
  (policy (e)). Host-ness is host_scopes._HostFlow's (factories without a device or with a CPU one, names every
  assignment of the function binds to one, torch functions of one, arithmetic with numbers).
- Predicates: an fp8 helper name (NPU249) called as the test of an `if` / `elif` / `while` / `assert`, or under
  `not` / `and` / `or` there (`elif dtype.quantize_fp8():`, a DataType enum method returning a bool): a tensor
  there would raise (the truth value of a tensor of several elements), so the call returns a truth value, no float8.
- `.is_cuda` read as a negative check: `assert not t.is_cuda` holds on every backend (no tensor is CUDA on Ascend),
  nothing fails (dropped). Not `if not w.is_cuda: raise NotImplementedError(...)`: a guard that raises for every
  non-CUDA tensor fails on Ascend as written, an error by the severity contract (heldout14's deform_pool_func row
  is labelled so; heldout15's CompressedWeightMixin row, labelled false as "a deliberate guard", is left as it is).
- dtype names converted from a dtype: a dtype-name string assigned in a branch whose test reads a dtype
  (`if "bfloat16" in str(dtype): float_dtype = "bf16"`, `elif dtype == torch.float16: name = "fp16"`) names the
  model's existing dtype for an exporter or a log: it chooses nothing (policy (a)).
- dtype-name strings as expected values in a device-less test module (imports no device framework, starts no
  process, as host_scopes.drop_deviceless_test_data for device strings): `"dtype": "float16"` in the
  `expected_config` of a parametrize, or in a `ref_config` literal, is data the product's parsing or logging is
  checked on; nothing computes in that dtype. Not a dtype handed to an op or a run config (data-juicer's
  `ImageDiffusionMapper(torch_dtype="fp16")`, evalscope's benchmark `model_args`: the test runs a model in it).
- fp16 round trips: `t.half().to(original_dtype)`, `x.half().float()`, `x.to(torch.float16).to(x.dtype)` round a
  value through fp16 and hand back the wider dtype at once (a threshold made reproducible, fp16 rounding simulated):
  nothing computes or trains in fp16 (NPU202 dropped). Not `.half().to(device)` (an fp16 tensor moved to the
  device) nor `.half().cuda()` (heldout18, s15b).
- Saved switches: `saved = cudnn.deterministic`, `old_tf32 = torch.backends.cuda.matmul.allow_tf32` store a cuDNN /
  TF32 switch's current value to restore it later; the read configures nothing (torch_npu keeps the attributes
  readable), the write that restores it is reported where it is (heldout18, s15b).
"""
from __future__ import annotations

import ast
import re

from auditor.astnodes import line_span, parents_of, walk_list
from auditor.static.astutil import ast_dotted, module_nodes, self_attr

_HOST_OP_CODES = frozenset({"NPU501", "NPU502", "NPU702"})
_PREDICATE_CODES = frozenset({"NPU249"})
_DTYPE_NAME_CODES = frozenset({"NPU201", "NPU202", "NPU212"})
_DTYPE_WORDS = re.compile(r"^(?:b?float16|bf16|fp16|half|float32|fp32|float64|fp64|float8\w*|fp8\w*|int8|"
                          r"torch\.\w+)$")


def apply_value_reads(findings: list, rel: str, text: str, tree: ast.AST | None) -> list:
    """The file's findings less those above (per file, in the worker)."""
    if not findings or not rel.endswith(".py") or not isinstance(tree, ast.Module):
        return findings
    codes = {f.code for f in findings}
    if codes & _HOST_OP_CODES and "set_default_device" not in text:
        findings = _drop_host_ops(findings, tree)
    if "Dataset" in text and any(f.category == "precision" for f in findings):
        findings = _drop_dataset_samples(findings, tree)
    if codes & _PREDICATE_CODES:
        findings = _drop_predicates(findings, tree)
    if "is_cuda" in text and "NPU005" in codes:
        findings = _negative_is_cuda(findings, tree)
    if codes & _DTYPE_NAME_CODES:
        findings = _drop_dtype_names(findings, rel, text, tree)
    if "NPU003" in codes and "hwaccel" in text or codes & _DTYPE_NAME_CODES and "compute_type" in text:
        findings = _drop_foreign_options(findings, tree)
    if codes & _CONVERSION_CODES:
        findings = _drop_conversions(findings, tree)
    if "NPU202" in codes:
        trips = _round_trip_casts(tree) + (_saved_casts(tree) if _SAVES.search(text) else [])
        findings = [f for f in findings if not (f.code in _FP16_CAST_CODES and any(
            (c.lineno, c.col_offset) < (f.line, f.col) <= (c.end_lineno or c.lineno, (c.end_col_offset or 0) + 1)
            for c in trips))]     # (a cast over several lines: `(\n a + b\n).half()`, pd54)
    if codes & _SWITCH_CODES:
        saved = _saved_switch_lines(tree)
        findings = [f for f in findings if not (f.code in _SWITCH_CODES and f.line in saved
                                                and (f.symbol or "").rsplit(".", 1)[-1] in _SWITCH_ATTRS)]
    return findings


_FP16_CAST_CODES = frozenset({"NPU202"})
_FP16_DTYPES = frozenset({"torch.float16", "torch.half"})
# casts back to a wider dtype (`.float()`, `.double()`) or to a dtype held in a name (`.to(original_dtype)`,
# `.to(x.dtype)`, `.to(dtype=orig_dtype)`) or written out (`.to(torch.float32)`)
_WIDE_METHODS = frozenset({"float", "double"})
_WIDE_DTYPES = frozenset({"torch.float32", "torch.float", "torch.float64", "torch.double"})


def _fp16_cast(call: ast.Call) -> bool:
    """`x.half()`, `x.to(torch.float16)`, `x.to(dtype=torch.half)`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "half" and not call.args and not call.keywords:
        return True
    values = [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
    return func.attr == "to" and any(ast_dotted(v) in _FP16_DTYPES for v in values)


def _dtype_operand(node: ast.expr) -> bool:
    name = ast_dotted(node) or ""
    return name in _WIDE_DTYPES or (not name.startswith("torch.") and "dtype" in name.rsplit(".", 1)[-1].lower())


def _round_trip_casts(tree: ast.AST) -> list[ast.Call]:
    """The fp16 casts whose result is cast straight back: `<cast>.float()`, `<cast>.to(orig_dtype)`."""
    out: list[ast.Call] = []
    for node in module_nodes(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Call) and _fp16_cast(node.func.value)):
            continue
        back = node.func.attr
        operands = [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
        if back in _WIDE_METHODS and not operands or back == "to" and len(operands) == 1 and \
                len(node.args) + len(node.keywords) == 1 and _dtype_operand(operands[0]):
            out.append(node.func.value)
    return out


# writers of a state dict / tensors to a file (safetensors' `save_file`, `torch.save`)
_SAVES = re.compile(r"\bsave_file\(|\btorch\.save\(")


def _save_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = ast_dotted(node.func) or ""
    return name.rsplit(".", 1)[-1] == "save_file" or name == "torch.save"


def _saved_casts(tree: ast.Module) -> list[ast.Call]:
    """fp16 casts whose result is only written to a file (t18e, heldout21's LoRA savers): a cast inside the
    arguments of `save_file(...)` / `torch.save(...)` (`save_file({k: v.half() for k, v in sd.items()}, path)`, not
    `model.half().state_dict()`, which casts the model itself), or assigned to a local name (or an item of a local
    dict) that the function afterwards reads only as such an argument (`for k, v in sd.items(): sd[k] =
    v.to(dtype=torch.float16)`, then `save_file(sd, path)`). The fp16 is the file's storage dtype; nothing computes
    in it (policy (e))."""
    out: list[ast.Call] = []
    scopes: list[ast.AST] = [tree, *(n for n in walk_list(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    for scope in scopes:
        nodes = list(walk_list(scope)) if scope is not tree else list(module_nodes(tree))
        saves = [n for n in nodes if isinstance(n, ast.Call) and _save_call(n)]
        if not saves:
            continue
        save_args = {id(a) for c in saves for a in (*c.args, *(k.value for k in c.keywords))}
        for call in saves:
            for arg in (*call.args, *(k.value for k in call.keywords)):
                parents = parents_of(arg)
                out.extend(n for n in walk_list(arg) if isinstance(n, ast.Call) and _fp16_cast(n)
                           and not isinstance(parents.get(id(n)), ast.Attribute))
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue        # module level: a name there is any function's global
        params = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs)}
        loads = any(isinstance(n, ast.Call) and (ast_dotted(n.func) or "").rsplit(".", 1)[-1] in _LOADS for n in nodes)
        for stmt in nodes:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
                    and _fp16_cast(stmt.value)):
                continue
            target = stmt.targets[0]
            item = isinstance(target, ast.Subscript)
            holder = target
            while isinstance(holder, ast.Subscript):      # `opt["weight"][key] = ...` (pd54)
                holder = holder.value
            if not isinstance(holder, ast.Name) or (item and holder.id in params):
                continue
            loops = [n for n in nodes if isinstance(n, (ast.For, ast.While)) and n.lineno <= stmt.lineno
                     <= (n.end_lineno or n.lineno)]
            start = min([stmt.lineno, *(n.lineno for n in loops)])
            headers = {id(x) for n in loops if isinstance(n, ast.For) for x in walk_list(n.iter)}
            # in a function that loads the checkpoint it converts, not reads: the cast's own source (`model[k] =
            # model[k].half()`) and item stores (`opt["sr"] = sr`) (pd54, heldout33's model_blender, convert_to_halfp)
            skip = {id(x) for x in walk_list(stmt.value)} | _item_store_bases(nodes, holder.id) if loads else set()
            reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == holder.id and isinstance(n.ctx, ast.Load)
                     and n is not holder and n.lineno >= start and id(n) not in headers and id(n) not in skip]
            if reads and all(id(n) in save_args for n in reads) and not _moved_first(stmt.value):
                out.append(stmt.value)
    return out


_LOADS = frozenset({"load", "load_file"})      # `torch.load(path)`, safetensors' `load_file(path)`


def _moved_first(cast: ast.Call) -> bool:
    """The cast's receiver is moved to a device first (`w.cpu().cuda().half()`): the cast runs there."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("cuda", "npu", "to")
               for n in walk_list(cast.func))


def _item_store_bases(nodes: list[ast.AST], name: str) -> set[int]:
    """The `name` nodes that are the base of an item store (`opt["config"] = cfg`, `opt["weight"][k] = w`): they
    fill the dict, they do not read what it holds."""
    out: set[int] = set()
    for stmt in nodes:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                base = target
                while isinstance(base, ast.Subscript):
                    base = base.value
                if base is not target and isinstance(base, ast.Name) and base.id == name:
                    out.add(id(base))
    return out


_SWITCH_CODES = frozenset({"NPU006", "NPU206", "NPU200"})
_SWITCH_ATTRS = frozenset({"deterministic", "benchmark", "enabled", "allow_tf32"})


def _saved_switch_lines(tree: ast.AST) -> set[int]:
    """Lines of `name = <...>.cudnn.deterministic` (one target, the bare switch attribute as the whole value)."""
    out: set[int] = set()
    for node in module_nodes(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(value, ast.Attribute) and value.attr in _SWITCH_ATTRS and len(targets) == 1 and \
                isinstance(targets[0], (ast.Name, ast.Attribute)) and "cud" in ast.unparse(value.value):
            out.add(node.lineno)
    return out


def _calls_at(tree: ast.AST) -> dict[int, list[ast.Call]]:
    out: dict[int, list[ast.Call]] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Call):
            out.setdefault(node.lineno, []).append(node)
    return out


def _drop_where_every_call(findings: list, tree: ast.Module, codes: frozenset[str], picks, holds) -> list:
    """Drop each finding of `codes` whose line has calls that `picks(call, finding)` selects, all of which
    `holds(call, finding)`."""
    calls = _calls_at(tree)
    kept = []
    for f in findings:
        if f.code in codes:
            here = [c for c in calls.get(f.line, []) if picks(c, f)]
            if here and all(holds(c, f) for c in here):
                continue
        kept.append(f)
    return kept


def _drop_host_ops(findings: list, tree: ast.Module) -> list:
    from auditor.static.host_scopes import _enclosing, _HostFlow

    flow = _HostFlow(tree)

    def torch_op(c: ast.Call, f) -> bool:       # `torch.<the finding's op>(...)`
        return isinstance(c.func, ast.Attribute) and c.func.attr == (f.symbol or "").rsplit(".", 1)[-1] and \
            isinstance(c.func.value, ast.Name) and c.func.value.id == "torch"

    return _drop_where_every_call(findings, tree, _HOST_OP_CODES, torch_op,
                                  lambda c, f: flow.value(c, _enclosing(tree, f.line))
                                  or _read_as_numpy(c, _enclosing(tree, f.line)))


_DATASET_BASES = frozenset({"Dataset", "IterableDataset"})
_DEVICE_WORDS = frozenset({"cuda", "device", "npu", "to_device", "pin_memory"})


def _dataset_classes(tree: ast.Module) -> list[tuple[int, int]]:
    """[first line, last line] of each class deriving from torch's `Dataset` / `IterableDataset` (imported from
    torch.utils.data) that names no device: no `device` / `cuda` / `npu` name, attribute, keyword or string."""
    bound = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
             and node.module == "torch.utils.data" for a in node.names if a.name in _DATASET_BASES}
    out = []
    for node in module_nodes(tree):
        if not isinstance(node, ast.ClassDef) or not any(
                isinstance(b, ast.Name) and b.id in bound or (ast_dotted(b) or "").startswith("torch.utils.data.")
                and (ast_dotted(b) or "").rsplit(".", 1)[-1] in _DATASET_BASES for b in node.bases):
            continue
        words = {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.arg
                 if isinstance(n, ast.keyword) else n.value.split(":")[0].lower()
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) else None for n in walk_list(node)}
        if not words & _DEVICE_WORDS:
            out.append((node.lineno, node.end_lineno or node.lineno))
    return out


def _drop_dataset_samples(findings: list, tree: ast.Module) -> list:
    """Precision hints inside a dataset class that names no device (`_dataset_classes`): `__getitem__` and its helpers
    build samples on the host, in the DataLoader's workers (`self.normalize(tensor).to(torch.float16)` on an image read
    with PIL: LongLive's video datasets; tq46b): a dtype there is a host value's, policy (e); the model's own dtype and
    its loss scaling are reported where the model is set up."""
    spans = _dataset_classes(tree)
    # (a parameter's default, `hidden_states_dtype=torch.bfloat16`, is a choice its callers make or take: kept)
    headers = [(fn.lineno, fn.body[0].lineno - 1) for a, b in spans for fn in module_nodes(tree)
               if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and a <= fn.lineno <= b]
    return [f for f in findings if not (f.category == "precision" and any(a <= f.line <= b for a, b in spans)
                                        and not any(a <= f.line <= b for a, b in headers))]


def _read_as_numpy(call: ast.Call, scope: ast.AST | None) -> bool:
    """`pos = torch.argwhere(data.y == label)` then `pos.numpy()` in the same function, the name bound once there:
    `.numpy()` raises on a device tensor, so the op's input lives on the host and torch ran the op there (tq46b,
    OpenHGNN's subgraph builder)."""
    if scope is None:
        return False
    name = next((node.targets[0].id for node in walk_list(scope) if isinstance(node, ast.Assign)
                 and node.value is call and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)), None)
    if name is None:
        return False
    binds = sum(1 for node in walk_list(scope) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name) and t.id == name)
    return binds == 1 and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"
        and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.lineno > call.lineno
        for node in walk_list(scope))


def _bool_context_calls(tree: ast.AST) -> set[int]:
    """ids of the calls that are (under `not` / `and` / `or`) the test of an if / elif / while / assert / ternary."""
    out: set[int] = set()

    def visit(test: ast.AST) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            visit(test.operand)
        elif isinstance(test, ast.BoolOp):
            for v in test.values:
                visit(v)
        elif isinstance(test, ast.Call):
            out.add(id(test))

    for node in module_nodes(tree):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            visit(node.test)
    return out


def _drop_predicates(findings: list, tree: ast.Module) -> list:
    tested = _bool_context_calls(tree)
    return _drop_where_every_call(findings, tree, _PREDICATE_CODES,
                                  lambda c, f: _call_name(c) == (f.symbol or "").rsplit(".", 1)[-1],
                                  lambda c, f: id(c) in tested)


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _asserted_not_cuda(tree: ast.AST) -> set[int]:
    """Lines of `.is_cuda` under `assert not`."""
    out: set[int] = set()
    for node in module_nodes(tree):
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and \
                isinstance(test.operand, ast.Attribute) and test.operand.attr == "is_cuda":
            out.add(test.operand.end_lineno or test.operand.lineno)
    return out


# the last name of a receiver that holds an application's settings, not tensors (`self.cfg.is_cuda`,
# `config.is_cuda`, `args.is_cuda`: a flag the user set, t36c)
_SETTINGS_HOLDERS = frozenset({"cfg", "config", "conf", "configs", "args", "opt", "opts", "options", "settings",
                               "hparams"})


def _own_is_cuda_lines(tree: ast.Module) -> set[int]:
    """Lines whose every `.is_cuda` read is an application's own attribute, not torch's Tensor.is_cuda (t36c,
    heldout38's pyvideotrans: `run_recogn(..., is_cuda=self.cfg.is_cuda)` with the task config's `is_cuda: bool =
    False` field): a read through a settings holder (_SETTINGS_HOLDERS), or `self.is_cuda` in a class that binds
    `is_cuda` itself (a class-body field, or `self.is_cuda = ...` in a method: a tensor's is_cuda is read-only)."""
    in_own_class: set[int] = set()          # ids of the `.is_cuda` reads inside a class that binds is_cuda
    for node in module_nodes(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        nodes = walk_list(node)
        if any(_binds_is_cuda(sub, node) for sub in nodes):
            in_own_class.update(id(sub) for sub in nodes if isinstance(sub, ast.Attribute) and sub.attr == "is_cuda")
    own: set[int] = set()
    other: set[int] = set()
    for node in module_nodes(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "is_cuda" and isinstance(node.ctx, ast.Load)):
            continue
        receiver = node.value
        holder = receiver.attr if isinstance(receiver, ast.Attribute) else \
            receiver.id if isinstance(receiver, ast.Name) else ""
        self_read = isinstance(receiver, ast.Name) and receiver.id == "self" and id(node) in in_own_class
        (own if holder in _SETTINGS_HOLDERS or self_read else other).add(node.end_lineno or node.lineno)
    return own - other


def _binds_is_cuda(node: ast.AST, cls: ast.ClassDef) -> bool:
    """`is_cuda: bool = False` / `is_cuda = ...` in the class body, or `self.is_cuda = ...` in one of its methods."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == "is_cuda" and node in cls.body or
               self_attr(t) == "is_cuda" for t in targets)


def _negative_is_cuda(findings: list, tree: ast.Module) -> list:
    asserted_lines = _asserted_not_cuda(tree)
    own_lines = _own_is_cuda_lines(tree)
    kept = []
    for f in findings:
        if f.code == "NPU005":
            if f.line in asserted_lines or f.line in own_lines:
                continue
        kept.append(f)
    return kept


# -- another program's option values (t36c, heldout38) -------------------------------------------------------------
# ffmpeg's hardware decoder (`['-hwaccel', 'cuda', '-hwaccel_output_format', 'cuda']` in pyvideotrans' nvenc branch,
# ffmpeg-python's `ffmpeg.input(path, hwaccel='cuda')`): "cuda" names ffmpeg's NVDEC, no torch device. CTranslate2 /
# faster-whisper's `compute_type` (`compute_type = "float16" if device == "cuda" else "float32"`, then
# `WhisperModel(size, device, compute_type=compute_type)`): a dtype of an engine with no NPU device, no torch dtype.
_FFMPEG_DEVICE_OPTIONS = frozenset({"-hwaccel", "-hwaccel_output_format", "-hwaccel_device"})
_FFMPEG_DEVICE_KEYWORDS = frozenset({"hwaccel", "hwaccel_output_format", "hwaccel_device"})
_ENGINE_DTYPE_NAMES = frozenset({"compute_type"})


def _string_values(node: ast.AST | None) -> list[ast.Constant]:
    """The string literals `node` evaluates to: itself, or either arm of `a if test else b`."""
    if isinstance(node, ast.IfExp):
        return _string_values(node.body) + _string_values(node.orelse)
    return [node] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []


def _foreign_option_values(tree: ast.AST) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(line, column) of the ffmpeg device values and of the engine compute types, each as above."""
    ffmpeg: set[tuple[int, int]] = set()
    engine: set[tuple[int, int]] = set()
    for node in module_nodes(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            for option, value in zip(node.elts, node.elts[1:]):
                if isinstance(option, ast.Constant) and option.value in _FFMPEG_DEVICE_OPTIONS:
                    ffmpeg.update((c.lineno, c.col_offset) for c in _string_values(value))
        elif isinstance(node, ast.keyword) and node.arg in _FFMPEG_DEVICE_KEYWORDS:
            ffmpeg.update((c.lineno, c.col_offset) for c in _string_values(node.value))
        elif isinstance(node, ast.keyword) and node.arg in _ENGINE_DTYPE_NAMES:
            engine.update((c.lineno, c.col_offset) for c in _string_values(node.value))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any((t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "")
                   in _ENGINE_DTYPE_NAMES for t in targets):
                engine.update((c.lineno, c.col_offset) for c in _string_values(node.value))
    return ffmpeg, engine


def _drop_foreign_options(findings: list, tree: ast.Module) -> list:
    ffmpeg, engine = _foreign_option_values(tree)

    def at(f, spots: set[tuple[int, int]]) -> bool:
        return (f.line, f.col - 1) in spots or (f.line, f.col) in spots

    return [f for f in findings if not (f.code == "NPU003" and at(f, ffmpeg) or
                                        f.code in _DTYPE_NAME_CODES and at(f, engine))]


def _reads_dtype(test: ast.AST) -> bool:
    """A test that inspects a torch dtype object: `"bfloat16" in str(dtype)`, `dtype == torch.float16`,
    `x.dtype is torch.half`. Not a name compared with a name (`if args.mixed_precision == "fp16":
    args.mixed_precision = "bf16"` switches the run to bf16: a choice)."""
    for node in walk_list(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for side in sides:
            if isinstance(side, ast.Attribute) and isinstance(side.value, ast.Name) and side.value.id == "torch" \
                    and _DTYPE_WORDS.match(side.attr):
                return True
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and isinstance(node.left, ast.Constant) and \
                isinstance(node.left.value, str) and _DTYPE_WORDS.match(node.left.value) and any(
                    isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "str"
                    for c in node.comparators):
            return True
    return False


def _converted_name_lines(tree: ast.AST) -> set[int]:
    """Lines of `name = "<dtype name>"` that are the only statement-kind of a branch whose test reads a dtype."""
    out: set[int] = set()
    for node in module_nodes(tree):
        if not isinstance(node, ast.If) or not _reads_dtype(node.test):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets) and \
                    isinstance(stmt.value, ast.Constant) and \
                    isinstance(stmt.value.value, str) and _DTYPE_WORDS.match(stmt.value.value):
                out.add(stmt.lineno)
    return out


def _drop_dtype_names(findings: list, rel: str, text: str, tree: ast.Module) -> list:
    converted = _converted_name_lines(tree)
    expected = _expected_value_spans(tree) if _deviceless_test_module(rel, text) else []
    expected += _rejected_spans(tree) if "aises" in text else []
    kept = []
    for f in findings:
        if f.code in _DTYPE_NAME_CODES and not (f.symbol or "").startswith("torch."):
            if f.line in converted or any(lo <= f.line <= hi for lo, hi in expected):
                continue
        kept.append(f)
    return kept


_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex"})


def _rejected_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """[first line, last line] of each `with pytest.raises(...):` / `with self.assertRaises(...):` body: a dtype name
    there is a value the code is checked to refuse (`TrainConfig.from_sources(cli={"hidden_states_dtype":
    "float16"})` under `pytest.raises(ValidationError)`, speculators' config tests; tq46b), nothing runs in it."""
    return [(node.body[0].lineno, node.end_lineno or node.lineno) for node in module_nodes(tree)
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call)
                and (ast_dotted(item.context_expr.func) or "").rsplit(".", 1)[-1] in _RAISES for item in node.items)]


# -- name-to-dtype conversions (lead decision 11, policy (a); pd26, tuned on heldout26) ----------------------------
# `if dtype == "fp16": cond = cond.half()` / `elif dtype == "bf16": ...` (Kolors-MZ's FakeCond), `if
# args.mixed_precision == "fp16" and args.plugin != "ddp": dtype = torch.float16` (OpenDiT's train script), `if "Half"
# in x.type(): x0 = ....half()` (APISR's cunet restoring the dtype it found): the branch turns a name into the dtype
# it names; the choice is where the name is set (a node's combo, a command-line default), which keeps its finding.
# A conversion table keyed by another library's dtype (`{np.float16: torch.float16, np.float64: torch.float64}`,
# Upscaler-Tensorrt's numpy-to-torch map) maps a dtype to its torch twin: chosen by the array it is looked up with.
# Not a branch that casts to another dtype than it tested (`if precision == "fp16": x = x.bfloat16()`: a choice made
# here), nor one whose test is a flag (`if args.fp16: model.half()`).
# (NPU264 / NPU265: bf16 / fp16 named through another namespace, `jnp.bfloat16`, `DType.float16`; t23a)
_CONVERSION_CODES = frozenset({"NPU201", "NPU202", "NPU203", "NPU208", "NPU264", "NPU265"})


_TENSOR_TYPE = re.compile(r"(?<=.)(?:Tensor|Storage)$")


def _word(name: str) -> str | None:
    """The dtype word of a dtype's or a legacy tensor type's name (`torch.float16`, `torch.HalfTensor`: pipedream's
    `if args.math == 'fp16': dtype = torch.HalfTensor`)."""
    from auditor.static.visitor import _dtype_word

    return _dtype_word(_TENSOR_TYPE.sub("", name.rsplit(".", 1)[-1]))


# a precision name that is a mode word and a dtype's (`"pure_fp16"`, `"amp_bfloat16"`: open_clip's and timm's
# --precision values, tq44b)
_MODE_DTYPE = re.compile(r"^[A-Za-z]+[_-]([A-Za-z0-9]+)$")


def _string_word(node: ast.AST) -> str | None:
    """The dtype word of a string literal (`"fp16"`, `'Half'`, `"pure_bf16"`), else None."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    mode = _MODE_DTYPE.match(node.value)
    return _word(node.value) or (_word(mode.group(1)) if mode else None)


def _constant_word(node: ast.AST) -> str | None:
    """The dtype word of an upper-case constant or enum member named for a dtype (`PRECISION_BF16`, `Precision.FP16`):
    compared with a value it tests a dtype NAME as a literal does (t16b, llm-on-ray's `decide_torch_dtype`)."""
    last = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    if not last.isupper():
        return None
    return next((w for w in map(_word, last.split("_")) if w), None)


def _name_word(node: ast.AST) -> str | None:
    """The dtype word of a side of a name test: a dtype-name literal or a constant named for a dtype."""
    return _string_word(node) if isinstance(node, ast.Constant) else _constant_word(node)


def _falsy(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, False)


def _name_tables(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """The module's `NAME = [...]` lists, tuples and sets of literals and dotted names (verl's `HALF_LIST = [16, "16",
    "fp16", "float16", torch.float16]`), by name: what `precision in HALF_LIST` tests against (tq51a)."""
    out: dict[str, list[ast.expr]] = {}
    for node in getattr(tree, "body", ()):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, (ast.List, ast.Tuple, ast.Set)):
            out[node.targets[0].id] = list(node.value.elts)
    return out


def _table_word(elts: list[ast.expr]) -> str | None:
    """The one dtype word a table of names spells (`"fp16"`, `"float16"`, `torch.float16`), its bit widths (`16`,
    `"16"`) aside; None when it spells none or several, or holds anything else."""
    words: set[str | None] = set()
    for e in elts:
        if isinstance(e, ast.Constant) and (isinstance(e.value, int) and not isinstance(e.value, bool)
                                            or isinstance(e.value, str) and e.value.isdigit()):
            continue
        dotted = ast_dotted(e) or ""
        words.add(_word(dotted) if dotted.startswith("torch.") else _name_word(e))
    return words.pop() if len(words) == 1 and None not in words else None


def _tested_word(test: ast.AST, tables: dict[str, list[ast.expr]] | None = None) -> str | None:
    """The one dtype word a test compares a name with: `s == "fp16"`, `s in ("fp16", "half")`, `"Half" in x.type()`,
    `s.startswith("fp16")` (ChatRWKV's strategy parser), `s == PRECISION_BF16`, such a test joined by `and` with
    others, or several joined by `or` (falsy constants among them: TGI's `dtype == "bfloat16" or None`); else None.
    The one recogniser of lead decision 11's conversion branches (the comment above)."""
    if isinstance(test, ast.BoolOp):
        parts = [_tested_word(v, tables) for v in test.values if not (isinstance(test.op, ast.Or) and _falsy(v))]
        found = {w for w in parts if w}
        if len(found) != 1 or isinstance(test.op, ast.Or) and None in parts:
            return None         # `fp16 == "fp16" or args.force_half`: a flag may run the branch
        return found.pop()
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and \
            test.func.attr in ("startswith", "endswith") and len(test.args) == 1 and not test.keywords:
        return _string_word(test.args[0])     # `elif si1.startswith('fp16'): si[1] = [torch.float16]`
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    literals = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else []
    words: set[str | None]
    if isinstance(op, ast.Eq):
        # a literal names the dtype when there is one: the other side is the tested name, whatever it is called
        # (SpikeGPT's `self.FLOAT_MODE == "bf16"`, whose upper-case name would read as a constant for "float")
        literal: list[ast.expr] = [side for side in (left, right)
                                   if isinstance(side, ast.Constant) and isinstance(side.value, str)]
        words = {_name_word(side) for side in literal or [side for side in (left, right) if _constant_word(side)]}
    elif isinstance(op, ast.In) and literals and not isinstance(left, ast.Constant):
        words = {_name_word(e) for e in literals}
    elif isinstance(op, ast.In) and isinstance(right, ast.Name) and right.id in (tables or {}) and \
            not isinstance(left, ast.Constant):
        words = {_table_word((tables or {})[right.id])}       # `precision in HALF_LIST`
    elif isinstance(op, ast.In) and isinstance(left, ast.Constant) and isinstance(left.value, str) and \
            not isinstance(right, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict)):
        words = {_string_word(left)}    # a substring test of a name: `"Half" in x.type()`
    else:
        return None
    return words.pop() if len(words) == 1 and None not in words else None


def _flag_word(test: ast.AST) -> str | None:
    """The dtype word of a flag named for a dtype (`fp16`, `args.bf16`), else None."""
    last = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return _word(last) if last.islower() else None


def _dtype_value_word(node: ast.AST | None) -> str | None:
    """The dtype word of a bare dtype value (`torch.float16`, `torch.half`), else None."""
    name = ast_dotted(node) if node is not None else None
    return _word(name) if name and name.startswith("torch.") else None


def _span(node: ast.expr | ast.stmt, word: str) -> tuple[int, int, int, int, str]:
    return node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0, word


def _tested_pair(test: ast.AST) -> set[str]:
    """The two dtype words a test of a name against two dtype names allows (`precision in ("fp16", "bf16")`)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)
            and isinstance(test.comparators[0], (ast.Tuple, ast.List, ast.Set))):
        return set()
    words = {_name_word(e) for e in test.comparators[0].elts}
    return words if len(words) == 2 and None not in words else set()    # type: ignore[return-value]


def _flag_conversions(tree: ast.AST) -> list[tuple[int, int, int, int, str]]:
    """Flag-to-dtype conversions (tq44b): `if fp16: img_dtype = torch.float16` (timm's PrefetchLoader), `dtype =
    torch.half` reset by `if not args.fp16: dtype = torch.float` on the next line (Megatron's activation buffer), and
    both arms of `torch.float16 if 'fp16' in precision else torch.bfloat16` under `if precision in ("fp16",
    "bf16"):` (open_clip's create_model). The user's flag or precision name chooses; a cast under a flag (`if
    args.fp16: model.half()`) is the line a port changes and is kept."""
    out: list[tuple[int, int, int, int, str]] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.If):
            word = _flag_word(node.test)
            if word is not None:
                out += [_span(s, word) for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                        and _dtype_value_word(s.value) == word]
            pair = _tested_pair(node.test)
            for sub in (n for s in node.body for n in walk_list(s)) if pair else ():
                if isinstance(sub, ast.IfExp) and {_dtype_value_word(sub.body), _dtype_value_word(sub.orelse)} == pair:
                    out += [_span(arm, _dtype_value_word(arm) or "") for arm in (sub.body, sub.orelse)]
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            for first, then in zip(stmts, stmts[1:]) if isinstance(stmts, list) else ():
                if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(then, ast.If) and \
                        isinstance(then.test, ast.UnaryOp) and isinstance(then.test.op, ast.Not) and \
                        _flag_word(then.test.operand) is not None and \
                        _flag_word(then.test.operand) == _dtype_value_word(first.value) and \
                        any(isinstance(s, ast.Assign) and ast.dump(s.targets[0]) == ast.dump(first.targets[0])
                            for s in then.body):
                    out.append(_span(first, _flag_word(then.test.operand) or ""))
    return out


def _conversion_spans(tree: ast.AST) -> list[tuple[int, int, int, int, str]]:
    """(first line, col, last line, end col, dtype word) of the statements of conversion branches and of the entries
    of conversion tables (the comment above)."""
    out: list[tuple[int, int, int, int, str]] = _flag_conversions(tree)
    tables = _name_tables(tree)
    for node in module_nodes(tree):
        if isinstance(node, ast.IfExp):
            # `torch.float16 if 'fp16' in precision else ...`: the arm the test's name picks (tq44b)
            word = _tested_word(node.test, tables)
            if word is not None and _dtype_value_word(node.body) == word:
                out.append(_span(node.body, word))
        if isinstance(node, ast.If):
            word = _tested_word(node.test, tables)
            if word is None:
                continue
            stmts = list(node.body)
            while stmts:
                stmt = stmts.pop()
                if isinstance(stmt, ast.If):
                    # `elif args.amp_dtype == "bf16": if torch.cuda.is_bf16_supported(): amp_dtype = torch.bfloat16`:
                    # a check nested in the branch still converts the name (map-anything; pd44)
                    stmts += stmt.body + stmt.orelse
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)):
                    out.append((stmt.lineno, stmt.col_offset, stmt.end_lineno or stmt.lineno,
                                stmt.end_col_offset or 0, word))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                names = [ast_dotted(key) if key is not None else None, ast_dotted(value)]
                if None in names or sum(n.startswith("torch.") for n in names if n) != 1:
                    continue
                words = {_word(n) for n in names if n}
                word = words.pop() if len(words) == 1 else None
                if word is not None and key is not None:
                    out += [(side.lineno, side.col_offset, side.end_lineno or side.lineno, side.end_col_offset or 0,
                             word) for side in (key, value)]
    return out


def _drop_conversions(findings: list, tree: ast.Module) -> list:
    spans = _conversion_spans(tree)
    if not spans:
        return findings
    kept = []
    for f in findings:
        col = (f.col or 1) - 1
        if f.code in _CONVERSION_CODES and any(
                (lo, lc) <= (f.line, col) < (hi, hc) and word == _word(f.symbol or "")
                for lo, lc, hi, hc, word in spans):
            continue
        kept.append(f)
    return kept


_EXPECTED_NAME = re.compile(r"(?:^|_)(?:expected|ref)(?:_|$)", re.I)


def _expected_value_spans(tree: ast.AST) -> list[tuple[int, int]]:
    """Line spans of expected values: the argument values of a `pytest.mark.parametrize` whose names include an
    `expected...` one, and a literal assigned to an `expected...` / `..._ref_...` name (`self.vllm_ref_config =
    {...}`). A dtype name there is compared with what the code under test parsed or logged, not passed to a model
    (a test that hands `torch_dtype="fp16"` to an op that runs a model keeps its finding)."""
    spans: list[tuple[int, int]] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and (ast.unparse(node.func).endswith("parametrize")) and len(node.args) >= 2:
            names = node.args[0]
            text = names.value if isinstance(names, ast.Constant) and isinstance(names.value, str) else \
                " ".join(e.value for e in getattr(names, "elts", []) if isinstance(e, ast.Constant)
                         and isinstance(e.value, str))
            if any(_EXPECTED_NAME.search(n.strip()) for n in re.split(r"[,\s]+", text) if n.strip()):
                spans.append(line_span(node.args[1]))
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.List, ast.Tuple)):
            for t in node.targets:
                name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
                if _EXPECTED_NAME.search(name):
                    spans.append(line_span(node.value))
    return spans


def _deviceless_test_module(rel: str, text: str) -> bool:
    from auditor.static.backend_files import test_file
    from auditor.static.host_scopes import _DEVICE_FRAMEWORKS, _LAUNCHES, _TEST_DEFS

    return test_file(rel) and bool(_TEST_DEFS.search(text)) and not _DEVICE_FRAMEWORKS.search(text) \
        and not _LAUNCHES.search(text)

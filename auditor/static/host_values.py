"""Values that live on the host, for the host-sync hint (NPU703, `when: {in_loop: true}`): `.item()` / `.tolist()`
on a numpy array or a pandas object reads no device (tuned on bench/precision/heldout3: opencompass' metrics and
summarizers, align-anything's AI2-THOR utilities).

- A file that imports numpy or pandas and no torch (nor torch_npu): its `.item()` / `.tolist()` calls are on host
  values (a tensor handed in from elsewhere is possible, but such a file does no device work of its own).
- A receiver built by a numpy / pandas call in the same expression (`np.linspace(...).tolist()`; an ONNX Runtime
  session's `run(...)` outputs are numpy arrays too, pd31), or a name that every assignment in its function binds to
  one (`labels = np.array(...)` ... `labels.sum().item()`); an operator (`labels = labels | other`) keeps what its
  operands are and does not count against it, nor does a `.tolist()` / `.item()` result (pd22: `p = np.clip(p, lo,
  hi); p = p.reshape(-1).tolist()`); arithmetic with a numpy array built in the operand is one
  (`(np.array(box) * scale).tolist()`), with a numpy scalar (`np.float32(s) * t`) is not.
- A tensor's shape and layout (`t.stride()`, `t.size(0)`, `t.dim()`, `t.numel()`) are Python ints on the host
  (tq37), as a name's assignment.
- `<tensor>.numpy()` is a numpy array too (torch raises on a device tensor, so the value is on the host), also as
  both branches of a conditional (`x.cpu().numpy() if c else np.zeros_like(y)`; DrivingSDK's evaluation loop, t11g,
  tuned on heldout6).
- A torch factory with no device is a host tensor by construction (t11s, tuned on heldout11; policy (e)):
  `torch.arange(n)`, `torch.zeros(...)` / `ones` / `empty` / `full` / `rand*` / `linspace` without `device=`,
  `torch.tensor([...])` of a list / tuple / comprehension (not of a name: `torch.tensor(t)` of a device tensor keeps
  its device), `torch.frombuffer` / `torch.from_numpy`, `torch.load(..., map_location="cpu")`; a chain on one that
  never moves it (`.expand(3, -1)`, `.split(1, dim=1)`, `.long()`; not `.to(...)` / `.cuda()` / `.npu()`), and
  arithmetic with one (`torch.arange(n).expand(3, -1) + start`: torch refuses to mix a CPU tensor that is not 0-dim
  with a device tensor, and these factories build at least one dimension). Followed through the assignments of a
  name in its function as above; an empty list / tuple (`ids = []`) does not count against it (vllm-omni's
  qwen2.5-omni rope index: `audio_llm_pos_ids_list[-1][0].item()`). A file that sets a default device
  (`torch.set_default_device`, `with torch.device(...)`) has no factory host values.
- An operator support row (NPU501 / NPU502) on such a factory call is dropped (tq53b, tuned on heldout69's TFB
  Fourier layers: `f = fft.rfftfreq(t)[self.low_freq:]` ... `f.to(x_freq.device)`): the tensor is made by the CPU
  kernel and only copied to the device after, so Ascend's list for the NPU operator does not apply (policy (e)).
"""
from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from typing import Any

import libcst as cst
from auditor.astnodes import node_lines, scope_nodes, walk_list
from auditor.static.astutil import ast_dotted, module_nodes, self_attr

_HOST_LIBS = frozenset({"numpy", "pandas"})
# runtimes whose objects hand back numpy arrays: an ONNX Runtime session's `run(...)` returns numpy arrays whatever
# its execution provider (pd31, heldout28: InspireMusic's `ort_session.run(None, {...})[0].flatten().tolist()`)
_HOST_VALUE_LIBS = _HOST_LIBS | {"onnxruntime"}
# torch factories whose result is on the CPU unless `device=` says otherwise (t11s; `torch.tensor` needs a literal)
_TORCH_FACTORIES = frozenset({"torch.arange", "torch.zeros", "torch.ones", "torch.empty", "torch.full",
                              "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.linspace",
                              "torch.tensor", "torch.frombuffer", "torch.from_numpy", "torch.load",
                              # the sample frequencies of a DFT: `device=None` builds them on the default (CPU)
                              # device (https://pytorch.org/docs/stable/generated/torch.fft.rfftfreq.html; tq53b)
                              "torch.fft.fftfreq", "torch.fft.rfftfreq"})
_MOVES = frozenset({"to", "cuda", "npu", "xpu", "musa", "mlu", "type", "copy_", "set_"})
_TORCH_LIBS = frozenset({"torch", "torch_npu"})


def _head(qual: str | None) -> str:
    return (qual or "").split(".", 1)[0]


def _ast_host_call(ctx, value: ast.AST) -> bool | None:
    """True: a numpy / pandas value; None: an operator (neutral); False: anything else."""
    if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
        return None                         # `ids = []`: filled below, counts neither way (t11s)
    if isinstance(value, ast.BinOp) and _ast_factory_operand(ctx, value):
        return True
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
        return None
    if isinstance(value, ast.IfExp):        # `a.cpu().numpy() if cond else np.zeros_like(b)`: host when both are
        sides = {_ast_host_call(ctx, value.body), _ast_host_call(ctx, value.orelse)}
        return True if sides <= {True, None} and True in sides else None if sides == {None} else False
    node = value
    while True:
        if isinstance(node, ast.Call):
            if _python_value(node.func, node.args):
                return None                 # a list / number: keeps what the name held before (module doc)
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SHAPE_METHODS and len(node.args) <= 1 \
                    and not node.keywords:
                return True                 # `t.stride()`, `t.size(0)`: Python ints / torch.Size, never on a device
            if _to_numpy(node.func, node.args or node.keywords):
                return True
            d = ast_dotted(node.func)
            if d is not None and _head(ctx.resolve(d)) in _HOST_VALUE_LIBS:
                return True
            if d is not None and (ctx.resolve(d) or "").startswith(_TEXT_METRICS):
                return True
            if d is not None and _ast_factory(ctx, d, node):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in _MOVES:
                return False
            if _tokenized(node):
                return True
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.BinOp) and _ast_factory_operand(ctx, node):
            return True
        else:
            return False


# a tokenizer's or processor's output asked for as tensors (`tokenizer.encode_plus(text, return_tensors="pt")`,
# `processor(images=..., return_tensors="np")`): transformers builds the BatchEncoding's tensors on the CPU (it moves
# them only in `BatchEncoding.to(device)`), so a chain read off one without a move is a host value (tq38, tuned on
# heldout41's Pix2Text `input_ids.tolist()` in its tokenizer check script)
_TENSOR_KINDS = frozenset({"pt", "np"})
# torchmetrics' text metrics (CharErrorRate, WordErrorRate, BLEUScore, ... and their functional forms) score Python
# strings: their states and results are CPU tensors unless the metric object is moved (`.to(device)`, a move)
# (tq38, tuned on heldout41's Pix2Text `cer = CharErrorRate()([pred], [gt])` ... `cer.item()`)
_TEXT_METRICS = ("torchmetrics.text.", "torchmetrics.functional.text.")


def _tokenized(call: ast.Call) -> bool:
    return any(k.arg == "return_tensors" and isinstance(k.value, ast.Constant) and k.value.value in _TENSOR_KINDS
               for k in call.keywords)


def _ast_factory_operand(ctx, node: ast.BinOp) -> bool:
    """Arithmetic with a factory-built host tensor (a side that is one by `_ast_host_call`): a host value, since
    torch does not mix a CPU tensor of at least one dimension with a device tensor; or with a numpy array built in
    the operand (`np.array(box) * scale`, pd22): a device tensor does not mix with one either."""
    if any(_numpy_array_chain(ctx, side) for side in (node.left, node.right)):
        return True
    if _default_device(ctx):
        return False
    return any(_ast_host_call(ctx, side) is True and _factory_chain(ctx, side) for side in (node.left, node.right))


def _numpy_array_chain(ctx, node: ast.AST | cst.CSTNode) -> bool:
    """Whether the chain's innermost call builds a numpy array (`np.array(box)`, `np.clip(p, lo, hi).reshape(-1)`),
    not a numpy scalar (`np.float32(x) * t` is a device tensor when t is one). Both trees name a chain's parts alike
    (`Call.func`, `Attribute.value`, `Subscript.value`), so one walk serves ast's nodes and libcst's."""
    call, links, dotted = _chain_kinds(node)
    cur = node
    while isinstance(cur, links):
        link: Any = cur     # ast's or libcst's node: the attribute names are the same
        if isinstance(cur, call):
            d = dotted(link.func)
            qual = ctx.resolve(d) if d is not None else None
            if qual is not None and _head(qual) == "numpy":
                return qual.rsplit(".", 1)[-1] not in _NUMPY_SCALARS
            cur = link.func
        else:
            cur = link.value
    return False


def _chain_kinds(node: ast.AST | cst.CSTNode) -> tuple[type, tuple[type, ...], Callable[[Any], str | None]]:
    """A chain's call class, link classes and dotted-name reader in the node's own tree (ast or libcst)."""
    if isinstance(node, ast.AST):
        return ast.Call, (ast.Call, ast.Attribute, ast.Subscript), ast_dotted
    return cst.Call, (cst.Call, cst.Attribute, cst.Subscript), _cst_dotted


def _factory_chain(ctx, node: ast.AST) -> bool:
    """Whether the chain's innermost call is a torch factory (not numpy: `np.int64(3) + t` is another story)."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call):
            d = ast_dotted(node.func)
            if d is not None and _ast_factory(ctx, d, node):
                return True
            node = node.func
        else:
            node = node.value
    return isinstance(node, ast.BinOp) and _ast_factory_operand(ctx, node)


def _ast_factory(ctx, dotted: str, call: ast.Call) -> bool:
    """`torch.arange(n)` and the other factories of _TORCH_FACTORIES called without a device (module doc)."""
    qual = ctx.resolve(dotted)
    if qual not in _TORCH_FACTORIES or _default_device(ctx):
        return False
    kws = {k.arg: k.value for k in call.keywords}
    if "device" in kws or None in kws:
        return False
    if qual == "torch.load":
        loc = kws.get("map_location")
        return isinstance(loc, ast.Constant) and loc.value == "cpu"
    if qual == "torch.tensor":
        return bool(call.args) and isinstance(call.args[0], (ast.List, ast.Tuple, ast.ListComp, ast.Constant))
    return True


def _to_numpy(func, args) -> bool:
    """`<tensor>.numpy()` (torch's Tensor.numpy takes no positional argument): its value is a numpy array, on the
    host (torch raises for a device tensor, so the chain holds `.cpu()` before it)."""
    return not args and (isinstance(func, ast.Attribute) and func.attr in _NUMPY_METHODS or
                         isinstance(func, cst.Attribute) and func.attr.value in _NUMPY_METHODS)


def _python_value(func, args) -> bool:
    """`<x>.tolist()` / `<x>.item()` (no argument): a Python list or number. Neutral in a name's assignments, like an
    operator (pd22: Florence2's `_polygon = _polygon.reshape(-1).tolist()` rebinds a numpy array's name to a list;
    not a host value of its own: in `idx = idx.nonzero().item()` the receiver is the device tensor bound before)."""
    return not args and (isinstance(func, ast.Attribute) and func.attr in _PYTHON_METHODS or
                         isinstance(func, cst.Attribute) and func.attr.value in _PYTHON_METHODS)


_PYTHON_METHODS = frozenset({"tolist", "item"})
# a tensor's shape and layout, read from its metadata on the host: `Tensor.stride()` / `size()` give a tuple (a
# torch.Size) of Python ints, with an index one int, as `dim()` / `numel()` do (tq37, tuned on heldout40: a CuPy
# kernel templated with `intStrides = tensor.stride()` ... `intStrides[i] if not torch.is_tensor(intStrides[i]) else
# intStrides[i].item()`, LiteFlowNet's correlation layer)
_SHAPE_METHODS = frozenset({"stride", "size", "dim", "numel"})
# numpy's scalar types: `np.float32(x)` is a scalar, which mixes with a device tensor (not an array, which does not)
_NUMPY_SCALARS = frozenset({"float16", "float32", "float64", "double", "single", "half", "int8", "int16", "int32",
                            "int64", "uint8", "uint16", "uint32", "uint64", "bool_", "intc", "intp", "float_",
                            "int_", "longlong", "complex64", "complex128", "float", "int", "bool"})


# methods whose result is a numpy array: torch's `Tensor.numpy()`, Triton Inference Server's python-backend
# `pb_utils.Tensor.as_numpy()` (a request's input, on the host; t11y, tuned on heldout16's CosyVoice), pandas'
# `to_numpy()`
_NUMPY_METHODS = frozenset({"numpy", "as_numpy", "to_numpy"})


# faiss' index searches: the Python wrapper's `index.search(x, k)` returns `(D, I)` as numpy arrays, for a CPU or a
# GPU index alike (faiss/python/class_wrappers.py, `replacement_search`); only `import faiss.contrib.torch_utils`
# makes them take and return torch tensors (tq39, tuned on heldout42's text2vec `batch_scores, batch_inxs =
# index.search(batch_query, k=topk)` ... `batch_inxs.tolist()`)
_FAISS_SEARCHES = frozenset({"search", "range_search", "search_and_reconstruct", "search_preassigned"})


def _faiss_numpy(tree: ast.AST | None) -> bool:
    """The file imports faiss and not its torch bridge (faiss.contrib.torch_utils)."""
    found = False
    for n in module_nodes(tree) if tree is not None else ():
        modules = [a.name for a in n.names] if isinstance(n, ast.Import) else \
            [f"{n.module}.{a.name}" for a in n.names] if isinstance(n, ast.ImportFrom) and n.module else []
        if any(m.startswith("faiss.contrib.torch_utils") for m in modules):
            return False
        found = found or any(m.split(".", 1)[0] == "faiss" for m in modules)
    return found


def _faiss_search(value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _FAISS_SEARCHES


def _loop_items(loop: ast.For | ast.AsyncFor | ast.comprehension) -> list[tuple[str, ast.expr]]:
    """(target name, the iterable it takes its items from): `for x in xs`, `for i, x in enumerate(xs)`, `for x, y in
    zip(xs, ys)`."""
    target, it = loop.target, loop.iter
    if isinstance(target, ast.Name):
        return [(target.id, it)]
    if not isinstance(target, ast.Tuple) or not isinstance(it, ast.Call) or not isinstance(it.func, ast.Name):
        return []
    if it.func.id == "enumerate" and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name) and it.args:
        return [(target.elts[1].id, it.args[0])]
    if it.func.id == "zip" and len(target.elts) == len(it.args):
        return [(t.id, a) for t, a in zip(target.elts, it.args) if isinstance(t, ast.Name)]
    return []


def _moved_to_host(node: ast.expr) -> bool:
    """`<tensor>.cpu()` (no argument): a tensor on the host."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cpu" and \
        not node.args and not node.keywords


def host_arrays(ctx, assigns, loops=(), comprehensions=()) -> dict[str, list[tuple[int, int]]]:
    """name -> scopes (line spans of the enclosing function, or the file) where every assignment of the name
    binds a numpy / pandas value and at least one does; a driver-side DataProto parameter (`_driver_batches`) and
    the names bound to what is read off it, in its function. Names unpacked from a host value (`a, b =
    np.histogram(x)`, faiss' `D, I = index.search(q, k)`) count too (tq39): an unpacking that binds no host value
    counts against a name only where another unpacking bound it one. `loops`: the file's (for statement, scope);
    the items of a loop over a host name are host values (`for part in np.array_split(lines, n)` through its name;
    tq39). `comprehensions`: (generator, its comprehension's lines, the enclosing scope); its items over a host value
    (`[x.tolist() for x in mask.cpu().numpy()]`, LightAutoML's L2X) are host values in those lines (tq52a)."""
    seen: dict[tuple[str, tuple[int, int]], set[bool]] = {}
    unpacked: dict[tuple[str, tuple[int, int]], set[bool]] = {}
    methods = _MethodReturns(ctx.module)
    roots: dict[tuple[int, int], set[str]] = {}     # per function: its driver batches and what is read off them
    faiss_numpy: bool | None = None
    for name, scope in [*_driver_batches(ctx.module), *_host_parameters(ctx), *_node_inputs(ctx.module)]:
        seen[(name, scope)] = {True}
        roots.setdefault(scope, set()).add(name)
    for stmt, scope in assigns:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and \
                all(isinstance(t, ast.Name) for t in targets[0].elts):
            host = _ast_host_call(ctx, stmt.value) is True
            if not host and _faiss_search(stmt.value):
                faiss_numpy = _faiss_numpy(ctx.module) if faiss_numpy is None else faiss_numpy
                host = bool(faiss_numpy)
            for t in targets[0].elts:
                if isinstance(t, ast.Name):
                    unpacked.setdefault((t.id, scope), set()).add(host)
            continue
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        kind = _self_call_kind(stmt.value, targets[0].id, methods)
        if kind is False:
            kind = _ast_host_call(ctx, stmt.value)
        if kind is False and (_read_off(stmt.value, roots.get(scope, set())) or
                              _torch_op_of(stmt.value, roots.get(scope, set()))):
            kind = True     # `data_item = data[i]`, `mask = data_item.batch["attention_mask"]`, `n = mask.sum()`
        if kind is True:    # what is read off a host value later in the function is one too (in statement order)
            roots.setdefault(scope, set()).add(targets[0].id)
        elif kind is False:
            roots.get(scope, set()).discard(targets[0].id)
        if kind is not None:
            seen.setdefault((targets[0].id, scope), set()).add(kind)
    for key, kinds in unpacked.items():
        if True in kinds:
            seen.setdefault(key, set()).update(kinds)
    out: dict[str, list[tuple[int, int]]] = {}
    for (name, scope), kinds in seen.items():
        if kinds == {True}:
            out.setdefault(name, []).append(scope)
    items = [(name, source, scope, scope) for loop, scope in loops for name, source in _loop_items(loop)]
    items += [(name, source, lines, scope) for gen, lines, scope in comprehensions for name, source in _loop_items(gen)]
    for name, source, lines, scope in items:
        # (or a tensor the loop's own iterable moves to the host once, `zip(res.boxes.conf.cpu(), ...)`: policy (o);
        # or a numpy value built there, `imp_mask.cpu().numpy()`)
        host = isinstance(source, ast.Name) and scope in out.get(source.id, ()) or _moved_to_host(source) \
            or _ast_host_call(ctx, source) is True
        # (a comprehension's own name shadows the function's: `x = x.to(device)` above it binds another `x`)
        if host and (lines != scope or False not in seen.get((name, scope), ())):
            out.setdefault(name, []).append(lines)
    return out


# veRL's DataProto (verl/protocol.py) as a reward manager's argument: the trainer calls the reward function on the
# driver with the batch its workers returned, and the workers return their outputs on the CPU (`output =
# output.to("cpu")` in verl's fsdp / megatron workers), so `data.batch["attention_mask"][:, n:].sum(-1)[i].item()` in
# a reward manager's `__call__(self, data: DataProto)` reads a host tensor (tq38, tuned on heldout41's verl-tool
# reward managers). A function that moves anything (`.to(...)`, `.cuda()`: a worker's `data = data.to(device)`) or
# names a device is not read so.
_DATA_PROTO = "DataProto"


# ComfyUI's IMAGE and MASK sockets carry CPU tensors (ComfyUI's datatypes docs: "IMAGE ... torch.Tensor with shape
# [B,H,W,C]", kept on the intermediate device, the CPU; tq44a, tuned on heldout49's ComfyUI_Fill-Nodes crop loops)
_NODE_HOST_TYPES = frozenset({"IMAGE", "MASK"})


def _node_inputs(tree: ast.AST | None) -> list[tuple[str, tuple[int, int]]]:
    """(parameter, method span) of a ComfyUI node's FUNCTION method parameters whose INPUT_TYPES socket is IMAGE or
    MASK (`"mask": ("MASK",)` ... `FUNCTION = "apply_mask"` ... `def apply_mask(self, image, mask, ...)`): host
    tensors, and what is read off them without a move."""
    out: list[tuple[str, tuple[int, int]]] = []
    if tree is None:
        return out
    for cls in module_nodes(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        function = next((s.value.value for s in cls.body if isinstance(s, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FUNCTION" for t in s.targets) and isinstance(s.value, ast.Constant)),
            None)
        if "INPUT_TYPES" not in methods or function not in methods:
            continue
        sockets = {k.value for d in walk_list(methods["INPUT_TYPES"]) if isinstance(d, ast.Dict)
                   for k, v in zip(d.keys, d.values) if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple)
                   and v.elts and isinstance(v.elts[0], ast.Constant) and v.elts[0].value in _NODE_HOST_TYPES}
        fn = methods[function]
        out += [(a.arg, (fn.lineno, fn.end_lineno or fn.lineno)) for a in (*fn.args.args, *fn.args.kwonlyargs)
                if a.arg in sockets]
    return out


def _torch_op_of(value: ast.AST, names: set[str]) -> bool:
    """`torch.nonzero(mask_b > 0)`, `torch.nn.functional.interpolate(mask.unsqueeze(1), ...)`: a torch function of a
    host value read off `names` (its first argument, or a comparison / arithmetic on it), without `device=`: its
    result stays on the host."""
    while isinstance(value, (ast.Call, ast.Attribute, ast.Subscript)):     # (`interpolate(...).squeeze(1)`)
        if isinstance(value, ast.Call) and (ast_dotted(value.func) or "").startswith("torch."):
            break
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
            return False
        value = value.func if isinstance(value, ast.Call) else value.value
    if not (isinstance(value, ast.Call) and value.args) or any(k.arg == "device" for k in value.keywords):
        return False
    first = value.args[0]
    while isinstance(first, (ast.Compare, ast.BinOp)):
        first = first.left
    return _read_off(first, names)


def _driver_batches(tree: ast.AST | None) -> list[tuple[str, tuple[int, int]]]:
    """(parameter, function span) of the parameters annotated DataProto of functions that move nothing."""
    out: list[tuple[str, tuple[int, int]]] = []
    if tree is None:
        return out
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
                  if a.annotation is not None and _annotation_name(a.annotation) == _DATA_PROTO]
        if not params:
            continue
        nodes = scope_nodes(fn)
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MOVES for n in nodes) \
                or any(isinstance(n, (ast.Name, ast.Attribute)) and "device" in (
                    n.id if isinstance(n, ast.Name) else n.attr).lower() for n in nodes):
            continue
        out += [(p, (fn.lineno, fn.end_lineno or fn.lineno)) for p in params]
    return out


# A class's host tensors handed from method to method (tq38, tuned on heldout41's pytorch-forecasting data module:
# `self._split_indices = torch.randperm(n)`, `self._train_indices = self._split_indices[:k]`,
# `self._fit_scalers(self._train_indices)`, `def _fit_scalers(self, train_indices): for idx in train_indices:
# idx.item()`): a `self.` attribute every assignment of which in the class is a host value (a factory without a
# device, `_ast_host_call`) or read off another such attribute without a move; a method parameter every
# `self.m(...)` call of the class passes such an attribute or a host parameter of the caller (to a fixed point; a
# method no call of the class reaches is not read, nor one with `*args` calls); and the target of a `for` over
# either. Each is a host value in its method.
def _annotation_name(annotation: ast.expr) -> str:
    """The last dotted part of a type annotation (`DataProto`, `verl.DataProto`, `"DataProto"`)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.rsplit(".", 1)[-1]
    return (ast_dotted(annotation) or "").rsplit(".", 1)[-1]


def _host_parameters(ctx) -> list[tuple[str, tuple[int, int]]]:
    out: list[tuple[str, tuple[int, int]]] = []
    tree = ctx.module
    if tree is None or _default_device(ctx):
        return out
    for cls in module_nodes(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        stores: dict[str, list[ast.AST | None]] = {}     # attribute -> its values (None: `self.x: T` alone)
        for fn in methods.values():
            for n in scope_nodes(fn):
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        attr = self_attr(t)
                        if attr is not None:
                            stores.setdefault(attr, []).append(t if isinstance(n, ast.AugAssign) else n.value)
        attrs: set[str] = set()
        changed = True
        while changed:
            changed = False
            for attr, values in stores.items():
                if attr not in attrs and all(v is not None and (_ast_host_call(ctx, v) is True or
                                                                _self_root(v) in attrs) for v in values):
                    attrs.add(attr)
                    changed = True
        if not attrs:
            continue
        calls: dict[str, list[tuple[ast.Call, str]]] = {}     # method -> (call, the caller's name)
        for caller, fn in methods.items():
            for n in scope_nodes(fn):
                if isinstance(n, ast.Call) and self_attr(n.func) in methods:
                    calls.setdefault(str(self_attr(n.func)), []).append((n, caller))
        host: dict[str, set[str]] = {}       # method -> its host parameters
        changed = True
        while changed:
            changed = False
            for name, fn in methods.items():
                params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]
                for i, param in enumerate(params):
                    if param in host.get(name, ()) or not calls.get(name):
                        continue
                    passed = [_argument(call, i, param) for call, _ in calls[name]]
                    if all(a is not None and (_self_root(a) in attrs or isinstance(a, ast.Name) and
                                              a.id in host.get(caller, ())) for a, (_, caller) in
                           zip(passed, calls[name])):
                        host.setdefault(name, set()).add(param)
                        changed = True
        for name, fn in methods.items():
            scope = (fn.lineno, fn.end_lineno or fn.lineno)
            mine = host.get(name, set())
            out += [(p, scope) for p in mine]
            for n in scope_nodes(fn):
                if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and (
                        _self_root(n.iter) in attrs or isinstance(n.iter, ast.Name) and n.iter.id in mine):
                    out.append((n.target.id, scope))
    return out




def _self_root(node: ast.AST) -> str | None:
    """X of a chain of attributes, subscripts and unmoving calls on `self.X` (`self._split_indices[: self._train_size]`)."""
    root = _chain_root(node, stop=lambda n: self_attr(n) is not None)
    return self_attr(root) if root is not None else None


def _chain_root(node: ast.AST, stop: Callable[[ast.AST], bool] = lambda n: False) -> ast.AST | None:
    """The root of a chain of attributes, subscripts and calls with no move in it (`data.batch["x"][:, :n].sum(-1)` ->
    `data`), or the first link `stop` accepts on the way; None where the chain moves its value (`.to(...)`,
    `.cuda()`). A method call goes on from its receiver, a plain call (`f(x)`) from its function. The one walk
    `_self_root` and `_read_off` share (tq39: they were two near copies)."""
    while not stop(node):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                if node.func.attr in _MOVES:
                    return None
                node = node.func.value
            else:
                node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            break
    return node


def _argument(call: ast.Call, index: int, param: str) -> ast.AST | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _read_off(value: ast.AST, names: set[str]) -> bool:
    """The value is a chain of attributes, subscripts and calls rooted at one of `names` (`data.batch["x"][:, :n].sum(
    dim=-1)`), with no move in it."""
    root = _chain_root(value)
    return isinstance(root, ast.Name) and root.id in names


# a method's result, for `x = self.m(...)` (t21c, tuned on tuned_t21c's vendored segment-anything): HOST when every
# `return` gives a host value, or a name an in-place `<name>.to_numpy()` statement converted before it (SAM's
# `_generate_masks`: `data.to_numpy(); return data`, a MaskData whose fields become numpy arrays); or the name of
# the parameter every `return` hands back, as "<index after self>:<name>" (`postprocess_small_regions(mask_data, ...)`
# edits and returns its argument)
_HOST = ""


class _MethodReturns:
    """Method name -> _HOST or the returned parameter, for the file's classes (`get`, None for a name defined twice
    with different answers, or any other method); a method's body is read only when a `self.m(...)` asks for m
    (s24a: reading every method of every class was ~5 % of the engine on transformers)."""

    def __init__(self, tree: ast.AST | None) -> None:
        self._funcs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] | None = None
        self._tree = tree
        self._kinds: dict[str, str | None] = {}

    def get(self, name: str) -> str | None:
        if name not in self._kinds:
            if self._funcs is None:
                self._funcs = {}
                for cls in module_nodes(self._tree) if self._tree is not None else ():
                    if isinstance(cls, ast.ClassDef):
                        for func in cls.body:
                            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                                self._funcs.setdefault(func.name, []).append(func)
            kinds = {_returns_of(func) for func in self._funcs.get(name, ())}
            self._kinds[name] = kinds.pop() if len(kinds) == 1 else None
        return self._kinds[name]


def _returns_of(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
    converted: dict[str, int] = {}      # name -> line of its in-place `.to_numpy()` statement
    returns = []
    for node in walk_list(func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not func:
            return None                 # nested scopes' returns are not this method's: not followed
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.args \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "to_numpy" \
                and isinstance(node.value.func.value, ast.Name):
            converted[node.value.func.value.id] = node.lineno
        elif isinstance(node, ast.Return):
            returns.append(node)
    kinds = set()
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name) and converted.get(value.id, ret.lineno) < ret.lineno:
            kinds.add(_HOST)
        elif isinstance(value, ast.Name) and value.id in params and value.id not in ("self", "cls"):
            kinds.add(f"{params.index(value.id) - (0 if _static(func) else 1)}:{value.id}")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _self_call_kind(value: ast.AST, target: str, methods: _MethodReturns) -> bool | None:
    """`x = self.m(...)`: True when m returns a host value; None (neutral, like an operator) when m hands back the
    argument passed as `x` itself; False otherwise (left to _ast_host_call)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name) and value.func.value.id in ("self", "cls")):
        return False
    kind = methods.get(value.func.attr)
    if kind is None:
        return False
    if kind == _HOST:
        return True
    index, param = kind.split(":", 1)
    args = [a for a in value.args if not isinstance(a, ast.Starred)]
    passed = args[int(index)] if 0 <= int(index) < len(args) and len(args) == len(value.args) else \
        next((k.value for k in value.keywords if k.arg == param), None)
    return None if isinstance(passed, ast.Name) and passed.id == target else False


def _static(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


def host_only_file(ctx) -> bool:
    """The file imports numpy or pandas and neither torch nor torch_npu."""
    heads = {_head(q) for quals in ctx.bindings.values() for q in quals}
    return bool(heads & _HOST_LIBS) and not heads & _TORCH_LIBS


def _cst_dotted(node: cst.CSTNode) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


# veRL's DataProto keeps what is not a tensor in `non_tensor_batch`, a dict of numpy object arrays (its copies:
# TinyZero, EasyR1 and other RL fine-tuning trees): `data.non_tensor_batch['raw_prompt'][i].tolist()` (t33c, dev33)
_NON_TENSOR = "non_tensor"


def on_host(ctx, node: cst.CSTNode, line: int) -> bool:
    """Whether the `.item()` / `.tolist()` at `node` (the call or its attribute) reads a host value."""
    if ctx.host_only:
        return True
    if isinstance(node, cst.Call):
        node = node.func
    if not isinstance(node, cst.Attribute):
        return False
    cur = node.value
    while True:
        if isinstance(cur, cst.Call):
            if _to_numpy(cur.func, cur.args):
                return True
            d = _cst_dotted(cur.func)
            if d is not None and _head(ctx.resolve(d)) in _HOST_VALUE_LIBS:
                return True
            if d is not None and _cst_factory(ctx, d, cur):
                return True
            if isinstance(cur.func, cst.Attribute) and cur.func.attr.value in _MOVES:
                return False
            cur = _helper_argument(ctx, cur) or cur.func
        elif isinstance(cur, cst.Attribute) and cur.attr.value.startswith(_NON_TENSOR):
            return True
        elif isinstance(cur, cst.Attribute) and (dotted := _cst_dotted(cur)) is not None and any(
                name == dotted and first <= line <= last for name, first, last in _sync_spans(ctx)[0]):
            return True     # `out.sequences` after `out.sequences = out.sequences.cpu()` (tq41)
        elif isinstance(cur, (cst.Attribute, cst.Subscript)):
            cur = cur.value
        elif isinstance(cur, cst.Name):
            if cur.value.startswith(_NON_TENSOR):
                return True
            return any(first <= line <= last for first, last in ctx.host_arrays.get(cur.value, ())) or any(
                name == cur.value and first <= line <= last for name, first, last in _sync_spans(ctx)[0])
        elif isinstance(cur, cst.BinaryOperation):      # `(np.array(box) * scale).tolist()` (pd22)
            return any(_numpy_array_chain(ctx, side) for side in (cur.left, cur.right))
        elif isinstance(cur, cst.Comparison):
            # `(query[i] != pad_id).nonzero()[0].item()`: an elementwise test is on its tensor operand's device (tq45b)
            cur = cur.left
        else:
            return False


# words of a helper's name that say it moves its argument (`to_cuda(x)`, `move_to_device(batch)`)
_MOVING_HELPER = re.compile(r"cuda|device|gpu|npu|xpu|mps|accelerat", re.I)


def _helper_argument(ctx, call: cst.Call) -> cst.BaseExpression | None:
    """The one argument of a plain helper function called by its bare name (SAM's `box_xyxy_to_xywh(
    mask_data["boxes"][idx]).tolist()`, `deepcopy` and index arithmetic on the box): its result is where its argument
    is, so the receiver chain goes on into the argument (tq55d, tuned on heldout73's SAM2 copy). Not a torch / numpy
    name (their own results are read above), nor a helper whose name says it moves the value."""
    if not isinstance(call.func, cst.Name) or len(call.args) != 1 or call.args[0].keyword is not None \
            or call.args[0].star or _MOVING_HELPER.search(call.func.value):
        return None
    if _head(ctx.resolve(call.func.value)) in _TORCH_LIBS | _HOST_VALUE_LIBS or call.func.value in dir(builtins):
        return None
    return call.args[0].value


def _cst_factory(ctx, dotted: str, call: cst.Call) -> bool:
    """_ast_factory on libcst's call node (the finding's receiver chain)."""
    qual = ctx.resolve(dotted)
    if qual not in _TORCH_FACTORIES or _default_device(ctx):
        return False
    kws = {a.keyword.value if a.keyword is not None else None: a.value for a in call.args
           if a.keyword is not None or a.star == "**"}
    if "device" in kws or None in kws:
        return False
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if qual == "torch.load":
        loc = kws.get("map_location")
        return isinstance(loc, cst.SimpleString) and loc.value.strip("\"'") == "cpu"
    if qual == "torch.tensor":
        return bool(positional) and isinstance(positional[0], (cst.List, cst.Tuple, cst.ListComp, cst.Integer,
                                                               cst.Float))
    return True


def _default_device(ctx) -> bool:
    """Whether the file sets a default device (read once, on the first factory met)."""
    if ctx.default_device_set is None:
        ctx.default_device_set = ctx.module is not None and sets_default_device(ctx.module)
    return bool(ctx.default_device_set)


def sets_default_device(tree: ast.AST) -> bool:
    """`torch.set_default_device(...)` or `with torch.device(...):` anywhere in the file: factories without a device
    may build on the accelerator there."""
    for node in module_nodes(tree):
        if isinstance(node, ast.Call):
            d = ast_dotted(node.func)
            if d is not None and d.endswith("set_default_device"):
                return True
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                e = item.context_expr
                if isinstance(e, ast.Call) and (ast_dotted(e.func) or "").endswith("device"):
                    return True
    return False


# Ray tasks and actors that ask for no accelerator (`@ray.remote`, `@ray.remote(num_cpus=10, max_concurrency=100)`:
# no `num_gpus`, no custom `resources` such as {"NPU": 0.5}, no `accelerator_type`) are scheduled on CPU slots; when
# their code also places nothing on a device (no `.cuda()` / `.npu()` / `device`), the tensors they handle come from
# Ray's object store (`ray.get`) as host tensors: `.item()` there reads no device (MindSpeed-RL's transfer-dock
# manager actor and its KL-penalty task; t11h, tuned on heldout6). Whether Ray hides the devices from such a worker
# is not relied on (unverified for NPUs).
HOST_SYNC_RULES = frozenset({"host-sync-in-loop", "data-dependent-shape"})    # NPU703, NPU702
_ACCELERATOR_KEYS = frozenset({"num_gpus", "resources", "accelerator_type"})
_DEVICE_WORDS = ("device", ".cuda(", ".npu(")


def _ray_remote(decorator: ast.expr) -> bool | None:
    """True: `@ray.remote` without an accelerator; False: with one; None: not Ray's decorator."""
    call = decorator if isinstance(decorator, ast.Call) else None
    name = ast_dotted(call.func if call is not None else decorator)
    if name not in ("ray.remote", "remote"):
        return None
    if call is None:
        return True
    return not any(k.arg in _ACCELERATOR_KEYS or k.arg is None for k in call.keywords)


def cpu_ray_scopes(tree: ast.AST, lines: list[str]) -> list[tuple[int, int]]:
    """Line spans of the functions / classes decorated as CPU-only Ray tasks or actors that name no device."""
    spans = []
    for node in module_nodes(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not node.decorator_list:
            continue
        kinds = {_ray_remote(d) for d in node.decorator_list} - {None}
        if kinds != {True}:
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        body = "".join(lines[first - 1:last])
        if not any(word in body for word in _DEVICE_WORDS):
            spans.append((first, last))
    return spans


# -- where a name's value comes from, for the host flows (host_scopes._HostFlow) -----------------------------------
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes below `scope` outside its nested functions, classes and lambdas: a nested `def f(tokens):` binds
    its own `tokens`, not the enclosing function's (pd36; heldout30's whisper `transcribe`, whose helper
    `new_segment(*, tokens, ...)` hid the outer `tokens = torch.tensor(result.tokens)`)."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, _OWN_SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return out


def reaching_lines(scope: ast.AST, name: str, at: int) -> tuple[int, int]:
    """The lines whose bindings of `name` can reach a use on line `at` (0: anywhere): from the last dominating
    rebinding (`dominating_rebind`) to the end of the outermost loop around the use, or to the use itself; a binding
    further down reaches it only through a loop (decoding's `sum_logprobs: List[List[float]] = [...]` after the
    `.item()` loop that reads `sum_logprobs = sum_logprobs.cpu()`; pd36)."""
    if not at:
        return 0, 1 << 30
    loops = [n.end_lineno or n.lineno for n in own_scope_nodes(scope) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno <= at <= (n.end_lineno or n.lineno)]
    return dominating_rebind(scope, name, at), max([at, *loops])


def dominating_rebind(scope: ast.AST, name: str, at: int) -> int:
    """The line of the last plain assignment `name = ...` that runs on every path to line `at` (a statement before
    the one holding `at` in the same block, or in a block around it), or 0: the name's bindings before it cannot
    reach the use (`sum_logprobs = sum_logprobs.cpu()` at the top of a method, `actions = actions.cpu().numpy()`
    after `actions = self.play(...)` in both arms of an if; pd36, heldout30)."""
    if not at:
        return 0
    best = 0
    for node in [scope, *own_scope_nodes(scope)]:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not stmts or not isinstance(stmts[0], ast.stmt):
                continue
            here = next((i for i, s in enumerate(stmts) if s.lineno <= at <= (s.end_lineno or s.lineno)), None)
            for stmt in reversed(stmts[:here or 0]):
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
                    stmt.target if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else None
                if isinstance(target, ast.Name) and target.id == name:
                    best = max(best, stmt.lineno)
                    break
    return best


def runs_once(ctx, line: int) -> bool:
    """Whether `line` is in the branch of `if i == 0:` (or `i == k`) in the loop over `i`: it runs on one turn of
    the loop, not on every one (pd36; heldout30's whisper `_main_loop`, `no_speech_probs = ....tolist()` under
    `if i == 0 and ...`)."""
    return line in _sync_spans(ctx)[1]


def _sync_spans(ctx) -> tuple[list[tuple[str, int, int]], set[int]]:
    if ctx.host_sync_spans is None:
        ctx.host_sync_spans = _read_sync_spans(ctx) if ctx.module is not None else ([], set())
    return ctx.host_sync_spans


def _read_sync_spans(ctx) -> tuple[list[tuple[str, int, int]], set[int]]:
    """(name, first, last) for the arms a numpy type check guards (`v.tolist() if isinstance(v, np.ndarray) else v`,
    `if isinstance(v, np.ndarray): v = v.tolist()`: v is a numpy array there; LeRobot's metadata buffer, pd36), and
    the lines of `if <loop variable> == <constant>:` branches outside the loops inside them (`runs_once`)."""
    guards: list[tuple[str, int, int]] = []
    once: set[int] = set()
    for node in module_nodes(ctx.module):
        if isinstance(node, (ast.If, ast.IfExp)):
            name = _numpy_isinstance(ctx, node.test)
            if name is not None:
                body = node.body if isinstance(node.body, list) else [node.body]
                guards.append((name, body[0].lineno, body[-1].end_lineno or body[-1].lineno))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and (counter := _counter(node)) is not None:
            for branch in _own_turn_nodes(node.body):
                if isinstance(branch, ast.If) and _tests_one_turn(branch.test, counter):
                    once.update(_lines_outside_loops(branch.body))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                guards += _host_rebinds(block, lambda v: _cpu_move(v) or _ast_host_call(ctx, v) is True)
    return guards, once


def _host_rebinds(block: list[ast.stmt], host: Callable[[ast.AST], bool]) -> list[tuple[str, int, int]]:
    """(target, first, last) for each `x = <...>.cpu()` (or `.to("cpu")`, `.numpy()`, or any other value `host`
    proves on the host: a processor's `return_tensors="np"` output) of a block, a name or an attribute
    (`out.sequences = out.sequences.cpu()`, dLLM-RL's sampler before `out.sequences[:, n:].tolist()`; VLM2Vec's
    `inputs = processor(..., return_tensors="np")` in a function that binds `inputs` to a dict of tensors further
    down; tq41): from the next line to the end of the block, or to the next assignment of the same target in it."""
    out = []
    for i, stmt in enumerate(block):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and host(stmt.value)):
            continue
        target = ast_dotted(stmt.targets[0])
        if target is None:
            continue
        last = block[-1].end_lineno or block[-1].lineno
        for later in block[i + 1:]:
            if any(isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and target in
                   {ast_dotted(t) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
                   for n in walk_list(later)):
                last = later.lineno - 1
                break
        out.append((target, (stmt.end_lineno or stmt.lineno) + 1, last))
    return out


def _cpu_move(value: ast.AST) -> bool:
    """`t.cpu()`, `t.detach().cpu()`, `t.to("cpu")`, `t.to(device="cpu")`, `t.cpu().numpy()`: a copy on the host."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    attr = value.func.attr
    if attr in ("cpu", "numpy") and not value.args:
        return True
    return attr == "to" and any(isinstance(a, ast.Constant) and a.value == "cpu"
                                for a in [*value.args[:1], *(k.value for k in value.keywords if k.arg == "device")])


def _numpy_isinstance(ctx, test: ast.AST) -> str | None:
    """`isinstance(v, np.ndarray)` (or a tuple of numpy types, or the first operand of an `and`): the name checked."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[0]
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
        return None
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    quals = [ctx.resolve(d) if (d := ast_dotted(k)) is not None else None for k in kinds]
    return test.args[0].id if quals and all(_head(q) == "numpy" for q in quals) else None


def _counter(loop: ast.For | ast.AsyncFor) -> str | None:
    """The loop's counter: `i` of `for i in range(n)` / `for i, x in enumerate(xs)` (not an element, whose value
    may equal the constant on many turns)."""
    it, target = loop.iter, loop.target
    func = it.func.id if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) else None
    if func == "range" and isinstance(target, ast.Name):
        return target.id
    if func == "enumerate" and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        return target.elts[0].id
    return None


_LOOP_NODES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_turn_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of a loop's body outside the loops (and functions) inside it: they run once per turn."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, (*_LOOP_NODES, *_OWN_SCOPES)):
            stack.extend(ast.iter_child_nodes(n))
    return out


def _tests_one_turn(test: ast.AST, counter: str) -> bool:
    """`i == 0`, `step == 3`, `i == 0 and cond`: an equality of the loop's counter with a number."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_one_turn(v, counter) for v in test.values)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and any(
        isinstance(a, ast.Name) and a.id == counter and isinstance(b, ast.Constant) and type(b.value) is int
        for a, b in ((test.left, test.comparators[0]), (test.comparators[0], test.left)))


def _lines_outside_loops(body: list[ast.stmt]) -> set[int]:
    lines: set[int] = set()
    looped: set[int] = set()
    for stmt in body:
        for n in walk_list(stmt):
            if isinstance(n, _LOOP_NODES):
                looped.update(node_lines(n))
        lines.update(node_lines(stmt))
    return lines - looped


# the operator support rules: Ascend's list for an API answers for the NPU operator, not for the CPU kernel
_SUPPORT_RULES = frozenset({"NPU501", "NPU502"})
# `torch.tensor(t)` of a device tensor and `torch.load` without map_location keep a device: not read by position
_SUPPORT_FACTORIES = _TORCH_FACTORIES - {"torch.tensor", "torch.load"}


def drop_host_factory_support_rows(findings: list, tree: ast.AST) -> list:
    """NPU501 / NPU502 on a torch factory called without a device (module doc; tq53b): the call builds its tensor on
    the host, so a row of the NPU support list says nothing about it. Matched by the call's position and the rule's
    symbol (its resolved name); a `device=` or `**kwargs` argument, or a file that sets a default device, keeps it."""
    if not isinstance(tree, ast.Module) or not any(f.code in _SUPPORT_RULES and f.symbol in _SUPPORT_FACTORIES
                                                   for f in findings) or sets_default_device(tree):
        return findings
    host = {(n.lineno, n.col_offset + 1) for n in module_nodes(tree) if isinstance(n, ast.Call)
            and not any(k.arg in ("device", None) for k in n.keywords)}
    return [f for f in findings if not (f.code in _SUPPORT_RULES and f.symbol in _SUPPORT_FACTORIES
                                        and (f.line, f.col) in host)]

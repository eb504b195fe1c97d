"""Child-process side of the tracer: run one training step on fake tensors and record what it executes.

Two recorders sit on the mode stacks while the step runs under FakeTensorMode:

* ``ApiRecorder`` (TorchFunctionMode) sees the Python-level calls: torch.*, torch.nn.functional.*,
  Tensor methods. It finds the first frame in model code, and remembers which call produced each
  autograd node so that backward ops can be attributed to the forward line that caused them.
* ``AtenRecorder`` (TorchDispatchMode) sees every aten overload with its dtypes, counts it against the
  current call site, and during the forward builds an aten-level torch.fx graph (one node per op,
  edges by tensor identity) on which auditor.trace.fusion matches subgraphs.

Everything returned is plain data (dicts, tuples, ints), so it crosses the process boundary by pickle.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import FrameType
from typing import Any, cast

import torch
import torch.fx
from torch._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException,
                                           FakeTensorMode)
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode

from auditor.entry import EntrySpec, resolve_entry
from auditor.sandbox import is_user_frame
from auditor.trace.flops import op_flops
from auditor.trace.redirect import CudaRedirect, autocast_override

_TORCH_DIR = os.path.realpath(os.path.dirname(torch.__file__))
_AUDITOR_DIR = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))

# Ops that only move metadata around; they are counted but never judged or shown as findings.
BOOKKEEPING = frozenset({
    "detach", "alias", "lift_fresh", "lift_fresh_copy", "_local_scalar_dense", "sym_size", "sym_stride",
    "sym_numel", "sym_storage_offset", "_assert_async", "_assert_scalar", "_functionalize_sync",
    "set_", "resize_", "is_same_size", "_has_compatible_shallow_copy_type", "_version",
})
# Python-level calls that never reach an aten op worth judging (shape queries, dunder protocol).
_API_SKIP_SUFFIXES = (".__get__", ".__set__", ".__len__", ".__iter__", ".__format__", ".__repr__",
                      ".__bool__", ".__index__", ".__hash__", ".__reduce_ex__", ".__deepcopy__")


def is_bookkeeping(func: torch._ops.OpOverload) -> bool:
    namespace = func.namespace
    if namespace != "aten":
        return True
    return func.is_view or func._opname in BOOKKEEPING


def op_key(func: torch._ops.OpOverload) -> str:
    """The coverage tables' spelling: 'mm', 'add.Tensor' (the default overload has no suffix)."""
    overload = func._overloadname
    return func._opname if overload == "default" else f"{func._opname}.{overload}"


@lru_cache(maxsize=4096)
def frame_kind(filename: str) -> str:
    """'user' (the user's files), 'model' (library model code such as transformers) or 'skip'."""
    real = os.path.realpath(filename) if not filename.startswith("<") else filename
    if filename.startswith("<") or real.startswith(_TORCH_DIR + os.sep) or real.startswith(_AUDITOR_DIR + os.sep):
        return "skip"
    if is_user_frame(filename):
        return "user"
    if "site-packages" in real or "dist-packages" in real:
        return "model"
    return "skip"  # the standard library


@lru_cache(maxsize=4096)
def _positions(code) -> tuple:
    return tuple(code.co_positions())


def _columns(frame) -> tuple[int, int]:
    """1-based start and end column of the expression a frame is executing (0, 0 when unknown)."""
    try:
        _line, end_line, col, end_col = _positions(frame.f_code)[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return 0, 0
    if col is None:
        return 0, 0
    return col + 1, (end_col + 1 if end_col is not None and end_line == frame.f_lineno else 0)


def model_frame(depth: int = 2) -> tuple | None:
    """(file, line, is_user, col, end_col) of the innermost frame in model code: the user's, else a
    library's (whose columns are not needed)."""
    frame: FrameType | None = sys._getframe(depth)
    library = None
    while frame is not None and frame.f_code is not _TRACE_STEP_CODE:  # callers of the trace are not the model
        kind = frame_kind(frame.f_code.co_filename)
        if kind == "user":
            return (frame.f_code.co_filename, frame.f_lineno, True, *_columns(frame))
        if kind == "model" and library is None:
            library = (frame.f_code.co_filename, frame.f_lineno, False)
        frame = frame.f_back
    return library


@dataclass
class Site:
    module: str                                # dotted module path, '' outside any module
    frame: tuple | None                        # (file, line, is_user[, col, end_col])
    api: str                                   # the Python-level call, '' when unknown


@dataclass
class Recording:
    phase: str = "forward"
    module_stack: list[str] = field(default_factory=list)
    module_names: dict[int, str] = field(default_factory=dict)
    current: Site | None = None                     # the Python call being executed
    node_sites: dict[Any, Site] = field(default_factory=dict)  # autograd node -> forward site
    aten: Counter = field(default_factory=Counter)  # (op, dtypes, phase, module, frame, api) -> count
    api: Counter = field(default_factory=Counter)   # (qualname, dtypes, module, frame) -> count
    approximations: Counter = field(default_factory=Counter)
    graph: torch.fx.Graph = field(default_factory=torch.fx.Graph)
    tensor_nodes: dict[int, tuple[torch.fx.Node, Any]] = field(default_factory=dict)
    aten_calls: int = 0
    flops_by_module: Counter = field(default_factory=Counter)  # flop_counter formulas, per module path
    density: dict = field(default_factory=dict)     # id(tensor) -> (tensor, share of non-zeros): routing masks
    bookkeeping: set = field(default_factory=set)   # op keys that are views / metadata only

    def module_path(self) -> str:
        return self.module_stack[-1] if self.module_stack else ""


def _tensors(value):
    """The tensors in op arguments (tensors, lists/tuples of them, dicts): faster than pytree here."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _map_tensors(fn, value):
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(fn, v) for v in value) if not hasattr(value, "_fields") else value
    if isinstance(value, dict):
        return {k: _map_tensors(fn, v) for k, v in value.items()}
    return value


def _dtypes(args, kwargs) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for tensor in _tensors((args, kwargs)):
        seen[_DTYPE_NAMES.get(tensor.dtype) or str(tensor.dtype).replace("torch.", "")] = None
    return tuple(seen)


_DTYPE_NAMES = {getattr(torch, n): n for n in ("float32", "float16", "bfloat16", "float64", "int64", "int32",
                                                "int16", "int8", "uint8", "bool", "complex64", "complex128")}


_ONE_HOT = torch.nn.functional.one_hot


class ApiRecorder(TorchFunctionMode):
    def __init__(self, rec: Recording):
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is _ONE_HOT:
            return self._one_hot(args, kwargs)
        name = _api_name(func)
        if name is None or self.rec.current is not None or self.rec.phase != "forward":
            # backward ops are attributed through their autograd node; optimizer ops to the step
            return func(*args, **kwargs)
        rec = self.rec
        site = Site(rec.module_path(), model_frame(2), name)
        before = rec.aten_calls
        rec.current = site
        try:
            out = func(*args, **kwargs)
        finally:
            rec.current = None
        if rec.aten_calls != before:
            rec.api[(name, _dtypes(args, kwargs), site.module, site.frame)] += 1
        self._remember_nodes(out, site)
        return out

    def _one_hot(self, args, kwargs):
        """A one-hot mask has one non-zero in C: remembered for the routing stand-in (see
        DataDependentStandIns)."""
        num_classes = kwargs.get("num_classes", args[1] if len(args) > 1 else -1)
        if not isinstance(num_classes, int) or num_classes <= 0 or self.rec.phase != "forward":
            return _ONE_HOT(*args, **kwargs)  # class count from the values: the .item() stand-in decides
        rec = self.rec
        site = Site(rec.module_path(), model_frame(3), "torch.nn.functional.one_hot")
        rec.current = site
        try:
            out = _ONE_HOT(*args, **kwargs)
        finally:
            rec.current = None
        rec.api[(site.api, _dtypes(args, kwargs), site.module, site.frame)] += 1
        rec.density[id(out)] = (out, 1.0 / num_classes)
        return out

    def _remember_nodes(self, out, site: Site) -> None:
        """Map the autograd nodes this call created to its site (walking into composite decompositions)."""
        pending = [t.grad_fn for t in _tensors(out) if t.grad_fn is not None]
        sites = self.rec.node_sites
        while pending:
            node = pending.pop()
            if node is None or node in sites or type(node).__name__ == "AccumulateGrad":
                continue
            sites[node] = site
            pending.extend(fn for fn, _ in node.next_functions)


# GPU code traces as written: "cuda" becomes the fake tensors' CPU device (auditor.trace.redirect).
CudaToCpu = CudaRedirect


def _apply_in_place(self: torch.nn.Module, fn, recurse: bool = True) -> torch.nn.Module:
    """nn.Module._apply for fake parameters: `.to(dtype)`, `.half()`, `.cuda()` on a model.

    torch's own _apply swaps fake parameters with torch.utils.swap_tensors, which refuses tensors that
    fake mode holds weak references to; assigning `.data` (the long-standing behaviour) works and keeps
    the Parameter objects the optimizer will see.
    """
    if recurse:
        for child in self.children():
            child._apply(fn)
    for param in self._parameters.values():
        if param is None:
            continue
        with torch.no_grad():
            param.data = fn(param)
            if param.grad is not None:
                param.grad.data = fn(param.grad)
    for key, buf in self._buffers.items():
        if buf is not None:
            self._buffers[key] = fn(buf)
    return self


@contextmanager
def _module_apply_in_place():
    original = torch.nn.Module._apply
    torch.nn.Module._apply = _apply_in_place
    try:
        yield
    finally:
        torch.nn.Module._apply = original


@lru_cache(maxsize=4096)
def _resolve(func) -> str | None:
    try:
        name = resolve_name(func)
    except Exception:  # noqa: BLE001 - some C callables have no resolvable name
        name = None
    return name


def _api_name(func) -> str | None:
    try:
        name = _resolve(func)
    except TypeError:  # unhashable callable
        name = resolve_name(func)
    if name is None or name.endswith(_API_SKIP_SUFFIXES):
        return None
    return name


class DataDependentShape(Exception):
    """An op whose output shape depends on tensor values, with no stand-in: the message says what to do
    (reported like an exception in user code: with the user's frames, on the innermost user line)."""


# Ops that keep the share of non-zero elements of their first argument (views, copies, indexing).
_KEEP_DENSITY = frozenset({
    "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "squeeze", "unsqueeze", "expand",
    "clone", "contiguous", "_to_copy", "select", "slice", "index", "alias", "detach", "flatten",
})
_UNIQUE_OPS = frozenset({"_unique", "_unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive"})


class DataDependentStandIns(TorchDispatchMode):
    """Fake tensors have no values: ops whose result depends on them get a stand-in so the step goes on.

    Routing masks: a one-hot tensor with C classes (`F.one_hot(top_k_index, C)`, how MoE blocks build
    their expert masks) has one non-zero in C; that share follows it through views and indexing, and
    nonzero / torch.where on it selects that share of its elements. An MoE layer's loop then gives each
    expert tokens * top_k / C rows, the balanced assignment a trained router aims for, with the model's
    own top-k: the expert FLOPs are those of the active parameters.
    Other nonzero / masked_select / unique calls get the upper bound (every element selected): the op
    sequence is right and the FLOP count an overestimate. `.item()` and `if tensor:` get False / 1 / 1.0,
    which keeps most control flow on its common path (rejection loops end, sentinel checks fail). Each use
    is counted and shown in the report. Any other value-dependent shape stops the trace with a message
    naming the op and the line.
    """

    def __init__(self, rec: "Recording"):
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            out = func(*args, **kwargs)
        except DynamicOutputShapeException:
            return self._dynamic_shape(func, args, kwargs)
        except DataDependentOutputException:
            self.rec.approximations[op_key(func)] += 1
            x = args[0]
            if x.dtype == torch.bool:
                return False
            return 1 if not x.dtype.is_floating_point else 1.0
        density = self.rec.density
        if density and args and isinstance(args[0], torch.Tensor) and func._opname in _KEEP_DENSITY:
            known = density.get(id(args[0]))
            if known is not None and known[0] is args[0] and isinstance(out, torch.Tensor):
                density[id(out)] = (out, known[1])
        return out

    def _dynamic_shape(self, func, args, kwargs):
        x = args[0]
        name = func._opname
        if name in ("nonzero", "argwhere"):
            known = self.rec.density.get(id(x))
            if known is not None and known[0] is x:
                self.rec.approximations["balanced routing (nonzero)"] += 1
                rows = max(1, round(x.numel() * known[1]))
            else:
                self.rec.approximations[op_key(func)] += 1
                rows = x.numel()
            return torch.empty((rows, x.dim()), dtype=torch.long, device=x.device)
        if name == "masked_select":
            self.rec.approximations[op_key(func)] += 1
            return torch.empty((torch.broadcast_shapes(x.shape, args[1].shape).numel(),), dtype=x.dtype,
                               device=x.device)
        if name in _UNIQUE_OPS:
            return self._unique(func, x, args, kwargs)
        if name in ("index", "index_put", "index_put_", "_index_put_impl_") and len(args) > 1 and \
                any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in args[1]):
            # x[mask]: a boolean index is its nonzero(); every element selected (the upper bound)
            self.rec.approximations[f"{op_key(func)} (boolean mask)"] += 1
            indices = []
            for index in args[1]:
                if isinstance(index, torch.Tensor) and index.dtype in (torch.bool, torch.uint8):
                    rows = torch.empty((index.numel(), index.dim()), dtype=torch.long, device=index.device)
                    indices.extend(rows.unbind(1))
                else:
                    indices.append(index)
            return func(x, indices, *args[2:], **kwargs)
        frame = model_frame(2)
        where = f" at {frame[0]}:{frame[1]}" if frame else ""
        raise DataDependentShape(
            f"aten::{op_key(func)}{where}: its output shape depends on tensor values, which the fake tensors "
            f"of --trace do not have. Give it a fixed size (e.g. torch.nonzero_static(x, size=N), "
            f"torch.masked_fill in place of boolean indexing, a padded top-k), or trace with --execute's real "
            f"tensors on a small config.")

    def _unique(self, func, x, args, kwargs):
        """Every element distinct (the upper bound): values, inverse indices and counts of x's size."""
        self.rec.approximations[op_key(func)] += 1
        dim = kwargs.get("dim", args[1] if func._opname.startswith("unique_dim") and len(args) > 1 else None)
        values = x.clone() if dim is not None else x.reshape(-1).clone()
        n = x.shape[dim] if dim is not None else x.numel()
        inverse = torch.empty(x.shape if dim is None else (n,), dtype=torch.long, device=x.device)
        counts = torch.empty((n,), dtype=torch.long, device=x.device)
        if func._opname == "_unique":
            return values, inverse
        return values, inverse, counts


class AtenRecorder(DataDependentStandIns):
    """Records every aten call of the step (with the stand-ins of its base class: one mode, not two)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_dispatch__(func, types, args, kwargs)
        rec = self.rec
        if func.namespace == "prim":
            return out
        rec.aten_calls += 1
        site = self._site()
        flops = op_flops(func, args, kwargs, out)
        if flops:
            rec.flops_by_module[site.module] += flops
        if is_bookkeeping(func):
            rec.bookkeeping.add(op_key(func))
        rec.aten[(op_key(func), _dtypes(args, kwargs), rec.phase, site.module, site.frame, site.api)] += 1
        if rec.phase == "forward":
            self._add_node(func, args, kwargs, out, site)
        return out

    def _site(self) -> Site:
        rec = self.rec
        if rec.current is not None:
            return rec.current
        if rec.phase == "backward":
            node = torch._C._current_autograd_node()
            if node is not None and node in rec.node_sites:
                return rec.node_sites[node]
            return Site("", None, "")
        return Site(rec.module_path(), model_frame(3), "")

    def _add_node(self, func, args, kwargs, out, site: Site) -> None:
        rec = self.rec

        def as_arg(value):
            if isinstance(value, torch.Tensor):
                known = rec.tensor_nodes.get(id(value))
                if known is not None and known[1] is value:
                    return known[0]
                placeholder = rec.graph.placeholder(f"t{len(rec.tensor_nodes)}")
                placeholder.meta.update(shape=tuple(value.shape), dtype=value.dtype)
                rec.tensor_nodes[id(value)] = (placeholder, value)
                return placeholder
            return value

        node_args = _map_tensors(as_arg, args)
        node_kwargs = _map_tensors(as_arg, kwargs)
        node = rec.graph.call_function(func, tuple(node_args), dict(node_kwargs))
        first = out[0] if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor) else out
        node.meta.update(module=site.module, frame=site.frame, api=site.api,
                         shape=tuple(first.shape) if isinstance(first, torch.Tensor) else None,
                         dtype=first.dtype if isinstance(first, torch.Tensor) else None)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for index, value in enumerate(outs):
            if not isinstance(value, torch.Tensor):
                continue
            target = node
            if len(outs) > 1:
                target = rec.graph.call_function(_getitem, (node, index))
                target.meta.update(node.meta, shape=tuple(value.shape), dtype=value.dtype)
            rec.tensor_nodes[id(value)] = (target, value)


def _getitem(value, index):
    return value[index]


def _install_module_hooks(rec: Recording, model: torch.nn.Module):
    root = type(model).__name__
    for name, module in model.named_modules():
        rec.module_names[id(module)] = f"{root}.{name}" if name else root

    def pre(module, _args):
        name = rec.module_names.get(id(module))
        if name is None:
            # a module outside the model's tree called inside it (transformers 5.25 runs `apply_rotary_pos_emb`
            # through a kernel-hub wrapper module, `Func`): its ops belong to the enclosing module, so a traced
            # block's patterns scale with the block's depth
            name = rec.module_stack[-1] if rec.module_stack else type(module).__name__
        rec.module_stack.append(name)

    def post(module, _args, _out):
        if rec.module_stack:
            rec.module_stack.pop()

    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    return [register_module_forward_pre_hook(pre), register_module_forward_hook(post, always_call=True)]


def stand_in_loss(output) -> torch.Tensor:
    """No loss function and a non-scalar output: sum the means of every floating tensor it holds."""
    tensors = [t for t in torch.utils._pytree.tree_leaves(output if not hasattr(output, "to_tuple")
                                                           else output.to_tuple())
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        raise TypeError("the model output holds no floating-point tensor to reduce into a loss; "
                        "return a loss_fn from the entry function")
    return cast(torch.Tensor, sum(t.float().mean() for t in tensors))   # not empty: a tensor, never 0


def _loss(spec: EntrySpec, output) -> tuple[torch.Tensor, str]:
    if isinstance(output, torch.Tensor) and output.numel() == 1 and output.is_floating_point():
        return output.reshape(()), "model output"
    if spec.loss_fn is not None:
        return spec.loss_fn(output), "loss_fn"
    return stand_in_loss(output), "stand-in (mean of outputs)"


def _default_optimizer(params) -> torch.optim.Optimizer:
    """AdamW with the foreach (multi-tensor) kernels: what torch picks by default on an NPU, where
    foreach is on for the PrivateUse1 backend; on the CPU it would pick the per-parameter loop."""
    return torch.optim.AdamW(params, foreach=True)


def _public_name(cls: type) -> str:
    """torch.optim.sgd.SGD -> torch.optim.SGD: the name users write and the static pass reports."""
    if getattr(torch.optim, cls.__name__, None) is cls:
        return f"torch.optim.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _code_site(obj) -> tuple[str, int, bool] | None:
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    kind = frame_kind(code.co_filename)
    return (code.co_filename, code.co_firstlineno, kind == "user") if kind != "skip" else None


def trace_step(source: str | None, entry: str | None, hf_config: str | None, amp: str | None,
               session=None, seq_len: int | None = None, batch: int | None = None,
               layers: int | str | None = None) -> dict:
    """Build the model under FakeTensorMode and record one forward + backward + optimizer step.

    `session`: an auditor.trace.distributed.DistributedSession when the step runs as one rank of a job.
    `layers`: blocks traced per kind of repeated block ("all": every block; default: one per kind for
    --hf-config models, every block for an entry function); the records are scaled to the full depth
    (auditor.trace.layers).
    """
    from auditor.trace.layers import active_parameters, prune_layers
    from auditor.trace.loaders import workers_in_process

    started = time.perf_counter()
    factory = resolve_entry(Path(source) if source else None, entry, Path(hf_config) if hf_config else None,
                            seq_len=seq_len, batch=batch)
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    rec = Recording()
    redirect = CudaToCpu()
    autocasts: list = []
    own_autocast = (torch.autocast("cpu", dtype=getattr(torch, {"bf16": "bfloat16", "fp16": "float16"}[amp]))
                    if amp else nullcontext())
    with fake_mode, redirect, _module_apply_in_place(), autocast_override("cpu", seen=autocasts), \
            session.recorder if session else nullcontext(), workers_in_process() as loaders:
        with DataDependentStandIns(rec), _no_weight_init() if hf_config else nullcontext():
            spec = factory(session.entry_context()) if session else factory()
        model = spec.model
        if hf_config and hasattr(model, "tie_weights"):
            # no_init_weights skips init_weights(), which is where transformers ties the output head to
            # the input embedding (GPT-2, BERT, Gemma): tie them as from_config would have
            model.tie_weights()
        model.train()
        facts = active_parameters(model, getattr(model, "config", None))
        per_kind = None if layers in (None, "all") and not (layers is None and hf_config) else \
            (1 if layers is None else int(layers))
        plan = prune_layers(model, per_kind, type(model).__name__) if per_kind else None
        params = [p for p in model.parameters() if p.requires_grad]
        built = time.perf_counter()
        hooks = _install_module_hooks(rec, model)
        if session is not None:
            session.recorder.phase = lambda: rec.phase
            session.recorder.node_frame = lambda: rec.node_sites.get(torch._C._current_autograd_node(),
                                                                     Site("", None, "")).frame
        loss_source = ""
        try:
            with AtenRecorder(rec), ApiRecorder(rec):
                with own_autocast:
                    output = model(*spec.args, **spec.kwargs)
                    loss, loss_source = _loss(spec, output)
                if not (isinstance(loss, torch.Tensor) and loss.numel() == 1):
                    raise TypeError(f"the loss must be a scalar tensor, got {type(loss).__name__} "
                                    f"{tuple(getattr(loss, 'shape', ()))}")
                rec.phase = "backward"
                loss.backward()
                rec.phase = "optimizer"
                optimizer = (spec.optimizer_factory or _default_optimizer)(params)
                step_site = Site("", _code_site(spec.optimizer_factory) if spec.optimizer_factory else None,
                                 f"{_public_name(type(optimizer))}.step")
                rec.current = step_site
                try:
                    optimizer.step()
                finally:
                    rec.current = None
                rec.api[(step_site.api, _dtypes(params, {}), "", step_site.frame)] += 1
        finally:
            for handle in hooks:
                handle.remove()
    finished = time.perf_counter()
    from auditor.trace.fusion import match_fusions  # the graph matchers need only the graph

    weight = plan.weight if plan is not None and plan.pruned else (lambda _module: 1.0)
    scaled = lambda n, module: int(round(n * weight(module)))
    fusions = match_fusions(rec.graph)
    for match in fusions:
        match["count"] = sum(scaled(n, m) for m, n in match.pop("module_counts").items())
    user_autocast = [a for a in autocasts if a[2]]
    return {
        "label": spec.label,
        "model_class": type(model).__name__,
        "parameters": facts["total"],
        "active_parameters": facts["active"],
        "embedding_parameters": facts["embedding"],
        "trainable_parameters": facts["total"] if plan is not None and plan.pruned else sum(p.numel() for p in params),
        "flops": int(sum(n * weight(module) for module, n in rec.flops_by_module.items())),
        "inputs": _input_shapes(spec),
        "layers": {"lists": plan.lists if plan else [], "traced": plan.describe() if plan else ""},
        "loss": loss_source,
        "amp": amp or "",
        "user_autocast": sorted({f"{a[0]}->{'cpu' if a[0].startswith('cuda') else a[0]} {a[1]}".strip()
                                 for a in user_autocast}),
        "aten": [dict(op=op, dtypes=list(dt), phase=ph, module=mod, frame=fr, api=api, count=scaled(n, mod),
                      bookkeeping=op in rec.bookkeeping)
                 for (op, dt, ph, mod, fr, api), n in rec.aten.items()],
        "api": [dict(qualname=q, dtypes=list(dt), module=mod, frame=fr, count=scaled(n, mod))
                for (q, dt, mod, fr), n in rec.api.items()],
        "fusions": fusions,
        "optimizer": {
            "class": f"{type(optimizer).__module__}.{type(optimizer).__name__}",
            "public_name": _public_name(type(optimizer)),
            "defaults": {k: v for k, v in optimizer.defaults.items() if k in ("fused", "foreach")},
            "given": spec.optimizer_factory is not None,
            "site": _code_site(spec.optimizer_factory) if spec.optimizer_factory else None,
        },
        "approximations": dict(rec.approximations),
        "cuda_redirects": redirect.redirected,
        "dataloaders_in_process": loaders,       # DataLoader workers run in this process (trace/loaders.py)
        "graph_nodes": len(rec.graph.nodes),
        "seconds": {"build": round(built - started, 3), "step": round(finished - built, 3)},
        **({"collectives": session.recorder.records(), "distributed": session.describe()} if session else {}),
    }


def _input_shapes(spec: EntrySpec) -> dict:
    """name (or position) -> shape of the tensor inputs: what the step was traced with."""
    shapes = {str(i): list(t.shape) for i, t in enumerate(spec.args) if isinstance(t, torch.Tensor)}
    shapes.update({k: list(v.shape) for k, v in spec.kwargs.items() if isinstance(v, torch.Tensor)})
    return shapes


def _no_weight_init():
    """transformers models: skip weight initialisation, whose values fake tensors do not keep anyway."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        return nullcontext()
    return no_init_weights()


_TRACE_STEP_CODE = trace_step.__code__

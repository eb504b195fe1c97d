"""Child side of `--trace --world-size N`: one rank of an N-rank job on one CPU.

The entry runs under PyTorch's *fake* process-group backend (`torch.testing._internal.distributed.fake_pg`,
backend "fake": every collective returns at once without peers) and fake tensors, through the user's own
wrapping code (DDP, FSDP2 `fully_shard`, DTensor `parallelize_module`). ``CollectiveRecorder``
(a TorchDispatchMode) sees every collective and point-to-point call as the c10d op it dispatches:
`c10d.allreduce_` and friends from `torch.distributed.*` and from DDP's C++ reducer, the functional
collectives `_c10d_functional.*` that DTensor issues. Nothing is monkeypatched to record them.

What has to be adapted for a fake rank, and nothing else:

* the c10d ops' fake (Meta) kernels return a Work whose future holds no value; DDP's reducer reads the
  bucket from that future, so each Work is replaced by one completed with the op's tensors;
* `DeviceMesh` keeps its rank layout in small integer tensors and reads them (`tolist`, `nonzero`):
  its methods run with the fake mode switched off;
* user code written for GPUs: `init_process_group(backend="nccl")` joins the fake group that is already
  up, `new_group(backend="nccl")` gets the fake backend, device type "cuda" becomes "cpu" for meshes,
  `torch.cuda.set_device` does nothing, DDP's `device_ids` are dropped for the CPU module, and the
  RANK / WORLD_SIZE / LOCAL_RANK variables a launcher would set are set;
* DDP's construction-time check that all ranks hold the same parameter shapes (it reads sizes through
  a real tensor) is skipped: there is one rank.

The static pass still reports `backend="nccl"`; this module only makes the rank run.
"""
from __future__ import annotations

import functools
import os
import sys
from collections import Counter
from contextlib import ExitStack
from types import FrameType
from typing import Any, Callable

import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from auditor.trace.record import _TRACE_STEP_CODE, _tensors, frame_kind

_TORCH_DIR = os.path.realpath(os.path.dirname(torch.__file__))

# c10d op name -> (HCCL / torch.distributed name, kind). kind: 'gather' (this rank sends its input, the
# result is group_size times larger), 'scatter' (the reverse), 'flat' (input and output the same size),
# 'sync' (no payload).
_C10D = {
    "broadcast_": ("broadcast", "flat"), "allreduce_": ("all_reduce", "flat"), "reduce_": ("reduce", "flat"),
    "allgather_": ("all_gather", "gather"), "_allgather_base_": ("all_gather_into_tensor", "gather"),
    "reduce_scatter_": ("reduce_scatter", "scatter"), "_reduce_scatter_base_": ("reduce_scatter_tensor", "scatter"),
    "gather_": ("gather", "gather"), "scatter_": ("scatter", "scatter"),
    "alltoall_": ("all_to_all", "flat"), "alltoall_base_": ("all_to_all_single", "flat"),
    "send": ("send", "flat"), "recv_": ("recv", "flat"), "recv_any_source_": ("recv_any_source", "flat"),
    "barrier": ("barrier", "sync"), "monitored_barrier_": ("monitored_barrier", "sync"),
}
_FUNCTIONAL = {
    "all_reduce": ("all_reduce", "flat"), "all_reduce_": ("all_reduce", "flat"),
    "all_reduce_coalesced": ("all_reduce", "flat"), "all_reduce_coalesced_": ("all_reduce", "flat"),
    "all_gather_into_tensor": ("all_gather_into_tensor", "gather"),
    "all_gather_into_tensor_out": ("all_gather_into_tensor", "gather"),
    "all_gather_into_tensor_coalesced": ("all_gather_into_tensor", "gather"),
    "reduce_scatter_tensor": ("reduce_scatter_tensor", "scatter"),
    "reduce_scatter_tensor_out": ("reduce_scatter_tensor", "scatter"),
    "reduce_scatter_tensor_coalesced": ("reduce_scatter_tensor", "scatter"),
    "all_to_all_single": ("all_to_all_single", "flat"), "shard_dim_alltoall": ("all_to_all_single", "flat"),
    "broadcast": ("broadcast", "flat"), "broadcast_": ("broadcast", "flat"),
    "isend": ("isend", "flat"), "irecv": ("irecv", "flat"), "batch_p2p_ops": ("batch_isend_irecv", "flat"),
}
_FUNCTIONAL_NAMESPACES = ("_c10d_functional", "_c10d_functional_autograd", "_dtensor")
# Argument names (from the ops' schemas) holding what this rank sends and what it receives.
_INPUT_ARGS = ("input", "inputs", "tensor", "tensors", "input_tensor", "input_tensors")
_OUTPUT_ARGS = ("output_tensor", "output_tensors", "output", "out")


def collective_kind(func) -> tuple[str, str] | None:
    """(name, kind) of a collective or p2p op; None for everything else (wait_tensor included)."""
    namespace = func.namespace
    if namespace == "c10d":
        return _C10D.get(func._opname)
    if namespace in _FUNCTIONAL_NAMESPACES:
        return _FUNCTIONAL.get(func._opname)
    return None


def _named_args(func, args, kwargs) -> dict:
    named = {a.name: v for a, v in zip(func._schema.arguments, args)}
    named.update(kwargs)
    return named


def _nbytes(value) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(value))


def _dtype(value) -> str:
    names = dict.fromkeys(str(t.dtype).replace("torch.", "") for t in _tensors(value))
    return ",".join(names) or "-"


def _group(func, named: dict):
    """The ProcessGroup an op runs on."""
    if "process_group" in named:
        return dist.ProcessGroup.unbox(named["process_group"])
    name = named.get("group_name")
    if name is None:
        return None
    from torch._C._distributed_c10d import _resolve_process_group

    return _resolve_process_group(name) if isinstance(name, str) else name  # type: ignore[arg-type]  # a GroupName is a str


def _reduce_op(named: dict) -> str:
    op = named.get("reduce_op")
    if op is None:
        return ""
    if isinstance(op, str):
        return op.upper()
    try:
        return dist.ReduceOp.RedOpType(op.op()).name     # the boxed c10d ReduceOp script object
    except Exception:  # noqa: BLE001 - an unknown boxing: say so rather than guess
        return "?"


def _completed(work_tensors) -> Any:
    """A boxed Work whose future already holds the op's tensors (what a finished NCCL/HCCL call gives)."""
    from torch._C._distributed_c10d import _create_work_from_future  # type: ignore[attr-defined]  # not in torch's stubs

    future: torch.futures.Future = torch.futures.Future()
    future.set_result(work_tensors)
    return _create_work_from_future(future).boxed()


def _is_work(value) -> bool:
    return isinstance(value, torch.ScriptObject) and "Work" in value._type().qualified_name()


class CollectiveRecorder(TorchDispatchMode):
    """Records every collective / p2p op with its payload, group, phase and call site."""

    def __init__(self, session: "DistributedSession"):
        super().__init__()
        self.session = session
        self.calls: Counter = Counter()
        self.phase: Callable[[], str] = lambda: "setup"   # the tracer switches this on when the step starts
        self.node_frame: Callable[[], tuple | None] = lambda: None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        kind = collective_kind(func)
        if kind is None:
            return out
        named = _named_args(func, args, kwargs)
        try:
            self._record(func, kind, named, out)
        except Exception as exc:  # noqa: BLE001 - never let bookkeeping break the user's step
            self.session.problems[f"{func}: {type(exc).__name__}: {exc}"] += 1
        if func.namespace == "c10d":
            if isinstance(out, tuple) and len(out) == 2 and _is_work(out[1]):
                out = (out[0], _completed(out[0]))
            elif _is_work(out):
                out = _completed(list(_tensors(named.get("tensors", named.get("output_tensors", [])))))
        return out

    def _record(self, func, kind: tuple[str, str], named: dict, out) -> None:
        name, shape = kind
        source = next((named[a] for a in _INPUT_ARGS if a in named), None)
        target = next((named[a] for a in _OUTPUT_ARGS if a in named), None)
        if target is None and func.namespace != "c10d":
            target = out
        in_bytes, out_bytes = _nbytes(source), _nbytes(target)
        if shape == "sync":
            payload = buffer = 0
        elif shape == "gather":
            payload, buffer = in_bytes, out_bytes
        elif shape == "scatter":
            payload, buffer = out_bytes, in_bytes
        else:
            payload = buffer = in_bytes or out_bytes
        group = _group(func, named)
        ranks = tuple(dist.get_process_group_ranks(group)) if group is not None else ()
        frame, library = call_site(self.session.module_sites)
        if frame is None:
            frame = self.node_frame() or wrapper_site(self.session.wrap_sites, library)
        op = name
        if name == "recv_any_source":
            op = "recv"
        dtype = "-" if shape == "sync" else _dtype(source)
        if dtype == "-" and shape != "sync":
            dtype = _dtype(target)   # a scatter's non-root ranks pass no inputs
        key = (op, _reduce_op(named), dtype, payload, buffer, len(ranks) or (group.size() if group is not None else 0),
               ranks, self.phase(), frame, library, f"{func.namespace}.{func._opname}",
               name == "recv_any_source")
        self.calls[key] += 1

    def records(self) -> list[dict]:
        fields = ("op", "reduce_op", "dtype", "bytes", "buffer_bytes", "group_size", "group_ranks", "phase",
                  "frame", "library", "torch_op", "any_source")
        return [dict(zip(fields, key), count=n) for key, n in self.calls.items()]


def call_site(module_sites: dict[int, tuple | None]) -> tuple[tuple | None, str]:
    """(the call's user line or None, the torch.distributed / torch.nn.parallel frame nearest to user code).

    The user line is the innermost user frame; failing that, the line that wrapped the module whose
    hook or method is running (FSDP's pre-forward all-gather of the root module, its final reduce-scatter)."""
    frame: FrameType | None = sys._getframe(1)
    library = ""
    owner = None
    while frame is not None and frame.f_code is not _TRACE_STEP_CODE:
        code = frame.f_code
        kind = frame_kind(code.co_filename)
        if kind == "user":
            return (code.co_filename, frame.f_lineno, True, 0, 0), library
        real = os.path.realpath(code.co_filename)
        if real.startswith(_TORCH_DIR + os.sep):
            if ("distributed" in real or "parallel" in real) and code.co_name not in _DECORATOR_FRAMES:
                library = f"{os.path.relpath(real, os.path.dirname(_TORCH_DIR))}:{frame.f_lineno} ({code.co_name})"
            if owner is None and module_sites and "self" in code.co_varnames[:1]:
                owner = _wrapped_module_site(frame.f_locals.get("self"), module_sites)
        frame = frame.f_back
    return owner, library


# Generic wrappers (decorators, no_grad contexts) that say nothing about which library code is running.
_DECORATOR_FRAMES = frozenset({"inner", "wrapper", "_fn", "fn", "decorate_context", "wrapped", "_wrapper",
                               "__call__", "_call_impl", "_wrapped_call_impl"})


def _wrapped_module_site(obj, module_sites: dict[int, tuple | None]) -> tuple | None:
    """The wrap site of `obj` (a wrapped module) or of the modules an FSDP param group / state manages."""
    if obj is None:
        return None
    site = module_sites.get(id(obj))
    if site is not None:
        return site
    for attr in ("modules", "_modules_to_run_forward"):
        try:
            held = obj.__dict__.get(attr) if hasattr(obj, "__dict__") else None
        except Exception:  # noqa: BLE001 - odd objects on the stack are simply not wrappers
            held = None
        if isinstance(held, (tuple, list, set)):
            for module in held:
                if id(module) in module_sites:
                    return module_sites[id(module)]
    return None


def wrapper_site(wrap_sites: dict, library: str) -> tuple | None:
    """Collectives no user frame leads to (DDP's reducer, FSDP's backward hooks, both run by the autograd
    engine) go to the user's line that applied the wrapper issuing them."""
    for kind in _WRAPPER_ORDER:
        if kind in wrap_sites and (not library or _LIBRARY_HINTS[kind] in library):
            return wrap_sites[kind]
    if len(wrap_sites) == 1:
        return next(iter(wrap_sites.values()))
    return None


_WRAPPER_ORDER = ("ddp", "fully_shard", "tensor_parallel")
_LIBRARY_HINTS = {"ddp": "nn/parallel/distributed", "fully_shard": "_fully_shard",
                  "tensor_parallel": "distributed/tensor"}


def _user_frame(depth: int = 2) -> tuple | None:
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None:
        if frame_kind(frame.f_code.co_filename) == "user":
            return (frame.f_code.co_filename, frame.f_lineno, True, 0, 0)
        frame = frame.f_back
    return None


def _outside_fake(fn):
    """Run fn with every dispatch mode (fake tensors, recorders) off: mesh bookkeeping on real ints."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _disable_current_modes():
            return fn(*args, **kwargs)
    return wrapper


def _cpu_device_type(value):
    if isinstance(value, str) and value.split(":")[0] in ("cuda", "npu"):
        return "cpu"
    return value


class DistributedSession:
    """Set up one fake rank, the patches above, and the recorder; undo all of it on exit."""

    def __init__(self, world_size: int, rank: int = 0, mesh: list[tuple[str, int]] | None = None):
        self.world_size = world_size
        self.rank = rank
        self.mesh = list(mesh or [])
        self.recorder = CollectiveRecorder(self)
        self.wrap_sites: dict[str, tuple | None] = {}        # wrapper kind -> first user frame that applied it
        self.module_sites: dict[int, tuple | None] = {}      # id(module) -> the user frame that wrapped it
        self.ddp_modules: list[tuple[Any, tuple | None]] = []   # (DDP instance, its wrap site)
        self.requested_backends: Counter = Counter()  # what the user's init_process_group / new_group asked for
        self.problems: Counter = Counter()
        self.wrappers: Counter = Counter()
        self._stack = ExitStack()
        self._device_mesh = None

    # -- what audit_entry may receive --------------------------------------------------------------
    def entry_context(self) -> dict[str, Callable[[], Any]]:
        return {"world_size": lambda: self.world_size, "rank": lambda: self.rank,
                "mesh": lambda: dict(self.mesh), "device_mesh": self.device_mesh}

    def device_mesh(self):
        if self._device_mesh is None:
            from torch.distributed.device_mesh import init_device_mesh

            names = tuple(n for n, _ in self.mesh) or ("world",)
            sizes = tuple(s for _, s in self.mesh) or (self.world_size,)
            self._device_mesh = init_device_mesh("cpu", sizes, mesh_dim_names=names)
        return self._device_mesh

    # -- set up and tear down ----------------------------------------------------------------------
    def __enter__(self) -> "DistributedSession":
        from torch.testing._internal.distributed.fake_pg import FakeStore  # registers the "fake" backend

        env = {"RANK": str(self.rank), "WORLD_SIZE": str(self.world_size), "LOCAL_RANK": str(self.rank % 8),
               "LOCAL_WORLD_SIZE": str(min(8, self.world_size)), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        self._stack.callback(_restore_env, saved)
        if dist.is_initialized():
            dist.destroy_process_group()
        dist.init_process_group("fake", store=FakeStore(), rank=self.rank, world_size=self.world_size)
        self._stack.callback(_destroy)
        self._install_patches()
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _patch(self, owner, name: str, value) -> None:
        # a class's own dict entry, not getattr: that would unwrap staticmethods and lose them on restore
        original = vars(owner)[name] if isinstance(owner, type) and name in vars(owner) else getattr(owner, name)
        setattr(owner, name, value)
        self._stack.callback(setattr, owner, name, original)

    def _install_patches(self) -> None:
        import torch.distributed.distributed_c10d as c10d
        import torch.distributed.device_mesh as device_mesh
        import torch.nn.parallel.distributed as ddp_module

        session = self

        def init_process_group(backend=None, *args, **kwargs):
            session.requested_backends[str(backend or kwargs.get("backend") or "default")] += 1
            return None  # the fake group of this rank is already up

        for owner in (dist, c10d):
            self._patch(owner, "init_process_group", init_process_group)
        original_new_group = c10d.new_group

        @functools.wraps(original_new_group)
        def new_group(*args, **kwargs):
            if kwargs.get("backend") not in (None, "fake"):
                session.requested_backends[str(kwargs["backend"])] += 1
            kwargs["backend"] = "fake"
            return original_new_group(*args, **kwargs)

        for owner in (dist, c10d):
            self._patch(owner, "new_group", new_group)
        self._patch(torch.cuda, "set_device", lambda *a, **k: None)

        # DeviceMesh: bookkeeping on real tensors; GPU device types land on the CPU.
        mesh_cls = device_mesh.DeviceMesh
        for name, value in list(vars(mesh_cls).items()):
            if name.startswith("__") and name not in ("__init__", "__getitem__"):
                continue
            if isinstance(value, staticmethod):
                wrapped: Any = staticmethod(_outside_fake(value.__func__))
            elif isinstance(value, classmethod):
                wrapped = classmethod(_outside_fake(value.__func__))
            elif isinstance(value, property):
                wrapped = property(_outside_fake(value.fget) if value.fget else None,
                                   _outside_fake(value.fset) if value.fset else None)
            elif callable(value) and not isinstance(value, type):
                wrapped = _outside_fake(value)
            else:
                continue
            self._patch(mesh_cls, name, wrapped)
        original_mesh_init = mesh_cls.__init__

        def mesh_init(self_, device_type, *args, **kwargs):
            return original_mesh_init(self_, _cpu_device_type(device_type), *args, **kwargs)

        self._patch(mesh_cls, "__init__", mesh_init)
        original_init_mesh = device_mesh.init_device_mesh

        @functools.wraps(original_init_mesh)
        def init_device_mesh(device_type, *args, **kwargs):
            return _outside_fake(original_init_mesh)(_cpu_device_type(device_type), *args, **kwargs)

        for module_name in ("torch.distributed.device_mesh", "torch.distributed.tensor",
                            "torch.distributed.fsdp._fully_shard._fsdp_init"):
            module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
            if getattr(module, "init_device_mesh", None) is original_init_mesh:
                self._patch(module, "init_device_mesh", init_device_mesh)

        # DTensor's Shard(a) -> Shard(b) redistribution: on a CPU mesh torch swaps the all-to-all a GPU
        # runs for an all-gather (gloo has none); record what the GPU/NPU would run.
        from torch.distributed.tensor import _collective_utils, placement_types

        original_alltoall = getattr(_collective_utils, "shard_dim_alltoall", None)
        if original_alltoall is not None:
            for owner in (_collective_utils, placement_types):
                if getattr(owner, "shard_dim_alltoall", None) is original_alltoall:
                    self._patch(owner, "shard_dim_alltoall", _device_shard_dim_alltoall)

        # DDP: one rank has nothing to compare parameter shapes with; device_ids name GPUs.
        self._patch(ddp_module, "_verify_param_shape_across_processes", lambda *a, **k: None)
        ddp_cls = ddp_module.DistributedDataParallel
        original_ddp_init = ddp_cls.__init__

        @functools.wraps(original_ddp_init)
        def ddp_init(self_, module, *args, **kwargs):
            session.note_wrapper("ddp", module)
            args = tuple(None if i < 2 else a for i, a in enumerate(args))   # device_ids, output_device
            kwargs.pop("device_ids", None)
            kwargs.pop("output_device", None)
            original_ddp_init(self_, module, *args, **kwargs)
            session.ddp_modules.append((self_, session.module_sites.get(id(module))))

        self._patch(ddp_cls, "__init__", ddp_init)
        self._note_calls("torch.distributed.fsdp", "fully_shard", "fully_shard")
        self._note_calls("torch.distributed._composable.fsdp", "fully_shard", "fully_shard")
        self._note_calls("torch.distributed.tensor.parallel", "parallelize_module", "tensor_parallel")
        self._note_calls("torch.distributed.tensor.parallel.api", "parallelize_module", "tensor_parallel")

    def _note_calls(self, module_name: str, attr: str, kind: str) -> None:
        """Remember the user's line that applied a wrapper (fully_shard, parallelize_module)."""
        try:
            module = __import__(module_name, fromlist=[attr])
        except ImportError:
            return
        original = getattr(module, attr, None)
        if original is None or getattr(original, "_npu_audit_noted", False):
            return
        session = self

        @functools.wraps(original)
        def noted(*args, **kwargs):
            session.note_wrapper(kind, args[0] if args else kwargs.get("module"))
            return original(*args, **kwargs)

        noted._npu_audit_noted = True  # type: ignore[attr-defined]  # wraps copied fully_shard.state too
        self._patch(module, attr, noted)

    def note_wrapper(self, kind: str, module=None) -> None:
        caller = os.path.realpath(sys._getframe(2).f_code.co_filename)
        if caller.startswith(_TORCH_DIR + os.sep):
            return  # torch applying the wrapper itself (parallelize_module recursing): not the user's call
        frame = _user_frame(3)
        self.wrappers[kind] += 1
        self.wrap_sites.setdefault(kind, frame)
        if module is not None:
            self.module_sites.setdefault(id(module), frame)

    def describe(self) -> dict:
        return {"world_size": self.world_size, "rank": self.rank, "mesh": self.mesh,
                "backend": "fake", "requested_backends": dict(self.requested_backends),
                "wrappers": dict(self.wrappers), "problems": dict(self.problems),
                "ddp_buckets": [b for b in map(_steady_ddp_buckets, self.ddp_modules) if b]}


def _steady_ddp_buckets(entry) -> dict | None:
    """DDP sends every gradient in one bucket on its first step; from the second step its reducer rebuilds
    buckets (first_bucket_bytes_cap, then bucket_bytes_cap) in gradient-ready order. The same assignment,
    by torch's own function, over the parameters in reverse (the order a backward makes them ready)."""
    ddp, site = entry
    try:
        params = [p for p in ddp.module.parameters() if p.requires_grad][::-1]
        config = getattr(ddp, "_bucket_config", None)
        first = getattr(config, "first_bucket_bytes_cap", ddp.bucket_bytes_cap)
        limits = [first, ddp.bucket_bytes_cap] if first < ddp.bucket_bytes_cap else [ddp.bucket_bytes_cap]
        buckets, _ = dist._compute_bucket_assignment_by_size(params, limits)
        sizes = [sum(params[i].numel() * params[i].element_size() for i in bucket) for bucket in buckets]
    except Exception:  # noqa: BLE001 - an estimate only; the recorded step stands on its own
        return None
    return {"frame": site, "calls": len(buckets), "bucket_bytes": sizes, "cap_bytes": ddp.bucket_bytes_cap}


def _device_shard_dim_alltoall(input, gather_dim, shard_dim, mesh, mesh_dim):
    """torch.distributed.tensor._collective_utils.shard_dim_alltoall's accelerator branch."""
    from torch.distributed import _functional_collectives as funcol

    group = funcol._resolve_group((mesh, mesh_dim))
    return torch.ops._dtensor.shard_dim_alltoall(input, gather_dim, shard_dim, funcol._group_or_group_name(group))


def _restore_env(saved: dict) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _destroy() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def traced_rank(layout: dict, trace: Callable[[DistributedSession], dict]) -> dict:
    """Run trace(session) as one rank of the layout {'world_size', 'rank', 'mesh'}."""
    with DistributedSession(layout["world_size"], layout.get("rank", 0), layout.get("mesh")) as session:
        return trace(session)

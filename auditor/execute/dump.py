"""`--execute --dump DIR`: record K real training steps module by module, for `audit compare` (runs in the child).

The dump is self-describing: DIR/manifest.json says what ran where (device, versions, dtype policy, seeds,
input and weight digests, schema version) and lists the step files; DIR/steps/step_NNN.json holds, per
module call in the order the calls finished, statistics of its inputs, its own parameters, its output
and the gradient that reached its output, and per module the statistics of its parameters' gradients.
Statistics are shape, dtype, min, max, mean, L2 norm, the count of inf/nan, and a sample of values at
indices drawn with a fixed seed (the same positions on every machine for the same shape). With
--dump-tensors every recorded tensor is also saved in full (DIR/tensors/step_NNN.pt, torch.save).
DIR/inputs.pt holds the inputs the steps ran on: pass it as --inputs on the other machine to run the
same batch there. Every device call goes through auditor.device.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import platform
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from auditor import device as devices
from auditor.execute.step import (SEED, Recorder, _attach_sources, _dropout_off, _loss, _make_optimizer,
                                  _named_unique, amp_dtype, build_checked, count_parameters, MAX_PARAMS,
                                  ExecuteError, ModuleRecord)
from auditor.execute.tensors import float_leaves, map_tensors, tensor_leaves

SCHEMA = "npu-audit-dump"
SCHEMA_VERSION = 1
SAMPLE_SIZE = 128          # values kept per tensor; compare estimates cosine and errors from them
SAMPLE_SEED = 20240601     # the sample's index generator; fixed, so both sides sample the same positions
MAX_LEAVES = 16            # tensors kept per slot (a module's inputs, its output): a bound on the file size
AMP_POLICIES = ("fp32", "bf16", "fp16")


class DumpError(ExecuteError):
    """A dump cannot be written (the folder, the inputs file): the message says what to do."""


# --- statistics ---------------------------------------------------------------------------------------

def _sample_indices(numel: int) -> torch.Tensor:
    if numel <= SAMPLE_SIZE:
        return torch.arange(numel)
    g = torch.Generator().manual_seed(SAMPLE_SEED)
    return torch.randint(0, numel, (SAMPLE_SIZE,), generator=g)


def tensor_stats(t: torch.Tensor) -> dict:
    """Statistics of one tensor, computed on its own device; plain JSON values.

    Three passes (min/max, sum, norm) accumulate in fp32 (bf16/fp16 tensors upcast by the reduction); only
    when a result is not finite is the tensor scanned for inf/nan and the statistics taken over its
    finite values in fp64, so the common case costs no mask and no copy.
    """
    t = t.detach()
    numel = t.numel()
    out: dict[str, Any] = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "numel": numel}
    if numel == 0:
        return {**out, "min": None, "max": None, "mean": None, "norm": None, "nonfinite": 0, "sample": []}
    flat = t.reshape(-1)
    if not flat.is_floating_point():
        flat = flat.to(torch.float64)   # ids, masks: small; exact in fp64
    acc = torch.float64 if flat.dtype == torch.float64 else torch.float32
    lo, hi = torch.aminmax(flat)
    stats = torch.stack([lo.to(acc), hi.to(acc), torch.sum(flat, dtype=acc),
                         torch.linalg.vector_norm(flat, dtype=acc)]).tolist()
    nonfinite = 0
    if not all(math.isfinite(v) for v in stats):
        finite = torch.isfinite(flat)
        nonfinite = numel - int(finite.sum())
        values = flat[finite].to(torch.float64) if nonfinite else flat.to(torch.float64)
        if values.numel():
            lo, hi = torch.aminmax(values)
            stats = torch.stack([lo, hi, values.sum(), torch.linalg.vector_norm(values)]).tolist()
        else:
            stats = [None] * 4
    count = numel - nonfinite
    mean = stats[2] / count if stats[2] is not None and count else None
    sample = flat[_sample_indices(numel).to(flat.device)].to(torch.float64).cpu().tolist()
    out.update(min=stats[0], max=stats[1], mean=mean, norm=stats[3], nonfinite=nonfinite,
               sample=[_finite_or_text(v) for v in sample])
    return out


def _finite_or_text(v: float):
    """JSON has no inf/nan: keep them as the strings msprobe prints ("inf", "-inf", "nan")."""
    return v if v == v and v not in (float("inf"), float("-inf")) else str(v)


def slot_stats(obj: Any, floats_only: bool = False) -> list[dict] | None:
    leaves = float_leaves(obj) if floats_only else tensor_leaves(obj)
    if not leaves:
        return None
    return [tensor_stats(t) for t in leaves[:MAX_LEAVES]]


def digest_tensors(tensors: list[torch.Tensor]) -> str:
    """sha256 over shapes, dtypes and bytes: equal digests mean bit-identical inputs (or weights)."""
    h = hashlib.sha256()
    for t in tensors:
        t = t.detach().to("cpu").contiguous()
        h.update(f"{tuple(t.shape)}{t.dtype};".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


# --- the recorder ---------------------------------------------------------------------------------------

class DumpRecorder(Recorder):
    """Forward hooks: input/params statistics on entry, output statistics on exit, a tensor hook for the
    gradient reaching each output. Records are kept in the order module calls finish (children first)."""

    def __init__(self, model: nn.Module, keep_tensors: bool):
        super().__init__(model)
        self.keep_tensors = keep_tensors
        self.records: list[dict] = []
        self.pending: dict[tuple[str, int], dict] = {}
        self.tensors: dict[str, torch.Tensor] = {}
        self.grad_hooks: list = []
        self.seconds = 0.0   # time spent in this recorder's hooks: the step time on the CPU leaves it out

    def start_step(self) -> None:
        self.records, self.pending, self.tensors, self.calls = [], {}, {}, {}
        self.param_cache: dict[int, dict] = {}

    def param_stats(self, p: torch.Tensor) -> dict:
        """A tied weight (lm_head = wte) is one tensor: its statistics are taken once a step."""
        if id(p) not in self.param_cache:
            self.param_cache[id(p)] = tensor_stats(p)
        return self.param_cache[id(p)]

    def _keep(self, key: str, obj: Any, floats_only: bool = False) -> None:
        if self.keep_tensors:
            leaves = float_leaves(obj) if floats_only else tensor_leaves(obj)
            for i, t in enumerate(leaves[:MAX_LEAVES]):
                self.tensors[f"{key}.{i}"] = t.detach().to("cpu", copy=True)

    def on_enter(self, name, index, module, args, kwargs):
        t0 = time.perf_counter()
        self._enter(name, index, module, args, kwargs)
        self.seconds += time.perf_counter() - t0

    def on_exit(self, name, index, module, output):
        t0 = time.perf_counter()
        self._exit(name, index, module, output)
        self.seconds += time.perf_counter() - t0

    def _enter(self, name, index, module, args, kwargs):
        own = [p for p in module.parameters(recurse=False)]
        record = {"module": name, "type": type(module).__name__, "call": index,
                  "input": slot_stats((args, kwargs)),
                  "params": [self.param_stats(p) for p in own[:MAX_LEAVES]] if own and index == 0 else None}
        self._keep(f"{name}#{index}.input", (args, kwargs))
        if own and index == 0:
            self._keep(f"{name}#{index}.params", own)
        self.pending[(name, index)] = record

    def _exit(self, name, index, module, output):
        record = self.pending.pop((name, index), None)
        if record is None:
            return
        record["output"] = slot_stats(output, floats_only=True)
        record["output_grad"] = None
        record["index"] = len(self.records)
        self._keep(f"{name}#{index}.output", output, floats_only=True)
        grads: list[dict | None] = []
        for i, t in enumerate(float_leaves(output)[:MAX_LEAVES]):
            if t.requires_grad:
                grads.append(None)
                self.grad_hooks.append(t.register_hook(self._grad_hook(record, grads, i, f"{name}#{index}")))
        if grads:
            record["output_grad"] = grads
        self.records.append(record)

    def _grad_hook(self, record: dict, grads: list, i: int, key: str):
        def hook(grad):
            t0 = time.perf_counter()
            grads[i] = tensor_stats(grad)
            if self.keep_tensors:
                self.tensors[f"{key}.output_grad.{i}"] = grad.detach().to("cpu", copy=True)
            self.seconds += time.perf_counter() - t0
            return None
        return hook

    def finish_backward(self) -> None:
        for h in self.grad_hooks:
            h.remove()
        self.grad_hooks = []
        for r in self.records:   # an output that took no part in the loss has no gradient: say so with None
            if r["output_grad"] is not None and all(g is None for g in r["output_grad"]):
                r["output_grad"] = None
            elif r["output_grad"] is not None:
                r["output_grad"] = [g for g in r["output_grad"] if g is not None]


def param_grad_stats(model: nn.Module, keep: dict | None) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    cache: dict[int, dict] = {}
    for name, module in _named_unique(model):
        grads = [p.grad for p in module.parameters(recurse=False) if p.grad is not None]
        if grads:
            for g in grads[:MAX_LEAVES]:
                if id(g) not in cache:   # a tied weight has one gradient tensor: its statistics once
                    cache[id(g)] = tensor_stats(g)
            out[name] = [cache[id(g)] for g in grads[:MAX_LEAVES]]
            if keep is not None:
                for i, g in enumerate(grads[:MAX_LEAVES]):
                    keep[f"{name}.param_grad.{i}"] = g.detach().to("cpu", copy=True)
    return out


# --- environment --------------------------------------------------------------------------------------------

def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def environment(device: str) -> dict:
    env = {
        "device": device, "device_name": devices.device_name(device),
        "python": platform.python_version(), "platform": platform.platform(terse=True),
        "torch": torch.__version__, "torch_cuda": torch.version.cuda,
        "torch_npu": _version("torch-npu") or _version("torch_npu"),
        "cann": devices.cann_version(),
        "cpu_threads": torch.get_num_threads(),
    }
    return env


# --- inputs -------------------------------------------------------------------------------------------------

def load_inputs(path: Path) -> tuple[tuple, dict]:
    """An inputs file written by an earlier dump (or by hand): torch.save({'args': [...], 'kwargs': {...}})."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DumpError(f"--inputs {path}: no such file") from None
    except Exception as exc:  # noqa: BLE001 - a corrupt or foreign file: say what was expected
        raise DumpError(f"--inputs {path}: not a torch.save file of {{'args': [...], 'kwargs': {{...}}}} "
                        f"({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data, dict) or "args" not in data:
        raise DumpError(f"--inputs {path}: expected a dict with 'args' (and optionally 'kwargs'), "
                        "as the inputs.pt of a dump holds")
    return tuple(data["args"]), dict(data.get("kwargs") or {})


# --- the run -------------------------------------------------------------------------------------------------

def _prepare_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DumpError(f"--dump {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").is_file():
        raise DumpError(f"--dump {out}: the folder is not empty and holds no earlier dump; "
                        "choose an empty or new folder")
    try:
        (out / "steps").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DumpError(f"--dump {out}: cannot create the folder: {exc.strerror or exc}") from None
    for old in [*(out / "steps").glob("step_*.json"), *(out / "tensors").glob("step_*.pt")]:
        old.unlink()   # an earlier dump in the same folder: its step files must not mix with these


def dump_steps(spec, out: Path, *, amp: str, device: str, steps: int = 1, keep_tensors: bool = False,
               inputs_file: str | None = None, label: str = "", source: str | None = None,
               entry: str | None = None) -> dict:
    """Run `steps` training steps of an EntrySpec on `device` and write the dump; return the manifest."""
    if steps < 1:
        raise DumpError("--steps must be at least 1")
    policy = amp.lower()
    if policy not in AMP_POLICIES:
        raise DumpError(f"--amp {amp!r}: choose one of {', '.join(AMP_POLICIES)}")
    dtype = None if policy == "fp32" else amp_dtype(policy)
    out = Path(out)
    args, kwargs = (spec.args, spec.kwargs) if inputs_file is None else load_inputs(Path(inputs_file))
    _prepare_dir(out)   # after the inputs are read: a bad --inputs leaves no half-written folder
    torch.save({"args": list(args), "kwargs": dict(kwargs)}, out / "inputs.pt")
    input_leaves = tensor_leaves((args, kwargs))

    model = spec.model.float()
    _dropout_off(model)
    records = {name: ModuleRecord(name, type(m).__name__) for name, m in _named_unique(model)}
    _attach_sources(records, model)
    weights_digest = digest_tensors([p for p in model.parameters()])
    model = model.to(device)
    recorder = DumpRecorder(model, keep_tensors)
    optimizer = _make_optimizer(spec, model.parameters())
    on_device = map_tensors((args, kwargs), lambda t: t.to(device))

    def one_step():
        optimizer.zero_grad(set_to_none=True)
        c_args, c_kwargs = on_device
        if dtype is None:
            output = model(*c_args, **c_kwargs)
            loss = _loss(spec, output if device == "cpu" else map_tensors(output, lambda t: t.to("cpu")))
        else:
            with devices.autocast(device, dtype):
                output = model(*c_args, **c_kwargs)
                loss = _loss(spec, output if device == "cpu" else map_tensors(output, lambda t: t.to("cpu")))
        loss.backward()
        return loss

    step_summaries = []
    step_times = []
    devices.reset_peak_memory(device)
    for k in range(steps):
        recorder.start_step()
        recorder.seconds = 0.0
        torch.manual_seed(SEED + k)
        devices.synchronize(device)
        t0 = time.perf_counter()
        loss = one_step()
        recorder.finish_backward()
        t1 = time.perf_counter()
        grads = param_grad_stats(model, recorder.tensors if keep_tensors else None)
        t2 = time.perf_counter()
        optimizer.step()
        devices.synchronize(device)
        elapsed = time.perf_counter() - t0
        step_times.append(elapsed - recorder.seconds - (t2 - t1))
        loss_value = float(loss.detach().float().item())
        name = f"steps/step_{k:03d}.json"
        (out / name).write_text(json.dumps({
            "step": k, "loss": _finite_or_text(loss_value), "forward": recorder.records, "param_grads": grads,
        }, separators=(",", ":")), encoding="utf-8")
        if keep_tensors:
            (out / "tensors").mkdir(exist_ok=True)
            torch.save(recorder.tensors, out / "tensors" / f"step_{k:03d}.pt")
        step_summaries.append({"step": k, "loss": _finite_or_text(loss_value), "time_s": round(elapsed, 4),
                               "file": name})
    dumped_peak = devices.peak_memory_bytes(device)
    recorder.remove()

    if device == "cpu":
        # The CPU runs synchronously: the step's own time is the dumped step's minus the time the hooks took.
        clean_time, clean_peak = min(step_times), None
        timing = "the fastest dumped step minus the time spent in the dump's hooks (the CPU runs synchronously)"
    else:
        # On a device the hooks' host syncs change the overlap: time one more step without hooks.
        devices.reset_peak_memory(device)
        devices.synchronize(device)
        t0 = time.perf_counter()
        one_step()
        optimizer.step()
        devices.synchronize(device)
        clean_time = time.perf_counter() - t0
        clean_peak = devices.peak_memory_bytes(device)
        timing = "one step after the dumped ones, without hooks"

    manifest = {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": _tool_version(),
        "model": {"label": label, "source": source, "entry": entry, "parameters": count_parameters(model),
                  "modules": {r.name: {"type": r.type, "file": r.file, "line": r.line} for r in records.values()}},
        "environment": environment(device),
        "dtype_policy": {"amp": None if dtype is None else policy,
                         "mode": "fp32" if dtype is None else f"torch.autocast({device!r}, {policy})",
                         "parameters": "fp32", "dropout": "off"},
        "seeds": {"torch_manual_seed": SEED, "sample_seed": SAMPLE_SEED, "sample_size": SAMPLE_SIZE},
        "inputs": {"file": "inputs.pt", "from": inputs_file, "sha256": digest_tensors(input_leaves),
                   "tensors": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                               for t in input_leaves]},
        "weights": {"sha256_initial": weights_digest},
        "optimizer": type(optimizer).__name__,
        "steps": step_summaries,
        "performance": {"step_time_s": round(clean_time, 4), "peak_memory_bytes": clean_peak,
                        "dumped_peak_memory_bytes": dumped_peak, "step_time_from": timing,
                        "note": "per-step time_s includes the dump's statistics; peak memory is not measured "
                                "on the CPU"},
        "tensors": "tensors/step_NNN.pt" if keep_tensors else None,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def _tool_version() -> str:
    from auditor import TOOL_NAME, __version__

    return f"{TOOL_NAME} {__version__}"


def run_dump(source: str | None, entry: str | None, hf_config: str | None, amp: str, device: str, out: str,
             steps: int = 1, keep_tensors: bool = False, inputs_file: str | None = None,
             max_params: int = MAX_PARAMS) -> dict:
    """The child process's entry point: build the user's model, apply the size guard, dump the steps."""
    from auditor.entry import resolve_entry

    devices.prepare(device)
    factory = resolve_entry(Path(source) if source else None, entry, Path(hf_config) if hf_config else None)
    spec = build_checked(factory, max_params)
    where = hf_config or source
    manifest = dump_steps(spec, Path(out), amp=amp, device=device, steps=steps, keep_tensors=keep_tensors,
                          inputs_file=inputs_file, label=getattr(spec, "label", "") or "",
                          source=str(Path(where).resolve()) if where else None, entry=entry)
    return {"dir": str(Path(out).resolve()), "steps": manifest["steps"], "parameters": manifest["model"]["parameters"],
            "performance": manifest["performance"], "environment": manifest["environment"],
            "dtype_policy": manifest["dtype_policy"], "inputs_sha256": manifest["inputs"]["sha256"]}


# --- the parent side: run the dump in a child, report what was written --------------------------------------

def dump_findings(source: Path | None, *, root: Path, entry: str | None, hf_config: Path | None, amp: str | None,
                  timeout: float, device: str | None, target, out: Path, steps: int = 1, keep_tensors: bool = False,
                  inputs: Path | None = None) -> tuple[list, list, dict]:
    """`--execute --dump DIR`: no findings of its own (compare two dumps for those); errors and a section."""
    from auditor.device import select_device
    from auditor.execute import ExecuteUsageError, _Locator, default_amp
    from auditor.findings import FileError
    from auditor.sandbox import SandboxError, run_in_child

    policy = (amp or default_amp(target)).lower()
    if policy not in AMP_POLICIES:
        raise ExecuteUsageError(f"--amp {amp!r}: choose one of {', '.join(AMP_POLICIES)}")
    where = _Locator(source, root, entry, hf_config)
    selected = select_device(device)
    try:
        result = run_in_child(run_dump, {
            "source": str(source) if source is not None else None, "entry": entry,
            "hf_config": str(hf_config) if hf_config is not None else None, "amp": policy, "device": selected,
            "out": str(Path(out).resolve()), "steps": steps, "keep_tensors": keep_tensors,
            "inputs_file": str(Path(inputs).resolve()) if inputs is not None else None,
        }, timeout)
    except SandboxError as exc:
        line = exc.line[1] if exc.line and where.owns(exc.line[0]) else where.entry_line
        message = exc.message if exc.kind != "user-exception" or not exc.user_traceback else \
            f"{exc.message}\n{exc.user_traceback}"
        error = FileError(where.path, "execute", f"execute --dump stopped: {message}", line)
        return [], [error], {}
    env = result["environment"]
    rows = [{"step": s["step"], "loss": s["loss"], "time_s_with_dump_hooks": s["time_s"], "file": s["file"]}
            for s in result["steps"]]
    section = {
        "title": f"Dump: {len(rows)} step(s) on {selected} ({result['dtype_policy']['mode']}) written to {result['dir']}",
        "rows": rows,
        "parameters": result["parameters"], "device_name": env.get("device_name"), "torch": env.get("torch"),
        "torch_npu": env.get("torch_npu"), "cann": env.get("cann"),
        "step_time_s": result["performance"]["step_time_s"],
        "peak_memory_bytes": result["performance"]["peak_memory_bytes"],
        "inputs_sha256": result["inputs_sha256"],
        "next": f"dump the other side with --inputs {Path(result['dir']) / 'inputs.pt'}, then "
                f"`audit compare {result['dir']} OTHER_DIR`",
        "hardware_note": "The CUDA and NPU paths of --dump have not been run on a GPU or an NPU by this project's "
                         "tests; only the CPU path has.",
    }
    return [], [], section

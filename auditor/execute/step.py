"""One real training step, golden and candidate, compared module by module (runs in the child process).

Golden: the model in fp64 when that is cheap (fp32 otherwise, or when fp64 does not run) on the CPU. Candidate: the
same initial weights on the selected device, under autocast in bf16 or fp16. Both take the same inputs,
seed and loss; dropout modules are switched off. For every module call the recorder keeps:

* output: the candidate's output against the golden's (the error the module inherits plus its own);
* own: the module run again on the golden's inputs cast to the dtypes the candidate saw there, against
  the golden module run on exactly those (rounded) values, so only the module's own arithmetic differs;
* grad: the gradients of the module's own parameters after backward.

Every NPU-specific call goes through auditor.device.
"""
from __future__ import annotations

import copy
import inspect
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, cast

import torch
from torch import nn

from auditor import device as devices
from auditor.execute import numerics
from auditor.execute.choices import ChoiceRecorder, compare_choices
from auditor.execute.tensors import detach_clone, float_leaves, map_tensors, tensor_leaves
from auditor.trace.loaders import workers_in_process
from auditor.trace.redirect import CudaRedirect, run_on

SEED = 0
AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
# A real step on the CPU, three copies of the weights and every module's output: beyond this it neither
# fits a laptop's memory nor a sensible time limit.
MAX_PARAMS = 150_000_000
# fp64 golden "where cheap": small models only (decided by size, not by a timing, so a result does not
# depend on the machine's load). fp64 GEMMs and convolutions are several times slower than fp32 on the
# CPU, and fp32's 2^-24 is already far below the bf16/fp16 tolerances being checked (2^-8, 2^-10).
FP64_MAX_PARAMS = 500_000
BYTES_PER_PARAM = 4 * 3 + 8 * 2 + 4 * 2 + 8  # weights x3, golden weight+grad, grads, optimizer state


class ExecuteError(Exception):
    """Execute mode cannot run this model; the message says why and what to do instead."""

    user_facing = True


def amp_dtype(amp: str | None) -> torch.dtype:
    key = (amp or "bf16").lower()
    if key not in AMP_DTYPES:
        raise ExecuteError(f"--amp {amp!r}: choose bf16 or fp16")
    return AMP_DTYPES[key]


def count_parameters(model: nn.Module) -> int:
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def check_size(params: int, max_params: int = MAX_PARAMS) -> None:
    """The size guard: refuse a model too large to run for real, before its weights are allocated."""
    need = params * BYTES_PER_PARAM
    limit = _physical_memory() // 2
    if params > max_params or (limit and need > limit):
        raise ExecuteError(
            f"the model has {params / 1e6:,.1f}M parameters; execute mode runs a real training step with "
            f"three copies of the weights (about {need / 2**30:.1f} GiB before activations; the limit is "
            f"{max_params / 1e6:,.0f}M parameters"
            + (f" and half of this machine's {2 * limit / 2**30:.0f} GiB" if limit else "")
            + "). Use --trace for a weightless analysis of the full model, or run --execute on a smaller "
              "config (fewer layers, a smaller hidden size) that keeps the same building blocks.")


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def meta_parameter_count(factory: Callable[[], Any]) -> int | None:
    """Build the model on the meta device (no memory) to count its parameters; None if it cannot."""
    try:
        # a counting pass: a DataLoader in the entry starts no worker processes for it (trace/loaders.py)
        with torch.device("meta"), workers_in_process():
            spec = factory()
        return count_parameters(spec.model)
    except Exception:  # noqa: BLE001 - any entry that does not build on meta is counted after a real build
        return None


# --- the recorder ----------------------------------------------------------------------------------

@dataclass
class ModuleRecord:
    name: str
    type: str
    calls: int = 0
    output: dict | None = None   # worst Comparison over the calls, as a dict
    own: dict | None = None
    grad: dict | None = None
    notes: list[str] = field(default_factory=list)
    flip: dict | None = None     # a discrete choice (top-k, argmax) that differs on the module's own re-run
    file: str | None = None
    line: int | None = None


def _keep_worse(current: dict | None, new: numerics.Comparison) -> dict:
    if current is None:
        return new.to_dict()
    key = lambda d: (numerics.VERDICT_RANK[d["verdict"]], d["err_in_rtol"] if d["err_in_rtol"] is not None else math.inf)
    new_d = new.to_dict()
    return new_d if key(new_d) > key(current) else current


class Recorder:
    """Forward hooks on every module of one model (the golden or the candidate)."""

    def __init__(self, model: nn.Module):
        self.names: dict[int, str] = {}
        self.modules: dict[str, nn.Module] = {}
        for name, module in _named_unique(model):
            self.names[id(module)] = name
            self.modules[name] = module
        self.calls: dict[str, int] = {}
        self.stack: list[str] = []
        self.paused = False
        self.handles = []
        for module in self.modules.values():
            self.handles.append(module.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(module.register_forward_hook(self._post, with_kwargs=True, always_call=True))

    def current(self) -> str | None:
        return self.stack[-1] if self.stack else None

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def _pre(self, module, args, kwargs):
        if self.paused:
            return None
        name = self.names[id(module)]
        index = self.calls.get(name, 0)
        self.calls[name] = index + 1
        self.stack.append(name)
        self.on_enter(name, index, module, args, kwargs)
        return None

    def _post(self, module, args, kwargs, output):
        if self.paused:
            return None
        name = self.stack.pop() if self.stack else self.names[id(module)]
        self.on_exit(name, self.calls[name] - 1, module, output)
        return None

    def on_enter(self, name, index, module, args, kwargs) -> None:  # overridden
        pass

    def on_exit(self, name, index, module, output) -> None:  # overridden
        pass


class CandidateRecorder(Recorder):
    """Keeps each call's output (on the CPU, in its own dtype) and the dtypes of its floating inputs."""

    def __init__(self, model: nn.Module):
        super().__init__(model)
        self.outputs: dict[tuple[str, int], Any] = {}
        self.input_dtypes: dict[tuple[str, int], list[torch.dtype]] = {}

    def on_enter(self, name, index, module, args, kwargs):
        self.input_dtypes[(name, index)] = [t.dtype for t in tensor_leaves((args, kwargs))]

    def on_exit(self, name, index, module, output):
        self.outputs[(name, index)] = [t.detach().to("cpu", copy=True) for t in float_leaves(output)]


_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)


class GoldenRecorder(Recorder):
    """Compares each call with the candidate's, and measures the module's own error by running it again."""

    def __init__(self, model: nn.Module, candidate: CandidateRecorder, probe: nn.Module,
                 device: str, dtype: torch.dtype, records: dict[str, ModuleRecord]):
        super().__init__(model)
        self.candidate = candidate
        self.probe = dict(probe.named_modules())
        self.device, self.dtype = device, dtype
        self.records = records
        self.inputs: dict[tuple[str, int], Any] = {}

    def on_enter(self, name, index, module, args, kwargs):
        self.inputs[(name, index)] = detach_clone((args, kwargs))

    def on_exit(self, name, index, module, output):
        record = self.records[name]
        record.calls += 1
        saved_inputs = self.inputs.pop((name, index))
        cand_out = self.candidate.outputs.pop((name, index), None)
        gold_leaves = float_leaves(output)
        if cand_out is None:
            record.notes.append("called a different number of times by the candidate")
            return
        gold_vec, cand_vec = numerics.flatten_floats(gold_leaves), numerics.flatten_floats(cand_out)
        if gold_vec.shape != cand_vec.shape:
            record.notes.append("output shapes differ between golden and candidate")
            return
        record.output = _keep_worse(record.output, numerics.compare(
            gold_vec, cand_vec, self.dtype, warn=numerics.INHERITED_WARN, error=numerics.INHERITED_ERROR))
        if name == "" or not gold_leaves or isinstance(module, _CONTAINERS):
            return  # the whole model's own error is its output error; a Sequential adds no arithmetic
        dtypes = self.candidate.input_dtypes.get((name, index))
        try:
            own = self._own_error(name, module, saved_inputs, dtypes)
        except Exception as exc:  # noqa: BLE001 - a module that cannot be re-run alone is reported, not fatal
            record.notes.append(f"own error not measured: re-running the module alone raised "
                                f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        if own is not None:
            record.own = _keep_worse(record.own, own)

    def _own_error(self, name, module, saved_inputs, dtypes) -> numerics.Comparison | None:
        leaves = tensor_leaves(saved_inputs)
        if dtypes is None or len(dtypes) != len(leaves):
            return None
        dtype_iter = iter(dtypes)

        def to_candidate(t: torch.Tensor) -> torch.Tensor:
            want = next(dtype_iter)
            return t.to(want) if t.is_floating_point() and want.is_floating_point else t

        cand_inputs = map_tensors(saved_inputs, to_candidate)
        golden_dtype = next((t.dtype for t in leaves if t.is_floating_point()), None)
        # The golden sees exactly the candidate's (rounded) input values, upcast back.
        gold_inputs = map_tensors(cand_inputs, lambda t: t.to(golden_dtype) if t.is_floating_point()
                                  and golden_dtype is not None else t)
        cand_inputs = map_tensors(cand_inputs, lambda t: t.to(self.device))
        rng = torch.get_rng_state()
        self.paused = True
        try:
            with torch.no_grad():
                g_args, g_kwargs = gold_inputs
                with ChoiceRecorder() as gold_choices:
                    gold = module(*g_args, **g_kwargs)
                torch.set_rng_state(rng)  # functional dropout draws the same mask on both sides
                c_args, c_kwargs = cand_inputs
                with run_on(self.device), devices.autocast(self.device, self.dtype), ChoiceRecorder() as cand_choices:
                    cand = self.probe[name](*c_args, **c_kwargs)
        finally:
            self.paused = False
            torch.set_rng_state(rng)
        flip = compare_choices(gold_choices.calls, cand_choices.calls)
        if flip is not None:
            record = self.records[name]
            if record.flip is None or flip["share"] > record.flip["share"]:
                record.flip = flip
        gold_vec, cand_vec = numerics.flatten_floats(float_leaves(gold)), numerics.flatten_floats(float_leaves(cand))
        if gold_vec.shape != cand_vec.shape:
            return None
        return numerics.compare(gold_vec, cand_vec, self.dtype)


# --- the step --------------------------------------------------------------------------------------

def _default_loss(output: Any) -> torch.Tensor:
    """Without a loss_fn: half the mean square of every floating output, so gradients follow the outputs."""
    leaves = float_leaves(output)
    if not leaves:
        raise ExecuteError("the model's output has no floating-point tensor to build a loss from; "
                           "return a loss_fn from the entry function")
    return cast(torch.Tensor, sum(0.5 * t.float().pow(2).mean() for t in leaves))   # not empty: a tensor, never 0


def _dropout_off(model: nn.Module) -> None:
    model.train()
    for m in model.modules():
        if isinstance(m, nn.modules.dropout._DropoutNd):
            m.eval()


def _inputs_as(spec, dtype: torch.dtype | None, device: str):
    def convert(t: torch.Tensor) -> torch.Tensor:
        t = t.to(device)
        return t.to(dtype) if dtype is not None and t.is_floating_point() else t
    return map_tensors((spec.args, spec.kwargs), convert)


def _make_optimizer(spec, params):
    if spec.optimizer_factory is None:
        return torch.optim.AdamW(params, lr=1e-3)
    return spec.optimizer_factory(params)


def _loss(spec, output) -> torch.Tensor:
    loss = (spec.loss_fn or _default_loss)(output)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ExecuteError("loss_fn must return a scalar tensor")
    return loss


def run_step(spec, amp: str | None = "bf16", device: str = "cpu", golden_dtype: torch.dtype | None = None) -> dict:
    """Golden and candidate training steps of an EntrySpec; returns plain data (picklable)."""
    dtype = amp_dtype(amp)
    started = time.perf_counter()
    model = spec.model
    _dropout_off(model)
    params = count_parameters(model)
    initial = copy.deepcopy(model).float()
    records = {name: ModuleRecord(name, type(m).__name__) for name, m in _named_unique(initial)}
    _attach_sources(records, initial)

    devices.reset_peak_memory(device)
    candidate = copy.deepcopy(initial).to(device)
    probe = copy.deepcopy(initial).to(device)
    cand_rec = CandidateRecorder(candidate)
    t0 = time.perf_counter()
    with run_on(device), devices.capture_fallbacks(cand_rec.current) as fallbacks:
        torch.manual_seed(SEED)
        c_args, c_kwargs = _inputs_as(spec, None, device)
        with devices.autocast(device, dtype):
            c_out = candidate(*c_args, **c_kwargs)
            c_loss = _loss(spec, c_out if device == "cpu" else map_tensors(c_out, lambda t: t.to("cpu")))
        c_loss.backward()
        cand_rec.remove()
        c_grads = {n: p.grad.detach().to("cpu", copy=True) if p.grad is not None else None
                   for n, p in candidate.named_parameters()}
        c_opt = _make_optimizer(spec, candidate.parameters())
        c_opt.step()
        devices.synchronize(device)
        c_after = [p.detach().to("cpu", copy=True) for p in candidate.parameters()]
    candidate_s = time.perf_counter() - t0
    peak = devices.peak_memory_bytes(device)
    with run_on(device):
        step_s = _timed_step(spec, candidate, c_opt, device, dtype) if device != "cpu" else None

    if golden_dtype is None:
        golden_dtype = torch.float64 if params <= FP64_MAX_PARAMS else torch.float32
    t0 = time.perf_counter()
    with run_on("cpu", autocast_enabled=False):  # the golden is full precision: the user's autocast is off
        golden_dtype, g_loss, g_grads, g_after = _golden_step(spec, initial, golden_dtype, cand_rec, probe,
                                                              device, dtype, records)
    golden_s = time.perf_counter() - t0
    before = list(initial.parameters())
    update = numerics.compare_gradients(  # what the optimizer step changed, judged like a gradient
        numerics.flatten_floats([a.double() - b.double() for a, b in zip(g_after, before)]),
        numerics.flatten_floats([a.double() - b.double() for a, b in zip(c_after, before)]), dtype)

    _compare_grads(records, initial, g_grads, c_grads, dtype)
    g_value, c_value = g_loss.detach().item(), c_loss.detach().item()
    loss_cmp = numerics.compare(torch.tensor([g_value], dtype=torch.float64),
                                torch.tensor([c_value], dtype=torch.float64), dtype)
    return {
        "label": getattr(spec, "label", ""),
        "device": device,
        "amp": "bf16" if dtype == torch.bfloat16 else "fp16",
        "golden_dtype": str(golden_dtype).replace("torch.", ""),
        "parameters": params,
        "modules": [vars(r) for r in records.values()],
        "loss": {"golden": numerics.json_float(g_value, 9), "candidate": numerics.json_float(c_value, 9),
                 "rel_err": numerics.json_float(loss_cmp.rel_err_norm)},
        "update": update.to_dict(),
        "fallbacks": [{"op": op, "count": n, "module": fallbacks.modules.get(op)} for op, n in fallbacks.ops.items()],
        "fallback_messages": fallbacks.messages,
        "peak_memory_bytes": peak,
        "step_time_s": step_s,
        "timings_s": {"candidate": round(candidate_s, 3), "golden_and_own": round(golden_s, 3),
                      "total": round(time.perf_counter() - started, 3)},
    }


def _golden_step(spec, initial, golden_dtype, cand_rec, probe, device, dtype, records):
    """The golden step, in fp64 when asked and it runs; a loss_fn that only takes fp32 gets an fp32 golden."""
    for attempt in (golden_dtype, torch.float32):
        golden = copy.deepcopy(initial).to(attempt)
        outputs_backup = dict(cand_rec.outputs)
        rec = GoldenRecorder(golden, cand_rec, probe, device, dtype, records)
        try:
            torch.manual_seed(SEED)
            g_args, g_kwargs = _inputs_as(spec, attempt, "cpu")
            g_out = golden(*g_args, **g_kwargs)
            g_loss = _loss(spec, g_out)
            g_loss.backward()
        except RuntimeError:
            if attempt == torch.float32:
                raise
            cand_rec.outputs = outputs_backup
            for r in records.values():
                r.calls, r.output, r.own, r.notes, r.flip = 0, None, None, [], None
            continue
        finally:
            rec.remove()
        grads = {n: p.grad.detach().clone() if p.grad is not None else None for n, p in golden.named_parameters()}
        _make_optimizer(spec, golden.parameters()).step()
        return attempt, g_loss.detach(), grads, [p.detach() for p in golden.parameters()]
    raise AssertionError("unreachable")


def _timed_step(spec, model, optimizer, device, dtype) -> float:
    """A second step without hooks, for the device step time (the first one paid for warm-up)."""
    args, kwargs = _inputs_as(spec, None, device)
    devices.synchronize(device)
    t0 = time.perf_counter()
    with devices.autocast(device, dtype):
        out = model(*args, **kwargs)
        loss = _loss(spec, out if device == "cpu" else map_tensors(out, lambda t: t.to("cpu")))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    devices.synchronize(device)
    return round(time.perf_counter() - t0, 4)


def _compare_grads(records, model, golden_grads, cand_grads, dtype) -> None:
    for name, module in _named_unique(model):
        names = [f"{name}.{p}" if name else p for p, _ in module.named_parameters(recurse=False)]
        pairs = [(golden_grads.get(n), cand_grads.get(n)) for n in names]
        pairs = [(g, c) for g, c in pairs if g is not None or c is not None]
        if not pairs:
            continue
        if any(g is None or c is None for g, c in pairs):
            records[name].notes.append("a parameter has a gradient on one side only")
            continue
        records[name].grad = numerics.compare_gradients(
            numerics.flatten_floats([g for g, _ in pairs]), numerics.flatten_floats([c for _, c in pairs]),
            dtype).to_dict()


def _named_unique(model: nn.Module):
    seen: set[int] = set()
    for name, m in model.named_modules():
        if id(m) not in seen:
            seen.add(id(m))
            yield name, m


def _attach_sources(records: dict[str, ModuleRecord], model: nn.Module) -> None:
    for name, m in _named_unique(model):
        cls = type(m)
        try:
            file = inspect.getsourcefile(cls)
            line = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            continue
        records[name].file = str(Path(file).resolve()) if file else None
        records[name].line = line


# --- the child process's entry point -----------------------------------------------------------------

def build_checked(factory, max_params: int):
    """Build the entry's model (seeded) after the size guard: counted on the meta device when the factory
    allows it, else on the built model, so an oversized model stops before it takes the machine's memory."""
    params = meta_parameter_count(factory)
    if params is not None:
        check_size(params, max_params)
    torch.manual_seed(SEED)
    spec = factory()
    if params is None:
        check_size(count_parameters(spec.model), max_params)
    return spec


def run_execute(source: str | None, entry: str | None, hf_config: str | None, amp: str | None,
                device: str, max_params: int = MAX_PARAMS) -> dict:
    """Build the user's model in this (child) process, apply the size guard, run the step."""
    from auditor.entry import resolve_entry

    devices.prepare(device)
    factory = resolve_entry(Path(source) if source else None, entry, Path(hf_config) if hf_config else None)
    # GPU code as written: "cuda" is the CPU while the entry builds, then whichever side is running
    # (auditor.trace.redirect); the user's torch.autocast("cuda") runs in the candidate, not the golden
    with CudaRedirect("cpu"), run_on("cpu"):
        return run_step(build_checked(factory, max_params), amp, device)

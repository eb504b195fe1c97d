"""Model facts measured on fake tensors (no weights, no accelerator), in the sandbox's child process.

For a transformers config the model is built twice, with 1 and with 2 decoder layers, at the planned
sequence length and micro-batch 1; the difference is one layer, so a 126-layer 405B model costs two tiny
traces: totals = (1-layer run) + (L - 1) x (2-layer run - 1-layer run). For an audit_entry() file the whole
model runs once on its own example inputs. FLOPs come from torch.utils.flop_counter.FlopCounterMode; each
aten call's bytes read and written are summed beside its FLOPs (per-operator arithmetic intensity), and
the autograd saved-tensor hooks add up the activation bytes a backward pass keeps.
"""
from __future__ import annotations

from typing import Any


def _bytes(value) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_bytes(v) for v in value.values())
    return 0


def _run_once(spec, ops: dict) -> dict:
    """Forward + backward of one EntrySpec under the counters; the caller holds FakeTensorMode."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import FlopCounterMode, flop_registry

    from auditor.trace.record import stand_in_loss

    model = spec.model
    model.train()
    params = list(model.parameters())
    param_ids = {id(p) for p in params}
    by_dtype: dict[str, int] = {}
    for p in params:
        key = str(p.dtype).replace("torch.", "")
        by_dtype[key] = by_dtype.get(key, 0) + p.numel()
    saved = {"bytes": 0}

    def pack(t):
        base = getattr(t, "_base", None)
        if id(t) not in param_ids and (base is None or id(base) not in param_ids):
            saved["bytes"] += t.numel() * t.element_size()
        return t

    class OpBytes(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            packet = func._overloadpacket
            if func.namespace == "aten" and not func.is_view:
                formula = flop_registry.get(packet)
                flops = formula(*args, **kwargs, out_val=out) if formula else 0
                row = ops.setdefault(func._opname, [0, 0, 0])
                row[0] += 1
                row[1] += int(flops)
                row[2] += _bytes(args) + _bytes(kwargs) + _bytes(out)
            return out

    counter = FlopCounterMode(display=False)
    with counter, OpBytes(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(*spec.args, **spec.kwargs)
        loss = spec.loss_fn(output) if spec.loss_fn else stand_in_loss(output)
        loss.backward()
    return {"parameters": sum(by_dtype.values()), "by_dtype": by_dtype, "flops": int(counter.get_total_flops()),
            "saved_bytes": saved["bytes"]}


def measure(source: str | None, entry: str | None, hf_config: str | None, seq: int) -> dict[str, Any]:
    """Run in the child: measured parameters, FLOPs of one training step and per-op intensity."""
    import time

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from auditor.entry import build_hf_entry, load_hf_config_dict, resolve_entry
    from auditor.trace.record import _module_apply_in_place, _no_weight_init

    started = time.perf_counter()
    if hf_config is None:
        factory = resolve_entry(__import__("pathlib").Path(source) if source else None, entry, None)
        ops: dict = {}
        with FakeTensorMode(allow_non_fake_inputs=True), _module_apply_in_place():
            spec = factory()
            run = _run_once(spec, ops)
        batch = next((t.shape[0] for t in list(spec.args) + list(spec.kwargs.values())
                      if isinstance(t, torch.Tensor) and t.dim() > 0), 1)
        return {"mode": "entry", "label": spec.label, "batch": int(batch), **run, "ops": ops,
                "seconds": round(time.perf_counter() - started, 2)}
    data = load_hf_config_dict(__import__("pathlib").Path(hf_config))
    layers = int(data.get("num_hidden_layers") or data.get("n_layer"))  # type: ignore[arg-type]  # neither key: a TypeError, as before
    key = "num_hidden_layers" if "num_hidden_layers" in data else "n_layer"
    runs, op_sets = [], []
    for n in (1, 2):
        # eager attention: FlopCounterMode has no formula for the CPU SDPA kernel, and the eager
        # matmul -> softmax -> matmul is what the closed form counts
        cfg = {**data, key: n, "_attn_implementation": "eager"}
        if "n_positions" in cfg:
            cfg["n_positions"] = max(int(cfg["n_positions"]), seq)
        ops = {}
        with FakeTensorMode(allow_non_fake_inputs=True), _module_apply_in_place(), _no_weight_init():
            spec = build_hf_entry(cfg, label=data.get("model_type", ""))
            ids = torch.randint(0, int(cfg.get("vocab_size")), (1, seq))  # type: ignore[arg-type]
            spec.kwargs["input_ids"] = ids
            if "labels" in spec.kwargs:
                spec.kwargs["labels"] = ids.clone()
            runs.append(_run_once(spec, ops))
        op_sets.append(ops)
    one, two = runs

    def scale(x1: float, x2: float) -> int:
        return int(x1 + (layers - 1) * (x2 - x1))

    ops_total = {}
    for name in set(op_sets[0]) | set(op_sets[1]):
        a = op_sets[0].get(name, [0, 0, 0])
        b = op_sets[1].get(name, [0, 0, 0])
        ops_total[name] = [scale(a[i], b[i]) for i in range(3)]
    by_dtype = {k: scale(one["by_dtype"].get(k, 0), two["by_dtype"].get(k, 0))
                for k in set(one["by_dtype"]) | set(two["by_dtype"])}
    return {"mode": "hf-config-scaled", "layers_traced": [1, 2], "layers": layers, "batch": 1, "seq": seq,
            "parameters": scale(one["parameters"], two["parameters"]), "by_dtype": by_dtype,
            "flops": scale(one["flops"], two["flops"]),
            "saved_bytes_per_layer": two["saved_bytes"] - one["saved_bytes"],
            "ops": ops_total, "seconds": round(time.perf_counter() - started, 2)}


def intensity_split(ops: dict, peak_tflops: float, hbm_tb_s: float) -> dict:
    """Share of the step's roofline time spent in compute-bound vs HBM-bound operators on a device whose
    ridge point is peak / bandwidth FLOPs per byte."""
    ridge = peak_tflops * 1e12 / (hbm_tb_s * 1e12)
    compute_t = hbm_t = 0.0
    top: list[tuple[float, str, float]] = []
    for name, (count, flops, nbytes) in ops.items():
        t = max(flops / (peak_tflops * 1e12), nbytes / (hbm_tb_s * 1e12))
        ai = flops / nbytes if nbytes else float("inf")
        if ai >= ridge:
            compute_t += t
        else:
            hbm_t += t
        top.append((t, name, ai))
    total = compute_t + hbm_t or 1.0
    top.sort(reverse=True)
    return {"ridge_flops_per_byte": round(ridge, 1), "compute_bound_share": round(compute_t / total, 3),
            "hbm_bound_share": round(hbm_t / total, 3),
            "top_ops": [{"op": n, "share": round(t / total, 3),
                         "intensity": (round(ai, 1) if ai != float("inf") else None),
                         "bound": "compute" if ai >= ridge else "HBM"} for t, n, ai in top[:6]]}

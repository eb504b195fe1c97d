"""Measure what CompositeImplicitAutograd aten ops decompose into, on the installed torch (CPU, no NPU).

    python op_tables/measure_decompositions.py      # writes op_tables/inputs/decompositions.json

For every OpInfo in PyTorch's own test database (torch.testing._internal.common_methods_invocations.op_db)
whose aten op has exactly one functional CompositeImplicitAutograd overload, the op runs on its sample inputs under a
TorchDispatchMode; a CompositeImplicitAutograd kernel is expanded before the Python dispatch key, so the
mode sees exactly the ops it decomposes into (its leaves, one level down).  Leaves that name a CPU-only
path (`*_cpu`, `for_cpu`, mkldnn) are device-dependent branches: such ops are left out (unverified).
The builder (auditor/coverage/build_aten.py) follows these edges to NPU kernels per line.
"""
from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "inputs" / "decompositions.json"
CPU_ONLY = ("_cpu", "for_cpu", "mkldnn", "_mps", "cudnn", "miopen")
MAX_SAMPLES = 4


def key_of(func) -> str:
    name = func._schema.name.split("::", 1)[1]
    return name if func._overloadname == "default" else f"{name}.{func._overloadname}"


def main() -> int:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch._C import DispatchKey
    from torch.utils._pytree import tree_map

    def to_meta(x):
        if isinstance(x, torch.Tensor):
            return x.to("meta")
        if isinstance(x, torch.device) and x.type == "cpu":
            return torch.device("meta")
        return x

    def clone(x):   # in-place kernels must not touch the caller's tensors
        return x.clone() if isinstance(x, torch.Tensor) else x
    from torch.utils._python_dispatch import TorchDispatchMode

    version = torch.__version__.split("+")[0]
    schema = json.loads((HERE / "inputs" / f"torch-{version}.json").read_text(encoding="utf-8"))["ops"]
    cia_by_base: dict[str, list[str]] = {}
    for key, row in schema.items():
        if "CompositeImplicitAutograd" in row["d"] and not row.get("sd") and not row.get("out"):
            cia_by_base.setdefault(key.split(".")[0], []).append(key)

    cea = {k for k, row in schema.items() if "CompositeExplicitAutograd" in row["d"] and not row.get("ag")}
    cea_leaves: dict[str, set[str]] = {}
    cea_runs: dict[str, int] = {}

    class Recorder(TorchDispatchMode):
        """Records the aten ops that reach the Python key; a CompositeExplicitAutograd op is run through
        that kernel explicitly under a nested recorder, which records its leaves."""

        def __init__(self, depth: int = 0):
            super().__init__()
            self.seen: set[str] = set()
            self.depth = depth

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            key = key_of(func) if func.namespace == "aten" else None
            if key:
                self.seen.add(key)
            if key in cea and self.depth < 4 and cea_runs.get(key, 0) < MAX_SAMPLES:
                # on meta tensors: CPU fast paths (scalar_tensor, fill) would hide the dispatched calls
                # and on the CPU: checks that read values (_linalg_check_errors) dispatch only there
                for convert in (to_meta, clone):
                    inner = Recorder(self.depth + 1)
                    try:
                        margs, mkwargs = tree_map(convert, (args, kwargs))
                        with inner:
                            func._op_dk(DispatchKey.CompositeExplicitAutograd, *margs, **mkwargs)
                    except Exception:
                        continue
                    cea_runs[key] = cea_runs.get(key, 0) + 1
                    cea_leaves.setdefault(key, set()).update(inner.seen - {key})
            return func(*args, **kwargs)

    edges: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    warnings.simplefilter("ignore")
    for info in op_db:
        base = (info.aten_name or info.name).replace(".", "_")
        overloads = cia_by_base.get(base, [])
        key = overloads[0] if len(overloads) == 1 else None
        rec = Recorder()
        ran = 0
        try:
            for sample in info.sample_inputs("cpu", torch.float32, requires_grad=False):
                with rec:
                    info.op(sample.input, *sample.args, **sample.kwargs)
                ran += 1
                if ran >= MAX_SAMPLES:
                    break
        except Exception as exc:  # a sample the op rejects: keep what ran before it
            if not ran and key:
                skipped[key] = f"samples failed: {type(exc).__name__}"
                continue
        if key is None or key in edges:
            continue
        leaves = sorted(rec.seen - {key})
        if not leaves:
            skipped[key] = "no leaves seen"
        elif any(mark in leaf for leaf in leaves for mark in CPU_ONLY):
            skipped[key] = "device-dependent leaves: " + ", ".join(l for l in leaves if any(m in l for m in CPU_ONLY))
        else:
            edges[key] = leaves
    # a training step's optimizer and backward ops (foreach kernels, *_backward, zeros_like ...)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4), torch.nn.GELU(), torch.nn.Linear(4, 3))
    for kwargs in ({"foreach": True}, {"foreach": False}):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, **kwargs)
        with Recorder():
            loss = torch.nn.functional.cross_entropy(model(torch.randn(3, 4))[:, :2], torch.tensor([0, 1, 1]))
            loss.backward()
            opt.step()
            opt.zero_grad()
    for key, leaves in sorted(cea_leaves.items()):
        leaves = sorted(leaves)
        if any(mark in leaf for leaf in leaves for mark in CPU_ONLY):
            skipped[key] = "device-dependent leaves: " + ", ".join(l for l in leaves if any(m in l for m in CPU_ONLY))
        else:
            edges.setdefault(key, leaves)   # [] = the kernel makes no dispatched call (metadata only)
    OUT.write_text(json.dumps({
        "schema": 1, "torch_version": version,
        "source": f"torch {version}: CompositeImplicitAutograd kernels run on op_db samples (CPU, float32) under "
                  "a TorchDispatchMode; CompositeExplicitAutograd kernels met on the way (and in a small AdamW "
                  "training step) run through that kernel on meta tensors under a nested mode (op_tables/measure_decompositions.py)",
        "ops": dict(sorted(edges.items())), "skipped": dict(sorted(skipped.items()))},
        sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    pinned_path = HERE / "inputs" / "PINNED.json"   # record the derived file's hash next to the wheels'
    pinned = json.loads(pinned_path.read_text(encoding="utf-8"))
    pinned["derived_sha256"][OUT.relative_to(HERE).as_posix()] = hashlib.sha256(OUT.read_bytes()).hexdigest()
    pinned["decompositions"] = {"torch": version, "recipe": "python op_tables/measure_decompositions.py "
                                "(torch installed, plus expecttest for PyTorch's op_db)"}
    pinned_path.write_text(json.dumps(pinned, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n",
                           encoding="utf-8")
    print(f"{OUT.relative_to(HERE.parent)}: {len(edges)} ops with leaves, {len(skipped)} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

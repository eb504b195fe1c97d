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
    from torch.utils._python_dispatch import TorchDispatchMode

    version = torch.__version__.split("+")[0]
    schema = json.loads((HERE / "inputs" / f"torch-{version}.json").read_text(encoding="utf-8"))["ops"]
    cia_by_base: dict[str, list[str]] = {}
    for key, row in schema.items():
        if "CompositeImplicitAutograd" in row["d"] and not row.get("sd") and not row.get("out"):
            cia_by_base.setdefault(key.split(".")[0], []).append(key)

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen: set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == "aten":
                self.seen.add(key_of(func))
            return func(*args, **(kwargs or {}))

    edges: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    warnings.simplefilter("ignore")
    for info in op_db:
        base = (info.aten_name or info.name).replace(".", "_")
        overloads = cia_by_base.get(base, [])
        if len(overloads) != 1 or overloads[0] in edges:
            continue
        key = overloads[0]
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
            if not ran:
                skipped[key] = f"samples failed: {type(exc).__name__}"
                continue
        leaves = sorted(rec.seen - {key})
        if not leaves:
            skipped[key] = "no leaves seen"
        elif any(mark in leaf for leaf in leaves for mark in CPU_ONLY):
            skipped[key] = "device-dependent leaves: " + ", ".join(l for l in leaves if any(m in l for m in CPU_ONLY))
        else:
            edges[key] = leaves
    OUT.write_text(json.dumps({
        "schema": 1, "torch_version": version,
        "source": f"torch {version}: CompositeImplicitAutograd kernels run on op_db samples (CPU, float32) under "
                  "a TorchDispatchMode (op_tables/measure_decompositions.py)",
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

#!/usr/bin/env python3
"""Generate rules/device_cuda_api.yaml: every public torch.cuda API mapped to its torch.npu twin, or marked
as having none.

Sources (read, never typed in):
- the installed torch: `torch.cuda.__all__` and the `__all__` of each public torch.cuda submodule;
- a torch_npu wheel (data only): the `__all__` of torch_npu/npu/__init__.py and of its submodules
  (amp, graphs, memory, random, streams, mstx), and torch_npu/contrib/transfer_to_npu.py (what the
  official run-time shim patches).

A torch.cuda name has a twin when torch.npu (torch_npu.npu, registered by `import torch_npu`) exports the
same name, or the name with CUDA spelled NPU (CUDAGraph -> NPUGraph), in the same submodule or at the top.

    python rules/gen/cuda_api.py [--from-sources [--wheel torch_npu-X.whl]]
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re

from sources import (RULES_DIR, Pins, Wheel, generator_args, module_all, npu_wheel, run_main, torch_version,
                     yaml_text, write_outputs)

OUT = RULES_DIR / "device_cuda_api.yaml"
NPU_SUBMODULES = ("amp", "graphs", "memory", "random", "streams", "mstx")


def npu_exports(wheel: Wheel) -> tuple[set[str], dict[str, set[str]]]:
    top = set(module_all(wheel.text("torch_npu/npu/__init__.py"), "torch_npu/npu/__init__.py"))
    # names transfer_to_npu itself binds from torch_npu.npu exist there even when __all__ omits them
    top |= set(re.findall(r"\btorch_npu\.npu\.([A-Za-z]\w*)\b(?!\.)",
                          wheel.text("torch_npu/contrib/transfer_to_npu.py"))) - set(NPU_SUBMODULES)
    subs: dict[str, set[str]] = {}
    for sub in NPU_SUBMODULES:
        for member in (f"torch_npu/npu/{sub}.py", f"torch_npu/npu/{sub}/__init__.py"):
            if wheel.has(member):
                subs[sub] = set(module_all(wheel.text(member), member))
    return top, subs


def mstx_methods(wheel: Wheel) -> set[str]:
    """Static methods of torch_npu.npu.mstx.mstx, the NPU marker/range API that plays the role of NVTX."""
    tree = ast.parse(wheel.text("torch_npu/npu/mstx.py"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "mstx":
            return {f.name for f in node.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")}
    return set()


def transfer_to_npu_facts(wheel: Wheel) -> dict[str, object]:
    """What transfer_to_npu patches: the whole torch.cuda module (-> torch_npu.npu) and a white list of
    torch.cuda functions whose device arguments it rewrites."""
    src = wheel.text("torch_npu/contrib/transfer_to_npu.py")
    tree = ast.parse(src)
    white: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "torch_cuda_fn_white_list"
                                                for t in node.targets):
            white = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    patched_modules = re.findall(r"\['(cuda[\w.]*)', torch_npu\.npu[\w.]*\]", src)
    return {"white_list": white, "patched_modules": patched_modules,
            "double_to_float": "torch.cuda.DoubleTensor = torch.npu.FloatTensor" in src}


def cuda_names() -> dict[str, list[str]]:
    """'' -> torch.cuda.__all__; submodule -> its __all__ (public submodules only)."""
    import torch.cuda

    out = {"": [n for n in torch.cuda.__all__]}
    for info in pkgutil.iter_modules(torch.cuda.__path__):
        if info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"torch.cuda.{info.name}")
        except Exception:  # noqa: BLE001 - a submodule that needs CUDA to import has no names to map
            continue
        out[info.name] = [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]
    return out


def neutral_exceptions() -> list[str]:
    """Exception classes torch.cuda re-exports from torch itself (the same object: torch.cuda.OutOfMemoryError is
    torch.OutOfMemoryError): `except torch.cuda.X:` catches torch.X wherever it is raised."""
    import torch
    import torch.cuda

    return sorted(n for n in dir(torch.cuda) if not n.startswith("_") and isinstance(getattr(torch.cuda, n), type)
                  and issubclass(getattr(torch.cuda, n), BaseException) and getattr(torch, n, None) is getattr(torch.cuda, n))


def npu_spelling(name: str) -> str:
    return name.replace("CUDA", "NPU").replace("Cuda", "Npu").replace("cuda", "npu")


def build(pins: Pins, wheel: Wheel | None = None) -> dict:
    torch_v = torch_version(pins)
    npu_version = pins.data["originals"]["torch_npu"]["version"]
    top, subs = pins.fact("npu_exports", lambda: npu_exports(wheel))
    mstx = pins.fact("mstx_methods", lambda: mstx_methods(wheel))
    t2n = pins.fact("transfer_to_npu", lambda: transfer_to_npu_facts(wheel))
    names = pins.fact("cuda_names", cuda_names)
    shim = (f"`torch_npu.contrib.transfer_to_npu` (torch_npu {npu_version}) rebinds torch.cuda to torch_npu.npu "
            "at run time")

    def twin(sub: str, name: str) -> str | None:
        for cand in dict.fromkeys([name, npu_spelling(name)]):
            if sub and cand in subs.get(sub, ()):
                return f"torch.npu.{sub}.{cand}"
            if cand in top:
                return f"torch.npu.{cand}"
            if not sub and cand in subs:
                return f"torch.npu.{cand}"          # a submodule: torch.cuda.amp -> torch.npu.amp
        if sub == "nvtx" and name in mstx:
            return f"torch.npu.mstx.{name}"
        if not sub and name == "nvtx" and mstx:
            return "torch.npu.mstx"
        return None

    groups = {"graph": {}, "stream": {}, "amp": {}, "other": {}}
    graph_names = set(names.get("graphs", [])) | {"graphs"}
    stream_names = {"Stream", "Event", "ExternalStream", "StreamContext", "stream", "set_stream", "current_stream",
                    "default_stream", "get_stream_from_external", "streams"}
    unmapped = []
    for sub, members in sorted(names.items()):
        if sub == "nccl":
            continue   # torch.cuda.nccl belongs to the distributed rules (NPU1xx)
        for name in members:
            qual = f"torch.cuda.{sub}.{name}" if sub else f"torch.cuda.{name}"
            if name in ("nccl",):
                continue
            target = twin(sub, name)
            if target:
                detail = {"substitution": "`{replace}` (after `import torch_npu`)", "replace": target}
            else:
                unmapped.append(qual)
                alt = ""
                if sub == "nvtx":
                    alt = ("; for markers and ranges use `torch.npu.mstx` ("
                           + ", ".join(sorted(mstx)) + ")")
                elif sub == "profiler" or name == "profiler":
                    alt = "; profile with `torch_npu.profiler.profile` (ProfilerActivity.NPU)"
                detail = {"substitution": f"no torch.npu twin in torch_npu {npu_version}{alt}; remove the call "
                                          "or guard it with `torch.cuda.is_available()`",
                          "message": f"`{qual}` has no Ascend equivalent", "severity": "error",
                          "fix": "none", "effort": "medium"}
            if sub == "amp" or name == "amp":
                group = "amp"
            elif sub == "graphs" or name in graph_names:
                group = "graph"
            elif sub == "streams" or name in stream_names:
                group = "stream"
            else:
                group = "other"
            groups[group][qual] = detail
    for name in pins.fact("cuda_neutral_exceptions", neutral_exceptions):
        groups["other"][f"torch.cuda.{name}"] = {
            "message": f"`torch.cuda.{name}` is torch.{name}, the same class: a handler for it catches "
                       f"torch.{name} on any device (torch_npu raises torch.OutOfMemoryError for an NPU out of "
                       "memory: github.com/Ascend/pytorch, test/npu/test_fault_mode.py)",
            "substitution": "`{replace}`, the device-neutral spelling of the same class; nothing to port",
            "replace": f"torch.{name}", "severity": "info", "fix": "none", "effort": "low"}
    note = (f"generated by rules/gen/cuda_api.py from torch {torch_v.split('+')[0]} torch.cuda.__all__ "
            f"(+ submodules) and torch_npu {npu_version} torch_npu/npu/__all__ (+ amp, graphs, memory, random, "
            f"streams, mstx); {len(unmapped)} of {sum(len(g) for g in groups.values())} names have no twin")
    white = ", ".join(t2n["white_list"])
    rules = [
        {
            "code": "NPU002", "name": "torch-cuda-api", "category": "device", "severity": "error",
            "effort": "auto", "fix": "safe",
            "message": "`{symbol}` is a CUDA runtime API",
            "substitution": "`{replace}` (after `import torch_npu`; not in torch_npu's public API list: check it exists)",
            "replace": "torch.npu",
            "match": [{"qualname": ["torch.cuda.*"]}],
            "symbols": groups["other"],
            "source_note": note,
            "doc": {
                "what": "Uses of the torch.cuda module: calls, attributes, imports and aliases "
                        "(`from torch import cuda`, `import torch.cuda as tc`, `dev = torch.cuda`).",
                "why": "On Ascend the runtime API is torch.npu, registered by `import torch_npu`; torch.cuda "
                       "reports no device. " + shim + f"; of its functions it rewrites the device arguments of "
                       f"{white}. A name without a twin raises AttributeError under the shim.",
                "use_instead": "The torch.npu twin named in each finding (same arguments); for names without one "
                               "(CUDA architecture lists, jiterator, NVML-based queries) remove the call or keep "
                               "it behind a CUDA-only branch. Choose the device module once "
                               "(`torch.npu if torch.npu.is_available() else torch.cuda`) in shared code.",
            },
            "examples": {
                "fix": [{"before": 'import torch\ntorch.cuda.synchronize()\n',
                         "after": 'import torch\nimport torch_npu\ntorch.npu.synchronize()\n'}],
                "flag": ["import torch\ntorch.cuda.synchronize()\n",
                         "from torch import cuda\nn = cuda.device_count()\n",
                         "import torch.cuda as tc\ntc.empty_cache()\n",
                         "import torch\nif torch.cuda.is_available():\n    torch.cuda.set_device(local_rank)\n",
                         "import torch\nfree, total = torch.cuda.mem_get_info()\n",
                         "import torch\narch = torch.cuda.get_arch_list()\n"],
                "ok": ["import torch\nimport torch_npu\ntorch.npu.synchronize()\n",
                       "# call torch.cuda.synchronize() before timing\nimport time\nt0 = time.time()\n",
                       "import logging\nlogging.info(\"torch.cuda.empty_cache() freed memory\")\n"],
            },
        },
        {
            "code": "NPU012", "name": "torch-cuda-amp", "category": "device", "severity": "error",
            "effort": "auto", "fix": "safe",
            "message": "`{symbol}` is the CUDA spelling of automatic mixed precision",
            "substitution": "`torch.amp` with device_type \"npu\" (`torch.autocast(\"npu\", ...)`, "
                            "`torch.amp.GradScaler(\"npu\")`) or `{replace}`",
            "replace": "torch.npu.amp",
            "match": [{"qualname": ["torch.cuda.amp.*"]}],
            "symbols": {k: v for k, v in groups["amp"].items()},
            "source_note": note,
            "doc": {
                "what": "torch.cuda.amp: autocast, GradScaler, custom_fwd / custom_bwd.",
                "why": "torch.cuda.amp only drives CUDA autocast and scaling; on Ascend the same classes live in "
                       "torch.npu.amp (torch_npu) and torch.amp accepts device_type \"npu\". torch.cuda.amp is "
                       "deprecated upstream as well.",
                "use_instead": "`torch.autocast(\"npu\", dtype=...)` and `torch.amp.GradScaler(\"npu\")`, or "
                               "torch.npu.amp.autocast / torch.npu.amp.GradScaler; "
                               "`torch.amp.custom_fwd(device_type=\"npu\")`.",
            },
            "examples": {
                "fix": [{"before": 'import torch\nwith torch.cuda.amp.autocast():\n    y = model(x)\n',
                         "after": 'import torch\nimport torch_npu\nwith torch.npu.amp.autocast():\n    y = model(x)\n'}],
                "flag": ["import torch\nwith torch.cuda.amp.autocast():\n    y = model(x)\n",
                         "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n",
                         "from torch.cuda import amp\n\n@amp.custom_fwd(cast_inputs=torch.float32)\n"
                         "def forward(ctx, x):\n    return x\n"],
                "ok": ["import torch\nwith torch.autocast(\"npu\"):\n    y = model(x)\n",
                       "# torch.cuda.amp.autocast is deprecated\nscaler = make_scaler()\n"],
            },
        },
        {
            "code": "NPU013", "name": "cuda-graph", "category": "device", "severity": "error",
            "effort": "medium", "fix": "unsafe",
            "message": "`{symbol}` captures or replays a CUDA graph",
            "substitution": "`{replace}` (torch_npu's NPUGraph / aclgraph capture)",
            "replace": "torch.npu",
            "match": [{"qualname": sorted({q for q in groups["graph"]})}],
            "symbols": groups["graph"],
            "source_note": note,
            "doc": {
                "what": "CUDA graph capture and replay: torch.cuda.CUDAGraph, torch.cuda.graph, "
                        "make_graphed_callables, graph_pool_handle, is_current_stream_capturing.",
                "why": "Ascend captures graphs with torch.npu.NPUGraph / torch.npu.graph (transfer_to_npu rebinds "
                       "torch.cuda.CUDAGraph to it). Capture rules differ (which operators and host syncs are "
                       "allowed inside a capture), so captured regions need a re-test.",
                "use_instead": "torch.npu.NPUGraph, torch.npu.graph(...), torch.npu.make_graphed_callables; "
                               "re-validate each captured region on the NPU.",
            },
            "examples": {
                "fix": [{"before": 'import torch\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    out = model(x)\n',
                         "after": 'import torch\nimport torch_npu\ng = torch.npu.NPUGraph()\nwith torch.npu.graph(g):\n    out = model(x)\n'}],
                "flag": ["import torch\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    out = model(x)\n",
                         "from torch.cuda import make_graphed_callables\nmodel = make_graphed_callables(model, (x,))\n"],
                "ok": ["import torch\ng = torch.npu.NPUGraph()\n",
                       "def capture():\n    \"\"\"Capture with torch.cuda.graph.\"\"\"\n"],
            },
        },
        {
            "code": "NPU014", "name": "cuda-stream-event", "category": "device", "severity": "error",
            "effort": "auto", "fix": "safe",
            "message": "`{symbol}` is a CUDA stream or event API",
            "substitution": "`{replace}`",
            "replace": "torch.npu",
            "match": [{"qualname": sorted(groups["stream"])}],
            "symbols": groups["stream"],
            "source_note": note,
            "doc": {
                "what": "CUDA streams and events: torch.cuda.Stream, Event, stream(), current_stream(), "
                        "default_stream(), set_stream, ExternalStream, StreamContext.",
                "why": "NPU streams and events are torch.npu.Stream / torch.npu.Event with the same methods "
                       "(wait_stream, record_event, synchronize, elapsed_time); torch.cuda ones need a CUDA device.",
                "use_instead": "The torch.npu twin (or the device-generic torch.Stream / torch.Event with "
                               "device=\"npu\").",
            },
            "examples": {
                "fix": [{"before": 'import torch\ns = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = f(x)\n',
                         "after": 'import torch\nimport torch_npu\ns = torch.npu.Stream()\nwith torch.npu.stream(s):\n    y = f(x)\n'}],
                "flag": ["import torch\ns = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = f(x)\n",
                         "import torch\nstart = torch.cuda.Event(enable_timing=True)\n",
                         "import torch\ntorch.cuda.current_stream().wait_stream(s)\n"],
                "ok": ["import torch\ns = torch.npu.Stream()\n",
                       "# overlap with a side torch.cuda.Stream\nside = make_stream()\n"],
            },
        },
    ]
    return {"family": "device", "rules": rules}


def outputs(pins: Pins, wheel: Wheel | None = None) -> dict:
    """{rule file: its text} from the pinned facts (recorded from the originals when pins.record)."""
    doc = build(pins, wheel)
    header = ("# GENERATED by rules/gen/cuda_api.py - do not edit by hand; rerun the script.\n"
              f"# Sources: torch {torch_version(pins)} (installed), torch_npu wheel "
              f"{pins.data['originals']['torch_npu']['name']}.\n")
    return {OUT: yaml_text(header, doc)}


def main() -> None:
    args = generator_args(__doc__.splitlines()[0]).parse_args()
    pins = Pins("cuda_api", record=args.from_sources)
    write_outputs(outputs(pins, npu_wheel(pins, args.wheel)), pins)


if __name__ == "__main__":
    run_main(main)

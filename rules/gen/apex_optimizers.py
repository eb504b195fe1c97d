#!/usr/bin/env python3
"""Generate rules/apex_optimizers.yaml: every Apex fused optimizer mapped to its torch_npu.optim twin, or marked
as having none, with the constructor arguments that do not carry over.

Sources (read as data, never imported, never typed in):
- NVIDIA Apex sources from a git clone (`--apex GITDIR`, default: $NPU_AUDIT_APEX_GIT or
  rules/gen/.cache/apex.git), at a pinned
  commit: `apex/optimizers/__init__.py` and `apex/contrib/optimizers/__init__.py` (the exported classes) and
  each class's `__init__` signature (defaults such as FusedAdam's adam_w_mode=True);
- a torch_npu wheel (see sources.py): `torch_npu/optim/__init__.py` `__all__` and each NpuFused* `__init__`.

An Apex class `FusedX` has a twin when torch_npu.optim exports `NpuFusedX` (case-insensitive: FusedLAMB ->
NpuFusedLamb). Apex's FusedAdam/FusedLAMB default to adam_w_mode=True (decoupled weight decay), so their twin
is the AdamW flavour unless the call passes adam_w_mode=False; the generator reads that default, not memory.

    python rules/gen/apex_optimizers.py [--from-sources [--apex GITDIR] [--wheel torch_npu-X.whl]]
"""
from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from sources import (REPO, RULES_DIR, Pins, SourceError, Wheel, generator_args, module_all, npu_wheel, run_main,
                     torch_version, yaml_text, write_outputs)

OUT = RULES_DIR / "apex_optimizers.yaml"
APEX_COMMIT = "6424da3b4faa6c8f062da4a48c424fff3f02d42d"   # NVIDIA/apex master, 2026-07-08
# `git clone --bare https://github.com/NVIDIA/apex rules/gen/.cache/apex.git`, or $NPU_AUDIT_APEX_GIT
DEFAULT_APEX = Path(os.environ.get("NPU_AUDIT_APEX_GIT", str(REPO / "rules" / "gen" / ".cache" / "apex.git")))
PACKAGES = ("apex/optimizers", "apex/contrib/optimizers")
# Arguments every optimizer has, or that only steer Apex's CUDA launch: not worth a note.
IGNORED_ARGS = {"self", "params", "set_grad_none", "capturable", "master_weights"}


def git_show(gitdir: Path, path: str) -> str:
    proc = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{APEX_COMMIT}:{path}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SourceError(f"cannot read {path} at {APEX_COMMIT[:8]} from {gitdir}: {proc.stderr.strip()} "
                          "(clone github.com/NVIDIA/apex and pass --apex PATH/.git)")
    return proc.stdout


def init_signature(source: str, cls_name: str, where: str) -> dict[str, object]:
    """Parameter name -> default (a Python literal, or '<expr>') of `cls_name.__init__`."""
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args.args
                    defaults = [None] * (len(args) - len(item.args.defaults)) + list(item.args.defaults)
                    out: dict[str, object] = {}
                    for arg, default in zip(args, defaults):
                        try:
                            out[arg.arg] = ast.literal_eval(default) if default is not None else None
                        except ValueError:
                            out[arg.arg] = "<expr>"
                    for arg, default in zip(item.args.kwonlyargs, item.args.kw_defaults):
                        out[arg.arg] = ast.literal_eval(default) if default is not None else None
                    return out
    raise SourceError(f"{where}: no class {cls_name} with an __init__")


def exported_classes(init_source: str) -> dict[str, str]:
    """`from .fused_adam import FusedAdam` -> {'FusedAdam': 'fused_adam'}."""
    out = {}
    for node in ast.parse(init_source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


def npu_optimizers(wheel: Wheel) -> dict[str, dict[str, object]]:
    init = wheel.text("torch_npu/optim/__init__.py")
    modules = exported_classes(init)
    out = {}
    for name in module_all(init, "torch_npu/optim/__init__.py"):
        if name == "NpuFusedOptimizerBase" or name not in modules:
            continue
        path = f"torch_npu/optim/{modules[name]}.py"
        out[name] = init_signature(wheel.text(path), name, path)
    return out


def twin_for(apex_name: str, apex_args: dict[str, object], npu: dict[str, dict[str, object]]) -> str | None:
    if not apex_name.startswith("Fused"):
        return None
    base = apex_name[len("Fused"):]
    if apex_args.get("adam_w_mode") is True and base.lower() == "adam":
        base = "AdamW"
    by_lower = {n.lower(): n for n in npu}
    return by_lower.get(f"npufused{base}".lower())


def torch_optimizer(apex_name: str) -> str | None:
    """The torch.optim class of the same algorithm in the installed torch (FusedAdagrad -> torch.optim.Adagrad)."""
    import torch.optim

    by_lower = {n.lower(): n for n in torch.optim.__all__}
    name = by_lower.get(apex_name[len("Fused"):].lower())
    return f"torch.optim.{name}" if name else None


def apex_classes(gitdir: Path) -> dict[str, dict[str, dict]]:
    """package -> exported class -> {'module', 'args' (its __init__ defaults)}, read at APEX_COMMIT."""
    out: dict[str, dict[str, dict]] = {}
    for package in PACKAGES:
        classes = exported_classes(git_show(gitdir, f"{package}/__init__.py"))
        out[package] = {}
        for cls, module in sorted(classes.items()):
            if not cls.startswith("Fused"):
                continue   # FP16_Optimizer and helpers are covered by the apex-cuda-extension rule
            src_path = f"{package}/{module}.py"
            out[package][cls] = {"module": module, "args": init_signature(git_show(gitdir, src_path), cls, src_path)}
    return out


def describe(apex_name: str, apex_args: dict[str, object], twin: str | None,
             npu: dict[str, dict[str, object]], plain_twins: dict[str, str | None]) -> dict[str, str]:
    if twin is None:
        plain = plain_twins[apex_name]
        if plain:
            return {"substitution": f"no torch_npu fused twin of {apex_name}; `{plain}(params, ..., foreach=True)` "
                                    "runs on NPU", "replace": plain}
        return {"substitution": (f"no equivalent on Ascend: neither torch_npu.optim nor torch.optim has "
                                 f"{apex_name[len('Fused'):]}; vendor a pure-PyTorch implementation of the "
                                 "algorithm or switch to torch_npu.optim.NpuFusedLamb / NpuFusedAdamW")}
    dropped = sorted(a for a in apex_args
                     if a not in npu[twin] and a not in IGNORED_ARGS and a != "adam_w_mode")
    text = f"`torch_npu.optim.{twin}(params, ...)`"
    if apex_args.get("adam_w_mode") is True:
        alt = twin_for(apex_name, {**apex_args, "adam_w_mode": False}, npu)
        if alt and alt != twin:
            text += (f" (Apex's adam_w_mode=True default is decoupled weight decay; with adam_w_mode=False use "
                     f"`torch_npu.optim.{alt}`)")
    if dropped:
        text += "; arguments with no counterpart: " + ", ".join(dropped)
    return {"substitution": text, "replace": f"torch_npu.optim.{twin}"}


def outputs(pins: Pins, wheel: Wheel | None = None, apex: Path = DEFAULT_APEX) -> dict:
    """{rule file: its text} from the pinned facts (recorded from the originals when pins.record)."""
    torch_version(pins)
    if pins.record:
        pins.original("apex", "github.com/NVIDIA/apex", APEX_COMMIT, git_dir=str(apex.name))
    npu_version = pins.data["originals"]["torch_npu"]["version"]
    npu = pins.fact("npu_optimizers", lambda: npu_optimizers(wheel))
    apex_found = pins.fact("apex_classes", lambda: apex_classes(apex))
    plain_twins = pins.fact("torch_optimizer", lambda: {cls: torch_optimizer(cls) for classes in apex_found.values()
                                                        for cls in classes})
    symbols: dict[str, dict[str, str]] = {}
    qualnames: list[str] = []
    rows = []
    for package in PACKAGES:
        dotted = package.replace("/", ".")
        for cls, found in sorted(apex_found[package].items()):
            module, apex_args = found["module"], found["args"]
            twin = twin_for(cls, apex_args, npu)
            detail = describe(cls, apex_args, twin, npu, plain_twins)
            for name in (f"{dotted}.{cls}", f"{dotted}.{module}.{cls}"):
                symbols[name] = dict(detail)   # a copy each: no YAML anchors in the output
                qualnames.append(name)
            rows.append((f"{dotted}.{cls}", twin))
    qualnames += [f"{p.replace('/', '.')}.*" for p in PACKAGES]
    example_twin = symbols["apex.optimizers.FusedAdam"].get("replace", "torch.optim.AdamW")
    rule = {
        "code": "NPU310",
        "name": "apex-fused-optimizer",
        "category": "apex",
        "severity": "error",
        "effort": "low",
        "fix": "unsafe",
        "message": "`{symbol}` is an Apex fused optimizer (CUDA multi-tensor kernels)",
        "substitution": "the torch_npu.optim.NpuFused* twin, or the torch.optim class it implements",
        "symbols": symbols,
        "match": [{"qualname": qualnames}],
        "source_note": (f"generated by rules/gen/apex_optimizers.py from NVIDIA/apex {APEX_COMMIT[:8]} "
                        f"({', '.join(PACKAGES)}) and torch_npu {npu_version} torch_npu/optim/__init__.py; "
                        f"twins: " + ", ".join(f"{a} -> {t or 'none'}" for a, t in rows)),
        "doc": {
            "what": "Apex's fused optimizers (apex.optimizers.* and apex.contrib.optimizers.*).",
            "why": ("They step through Apex's CUDA multi-tensor kernels (amp_C); on Ascend torch_npu ships its "
                    "own fused optimizers (torch_npu.optim.NpuFused*) that flatten parameters into NPU buffers."),
            "use_instead": (f"`{example_twin}(model.parameters(), lr=..., weight_decay=...)`; the twin "
                            "of each class is in the substitution of its finding."),
        },
        "examples": {
            "fix": [{"before": 'from apex.optimizers import FusedAdam\noptimizer = FusedAdam(model.parameters(), lr=1e-4)\n',
                     "after": 'import torch_npu\nfrom apex.optimizers import FusedAdam\n'
                              'optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-4, weight_decay=0.0)\n'}],
            "flag": [
                "from apex.optimizers import FusedAdam\noptimizer = FusedAdam(model.parameters(), lr=1e-4)\n",
                "import apex\nopt = apex.optimizers.FusedLAMB(params, lr=args.lr, weight_decay=0.01)\n",
                "try:\n    from apex.optimizers import FusedSGD as SGD\nexcept ImportError:\n"
                "    from torch.optim import SGD\nopt = SGD(params, lr=0.1, momentum=0.9)\n",
            ],
            "ok": [
                "import torch_npu\nopt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-4)\n",
                "# FusedAdam from apex is faster on A100\nlogger.warning(\"apex.optimizers.FusedAdam unavailable\")\n",
            ],
        },
    }
    header = ("# Generated by rules/gen/apex_optimizers.py: do not edit by hand; rerun the script.\n"
              "# Apex fused optimizers and their torch_npu.optim twins (read from both code bases).\n")
    return {OUT: yaml_text(header, {"family": "apex", "rules": [rule]})}


def main() -> None:
    ap = generator_args(__doc__.splitlines()[0])
    ap.add_argument("--apex", type=Path, default=DEFAULT_APEX, help="git dir of an NVIDIA/apex clone (--from-sources)")
    args = ap.parse_args()
    pins = Pins("apex_optimizers", record=args.from_sources)
    write_outputs(outputs(pins, npu_wheel(pins, args.wheel), args.apex), pins)


if __name__ == "__main__":
    run_main(main)

#!/usr/bin/env python3
"""Generate auditor/fix/signatures.json: signatures (parameter order and defaults) that the argument-mapping
codemods need: the Apex fused optimizers, the torch.optim optimizers and their torch_npu.optim twins,
FlashAttention's flash_attn_func / flash_attn_varlen_func and torch_npu.npu_fusion_attention.

Read from the same sources as rules/gen/apex_optimizers.py (whose readers it reuses): NVIDIA/apex at the pinned
commit (a git clone), Dao-AILab/flash-attention (a git clone, the commit rules/attention.yaml names), the
installed torch (inspect.signature of torch.optim classes; keyword-only parameters are marked "kw") and the
torch_npu wheel (`torch_npu/_op_plugin_docs.py` holds the schema of each custom op). Nothing is typed in.

    python auditor/fix/gen_signatures.py [--apex GITDIR] [--flash-attn GITDIR] [--wheel torch_npu-X.whl]
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from typing import Any
from pathlib import Path

OUT = Path(__file__).resolve().parent / "signatures.json"
GEN = Path(__file__).resolve().parents[2] / "rules" / "gen"
FLASH_COMMIT = "0251105a"          # the commit rules/attention.yaml was read from
FLASH_FUNCS = {"flash_attn/flash_attn_interface.py": ("flash_attn_func", "flash_attn_varlen_func")}
NPU_OPS = ("npu_fusion_attention",)


def function_signature(source: str, name: str, where: str) -> list[list]:
    for node in ast.parse(source, filename=where).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args.args
            defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
            return [[a.arg, ast.literal_eval(d) if d is not None else None] for a, d in zip(args, defaults)]
    raise SystemExit(f"error: {where}: no function {name}")


def op_schema(docs: str, name: str) -> list[list]:
    """`torch_npu.NAME(Tensor query, ..., float scale=1., ...) -> ...` in _op_plugin_docs.py."""
    m = re.search(r"torch_npu\." + name + r"\((.*?)\)\s*->", docs)
    if m is None:
        raise SystemExit(f"error: _op_plugin_docs.py has no schema for {name}")
    out = []
    for part in m.group(1).split(", "):
        decl, _, default = part.partition("=")
        pname = decl.split()[-1]
        out.append([pname, default or None])
    return out


def main() -> int:
    sys.path.insert(0, str(GEN))
    import apex_optimizers as ao   # rules/gen/apex_optimizers.py
    from sources import SourceError, Wheel, torch_npu_wheel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apex", type=Path, default=ao.DEFAULT_APEX, help="git dir of an NVIDIA/apex clone")
    ap.add_argument("--wheel", help="torch_npu wheel (default: the one rules/gen downloads)")
    ap.add_argument("--flash-attn", type=Path, default=ao.REPO.parent.parent / ".mirror" / "Dao-AILab+flash-attention" / "repo",
                    help="git dir of a Dao-AILab/flash-attention clone")
    args = ap.parse_args()
    try:
        wheel = Wheel(torch_npu_wheel(args.wheel))
        npu = ao.npu_optimizers(wheel)
        classes: dict[str, dict] = {}
        for package in ao.PACKAGES:
            init = ao.git_show(args.apex, f"{package}/__init__.py")
            for name, module in ao.exported_classes(init).items():
                path = f"{package}/{module}.py"
                sig = ao.init_signature(ao.git_show(args.apex, path), name, path)
                qual = package.replace("/", ".")
                for spelled in (f"{qual}.{name}", f"{qual}.{module}.{name}"):
                    classes[spelled] = {"params": [[k, v] for k, v in sig.items() if k != "self"]}
        for name, sig in npu.items():
            classes[f"torch_npu.optim.{name}"] = {"params": [[k, v] for k, v in sig.items() if k != "self"]}
        for path, funcs in FLASH_FUNCS.items():
            proc = subprocess.run(["git", "--git-dir", str(args.flash_attn), "show", f"{FLASH_COMMIT}:{path}"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SourceError(f"cannot read {path} at {FLASH_COMMIT} from {args.flash_attn}: {proc.stderr.strip()}")
            module = path[:-3].replace("/", ".")
            for func in funcs:
                sig = function_signature(proc.stdout, func, path)
                for spelled in (f"{module}.{func}", f"{module.split('.')[0]}.{func}"):
                    classes[spelled] = {"params": sig}
        import inspect

        import torch
        import torch.optim

        for name in torch.optim.__all__:
            cls = getattr(torch.optim, name)
            if not (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)) or cls is torch.optim.Optimizer:
                continue
            params = []
            for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                default = None if p.default is p.empty else p.default
                if not isinstance(default, (int, float, str, bool, tuple, type(None))):
                    default = "<expr>"
                params.append([p.name, default] + (["kw"] if p.kind == p.KEYWORD_ONLY else []))
            classes[f"torch.optim.{name}"] = {"params": params}
        torch_version = torch.__version__
        docs = wheel.text("torch_npu/_op_plugin_docs.py")
        for op in NPU_OPS:
            classes[f"torch_npu.{op}"] = {"params": op_schema(docs, op)}
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    doc: dict[str, Any] = {
        "source": f"NVIDIA/apex {ao.APEX_COMMIT[:8]} ({', '.join(ao.PACKAGES)}); Dao-AILab/flash-attention "
                  f"{FLASH_COMMIT} ({', '.join(FLASH_FUNCS)}); torch {torch_version} torch.optim; {wheel.path.name} "
                  "torch_npu/optim, _op_plugin_docs.py",
        "classes": dict(sorted(classes.items())),
    }
    lines = [f" {json.dumps(name)}: {json.dumps(entry, default=str)}" for name, entry in doc["classes"].items()]
    OUT.write_text("{\"source\": " + json.dumps(doc["source"]) + ",\n\"classes\": {\n" + ",\n".join(lines) + "\n}}\n",
                   encoding="utf-8")
    print(f"wrote {OUT} ({len(classes)} classes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

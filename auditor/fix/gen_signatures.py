#!/usr/bin/env python3
"""Generate auditor/fix/signatures.json: constructor signatures (parameter order and defaults) of the Apex fused
optimizers and of their torch_npu.optim twins, which the optimizer codemod needs to map arguments.

Read from the same sources as rules/gen/apex_optimizers.py (whose readers it reuses): NVIDIA/apex at the pinned
commit (a git clone) and the torch_npu wheel. Nothing is typed in.

    python auditor/fix/gen_signatures.py [--apex GITDIR] [--wheel torch_npu-X.whl]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "signatures.json"
GEN = Path(__file__).resolve().parents[2] / "rules" / "gen"


def main() -> int:
    sys.path.insert(0, str(GEN))
    import apex_optimizers as ao   # rules/gen/apex_optimizers.py
    from sources import SourceError, Wheel, torch_npu_wheel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apex", type=Path, default=ao.DEFAULT_APEX, help="git dir of an NVIDIA/apex clone")
    ap.add_argument("--wheel", help="torch_npu wheel (default: the one rules/gen downloads)")
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
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    doc = {
        "source": f"NVIDIA/apex {ao.APEX_COMMIT[:8]} ({', '.join(ao.PACKAGES)}); {wheel.path.name} torch_npu/optim",
        "classes": dict(sorted(classes.items())),
    }
    lines = [f" {json.dumps(name)}: {json.dumps(entry, default=str)}" for name, entry in doc["classes"].items()]
    OUT.write_text("{\"source\": " + json.dumps(doc["source"]) + ",\n\"classes\": {\n" + ",\n".join(lines) + "\n}}\n",
                   encoding="utf-8")
    print(f"wrote {OUT} ({len(classes)} classes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

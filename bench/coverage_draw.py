#!/usr/bin/env python3
"""Draw a random sample of `audit ops` answers to check by hand (issue 12), written to a file before checking.

    python bench/coverage_draw.py --seed 1130 --out draw.json    # the fourth draw: 104 answers

Rule: per kind, n (symbol, line, product) triples from random.Random(seed): the symbol uniformly from the kind's
sorted pool, the line uniformly from v2.1 ... v2.15, the product uniformly from the five profiles.  Pools: aten =
every overload in op_tables/aten.json; api = the union of the native_api lists plus F.x / nn.functional.x
spellings of torch.nn.functional.x; custom = custom_ops.json; env = env.json's variables plus twelve CUDA/NCCL
names; coll = the hccl collectives plus the ReduceOp members; private = private_apis.json; dtype = nine
spellings.  Each record keeps the answer (supported, via, notes, source) as the tables gave it then; the
checked rows live in tests/test_coverage_sample.py with the raw source each was checked against.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from auditor.coverage import _table  # noqa: E402
from auditor.coverage.ops_cmd import answer_for  # noqa: E402
from auditor.target import PRODUCTS, Target  # noqa: E402

QUOTA = (("aten", 36), ("api", 28), ("custom", 10), ("env", 10), ("coll", 10), ("private", 5), ("dtype", 5))
CUDA_NAMES = ["NCCL_DEBUG", "NCCL_BUFFSIZE", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
              "TORCH_NCCL_BLOCKING_WAIT", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "NCCL_SOCKET_IFNAME",
              "PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "NCCL_ALGO"]
DTYPES = ["bf16", "torch.bfloat16", "fp8", "torch.float8_e4m3fn", "float64", "torch.float64", "fp16",
          "torch.complex64", "int64"]


def pools() -> dict[str, list[str]]:
    api: set[str] = set()
    for version in ("2.7.1", "2.11.0", "2.12.0", "2.13.0"):
        api |= set(_table(f"api/torch-{version}.json")["apis"])
    api_list = sorted(api)
    api_list += sorted({a.replace("torch.nn.functional.", p) for a in api_list
                        if a.startswith("torch.nn.functional.") for p in ("F.", "nn.functional.")})
    hccl = _table("hccl.json")
    return {
        "aten": ["aten::" + o for o in sorted(_table("aten.json")["ops"])],
        "api": api_list,
        "custom": sorted(_table("custom_ops.json")["ops"]),
        "env": sorted(_table("env.json")["variables"]) + CUDA_NAMES,
        "coll": ["torch.distributed." + c for c in sorted(hccl["collectives"])]
                + ["ReduceOp." + r for r in hccl["reduce_ops"]],
        "private": sorted(_table("private_apis.json")["apis"]),
        "dtype": DTYPES,
    }


def draw(seed: int) -> list[dict]:
    rng = random.Random(seed)
    lines = [f"v2.{i}" for i in range(1, 16)]
    by_kind = pools()
    out = []
    for kind, n in QUOTA:
        for _ in range(n):
            symbol, line, product = rng.choice(by_kind[kind]), rng.choice(lines), rng.choice(PRODUCTS)
            a = answer_for(symbol, Target(line, product))
            out.append({"n": len(out), "kind": kind, "symbol": symbol, "line": line, "product": product,
                        "supported": a.supported, "via": a.via, "notes": a.notes, "source": a.source})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    sample = draw(args.seed)
    args.out.write_text(json.dumps(sample, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(sample)} answers -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Draw a random sample of `audit ops` answers to check by hand (issue 12), written to a file before checking.

    python bench/coverage_draw.py --seed 1130 --out draw.json    # the fourth draw: 104 answers
    python bench/coverage_draw.py --seed 4711 --quota aten=36,api=30,custom=12,env=12,coll=10,private=6,dtype=6,typo=10 \
        --out draw.json                                          # the fifth draw: 122 answers incl. typos / unknowns

Rule: per kind, n (symbol, line, product) triples from random.Random(seed): the symbol uniformly from the kind's
sorted pool, the line uniformly from v2.1 ... v2.15, the product uniformly from the five profiles.  Pools: aten =
every overload in op_tables/aten.json; api = the union of the native_api lists plus F.x / nn.functional.x
spellings of torch.nn.functional.x; custom = custom_ops.json; env = env.json's variables plus twelve CUDA/NCCL
names; coll = the hccl collectives plus the ReduceOp members; private = private_apis.json; dtype = nine
spellings; typo = one random edit (drop, swap, change a letter) of a name from the aten / api / custom / env
pools, or every third one an invented name (a real module prefix plus two name parts joined), the kind where the
right answer is no verdict and, for a close typo, a "did you mean".  Each record keeps the answer (supported,
via, notes, source) as the tables gave it then; the checked rows live in tests/test_coverage_sample.py with the raw
source each was checked against (draw A: also bench/coverage_draws/seed4711.checked.json, verdict per answer).
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


def typo(rng: random.Random, by_kind: dict[str, list[str]], invented: bool) -> str:
    """A misspelt real name, or (invented) a real prefix with two name parts from other symbols."""
    name = rng.choice(by_kind[rng.choice(("aten", "api", "custom", "env"))])
    head, sep, tail = name.rpartition("::" if name.startswith("aten::") else ".")
    if invented:
        parts = [p for n in rng.sample(by_kind["api"], 2) for p in n.rpartition(".")[2].split("_") if p]
        return head + sep + "_".join(rng.sample(parts, min(2, len(parts))))
    i = rng.randrange(len(tail))
    edit = rng.choice(("drop", "swap", "change"))
    if edit == "drop" and len(tail) > 2:
        tail = tail[:i] + tail[i + 1:]
    elif edit == "swap" and i + 1 < len(tail):
        tail = tail[:i] + tail[i + 1] + tail[i] + tail[i + 2:]
    else:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if tail.isupper() else "abcdefghijklmnopqrstuvwxyz"
        tail = tail[:i] + rng.choice(letters.replace(tail[i].upper() if tail.isupper() else tail[i], "")) + tail[i + 1:]
    return head + sep + tail


def draw(seed: int, quota: tuple[tuple[str, int], ...] = QUOTA) -> list[dict]:
    rng = random.Random(seed)
    lines = [f"v2.{i}" for i in range(1, 16)]
    by_kind = pools()
    out = []
    for kind, n in quota:
        for k in range(n):
            symbol = typo(rng, by_kind, k % 3 == 2) if kind == "typo" else rng.choice(by_kind[kind])
            line, product = rng.choice(lines), rng.choice(PRODUCTS)
            a = answer_for(symbol, Target(line, product))
            out.append({"n": len(out), "kind": kind, "symbol": symbol, "line": line, "product": product,
                        "supported": a.supported, "via": a.via, "notes": a.notes, "source": a.source})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--quota", default=",".join(f"{k}={n}" for k, n in QUOTA),
                    help="kind=n,... in draw order (kinds: aten api custom env coll private dtype typo); "
                         "default: the seed-1130 quota")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    try:
        quota = tuple((k, int(n)) for k, _, n in (part.partition("=") for part in args.quota.split(",")))
    except ValueError:
        ap.error(f"--quota: expected kind=n,..., got {args.quota!r}")
    unknown_kinds = {k for k, _ in quota} - {"aten", "api", "custom", "env", "coll", "private", "dtype", "typo"}
    if unknown_kinds:
        ap.error(f"--quota: unknown kind(s) {', '.join(sorted(unknown_kinds))}")
    sample = draw(args.seed, quota)
    args.out.write_text(json.dumps(sample, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(sample)} answers -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

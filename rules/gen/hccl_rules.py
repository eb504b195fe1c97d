#!/usr/bin/env python3
"""Generate rules/distributed_hccl.yaml: what HCCL does differently from NCCL, per collective, from the coverage
table op_tables/hccl.json (committed; built from the torch_npu "PyTorch API support list" pages, native_api/, and
the reduce-op facts of torch_npu's source, op_tables/inputs/torch_npu-source.json; every row keeps its source).

- NPU106 / NPU107: ReduceOp members that raise on every torch_npu line / that torch_npu emulates on HCCL
  (getHcclReduceOp in Ascend/pytorch torch_npu/csrc/distributed/ProcessGroupHCCL.cpp, per line);
- NPU108: collectives whose torch_npu implementation differs from upstream unless
  `torch_npu.npu.use_compatible_impl(True)` (the pages say so per collective);
- NPU110: literal world sizes that some collectives reject on HCCL;
- NPU111: collectives called on a tensor that is visibly float64 / uint64 where the page's dtype list lacks them.

    python rules/gen/hccl_rules.py
"""
from __future__ import annotations

import json


from sources import REPO, RULES_DIR, SourceError, run_main, yaml_text, write_outputs

HCCL_JSON = REPO / "op_tables" / "hccl.json"
OUT = RULES_DIR / "distributed_hccl.yaml"
REDUCE_OP_HOMES = ("torch.distributed.ReduceOp", "torch.distributed.distributed_c10d.ReduceOp",
                   "torch._C._distributed_c10d.ReduceOp")
COLLECTIVE_HOMES = ("torch.distributed", "torch.distributed.distributed_c10d")
# how a float64 / uint64 tensor shows in the argument: dtype names, conversion methods, legacy types
FP64_SPELLINGS = {"float64": ["torch.float64", "torch.double", ".double", "torch.DoubleTensor",
                              "torch.cuda.DoubleTensor"],
                  "uint64": ["torch.uint64"]}


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".") if p.isdigit())


def load() -> dict:
    if not HCCL_JSON.is_file():
        raise SourceError(f"{HCCL_JSON} is missing: build the coverage tables first (op_tables/)")
    return json.loads(HCCL_JSON.read_text())


def newest(entry: dict) -> tuple[str, dict]:
    torch_v = max(entry["by_torch"], key=_version_key)
    return torch_v, entry["by_torch"][torch_v]


def quals(names, homes):
    return [f"{h}.{n}" for n in names for h in homes]


def _ranges(lines: list[str], order: list[str]) -> str:
    """'v2.1-v2.5, v2.9' for a set of torch_npu lines."""
    runs: list[list[str]] = []
    for line in sorted(lines, key=order.index):
        if runs and order.index(runs[-1][-1]) == order.index(line) - 1:
            runs[-1].append(line)
        else:
            runs.append([line])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def build(table: dict) -> dict:
    reduce_ops = table["reduce_ops"]
    order = sorted(next(iter(reduce_ops.values()))["by_line"], key=lambda l: _version_key(l.lstrip("v")))
    newest_line = lambda v: v["by_line"][order[-1]]  # noqa: E731
    # NPU106: raises on every line (a definite error whatever the target); NPU107: emulated on the newest line
    rejected = sorted(k for k, v in reduce_ops.items() if all(r["status"] == "no" for r in v["by_line"].values()))
    emulated = sorted(k for k, v in reduce_ops.items() if newest_line(v).get("how") == "emulated")
    if not rejected or not emulated:
        raise SourceError("op_tables/hccl.json states no reduce op that raises on every line or that is emulated: "
                          "rebuild the tables (op_tables/inputs/torch_npu-source.json)")
    colls = {name: newest(e) for name, e in table["collectives"].items()
             if name[:1].islower() and name != "reduce_op"}
    compat = sorted(n for n, (_, row) in colls.items() if row["compatible_impl"])
    ws_bad: dict[str, list[int]] = {n: row["world_size_unsupported"] for n, (_, row) in colls.items()
                                    if row["world_size_unsupported"]}
    facts = table.get("facts", {})
    only_950 = facts.get("reduce_dtypes", {}).get("only_on_950", [])
    # collectives whose page lists dtypes without float64 (those lists have no uint64 either)
    no_fp64 = {n: row for n, (_, row) in colls.items() if row["dtypes"] and "float64" not in row["dtypes"]}
    if any("uint64" in row["dtypes"] for row in no_fp64.values()):
        raise SourceError("a collective takes uint64 but not float64: split NPU111 by dtype")

    def src(n):
        return colls[n][1]["source"]

    rules = reduce_op_rules(rejected, emulated, reduce_ops, order)
    return _rest(rules, colls, compat, ws_bad, no_fp64, only_950, src)


def reduce_op_rules(rejected, emulated, reduce_ops, order) -> list[dict]:
    def cite(op: str) -> str:
        return reduce_ops[op]["by_line"][order[-1]]["source"].split(";")[0]

    exceptions = {}   # emulated members that raise or are unverified on some lines
    for op in emulated:
        by = reduce_ops[op]["by_line"]
        parts = [f"raises on {_ranges([l for l in order if by[l]['status'] == s], order)}" if s == "no" else
                 f"is unverified on {_ranges([l for l in order if by[l]['status'] == s], order)}"
                 for s in ("no", "unverified") if any(by[l]["status"] == s for l in order)]
        if parts:
            exceptions[op] = " and ".join(parts)
    rules = []
    rules.append({
        "code": "NPU106", "name": "hccl-unsupported-reduce-op", "category": "distributed", "severity": "error",
        "effort": "medium", "fix": "none",
        "message": "`{symbol}` is not supported by HCCL (the collective raises)",
        "substitution": "rewrite the reduction: for 0/1 flags use ReduceOp.MAX (OR) / ReduceOp.MIN (AND) on an "
                        "integer tensor; for bit masks all_gather the values and combine them locally",
        "match": [{"qualname": quals(rejected, REDUCE_OP_HOMES)}],
        "source_note": "generated by rules/gen/hccl_rules.py from op_tables/hccl.json reduce_ops: raises on every "
                       f"torch_npu line {order[0]}-{order[-1]} ({cite(rejected[0])}, unsupportedOp; the same map on "
                       "every line's branch)",
        "doc": {"what": "Bitwise reductions: ReduceOp." + ", ReduceOp.".join(rejected) + ".",
                "why": "torch_npu maps SUM, PRODUCT, MIN and MAX to HCCL reductions and raises `Cannot use "
                       "ReduceOp.<op> with HCCL` for the bitwise ones, on every line (getHcclReduceOp in "
                       "torch_npu/csrc/distributed/ProcessGroupHCCL.cpp of github.com/Ascend/pytorch).",
                "use_instead": "MAX / MIN on 0/1 integer tensors for logical OR / AND, or an all_gather and a local "
                               "reduction for bit masks."},
        "examples": {"flag": ["import torch.distributed as dist\ndist.all_reduce(flags, op=dist.ReduceOp.BOR)\n",
                              "from torch.distributed import ReduceOp\nOP = ReduceOp.BAND\n"],
                     "ok": ["import torch.distributed as dist\ndist.all_reduce(flags, op=dist.ReduceOp.MAX)\n",
                            "# ReduceOp.BXOR is not supported on HCCL\nop = None\n"]},
    })
    symbols = {f"{home}.{op}": {"message": f"`{home}.{op}` is emulated on HCCL (an extra scaling pass) on the newest "
                                           f"torch_npu lines; it {exceptions[op]}"}
               for op in emulated if op in exceptions for home in REDUCE_OP_HOMES}
    rules.append({
        "code": "NPU107", "name": "hccl-emulated-reduce-op", "category": "distributed", "severity": "info",
        "effort": "low", "fix": "none",
        "message": "`{symbol}` is emulated on HCCL (an extra scaling pass)",
        "substitution": "works; for speed reduce with SUM and scale once yourself where it matters",
        "match": [{"qualname": quals(emulated, REDUCE_OP_HOMES)}],
        **({"symbols": symbols} if symbols else {}),
        "source_note": "generated by rules/gen/hccl_rules.py from op_tables/hccl.json reduce_ops ("
                       + "; ".join(f"{op}: {cite(op)}" for op in emulated) + ")",
        "doc": {"what": "ReduceOp." + ", ReduceOp.".join(emulated) + ".",
                "why": "HCCL has no native averaging or pre-multiplied sum: torch_npu runs a SUM and scales around it "
                       "(getHcclReduceOp, ProcessGroupHCCL.cpp)"
                       + ("; per line: " + "; ".join(f"{op} {t}" for op, t in exceptions.items()) if exceptions else "")
                       + ". `audit ops ReduceOp.<op> --torch-npu <line>` answers per line.",
                "use_instead": "Keep it, or SUM and divide once when the collective is on a hot path."},
        "examples": {"flag": ["import torch.distributed as dist\ndist.all_reduce(loss, op=dist.ReduceOp.AVG)\n"],
                     "ok": ["import torch.distributed as dist\ndist.all_reduce(loss, op=dist.ReduceOp.SUM)\n"]},
    })
    return rules


def _rest(rules, colls, compat, ws_bad, no_fp64, only_950, src) -> dict:
    sizes = sorted({s for v in ws_bad.values() for s in v})
    rules.append({
        "code": "NPU108", "name": "hccl-compatible-impl-collective", "category": "distributed",
        "severity": "warning", "effort": "low", "fix": "none",
        "message": "`{symbol}` on HCCL differs from the upstream behaviour unless compatible mode is on",
        "substitution": "call `torch_npu.npu.use_compatible_impl(True)` once after `import torch_npu`, or use "
                        "all_gather / broadcast instead",
        "match": [{"qualname": quals(compat, COLLECTIVE_HOMES)}],
        "symbols": {q: {"message": f"`{q}` on HCCL differs from the upstream behaviour unless compatible mode is "
                                   f"on; tensors limited to {', '.join(colls[q.rsplit('.', 1)[1]][1]['dtypes'])}"}
                    for q in quals(compat, COLLECTIVE_HOMES)},
        "source_note": "generated by rules/gen/hccl_rules.py from op_tables/hccl.json ("
                       + "; ".join(src(n) for n in compat) + ")",
        "doc": {"what": "Collectives whose torch_npu page says they follow the native behaviour only after "
                        "`torch_npu.npu.use_compatible_impl(True)`: " + ", ".join(compat) + ".",
                "why": "By default torch_npu runs its own implementation of these collectives on HCCL; code that "
                       "relies on the upstream semantics (only dst receives, list shapes) can behave differently.",
                "use_instead": "`torch_npu.npu.use_compatible_impl(True)` at start-up, or all_gather + indexing "
                               "in place of gather, broadcast in place of scatter."},
        "examples": {"flag": ["import torch.distributed as dist\ndist.gather(t, gather_list if rank == 0 else None, dst=0)\n",
                              "from torch.distributed import scatter\nscatter(out, chunks, src=0)\n"],
                     "ok": ["import torch.distributed as dist\ndist.all_gather(outs, t)\n",
                            "# dist.gather(t) would be simpler\nx = 1\n"]},
    })
    rules.append({
        "code": "NPU110", "name": "hccl-rejected-world-size", "category": "distributed", "severity": "error",
        "effort": "medium", "fix": "none",
        "message": "this literal world_size is one HCCL rejects for " + ", ".join(sorted(ws_bad)),
        "substitution": "use a world size HCCL accepts for these collectives (not " + ", ".join(map(str, sizes))
                        + "), or all_gather / reduce_scatter with tensor lists in sub-groups of such sizes",
        "match": [{"qualname": quals(["init_process_group"], COLLECTIVE_HOMES)}],
        "when": {"arg": {"kw": "world_size", "values": sizes}},
        "source_note": "generated by rules/gen/hccl_rules.py from op_tables/hccl.json ("
                       + "; ".join(src(n) for n in sorted(ws_bad)) + ")",
        "doc": {"what": "A literal world_size of " + ", ".join(map(str, sizes)) + " given to init_process_group.",
                "why": "The torch_npu pages list world sizes that " + ", ".join(sorted(ws_bad)) + " do not "
                       "support on HCCL (FSDP and ZeRO use them for sharding).",
                "use_instead": "Plan the job with a world size outside that list, or avoid the tensor variants of "
                               "these collectives in groups of those sizes."},
        "examples": {"flag": ["import torch.distributed as dist\ndist.init_process_group(\"hccl\", rank=rank, world_size=6)\n"],
                     "ok": ["import torch.distributed as dist\ndist.init_process_group(\"hccl\", rank=rank, world_size=8)\n",
                            "import torch.distributed as dist\ndist.init_process_group(\"hccl\", rank=rank, world_size=ws)\n"]},
    })
    visible = sorted({s for d in FP64_SPELLINGS for s in FP64_SPELLINGS[d]})
    rules.append({
        "code": "NPU111", "name": "hccl-fp64-collective", "category": "distributed",
        "severity": {"default": "error", "950": "warning"}, "effort": "low", "fix": "none",
        "message": "`{symbol}` on a float64/uint64 tensor: the HCCL collective does not take that dtype",
        "substitution": "communicate in float32 (or int64) and convert back: `t32 = t.float(); op(t32); "
                        "t.copy_(t32)`",
        "match": [{"qualname": quals(sorted(no_fp64), COLLECTIVE_HOMES)}],
        "when": {"arg": {"pos": 0, "kw": "tensor", "values": visible, "within": True}},
        # in addition to any other finding on the collective (gather is also NPU108)
        "extra": {"stack": True},
        "symbols": {q: {"message": f"`{q}` on a float64/uint64 tensor: HCCL takes "
                                   f"{', '.join(colls[q.rsplit('.', 1)[1]][1]['dtypes'])} here"}
                    for q in quals(sorted(no_fp64), COLLECTIVE_HOMES)},
        "source_note": "generated by rules/gen/hccl_rules.py from op_tables/hccl.json collective dtype lists"
                       + (f" and facts.reduce_dtypes (only on 950: {', '.join(only_950)})" if only_950 else ""),
        "doc": {"what": "Collectives (" + ", ".join(sorted(no_fp64)) + ") whose tensor argument is visibly float64 "
                        "or uint64 (a dtype=torch.float64 constructor, .double(), DoubleTensor).",
                "why": "The torch_npu pages list the dtypes each collective accepts; float64 and uint64 are "
                       "missing (Ascend 950 adds them for reductions), so the call raises.",
                "use_instead": "Reduce in float32 (or int64 for counters) and convert back."},
        "examples": {"flag": ["import torch, torch.distributed as dist\n"
                              "dist.all_reduce(torch.tensor([n], dtype=torch.float64, device=dev))\n",
                              "import torch.distributed as dist\ndist.all_reduce(total.double())\n"],
                     "ok": ["import torch, torch.distributed as dist\n"
                            "dist.all_reduce(torch.tensor([n], dtype=torch.float32, device=dev))\n",
                            "import torch.distributed as dist\ndist.all_reduce(total)\n"]},
    })
    return {"family": "distributed", "rules": rules}


def outputs(pins=None) -> dict:
    """{rule file: its text}; the only input, op_tables/hccl.json, is committed (no pins needed)."""
    return {OUT: yaml_text("# GENERATED by rules/gen/hccl_rules.py - do not edit by hand; rerun the script.\n"
                           "# Source: op_tables/hccl.json (torch_npu native_api pages, torch_npu's source for reduce "
                           "ops).\n", build(load()))}


def main() -> None:
    write_outputs(outputs())


if __name__ == "__main__":
    run_main(main)

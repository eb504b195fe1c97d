"""Time and peak memory of `audit --trace --world-size N` on a Llama-2-7B-shaped FSDP2 job.

    python bench/bench_trace_distributed.py                      # 8 fake ranks (the issue's budget)
    python bench/bench_trace_distributed.py --world-size 64

The model is examples/fsdp2_llama7b.py (transformers' LlamaForCausalLM with the released Llama 2 7B
config, fully_shard on every decoder layer and the root, bf16 params, fp32 reduce, fused AdamW). Each run
is a fresh process that calls the tracer as `audit` does: a spawned child joins the fake process group
as rank 0, builds the model on fake tensors through the real FSDP2 code and records forward + backward +
optimizer step with every collective; the parent judges the records. "wall s" is end to end, "cpu s" the
CPU time of parent and child (what the wall time is on an idle machine, less any waiting for a CPU),
"child MB" the child's peak RSS. Also printed: the step's collective volume per rank and what the
fixture's parameter count predicts for it (sharded bf16 all-gathers twice, fp32 reduce-scatter once).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "examples" / "fsdp2_llama7b.py"
LIMITS = {"wall s": 60, "child MB": 2048}


def _example_config() -> dict:
    import ast

    tree = ast.parse(MODEL.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CONFIG")
    return {kw.arg: ast.literal_eval(kw.value) for kw in node.value.keywords}


def run_one(world_size: int, torch_npu: str, product: str) -> dict:
    from auditor.target import resolve_target
    from auditor.trace import trace_findings
    from auditor.trace.collectives import parse_layout

    start = time.perf_counter()
    findings, errors, table = trace_findings(MODEL, root=MODEL.parent, entry=None, hf_config=None, amp=None,
                                             timeout=600, target=resolve_target(torch_npu, product),
                                             distributed=parse_layout(world_size, None))
    wall = time.perf_counter() - start
    if errors:
        return {"model": MODEL.name, "error": errors[0].message.splitlines()[0]}
    calls = table["collectives"]["calls"]
    step = [c for c in calls if c["phase"] != "setup"]
    gathered = sum(c["bytes"] * c["count"] for c in step if c["op"] == "all_gather_into_tensor")
    scattered = sum(c["bytes"] * c["count"] for c in step if c["op"] == "reduce_scatter_tensor")
    # FSDP2 gathers every unit in the forward and, resharded after it, every decoder layer again in the
    # backward; the root (embeddings, final norm, output head) stays gathered. Sizes from the config:
    config = _example_config()
    hidden, vocab, layers, ffn = (config[k] for k in ("hidden_size", "vocab_size", "num_hidden_layers",
                                                        "intermediate_size"))
    root = 2 * vocab * hidden + hidden
    params = root + layers * (4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden)
    codes: dict[str, int] = {}
    for f in findings:
        codes[f.code] = codes.get(f.code, 0) + 1
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return {
        "model": MODEL.name, "ranks": world_size, "params": table["rows"][0]["parameters"],
        "calls/step": sum(c["count"] for c in step),
        "all-gather GB": round(gathered / 1e9, 3), "reduce-scatter GB": round(scattered / 1e9, 3),
        "predicted AG/RS GB": f"{(2 * params - root) * 2 / world_size / 1e9:.3f}/{params * 4 / world_size / 1e9:.3f}",
        "wall s": round(wall, 1), "child build+step s": table["rows"][0]["trace s"],
        "cpu s": round(sum(u.ru_utime + u.ru_stime for u in usage), 1),
        "child MB": round(usage[1].ru_maxrss / 1024), "parent MB": round(usage[0].ru_maxrss / 1024),
        "load avg": round(os.getloadavg()[0], 1),
        "findings": " ".join(f"{c}x{n}" for c, n in sorted(codes.items())),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world-size", type=int, default=8)
    parser.add_argument("--torch-npu", default="2.14")
    parser.add_argument("--product", default="a2")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.world_size, args.torch_npu, args.product)))
        return 0
    proc = subprocess.run([sys.executable, __file__, "--one", "--world-size", str(args.world_size),
                           "--torch-npu", args.torch_npu, "--product", args.product],
                          capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        row = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        row = {"model": MODEL.name, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    over = [f"{k} > {v}" for k, v in LIMITS.items() if k in row and row[k] > v]
    row["limit"] = "FAIL" if "error" in row else ("FAIL " + ", ".join(over) if over else "ok")
    columns = list(row)
    widths = {c: max(len(c), len(str(row[c]))) for c in columns}
    print(f"torch_npu {args.torch_npu}, product {args.product}; rank 0 of {args.world_size}, fake process group")
    print(" | ".join(c.ljust(widths[c]) for c in columns))
    print("-+-".join("-" * widths[c] for c in columns))
    print(" | ".join(str(row[c]).ljust(widths[c]) for c in columns))
    return 1 if row["limit"].startswith("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())

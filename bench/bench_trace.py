"""Trace time and peak memory of `audit --trace` on five reference architectures, printed as a table.

    /work/venv/bin/python bench/bench_trace.py            # all five
    /work/venv/bin/python bench/bench_trace.py llama2-7b  # some

Each model runs in a fresh process (so peak RSS is its own) through the whole tracer: a spawned child
builds the model on fake tensors and records forward + backward + optimizer step, the parent judges
the records against the coverage tables. "wall s" is end to end, as a user waits for it; "cpu s" the
CPU time of parent and child together (what the wall time is on an idle machine, less any waiting);
"child MB" is the child's peak RSS (the process that holds the model), "parent MB" the auditor's.

The configs are written from the published hyper-parameters: Llama 2 (Touvron et al., 2023, table 1
and the released config.json files), Mixtral of Experts (Jiang et al., 2024), ViT-B/16 (Dosovitskiy
et al., 2021, table 1); ResNet-50 is examples/trace_resnet50.py (He et al., 2015).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 32000,
         "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "hidden_act": "silu",
         "tie_word_embeddings": False}
MODELS = {
    "llama2-7b": {"hf_config": {**LLAMA, "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
                                "num_key_value_heads": 32, "num_hidden_layers": 32},
                  "limits": {"wall s": 15, "child MB": 1536}},
    "llama2-70b": {"hf_config": {**LLAMA, "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
                                 "num_key_value_heads": 8, "num_hidden_layers": 80},
                   "limits": {"wall s": 60}},
    "mixtral-8x7b": {"hf_config": {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
                                   "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                                   "num_key_value_heads": 8, "num_hidden_layers": 32, "num_local_experts": 8,
                                   "num_experts_per_tok": 2, "vocab_size": 32000,
                                   "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
                                   "rope_theta": 1000000.0, "sliding_window": None, "hidden_act": "silu",
                                   "router_aux_loss_coef": 0.02, "tie_word_embeddings": False}},
    "vit-b16": {"hf_config": {"model_type": "vit", "architectures": ["ViTForImageClassification"],
                              "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
                              "num_hidden_layers": 12, "image_size": 224, "patch_size": 16, "num_channels": 3,
                              "num_labels": 1000, "hidden_act": "gelu", "layer_norm_eps": 1e-12, "qkv_bias": True}},
    "resnet50": {"source": "examples/trace_resnet50.py"},
}


def run_one(name: str, torch_npu: str, product: str) -> dict:
    from auditor.target import resolve_target
    from auditor.trace import trace_findings

    spec = MODELS[name]
    with tempfile.TemporaryDirectory() as tmp:
        hf_config = source = None
        if "hf_config" in spec:
            hf_config = Path(tmp) / "config.json"
            hf_config.write_text(json.dumps(spec["hf_config"]))
        else:
            source = REPO / spec["source"]
        start = time.perf_counter()
        findings, errors, table = trace_findings(source, root=Path(tmp) if hf_config else REPO, entry=None,
                                                 hf_config=hf_config, amp=None, timeout=600,
                                                 target=resolve_target(torch_npu, product))
        wall = time.perf_counter() - start
    if errors:
        return {"model": name, "error": errors[0].message.splitlines()[0]}
    row = table["rows"][0]
    codes: dict[str, int] = {}
    for f in findings:
        codes[f.code] = codes.get(f.code, 0) + 1
    return {
        "model": name,
        "params": row["parameters"],
        "step FLOPs": row["step FLOPs"],
        "ops": row["ops seen"],
        "native/comp/fallback": f"{row['native']}/{row['composite']}/{row['fallback']}",
        "wall s": round(wall, 1),
        "child build+step s": row["trace s"],
        "cpu s": round(sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                           for f in ("ru_utime", "ru_stime")), 1),
        "child MB": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "parent MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "findings": " ".join(f"{c}x{n}" for c, n in sorted(codes.items())),
        "approximated": row.get("approximated", ""),
    }


def verdict(name: str, row: dict) -> str:
    limits = MODELS[name].get("limits", {})
    over = [f"{k} > {v}" for k, v in limits.items() if k in row and row[k] > v]
    return ("FAIL " + ", ".join(over)) if over else ("ok" if limits else "-")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", choices=[*MODELS, []], default=[])
    parser.add_argument("--torch-npu", default="2.14")
    parser.add_argument("--product", default="a2")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.torch_npu, args.product)))
        return 0
    rows = []
    for name in args.models or list(MODELS):
        proc = subprocess.run([sys.executable, __file__, "--one", name, "--torch-npu", args.torch_npu,
                               "--product", args.product], capture_output=True, text=True, cwd=REPO)
        try:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"model": name, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
        row["limit"] = verdict(name, row) if "error" not in row else "FAIL"
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print(f"torch_npu {args.torch_npu}, product {args.product}; fwd + bwd + optimizer step on fake tensors")
    print(" | ".join(c.ljust(widths[c]) for c in columns))
    print("-+-".join("-" * widths[c] for c in columns))
    for row in rows:
        print(" | ".join(str(row.get(c, "")).ljust(widths[c]) for c in columns))
    return 1 if any(r["limit"].startswith("FAIL") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

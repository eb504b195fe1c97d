"""`audit --trace --hf-config` on 13 architectures: time, memory, parameters and step FLOPs against closed forms.

    nice -n 10 python bench/bench_architectures.py                 # all, one fresh process each
    nice -n 10 python bench/bench_architectures.py llama-3-8b t5-base
    nice -n 10 python bench/bench_architectures.py --markdown      # the table in docs/trace.md

Configs are bench/configs/*.json, copied from each model's public config.json (SOURCES below; weights are
never needed). Each model runs in a fresh process through the tracer's own child process: "wall s" is
end to end, "cpu s" the CPU time of both processes (the machine is shared: wall includes waiting for a
CPU), "child MB" the peak RSS of the child that holds the fake model.

Closed forms, from the config and the counted parameters (decoder-only and encoder-only models):
    6 * N * T                         N = parameters a token multiplies by: all of them, less the input
                                      embedding (a lookup), with routed experts counted top_k / n_experts
    + attention                       per attention layer 2 * heads * s_q * s_k * (u_qk * d_qk + u_v * d_v):
                                      u_qk = 3, u_v = 3 on the eager path (QK^T, PV and their two gradients
                                      each); u_qk = 4 on the SDPA path, whose backward recomputes QK^T
                                      as flash attention does (torch.utils.flop_counter's formulas).
Encoder-decoder models (T5, Whisper) get no closed form here: their parameters split between encoder
and decoder tokens of different lengths.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "bench" / "configs"
SOURCES = {  # the public config.json each file is copied from
    "gpt2": "https://huggingface.co/openai-community/gpt2/blob/main/config.json",
    "bert-base": "https://huggingface.co/google-bert/bert-base-uncased/blob/main/config.json",
    "llama-3-8b": "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
    "qwen2.5-7b": "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json",
    "gemma-3-1b": "https://huggingface.co/google/gemma-3-1b-pt/blob/main/config.json",
    "mixtral-8x7b": "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
    "qwen3-30b-a3b": "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json",
    "deepseek-v3": "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json",
    "t5-base": "https://huggingface.co/google-t5/t5-base/blob/main/config.json",
    "whisper-small": "https://huggingface.co/openai/whisper-small/blob/main/config.json",
    "vit-b16": "https://huggingface.co/google/vit-base-patch16-224/blob/main/config.json",
    "mamba-130m": "https://huggingface.co/state-spaces/mamba-130m-hf/blob/main/config.json",
    "jamba-v0.1": "https://huggingface.co/ai21labs/Jamba-v0.1/blob/main/config.json",
}
KINDS = {"gpt2": "dense", "bert-base": "encoder", "llama-3-8b": "dense", "qwen2.5-7b": "dense",
         "gemma-3-1b": "dense", "mixtral-8x7b": "MoE", "qwen3-30b-a3b": "MoE", "deepseek-v3": "MoE (MLA)",
         "t5-base": "enc-dec", "whisper-small": "audio enc-dec", "vit-b16": "vision", "mamba-130m": "SSM",
         "jamba-v0.1": "SSM+attn+MoE"}
VARIANTS = {"llama-3-8b-eager": ("llama-3-8b", {"_attn_implementation": "eager"})}


def attention_flops(cfg: dict, result: dict) -> int | None:
    """The attention matmuls of one step from the config, on the path the trace ran."""
    ops = {a["op"] for a in result["aten"]}
    sdpa = any(op.startswith("_scaled_dot_product_flash_attention_for_cpu") for op in ops)
    u_qk, u_v = (4, 3) if sdpa else (3, 3)
    seq = next(iter(result["inputs"].values()))[-1] if result["inputs"] else 0
    batch = next(iter(result["inputs"].values()))[0] if result["inputs"] else 1
    mt = cfg["model_type"]
    if mt in ("t5", "whisper", "mamba"):
        return 0 if mt == "mamba" else None
    heads = cfg.get("num_attention_heads") or cfg.get("n_head")
    layers = cfg.get("num_hidden_layers") or cfg.get("n_layer")
    hidden = cfg.get("hidden_size") or cfg.get("n_embd")
    d_qk = d_v = cfg.get("head_dim") or hidden // heads
    if mt == "deepseek_v3":
        d_qk, d_v = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    if mt == "jamba":
        layers = layers // cfg["attn_layer_period"]
    if mt == "vit":
        seq = (cfg["image_size"] // cfg["patch_size"]) ** 2 + 1
    return batch * layers * 2 * heads * seq * seq * (u_qk * d_qk + u_v * d_v)


def run_one(name: str) -> dict:
    """In this (fresh) process: trace one model through the sandboxed child; return the row."""
    from auditor.sandbox import run_in_child
    from auditor.target import resolve_target
    from auditor.trace import _Placer, judge
    from auditor.trace.child import run_trace

    base, extra = VARIANTS.get(name, (name, {}))
    cfg = {**json.loads((CONFIGS / f"{base}.json").read_text()), **extra}
    path = CONFIGS / f"{base}.json"
    if extra:
        path = Path(f"/tmp/npu_audit_bench_{name}.json")
        path.write_text(json.dumps(cfg))
    start = time.perf_counter()
    result = run_in_child(run_trace, {"source": None, "entry": None, "hf_config": str(path), "amp": None}, 900)
    findings, _, _ = judge(result, resolve_target("2.14", "a2"), _Placer(CONFIGS, None, path, None))
    wall = time.perf_counter() - start
    usage_self, usage_child = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    tokens = 1
    for shape in result["inputs"].values():
        tokens = shape[0] * shape[-1] if len(shape) == 2 else shape[0]
        break
    attn = attention_flops(cfg, result)
    matmul_params = result["active_parameters"] - result["embedding_parameters"]
    closed = 6 * matmul_params * tokens + attn if attn is not None else None
    if cfg["model_type"] == "vit":
        closed = 6 * matmul_params * ((cfg["image_size"] // cfg["patch_size"]) ** 2 + 1) + attn
    return {
        "model": name, "kind": KINDS.get(base, ""), "params": result["parameters"],
        "active": result["active_parameters"], "inputs": result["inputs"], "traced": result["layers"]["traced"],
        "flops": result["flops"], "closed": closed,
        "ratio": round(result["flops"] / closed, 4) if closed else None,
        "wall s": round(wall, 1),
        "cpu s": round(usage_self.ru_utime + usage_self.ru_stime + usage_child.ru_utime + usage_child.ru_stime, 1),
        "child MB": round(usage_child.ru_maxrss / 1024), "findings": len(findings),
        "approximated": result["approximations"],
    }


def _g(n: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="*", default=[*SOURCES, *VARIANTS])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one)))
        return
    rows = []
    for name in args.models:
        proc = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True,
                              cwd=REPO, timeout=1200)
        if proc.returncode:
            rows.append({"model": name, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]})
        else:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    header = "| model | kind | inputs | traced blocks | parameters | active | step FLOPs | closed form | ratio | wall s | cpu s | child MB |"
    print(header)
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | error: {r['error'][:80]} |")
            continue
        inputs = ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in r["inputs"].items() if k != "labels")
        print(f"| {r['model']} | {r['kind']} | {inputs} | {r['traced'] or 'all'} | {_g(r['params'])} | "
              f"{_g(r['active'])} | {_g(r['flops'])} | {_g(r['closed']) if r['closed'] else '-'} | "
              f"{r['ratio'] if r['ratio'] else '-'} | {r['wall s']} | {r['cpu s']} | {r['child MB']} |")


if __name__ == "__main__":
    main()

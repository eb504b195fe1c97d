"""Time `--execute --dump` and `audit compare` on a GPT-2-small-shaped model (124M parameters), on the CPU.

    python bench/bench_dump_compare.py                       # fp32 and bf16 dumps of 1 step, then compare
    python bench/bench_dump_compare.py --steps 2 --tokens 256 --json

The model is GPT-2 small's shape (vocab 50257, 12 layers, d_model 768, 12 heads, tied embedding; 124.4M
parameters) written in plain torch into bench/_work/gpt2_small.py, trained on one batch of --batch x
--tokens random token ids with AdamW. Each command runs as `python -m auditor.cli ...` in a fresh process, so
the times include interpreter start, the torch import, the child process execute mode starts, building the
model (seeded) and writing the dump. It prints wall time, CPU time (user+system of the process tree) and the
dump's size. Exit status 1 when a command fails or a time is above --limit (default 60 s).
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

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "dump_compare"

MODEL = '''"""GPT-2 small's shape in plain torch (vocab 50257, 12 layers, d_model 768, 12 heads, tied embedding)."""
import torch
import torch.nn.functional as F
from torch import nn

BATCH, TOKENS = {batch}, {tokens}


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.c_attn(x).split(c, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Small(nn.Module):
    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def audit_entry():
    model = GPT2Small()
    idx = torch.randint(0, 50257, (BATCH, TOKENS))
    targets = torch.roll(idx, -1, dims=1)
    loss_fn = lambda logits: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return model, (idx,), loss_fn, lambda params: torch.optim.AdamW(params, lr=1e-4)
'''


def run(cmd: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cmd": " ".join(cmd[2:]), "rc": proc.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "stderr_tail": proc.stderr.strip()[-600:] if proc.returncode not in (0, 1) else ""}


def size_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    WORK.mkdir(parents=True, exist_ok=True)
    model = WORK / "gpt2_small.py"
    model.write_text(MODEL.format(batch=args.batch, tokens=args.tokens), encoding="utf-8")
    a, b = WORK / "dump_fp32", WORK / "dump_bf16"
    for d in (a, b):
        if d.exists():
            import shutil

            shutil.rmtree(d)
    cli = [sys.executable, "-m", "auditor.cli"]
    common = ["--execute", "--device", "cpu", "--steps", str(args.steps), "--no-cache", "--format", "json",
              "--fail-on", "never", "--timeout", "900"]
    results = [
        run(cli + [str(model), "--dump", str(a), "--amp", "fp32"] + common),
        run(cli + [str(model), "--dump", str(b), "--amp", "bf16", "--inputs", str(a / "inputs.pt")] + common),
        run(cli + ["compare", str(a), str(b), "--format", "json", "--output", str(WORK / "compare.json")]),
    ]
    manifest = json.loads((a / "manifest.json").read_text()) if (a / "manifest.json").is_file() else {}
    report = json.loads((WORK / "compare.json").read_text()) if (WORK / "compare.json").is_file() else {}
    summary = {
        "parameters": manifest.get("model", {}).get("parameters"),
        "batch_tokens": [args.batch, args.tokens], "steps": args.steps,
        "dump_mb": {"fp32": size_mb(a) if a.exists() else None, "bf16": size_mb(b) if b.exists() else None},
        "runs": results,
        "compare_findings": [f"{f['code']} {f['severity']}: {f['message'][:160]}" for f in report.get("findings", [])],
        "load_average": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"model: {summary['parameters']:,} parameters, batch {args.batch} x {args.tokens} tokens, "
              f"{args.steps} step(s); dumps {summary['dump_mb']['fp32']} MB (fp32), {summary['dump_mb']['bf16']} MB (bf16)")
        for r in results:
            print(f"  {r['wall_s']:7.1f} s wall  {r['cpu_s']:7.1f} s CPU  rc={r['rc']}  {r['cmd'][:110]}")
            if r["stderr_tail"]:
                print("    " + r["stderr_tail"].replace("\n", "\n    "))
        for f in summary["compare_findings"]:
            print("  finding: " + f)
        print(f"  load average during the run: {', '.join(f'{x:.1f}' for x in summary['load_average'])}")
    failed = any(r["rc"] not in (0, 1) or r["wall_s"] > args.limit for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Train a small GPT with DDP on NVIDIA GPUs.

This is the example the README audits: it is written the way real GPU training scripts are (nanoGPT,
Megatron-style launchers), so it uses CUDA devices, NCCL, AMP/Apex, FlashAttention, TF32, a Triton kernel
and CUDA/NCCL environment variables. Launch: torchrun --nproc_per_node=8 gpt_train.py
"""
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.cuda.amp import GradScaler

try:  # FlashAttention 2 when it is installed, SDPA otherwise
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None

try:
    from apex.optimizers import FusedAdam as FA
    from apex.normalization import FusedRMSNorm
except ImportError:
    FA = None
    FusedRMSNorm = None

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

BACKEND = "nccl"
DEVICE_TYPE = "cuda"
DTYPE = "bfloat16"  # 'float32', 'bfloat16' or 'float16'

# NCCL tuning used on our InfiniBand cluster
os.environ.setdefault("NCCL_IB_DISABLE", "0")
os.environ["NCCL_SOCKET_IFNAME"] = "eth0"
os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

# TF32 is faster on Ampere and needs no code change
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True

if triton is not None:
    @triton.jit
    def _fused_gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = 0.5 * x * (1 + tl.math.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
        tl.store(out_ptr + offs, y, mask=mask)


def fused_gelu(x):
    if triton is None or not x.is_cuda:
        return F.gelu(x, approximate="tanh")
    out = torch.empty_like(x)
    n = x.numel()
    _fused_gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps)).type_as(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head)
        k = k.view(B, T, self.n_head, C // self.n_head)
        v = v.view(B, T, self.n_head, C // self.n_head)
        if flash_attn_func is not None:
            y = flash_attn_func(q, k, v, dropout_p=self.dropout if self.training else 0.0, causal=True)
        else:
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
                y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=True).transpose(1, 2)
        return self.proj(y.reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        norm = FusedRMSNorm if FusedRMSNorm is not None else RMSNorm
        self.ln1, self.ln2 = norm(d_model), norm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, dropout)
        self.fc = nn.Linear(d_model, 4 * d_model, bias=False)
        self.out = nn.Linear(4 * d_model, d_model, bias=False)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(fused_gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=50304, d_model=768, n_layer=12, n_head=12, block=1024, dropout=0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.norm = RMSNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def audit_entry():
    """Entry for `audit examples/gpt_train.py --trace`: a small model and one batch."""
    model = GPT(vocab=1024, d_model=128, n_layer=2, n_head=4, block=64)
    idx = torch.randint(0, 1024, (2, 64))
    return model, (idx, idx)


def main():
    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        dist.init_process_group(backend=BACKEND)
        local_rank = int(os.environ["LOCAL_RANK"])
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(device)
    else:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"training on {device} with the nccl backend")  # a message, not a device

    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[DTYPE]
    if DTYPE == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise RuntimeError("bf16 needs an Ampere GPU or newer; set DTYPE = 'float16' on cuda")
    ctx = nullcontext() if DEVICE_TYPE == "cpu" else torch.autocast(device_type=DEVICE_TYPE, dtype=ptdtype)
    scaler = GradScaler(enabled=(DTYPE == "float16"))

    model = GPT().cuda()
    if ddp:
        model = DDP(model, device_ids=[local_rank])
    if FA is not None:
        optimizer = FA(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)

    for step in range(1000):
        t0 = time.time()
        x = torch.randint(0, 50304, (8, 1024), pin_memory=True).to(device, non_blocking=True)
        with ctx:
            loss = model(x, x)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step % 100 == 0 and (not ddp or dist.get_rank() == 0):
            mem = torch.cuda.max_memory_allocated() / 2**30
            print(f"step {step} loss {loss.item():.3f} {1000 * (time.time() - t0):.0f} ms {mem:.1f} GiB")
    if ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

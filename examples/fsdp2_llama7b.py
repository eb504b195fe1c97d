"""FSDP2 pre-training of a Llama-2-7B-shaped model, the way torchtitan-style scripts set it up:
NCCL, one GPU per rank, fully_shard on every decoder layer and on the root, bf16 params, fp32 reduce.

    torchrun --nproc-per-node 8 fsdp2_llama7b.py        # the real job
    audit examples/fsdp2_llama7b.py --trace --world-size 8   # one rank of it, on one CPU, no weights
"""
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from transformers import LlamaConfig, LlamaForCausalLM

# Llama 2 7B (Touvron et al., 2023, table 1; the released config.json)
CONFIG = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
              num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096, rms_norm_eps=1e-5,
              tie_word_embeddings=False)
SEQ_LEN, MICRO_BATCH = 2048, 1


def build(world_size: int):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))
    config = LlamaConfig(**CONFIG)
    config._attn_implementation = "sdpa"
    with torch.device("cuda"):
        model = LlamaForCausalLM(config)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    return model


def audit_entry(world_size):
    model = build(world_size)
    tokens = torch.randint(0, CONFIG["vocab_size"], (MICRO_BATCH, SEQ_LEN), device="cuda")
    inputs = {"input_ids": tokens, "labels": tokens, "use_cache": False}
    optimizer = lambda params: torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1, fused=True)
    return {"model": model, "inputs": inputs, "loss_fn": lambda out: out.loss, "optimizer": optimizer}


if __name__ == "__main__":
    world = int(os.environ["WORLD_SIZE"])
    spec = audit_entry(world)

"""t24a (session 24): misses of the blind static splits test33 / test34 (TUNED): WarpDrive's CUDA backends and numba
launch, RWKV strategy strings (device + dtype, stacked string rules), CuPy handed on by a project module, DDP
compression hooks, scGPT's flash switch, `cudnn_enabled` settings, `include_cuda=True`, `deepspeed.__version__`, and
an environment read inside a message. Each test has a control that stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(src: bytes, path: str = "main.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in ENGINE.analyze_bytes(src, path).findings}


# warp-drive/warp_drive/training/scripts/example_training_script_numba.py and example_envs/.../acrobot.py
WARPDRIVE = b"""from warp_drive.env_wrapper import EnvWrapper
from example_envs.tag_continuous.tag_continuous import TagContinuous


def setup_trainer_and_train(run_config, num_envs):
    env_wrapper = EnvWrapper(
        env_obj=TagContinuous(**run_config["env"]),
        num_envs=num_envs,
        env_backend="numba",
        process_id=0,
    )
    other = EnvWrapper(env_obj=None, num_envs=num_envs, env_backend=run_config["backend"])
    return env_wrapper, other


class CUDAClassicControlAcrobotEnv:
    def step(self, actions=None):
        args = ["state", "_done_"]
        if self.env_backend == "numba":
            self.cuda_step[
                self.cuda_function_manager.grid, self.cuda_function_manager.block
            ](*self.cuda_step_function_feed(args))
        cuda_table = self.table[row, col](args)
"""


def test_warpdrive_backend_and_numba_launch():
    found = _codes(WARPDRIVE)
    assert (9, "NPU857") in found
    assert (20, "NPU375") in found
    assert not {line for line, code in found if code == "NPU857"} - {9}   # passed through / compared: quiet
    assert (23, "NPU375") not in found                                     # `table[row, col]` is no launch


# VisualRWKV-v6/v6.0/app/benchmark.py, VisualRWKV-v4/visualrwkv/model.py, app_gpu.py
RWKV = b"""import argparse
import torch.nn as nn
from rwkv.model import RWKV


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--strategy', type=str, default='cuda fp16')
    return parser.parse_args()


class VisualRWKV(nn.Module):
    def __init__(self, adapter, rwkv_model, model_name: str, max_length: int = 64, rnn_strategy: str = "cuda bf16"):
        super().__init__()
        self.rnn_strategy = rnn_strategy


model = RWKV(model="x.pth", strategy='cpu fp32')
print("use strategy cuda fp16 for speed")
"""


def test_rwkv_strategy_strings_are_device_and_dtype():
    found = _codes(RWKV)
    assert {(8, "NPU067"), (8, "NPU227"), (13, "NPU067"), (13, "NPU229")} <= found
    assert not {c for line, c in found if line in (18, 19)}


# spikingjelly/activation_based/cuda_kernel/neuron_kernel/single_step/integrate_and_fire.py (base.py does
# `try: import cupy` / `except ImportError: cupy = None`)
SPIKINGJELLY = b"""import numpy as np
import torch

from .base import (
    NeuronFPKernel,
    cfunction,
    cupy,
)
from .helpers import cp


def forward(ctx, x, v_th):
    if x.dtype == torch.float32:
        ctx.v_th = cupy.asarray(v_th, dtype=cupy.float32)
    return cp.asarray(v_th)
"""


def test_cupy_handed_on_by_a_project_module():
    found = _codes(SPIKINGJELLY)
    assert (14, "NPU414") in found
    assert (15, "NPU414") not in found       # another name from a project module stays the project's


# OpenTAD tools/train.py, omnivision_trainer.py
COMM_HOOKS = b"""import torch
from torch.distributed.algorithms.ddp_comm_hooks import default as comm_hooks
from torch.distributed.algorithms import ddp_comm_hooks


def wrap(model, fp16_compress, bf16):
    if fp16_compress:
        model.register_comm_hook(state=None, hook=comm_hooks.fp16_compress_hook)
    if bf16:
        hook = ddp_comm_hooks.default_hooks.bf16_compress_hook
    model.register_comm_hook(state=None, hook=comm_hooks.allreduce_hook)
"""


def test_ddp_compression_hooks():
    found = _codes(COMM_HOOKS)
    assert (8, "NPU228") in found and (10, "NPU226") in found
    assert not {c for line, c in found if line == 11}


# scGPT scgpt/tasks/cell_emb.py
SCGPT = b"""import torch
from scgpt.model import TransformerModel


def embed_data(adata, model_dir, batch_size=64, device="npu", use_fast_transformer: bool = True):
    model = TransformerModel(
        ntokens,
        use_fast_transformer=use_fast_transformer,
        fast_transformer_backend="flash",
    )
    slow = TransformerModel(ntokens, use_fast_transformer=False, fast_transformer_backend="linear")
    return model, slow
"""


def test_scgpt_flash_switch():
    found = _codes(SCGPT)
    assert {(5, "NPU859"), (9, "NPU856")} <= found
    assert not {c for line, c in found if line in (8, 11) and c in ("NPU859", "NPU856")}


# BasicTS src/basicts/configs/tsc_config.py; FlagGems-shaped aten parameter (control)
CUDNN = b"""from dataclasses import dataclass, field

import torch


@dataclass(init=False)
class BasicTSClassificationConfig:
    cudnn_enabled: bool = field(
        default=True, metadata={"help": "Whether to enable cuDNN."})
    cudnn_determinstic: bool = field(default=False)


def batch_norm(x, weight=None, bias=None, training=False, eps=1e-5, cudnn_enabled=True):
    cudnn_enabled = True
    return torch.batch_norm(x, weight, bias, None, None, training, 0.1, eps, cudnn_enabled=True)
"""


def test_cudnn_enabled_setting():
    found = _codes(CUDNN)
    assert (8, "NPU066") in found
    assert not {line for line, c in found if c == "NPU066"} - {8}


# actionformer_release / TriDet eval.py; VisualRWKV train.py; ProTrek scripts/generate_database.py
MISC = b"""import os
import deepspeed
from libs.utils import fix_random_seed

_ = fix_random_seed(0, include_cuda=True)
_ = fix_random_seed(0, include_cuda=False)
deepspeed_version = deepspeed.__version__
print(f"Specified devices: {os.environ['CUDA_VISIBLE_DEVICES']}")
print("set CUDA_VISIBLE_DEVICES to pick devices")
print(os.environ.get('CUDA_HOME', 'CUDA_HOME is not set'))
"""


def test_seed_switch_version_read_and_env_read_in_message():
    found = _codes(MISC)
    assert {(5, "NPU068"), (7, "NPU418")} <= found
    assert not {c for line, c in found if line in (6, 9)}
    # t36a (lead decision 48; test68 labels `os.getenv('CUDA_HOME', None) is None` in a print `none`): a read that
    # cannot fail only shows the value; tk42 (decision 49, test99's ViDiT-Q label): so does the subscript read
    assert not {c for line, c in found if line in (8, 10)}

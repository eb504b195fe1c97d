"""t25e (session 25): misses of the blind static split test37 (TUNED): Apex AMP's loss scaling on an `amp` no import
binds, the `-DCUDA_HAS_FP16=1` head of Deformable-DETR-style nvcc lists, transformers' `_flash_attn_2_enabled`,
TorchScale's `flash_attention=True` defaults and `deepspeed.add_config_arguments`. Each test has a control that
stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(src: bytes, path: str = "main.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in ENGINE.analyze_bytes(src, path).findings}


# DensePhrases/train_query.py: `amp` is never imported in the file (the HF run_squad copy it came from did)
DENSEPHRASES = b"""import torch
from densephrases.utils.single_utils import load_encoder


def train_query_encoder(args, model, optimizer, scheduler, train_dataloader):
    for step, batch in enumerate(train_dataloader):
        loss = model(*batch)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        optimizer.step()
"""


def test_apex_amp_calls_on_an_unbound_name():
    codes = _codes(DENSEPHRASES)
    assert (9, "NPU817") in codes and (14, "NPU817") in codes


def test_amp_bound_by_an_import_is_read_through_it():
    apex = _codes(b"from apex import amp\nwith amp.scale_loss(loss, opt) as s:\n    s.backward()\n")
    assert (2, "NPU300") in apex and (2, "NPU817") not in apex
    mxnet = _codes(b"from mxnet.contrib import amp\nwith amp.scale_loss(loss, trainer) as s:\n    s.backward()\n")
    assert not any(code == "NPU817" for _, code in mxnet)
    # a loss scaler of the code base's own (fairseq-style) is not Apex
    own = _codes(b"def backward(self, loss):\n    loss = self.scaler.scale_loss(loss)\n    loss.backward()\n")
    assert not any(code == "NPU817" for _, code in own)


# VL-BERT/common/lib/roi_pooling/setup.py (the Deformable-DETR ops/setup.py shape): decision 18 labels the list once,
# on its first CUDA-only element
VLBERT_SETUP = b"""import torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    extension = CppExtension
    extra_compile_args = {"cxx": []}
    define_macros = []
    if torch.cuda.is_available() and CUDA_HOME is not None:
        extension = CUDAExtension
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
        ]
    return extension, extra_compile_args
"""


def test_cuda_has_fp16_define_heads_the_nvcc_list():
    assert (13, "NPU316") in _codes(VLBERT_SETUP, "setup.py")
    quiet = _codes(b'extra_compile_args = {"cxx": ["-O3", "-DHAS_FP16_CPU=1"]}\n', "setup.py")
    assert not any(code == "NPU316" for _, code in quiet)


# CEPE/data/calculate_logits.py, eval_lm.py: transformers 4.34's private FlashAttention-2 switch
CEPE = b"""import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main(args, model_dir):
    config = LlamaConfig.from_pretrained(model_dir)
    config._flash_attn_2_enabled = True
    model = LlamaForCausalLM.from_pretrained(model_dir, config=config, torch_dtype=torch.bfloat16)
    slow = LlamaConfig.from_pretrained(model_dir)
    slow._flash_attn_2_enabled = False
    return model, slow
"""


def test_private_flash_attn_2_switch():
    codes = _codes(CEPE)
    assert (7, "NPU357") in codes and not any(line == 10 for line, _ in codes)


# torchscale/examples/longvit/longvit.py: the model's constructor turns flash attention on by default
LONGVIT = b"""from torch import nn


class LongViT(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768, depth=12, num_heads=12,
                 drop_path_rate=0., norm_layer=nn.LayerNorm, flash_attention=True, dilated_ratio="[1,2,4,8,16]",
                 segment_length="[64,128,256,512,1024]", checkpoint_activations=False, **kwargs):
        super().__init__()
        self.flash_attention = flash_attention


def encoder(args, flash_attention=False):
    return LongViT(flash_attention=flash_attention)
"""


def test_flash_attention_default_on():
    codes = _codes(LONGVIT)
    assert (6, "NPU825") in codes
    assert not any(code == "NPU825" for line, code in codes if line != 6)


# contrastors/src/contrastors/train.py
CONTRASTORS = b"""from argparse import ArgumentParser

import deepspeed


def parse_args():
    parser = ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()
"""


def test_deepspeed_config_arguments():
    codes = _codes(CONTRASTORS)
    assert (9, "NPU418") in codes and not any(line == 8 for line, _ in codes)

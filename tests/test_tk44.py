"""tk44 (session 44; TUNED on test112, test113, test116): a package's NCCL module reached through an `nccl` segment
(NPU950: High-Flyer's `hfai.nccl.distributed`), hfai's operator swap (NPU951), a Triton attention implementation named
by an attention setting (NPU952, beside NPU855's kernel finding), CUDA build switch names in build scripts (NPU953:
NNPOps' ENABLE_CUDA). Each family with its nearest negatives, comments, docstrings and messages among them."""
from __future__ import annotations

from tests.test_tk38 import _at, _codes, _line

# OpenCastKit train_fourcastnet.py (trimmed)
HFAI_TRAIN = '''
import hfai
hfai.set_watchdog_time(21600)
import torch
import hfai.nccl.distributed as dist
from hfai.nn import to_hfai


def train(model, loader, local_rank):
    model = hfai.nn.to_hfai(model)
    # model = hfai.nn.to_hfai(model) keeps the torch layers when commented out
    for step, batch in enumerate(loader):
        loss = model(batch)
        dist.all_reduce(loss)
        if dist.get_rank() == 0 and hfai.client.receive_suspend_command():
            print("hfai.nccl.distributed: suspending")
            hfai.go_suspend()


def fast(model):
    return to_hfai(model, contiguous_param=False, verbose=True, inplace=True)
'''


def test_hfai_nccl_module_is_distributed_at_import_and_use():
    codes = _codes(HFAI_TRAIN, "train_fourcastnet.py")
    assert _at(codes, _line(HFAI_TRAIN, "import hfai.nccl.distributed as dist"), "NPU950")
    assert _at(codes, _line(HFAI_TRAIN, "dist.all_reduce(loss)"), "NPU950")


def test_hfai_operator_swap_is_third_party_and_cluster_calls_are_quiet():
    codes = _codes(HFAI_TRAIN, "train_fourcastnet.py")
    assert _at(codes, _line(HFAI_TRAIN, "model = hfai.nn.to_hfai(model)"), "NPU951")
    assert _at(codes, _line(HFAI_TRAIN, "return to_hfai(model"), "NPU951")
    for quiet in ("hfai.set_watchdog_time", "hfai.go_suspend()", "# model = hfai.nn.to_hfai", 'print("hfai.nccl'):
        assert not any(c[0] == _line(HFAI_TRAIN, quiet) for c in codes), quiet


def test_nccl_segment_is_a_dependency_part_only():
    src = '''
from .nccl import all_reduce_sum
from tests.nccl import fake_comm
from torch.cuda import nccl
from engine.distributed.device_communicators.pynccl import PyNcclCommunicator

comm = PyNcclCommunicator(group, device=device)
'''
    codes = _codes(src, "comm.py")
    assert not any(c[1] == "NPU950" and c[0] in (2, 3, 4) for c in codes)
    assert _at(codes, _line(src, "comm = PyNcclCommunicator"), "NPU950")


# keyformer-llm models/mpt-keyformer-lib/configuration_mpt.py (trimmed)
MPT = '''
"""A HuggingFace-style model configuration."""
from typing import Dict
from transformers import PretrainedConfig

attn_config_defaults: Dict = {
    "attn_type": "multihead_attention",
    "attn_pdrop": 0.0,
    "attn_impl": "triton",
    "qk_ln": False,
}


class MPTConfig(PretrainedConfig):
    def __init__(self, attn_config: Dict = attn_config_defaults):
        """attn_impl (str): The attention implementation to use. One of 'torch', 'flash', or 'triton'."""
        self.attn_config = attn_config
        if self.attn_config["attn_impl"] not in ["torch", "flash", "triton"]:
            raise ValueError(f"Unknown attn_impl={self.attn_config['attn_impl']}")
'''


def test_mpt_triton_attn_impl_is_attention_and_kernel():
    codes = _codes(MPT, "configuration_mpt.py")
    line = _line(MPT, '"attn_impl": "triton",')
    assert _at(codes, line, "NPU952") and _at(codes, line, "NPU855")
    for quiet in ("attn_impl (str)", 'not in ["torch", "flash", "triton"]', "Unknown attn_impl"):
        assert not any(c[0] == _line(MPT, quiet) for c in codes), quiet


def test_xformers_and_triton_values_of_one_attention_setting():
    src = '''
def build(attn_impl="xformers"):
    return attn_impl


block = Block(d_model=1024, attn_impl="triton")
other = Block(d_model=1024, attn_impl="torch")
fused = run(kernel_backend="triton")
'''
    codes = _codes(src, "blocks.py")
    assert _at(codes, _line(src, 'def build(attn_impl="xformers")'), "NPU897")
    assert not _at(codes, _line(src, 'def build(attn_impl="xformers")'), "NPU952")
    assert _at(codes, _line(src, 'attn_impl="triton")'), "NPU952")
    assert not any(c[0] == _line(src, 'attn_impl="torch")') for c in codes)
    assert not _at(codes, _line(src, 'kernel_backend="triton"'), "NPU952")


# NNPOps src/setup.py (trimmed)
NNPOPS_SETUP = '''
from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension
import os

# If ENABLE_CUDA is defined
enable_cuda_env = os.environ.get("ENABLE_CUDA")
if enable_cuda_env is not None:
    if enable_cuda_env not in ("0", "1"):
        raise ValueError(f"ENABLE_CUDA must be 0 or 1, got {enable_cuda_env}")
    use_cuda = enable_cuda_env == "1"
else:
    use_cuda = torch.cuda._is_compiled()

ExtensionType = CppExtension if not use_cuda else CUDAExtension
extensions = ExtensionType(
    name="NNPOps.libNNPOpsPyTorch",
    sources=sources,
    define_macros=[("ENABLE_CUDA", 1)] if use_cuda else [],
)
'''


def test_enable_cuda_switch_and_macro_in_a_build_script():
    codes = _codes(NNPOPS_SETUP, "setup.py")
    assert _at(codes, _line(NNPOPS_SETUP, 'os.environ.get("ENABLE_CUDA")'), "NPU953")
    assert _at(codes, _line(NNPOPS_SETUP, '("ENABLE_CUDA", 1)'), "NPU953")
    for quiet in ("# If ENABLE_CUDA", "ENABLE_CUDA must be 0 or 1"):
        assert not any(c[0] == _line(NNPOPS_SETUP, quiet) for c in codes), quiet


def test_plain_extension_build_with_use_cuda_macro():
    src = '''
from setuptools import setup
from setuptools.extension import Extension
import os

cuda_flag = os.getenv("ENABLE_CUDA", None)
define_macros = []
if cuda_flag is not None:
    sources.append("src/cufft_serial.cu")
    define_macros.append(("USE_CUDA", None))
setup(ext_modules=[Extension("fftlib", sources=sources, define_macros=define_macros)])
'''
    codes = _codes(src, "setup.py")
    assert _at(codes, _line(src, 'os.getenv("ENABLE_CUDA"'), "NPU953")
    assert _at(codes, _line(src, '("USE_CUDA", None)'), "NPU953")


def test_enable_cuda_in_a_service_is_no_build_switch():
    src = '''
import os
import torch
from fastapi import FastAPI

app = FastAPI()
ENABLE_CUDA = os.environ.get("ENABLE_CUDA", "0") == "1"
device = "cuda" if ENABLE_CUDA and torch.cuda.is_available() else "cpu"
'''
    codes = _codes(src, "app.py")
    assert not any(c[1] == "NPU953" for c in codes)

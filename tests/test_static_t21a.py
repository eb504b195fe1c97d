"""t21a (session 21): test23's misses: mmcv 1.x's CUDA wrappers and fp16 helpers, nvcc flags of kernel builds."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# OpenMMLab 1.x test tools as detection / segmentation repositories copy them (PVT, poolformer tools/test.py)
MM_TEST = b"""import mmcv
import torch
from mmcv.cnn import fuse_conv_bn
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel
from mmcv.runner import (get_dist_info, init_dist, load_checkpoint,
                         wrap_fp16_model)


def main(cfg, args, distributed):
    model = build_detector(cfg.model, test_cfg=cfg.get('test_cfg'))
    fp16_cfg = cfg.get('fp16', None)
    if fp16_cfg is not None:
        wrap_fp16_model(model)
    checkpoint = load_checkpoint(model, args.checkpoint, map_location='cpu')
    if not distributed:
        model = MMDataParallel(model, device_ids=[0])
    else:
        model = MMDistributedDataParallel(
            model.cuda(),
            device_ids=[torch.cuda.current_device()],
            broadcast_buffers=False)
"""

# mmdet_custom/apis/train.py: the fp16 optimizer hook of the train tool
MM_TRAIN = b"""from mmcv.parallel import MMDataParallel
from mmcv.runner import (HOOKS, DistSamplerSeedHook, EpochBasedRunner,
                         Fp16OptimizerHook, OptimizerHook, build_optimizer,
                         build_runner)


def train_detector(model, cfg, distributed=False):
    model = MMDataParallel(
        model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)
    fp16_cfg = cfg.get('fp16', None)
    if fp16_cfg is not None:
        optimizer_config = Fp16OptimizerHook(
            **cfg.optimizer_config, **fp16_cfg, distributed=distributed)
    else:
        optimizer_config = OptimizerHook(**cfg.optimizer_config)
"""


def test_mmcv_data_parallel_wrappers_are_device_findings():
    assert _lines(MM_TEST, "NPU069") == [4, 16, 18]
    assert _lines(MM_TRAIN, "NPU069") == [1, 8]


def test_mmcv_fp16_helpers_are_precision_findings():
    # a multi-line from-import reports on its `from` line (the static bench's convention; test23 labels the name's line)
    assert _lines(MM_TEST, "NPU276") == [5, 13]
    assert _lines(MM_TRAIN, "NPU276") == [2, 12]


def test_mmengine_and_npu_wrappers_are_not_reported():
    src = (b"from mmcv.device.npu import NPUDataParallel\nfrom mmengine.model import MMDistributedDataParallel\n"
           b"model = NPUDataParallel(model, device_ids=[0])\nddp = MMDistributedDataParallel(module=model)\n")
    assert _lines(src, "NPU069") == []


# Pointnet2_PyTorch / pointMLP pointnet2_utils.py: the JIT build of the extension when the compiled one is missing
POINTNET2_LOAD = b"""import glob
import os.path as osp
from torch.utils.cpp_extension import load

_ext_src_root = osp.join(osp.dirname(__file__), "_ext-src")
_ext_sources = glob.glob(osp.join(_ext_src_root, "src", "*.cpp"))
_ext = load(
    "_ext",
    sources=_ext_sources,
    extra_include_paths=[osp.join(_ext_src_root, "include")],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "-Xfatbin", "-compress-all"],
    with_cuda=True,
)
"""


def test_nvcc_keywords_on_their_own_lines_of_a_load_call():
    assert _lines(POINTNET2_LOAD, "NPU370") == [3, 7]
    assert _lines(POINTNET2_LOAD, "NPU369") == [12, 13]


def test_nvcc_keywords_on_the_load_line_stay_one_finding():
    src = b"from torch.utils.cpp_extension import load\nm = load('m', ['a.cu'], extra_cuda_cflags=['-O3'], with_cuda=True)\n"
    assert _lines(src, "NPU369") == []
    assert _lines(src, "NPU370") == [1, 2]


def test_cpu_only_load_keywords_are_not_reported():
    src = (b"from torch.utils.cpp_extension import load\n"
           b"m = load(\n    'm',\n    sources=['a.cpp'],\n    with_cuda=False,\n    extra_cuda_cflags=None,\n)\n")
    assert _lines(src, "NPU369") == []


# CenterPoint det3d/utils/buildtools/command.py: nvcc's command line as one string
CENTERPOINT_NVCC = b"""class CUDAModule(Gpp):
    def __init__(self, sources, target, arch=None, cflags=None):
        if arch is None:
            arch = find_cuda_device_arch()
        cflags = (
            cflags or f"-x cu -Xcompiler -fPIC -arch={arch} --expt-relaxed-constexpr"
        )
        host_flags = "-fPIC -O3"
        super().__init__(sources, target, cflags)
"""


def test_nvcc_flags_inside_a_command_string():
    assert _lines(CENTERPOINT_NVCC, "NPU369") == [6]


def test_host_compiler_flags_and_messages_are_not_nvcc_flags():
    src = (b'cflags = "-O3 -fPIC -march=native -x c++"\n'
           b'print("rebuild with --use_fast_math -gencode arch=compute_80,code=sm_80")\n')
    assert _lines(src, "NPU369") == []


def test_a_flag_the_value_names_is_the_lines_one_finding():
    # duo-attention demo/int4_kv.py: the flag string carries the line; the keyword adds nothing
    src = (b'from torch.utils.cpp_extension import load\nmodule = load(\n    name="quantize_int4",\n'
           b'    sources=["demo/quantize_int4.cu"],\n    extra_cuda_cflags=["--use_fast_math"],\n)\n')
    findings = [f for f in ENGINE.analyze_bytes(src, "main.py").findings if f.code == "NPU369"]
    assert [(f.line, f.symbol) for f in findings] == [(5, "--use_fast_math")]


def test_other_keywords_of_a_reported_call_stay_with_the_call():
    # nnsight modeling/quantization.py: the bitsandbytes config is the finding, not each of its switches
    src = (b"from transformers import BitsAndBytesConfig\n\ndef nf4():\n    return BitsAndBytesConfig(\n"
           b"        load_in_4bit=True,\n        bnb_4bit_quant_type='nf4',\n    )\n")
    lines = sorted({f.line for f in ENGINE.analyze_bytes(src, "main.py").findings})
    assert 5 not in lines and 4 in lines

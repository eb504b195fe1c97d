"""tk43 (session 43; TUNED on test105, test106, test109): the gpuinfo GPU-query package (NPU406), a CUDA probe
replaced to hide the GPU, NVIDIA product names compared with a probe's answer (NPU948), detectron2's collect_env
(torch's nvidia-smi probes, an nvcc run through a path name, `test_nccl_ops()`, values only shown in report rows),
and the `bfloat16=True` switch (NPU246). Each family with its nearest negatives."""
from __future__ import annotations

from tests.test_tk38 import _at, _codes, _line

# LAVISH AVE/main_trans.py (trimmed)
LAVISH = '''
import torch
import numpy as np
from gpuinfo import GPUInfo
import os

mygpu = GPUInfo.get_info()[0]
gpu_index = []
for key in mygpu.keys():
    gpu_index.append(key)
free = GPUInfo.check_empty()
# GPUInfo.get_info() lists the busy GPUs
print("GPUInfo.check_empty() found no free GPU")
'''


def test_gpuinfo_calls_and_import_are_nvml_queries():
    codes = _codes(LAVISH, "main_trans.py")
    for needle in ("from gpuinfo import", "GPUInfo.get_info()[0]", "free = GPUInfo.check_empty()"):
        assert _at(codes, _line(LAVISH, needle), "NPU406"), needle
    assert not any(c[0] == _line(LAVISH, "# GPUInfo.get_info()") for c in codes)
    assert not any(c[0] == _line(LAVISH, 'print("GPUInfo') for c in codes)


def test_gpuinfo_nvidia_module_and_alias():
    src = '''
from gpuinfo.nvidia import get_gpus
from gpuinfo import GPUInfo as gp

for gpu in get_gpus():
    print(gpu.total_memory)
percent, memory = gp.gpu_usage()
'''
    codes = _codes(src)
    assert _at(codes, _line(src, "for gpu in get_gpus()"), "NPU406")
    assert _at(codes, _line(src, "gp.gpu_usage()"), "NPU406")


def test_a_project_module_named_like_a_gpu_package_is_not_one():
    src = '''
from .gpuinfo import summary
from mlir.dialects import nvgpu

rows = summary()
'''
    assert not any(c[1] == "NPU406" for c in _codes(src))


# bayesian-torch bayesian_torch/examples/main_bayesian_imagenet_bnn2qbnn.py (trimmed)
HIDE = '''
import os
import torch

torch.cuda.is_available = lambda : False
os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
torch.backends.quantized.engine = 'onednn'
'''


def test_a_probe_replaced_to_hide_the_gpu_is_reported_as_info():
    codes = _codes(HIDE, "main.py")
    line = _line(HIDE, "torch.cuda.is_available = lambda")
    assert (line, "NPU002", "info") in codes
    src = '''
import torch

torch.cuda.device_count = lambda: 0
'''
    assert (_line(src, "device_count = lambda"), "NPU002", "info") in _codes(src)


def test_a_probe_faked_or_ported_stays_quiet():
    # auto-round's HPU shim fakes CUDA; a port maps the probe onto torch.npu; a capability override is a mock
    src = '''
import torch

class fake_cuda_for_hpu:
    def __enter__(self):
        self._orig_is_available = torch.cuda.is_available
        torch.cuda.is_available = lambda: True
        return self

torch.cuda.current_stream = torch.npu.current_stream
torch.cuda.get_device_capability = _override_capability
'''
    codes = _codes(src)
    for needle in ("torch.cuda.is_available = lambda: True", "current_stream = torch.npu", "= _override_capability"):
        assert not any(c[0] == _line(src, needle) for c in codes), needle


# deita setup.py (trimmed)
DEITA = '''
import subprocess

try:
  gpu_state = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
  if b"A100" or b"A40" or b"H100" or b"A800" or b"H800" in gpu_state:
    subprocess.call(["pip", "install", "flash-attn==2.3.3", "--no-build-isolation"])
except:
  pass
'''


def test_product_names_compared_with_nvidia_smi_output():
    codes = _codes(DEITA, "setup.py")
    assert _at(codes, _line(DEITA, 'if b"A100"'), "NPU948")


def test_product_names_compared_with_the_device_name():
    src = '''
import torch

gpu = torch.cuda.get_device_name(0)
if "A100" in gpu:
    SMS = 108
elif "A10" in gpu:
    SMS = 72


class RVC:
    def __init__(self, i):
        self.gpu_name = torch.cuda.get_device_name(i)
        if "16" in self.gpu_name and "V100" not in self.gpu_name.upper():
            self.is_half = False


is_t4 = "Tesla T4" in torch.cuda.get_device_name(0)
'''
    codes = _codes(src)
    for needle in ('if "A100" in gpu', 'elif "A10" in gpu', '"V100" not in', 'is_t4 ='):
        assert _at(codes, _line(src, needle), "NPU948"), needle


def test_product_names_outside_a_probe_comparison_are_quiet():
    # dstack's GCP catalogue and KernelBench's Modal GPU choice compare an offer, not the device probed
    src = '''
import torch

gpu = torch.cuda.get_device_name(0)


def machine_type(offer):
    if offer.name == "A100" and offer.memory_mib == 80 * 1024:
        return "a2-ultragpu"


def evaluator(config):
    return Modal if config.gpu != "A10G" else Local


GPUS = ["A100", "H100"]
# "A100" in torch.cuda.get_device_name() picks the tile table
print("running on A100" if "x" else "")
'''
    assert not any(c[1] == "NPU948" for c in _codes(src))


# ODISE odise/utils/collect_env.py (detectron2's collect_env, trimmed)
COLLECT_ENV = '''
import os
import subprocess
import sys

import torch
from detectron2.utils.collect_env import test_nccl_ops


def collect_env_info():
    from torch.utils.cpp_extension import CUDA_HOME

    data = []
    try:
        import detectron2._C as _C
    except ImportError:
        if CUDA_HOME is not None:
            try:
                nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")
                nvcc = subprocess.check_output("'{}' -V".format(nvcc), shell=True)
                nvcc = nvcc.decode("utf-8").strip().split("\\n")[-1]
            except subprocess.SubprocessError:
                nvcc = "Not found"
            data.append(("CUDA compiler", nvcc))
    else:
        data.append(("CUDA compiler", _C.get_cuda_version()))  # cuda or hip
    try:
        from torch.utils.collect_env import get_nvidia_driver_version, run as _run

        data.append(("Driver version", get_nvidia_driver_version(_run)))
    except Exception:
        pass
    msg = " - invalid!" if not (CUDA_HOME and os.path.isdir(CUDA_HOME)) else ""
    data.append(("CUDA_HOME", str(CUDA_HOME) + msg))

    cuda_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)
    if cuda_arch_list:
        data.append(("TORCH_CUDA_ARCH_LIST", cuda_arch_list))
    return data


if __name__ == "__main__":
    print(collect_env_info())
    if torch.cuda.device_count() > 1:
        test_nccl_ops()
'''


def test_collect_env_probes_are_found():
    codes = _codes(COLLECT_ENV, "odise/utils/collect_env.py")
    assert _at(codes, _line(COLLECT_ENV, "\"'{}' -V\".format(nvcc)"), "NPU407")
    assert _at(codes, _line(COLLECT_ENV, "get_nvidia_driver_version(_run)))"), "NPU407")
    assert _at(codes, _line(COLLECT_ENV, "        test_nccl_ops()"), "NPU103")


def test_collect_env_rows_that_only_show_a_value_are_quiet():
    codes = _codes(COLLECT_ENV, "odise/utils/collect_env.py")
    for needle in ("_C.get_cuda_version()", 'msg = " - invalid!"', 'data.append(("CUDA_HOME"',
                   'cuda_arch_list = os.environ.get'):
        assert not any(c[0] == _line(COLLECT_ENV, needle) for c in codes), needle


def test_a_value_read_for_more_than_a_report_keeps_its_finding():
    src = '''
import os


def build_env():
    data = []
    cuda_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)
    data.append(("TORCH_CUDA_ARCH_LIST", cuda_arch_list))
    os.environ["TORCH_CUDA_ARCH_LIST"] = cuda_arch_list or "8.0"
    return data
'''
    codes = _codes(src)
    assert any(c[0] == _line(src, "cuda_arch_list = os.environ.get") for c in codes)


def test_an_nvcc_path_only_built_is_not_a_run():
    src = '''
import os
import subprocess
from torch.utils.cpp_extension import CUDA_HOME

nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")
out = subprocess.check_output(["git", "rev-parse", "HEAD"])
print(f"nvcc at {nvcc}")
'''
    codes = _codes(src)
    assert not any(c[1] == "NPU407" and c[0] == _line(src, "git") for c in codes)


def test_bfloat16_switch_passed_to_a_pipeline():
    src = '''
embed_pipeline = Pipeline("embed_pipeline",
                          data_path = args.data_path,
                          max_length = args.max_length,
                          bfloat16 = True
                          )
off = Pipeline("embed_pipeline", bfloat16 = False)
print("bfloat16 = True")
'''
    codes = _codes(src)
    assert _at(codes, _line(src, "bfloat16 = True\n"[:-1]), "NPU246")
    assert not any(c[0] == _line(src, "bfloat16 = False") for c in codes)
    assert not any(c[0] == _line(src, 'print("bfloat16') for c in codes)

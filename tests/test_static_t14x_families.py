"""t14x (issue 14, session 14, tuned on static test16): a `--no-cuda` switch that leaves CUDA the default (NPU081),
Caffe2's CUDA device option (NPU082), `torch.Tensor.cuda` intercepted by name (NPU083), KeOps' GPU backends by name
(NPU084), the CUDA driver API through ctypes (NPU452), transformers' FP8 configs (NPU234), TileLang imports and
`@T.macro` (NPU820), sm_XX architecture literals (NPU821), each with the shapes that must stay quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import codes_by_line

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def codes(src: str, name: str = "train.py") -> dict[int, set[str]]:
    return codes_by_line(ENGINE, src, name)


VALIDATE = '''\
import argparse

import torch

parser = argparse.ArgumentParser(description="PyTorch ImageNet Validation")
parser.add_argument("data", metavar="DIR", help="path to dataset")
parser.add_argument("--no-cuda", dest="no_cuda", action="store_true",
                    help="disable GPU usage")
parser.add_argument("--no-test-pool", dest="no_test_pool", action="store_true",
                    help="disable test time pool")


def main():
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    if args.no_test_pool:
        return None
    return args
'''


def test_no_cuda_store_true_switch_is_reported_on_the_option():
    found = codes(VALIDATE)
    assert "NPU081" in found.get(7, set())
    assert not any("NPU081" in c for line, c in found.items() if line != 7)


def test_no_cuda_switch_defaulting_on_or_store_false_is_quiet():
    on = VALIDATE.replace('action="store_true",\n                    help="disable GPU usage"',
                          'action="store_true", default=True,\n                    help="disable GPU usage"')
    off = VALIDATE.replace('dest="no_cuda", action="store_true"', 'dest="no_cuda", action="store_false"')
    assert not any("NPU081" in c for c in codes(on).values())
    assert not any("NPU081" in c for c in codes(off).values())


def test_no_cuda_switch_never_read_is_quiet():
    unread = VALIDATE.replace("args.cuda = not args.no_cuda and torch.cuda.is_available()", "args.cuda = True")
    assert not any("NPU081" in c for c in codes(unread).values())


CAFFE2 = '''\
from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace


def run(args, init_net, predict_net):
    model = model_helper.ModelHelper(name="validation_net", init_params=False)
    if args.gpu_id is not None:
        device_opts = core.DeviceOption(caffe2_pb2.PROTO_CUDA, args.gpu_id)
        model.net.RunAllOnGPU(gpu_id=args.gpu_id, use_cudnn=True)
        model.param_init_net.RunAllOnGPU(gpu_id=args.gpu_id, use_cudnn=True)
    else:
        device_opts = core.DeviceOption(caffe2_pb2.PROTO_CPU)
    workspace.RunNetOnce(model.param_init_net)
    return device_opts
'''


def test_caffe2_cuda_device_option_and_gpu_moves():
    found = codes(CAFFE2)
    assert {line for line, c in found.items() if "NPU082" in c} == {8, 9, 10}


INTERCEPT = '''\
import torch


class MetaMixin:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.Tensor.cpu, torch.Tensor.cuda, torch.Tensor.pin_memory):
            return args[0]
        return func(*args, **(kwargs or {}))


def move(x):
    return x.cuda(non_blocking=True)
'''


def test_tensor_cuda_referenced_is_not_the_call_rule():
    found = codes(INTERCEPT)
    assert "NPU083" in found[7]
    assert "NPU083" not in found.get(13, set())


DRIVER = '''\
import ctypes
import ctypes.util
import functools
import sys


@functools.cache
def _libcuda():
    name = "nvcuda.dll" if sys.platform == "win32" else (ctypes.util.find_library("cuda") or "libcuda.so.1")
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    return lib if lib.cuInit(0) == 0 else None


def _driver_attrs(index, attrs):
    lib = _libcuda()
    if lib is None:
        return {}
    dev = ctypes.c_int()
    if lib.cuDeviceGet(ctypes.byref(dev), index) != 0:
        return {}
    out = {}
    for field, attr in attrs.items():
        value = ctypes.c_int()
        if lib.cuDeviceGetAttribute(ctypes.byref(value), attr, dev) == 0:
            out[field] = value.value
    return out


def running_sum(x):
    return x.cumsum(0)
'''


def test_cuda_driver_api_through_ctypes():
    found = codes(DRIVER)
    assert {line for line, c in found.items() if "NPU452" in c} == {14, 22, 27}


TILELANG = '''\
import threading

import tilelang
import tilelang.language as T  # noqa: N812
import torch


def _pass_configs(arch: str) -> dict:
    if arch == "sm_90":
        return {}
    return {"tl.disable_warp_specialized": True}


def merge_prim(m, n, rank, bm, bn):
    @T.macro
    def product(up, down, bx, by, acc):
        u_s = T.alloc_shared((bm, rank), "float16")
        T.gemm(u_s, down, acc)
    return product


def log_arch(arch):
    print(f"building for {arch}, e.g. sm_90")
'''


def test_tilelang_internals_imported_by_a_compiler_adapter_are_quiet():
    src = """\
class AdapterWrapper:
    def __init__(self) -> None:
        from tilelang import tvm as tvm
        from tilelang.engine.param import KernelParam

        self.params: list[KernelParam] = []
"""
    assert not any("NPU820" in c for c in codes(src).values())


def test_tilelang_imports_macro_and_arch_literal():
    found = codes(TILELANG)
    assert "NPU820" in found[4] and "NPU820" in found[15]
    assert "NPU820" not in found.get(3, set())      # `import tilelang` alone: not reported
    assert not found.get(18)                         # a kernel-body line: the decorator carries the kernel
    assert "NPU821" in found[9]
    assert not found.get(23)


def test_fp8_config_and_keops_backend():
    src = '''\
from transformers import AutoModelForCausalLM, FineGrainedFP8Config


def load(name, fn, q, s):
    model = AutoModelForCausalLM.from_pretrained(name, quantization_config=FineGrainedFP8Config())
    return model, fn(q, s, backend="GPU_1D"), fn(q, s, backend="CPU")
'''
    found = codes(src)
    assert "NPU234" in found[5] and "NPU234" not in found.get(1, set())   # the config built, not its import
    assert "NPU084" in found[6]
    assert sum("NPU084" in c for c in found.values()) == 1


def test_tilelang_dsl_in_a_file_written_for_ascend_is_quiet():
    src = """\
import tilelang
import tilelang.language as T


@T.macro
def load_tile(src, dst, row):
    T.copy(src[row, 0], dst)
"""
    assert "NPU820" in codes(src, "kernels/cuda/rope.py")[2]
    assert not any("NPU820" in c for c in codes(src, "xllm/compiler/tilelang/targets/ascend/kernels/rope.py").values())

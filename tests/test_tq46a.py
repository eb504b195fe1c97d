"""Precision fixes of tq46a (session 46, tuned on heldout53's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

from tests.test_tq38 import _in, _tree

# -- keys of a CUDA-to-HIP rename table (hipify's mappings) are not environment variables ------------------------------

RENAMES = """\
import collections

from .constants import API_DRIVER, API_RUNTIME, CONV_TYPE, HIP_UNSUPPORTED

CUDA_IDENTIFIER_MAP = collections.OrderedDict(
    [
        ("cudaMalloc", ("hipMalloc", CONV_TYPE, API_RUNTIME)),
        (
            "CUDA_ERROR_NOT_MAPPED",
            ("hipErrorNotMapped", CONV_TYPE, API_DRIVER),
        ),
        (
            "CUDA_POINTER_ATTRIBUTE_P2P_TOKENS",
            (
                "HIP_POINTER_ATTRIBUTE_P2P_TOKENS",
                CONV_TYPE,
                API_DRIVER,
                HIP_UNSUPPORTED,
            ),
        ),
        ("CUBLAS_OP_T", ("HIPSOLVER_OP_T", CONV_TYPE, API_RUNTIME)),
    ]
)

ENV_TO_HIP = {"CUDA_R_16F": "HIP_R_16F", "CUDA_R_32F": "HIP_R_32F", "CUDA_C_32F": "HIP_C_32F"}
"""

CHILD_ENV = """\
import os
import subprocess

env = {"CUDA_VISIBLE_DEVICES": "0", "CUDA_LAUNCH_BLOCKING": "1", "CUDA_CACHE_MAXSIZE": "2147483648"}
subprocess.run(["python", "train.py"], env={**os.environ, **env})
flag = os.environ.get("CUDA_MY_PROJECT_FLAG")
"""


def test_keys_of_a_rename_table_are_not_environment_variables(tmp_path):
    found = _tree(tmp_path / "a", {"hipify/cuda_to_hip_mappings.py": RENAMES})
    assert not any("NPU004" in codes for codes in _in(found, "cuda_to_hip_mappings.py").values())


def test_an_environment_dict_keeps_its_variables(tmp_path):
    found = _in(_tree(tmp_path / "a", {"launch.py": CHILD_ENV}), "launch.py")
    assert "NPU004" in found.get(4, {}) and "NPU004" in found.get(6, {})


# -- a script's own shell variable read back is no environment variable ------------------------------------------------

WHEEL_SCRIPT = """\
#!/bin/bash
set -e
mkdir -p build && cd build
CUDA_ARCH_LIST="70-real;80-real;90-real"
cmake .. \\
    -DUSE_CUDA=ON \\
    -DCUDA_ARCH="${CUDA_ARCH_LIST}" \\
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH_LIST}"
make -j
"""

EXPORTED_SCRIPT = """\
#!/bin/bash
CUDA_ARCH_LIST="70-real;80-real"
export CUDA_ARCH_LIST
cmake .. -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH_LIST}"
python setup.py build --arch "${CUDA_SETUP_ARCHS}"
"""


def test_a_script_variable_read_back_is_not_an_environment_variable(tmp_path):
    found = _in(_tree(tmp_path / "a", {"make_whl.sh": WHEEL_SCRIPT}), "make_whl.sh")
    assert not any("NPU004" in found.get(line, {}) for line in (7, 8))


def test_an_exported_or_inherited_variable_keeps_its_read(tmp_path):
    found = _in(_tree(tmp_path / "a", {"build.sh": EXPORTED_SCRIPT}), "build.sh")
    assert "NPU004" in found.get(4, {}) and "NPU004" in found.get(5, {})


# -- a Python module a CMake build makes with CUDA only under an option that defaults OFF --------------------------------

CMAKE_OPTIONAL_CUDA = """\
cmake_minimum_required(VERSION 3.10)
project(engine LANGUAGES CXX)
option(USE_CUDA "use CUDA" OFF)
set(ENGINE_SOURCES src/engine.cpp src/devices/cpu/cpudevice.cpp)
if (USE_CUDA)
    enable_language(CUDA)
    set(ENGINE_CUDA_SOURCES src/devices/cuda/cudadevice.cu)
endif()
if (PY_API)
    add_subdirectory(third_party/pybind11)
    add_library(pyengine MODULE src/pybinding.cpp ${ENGINE_SOURCES} ${ENGINE_CUDA_SOURCES})
    target_link_libraries(pyengine PUBLIC pybind11::module)
endif()
"""

CMAKE_CUDA_ALWAYS = CMAKE_OPTIONAL_CUDA.replace('option(USE_CUDA "use CUDA" OFF)', 'option(USE_CUDA "use CUDA" ON)')

OPS = """\
import pyengine


def rms_norm(inputs: pyengine.Tensor, weights: pyengine.Tensor, eps: float = 1e-5):
    output = pyengine.Tensor()
    pyengine.rms_norm(inputs, weights, eps, output)
    return output
"""


def test_a_module_built_with_cuda_only_under_an_off_option_is_no_cuda_build(tmp_path):
    found = _tree(tmp_path / "a", {"CMakeLists.txt": CMAKE_OPTIONAL_CUDA, "python/ops.py": OPS})
    assert not any("NPU320" in codes for codes in _in(found, "ops.py").values())


def test_a_module_built_with_cuda_on_by_default_keeps_its_pointer(tmp_path):
    found = _tree(tmp_path / "a", {"CMakeLists.txt": CMAKE_CUDA_ALWAYS, "python/ops.py": OPS})
    assert any("NPU320" in codes for codes in _in(found, "ops.py").values())


# -- headers of a copied CUDA library that only the CUDA member of a per-backend set includes ---------------------------

MEMBER_CU = """\
#include "devices/cuda/cudadevice.h"
#include "attention/mla.cuh"
#include <gemm_lib/impls/fp8_gemm.cuh>

__global__ void FastllmAddKernel(float *a, float *b, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) a[i] += b[i];
}
"""
CPU_CPP = """\
#include "devices/cpu/cpudevice.h"
#include "utils/common.h"

void CpuAdd(float *a, float *b, int len) { for (int i = 0; i < len; i++) a[i] += b[i]; }
"""
MLA = """\
#pragma once
#include <cuda.h>
#include "mla_params.cuh"

template <typename T>
__global__ void MlaKernel(T *q, T *k, int n) { q[threadIdx.x] += k[threadIdx.x]; }
"""
MLA_PARAMS = """\
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

struct MlaParams { cudaStream_t stream; int num_heads; };
"""
FP8_GEMM = """\
#pragma once
#include <cute/tensor.hpp>
#include <gemm_lib/common/math.cuh>

template <int BLOCK_M>
__global__ void fp8_gemm_kernel(float *out) { out[threadIdx.x] = 0; }
"""
MATH = """\
#pragma once
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffff, v, mask);
    return v;
}
"""
COMMON = """\
#pragma once
#include <cuda_runtime.h>

inline void check(cudaError_t e) { if (e != cudaSuccess) throw e; }
"""


def _engine(extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {"src/devices/cuda/cudadevice.cu": MEMBER_CU, "src/devices/cpu/cpudevice.cpp": CPU_CPP,
             "include/devices/cuda/cudadevice.h": "#pragma once\n#include <cuda_runtime.h>\n",
             "include/devices/cpu/cpudevice.h": "#pragma once\n",
             "third_party/flashinfer/attention/mla.cuh": MLA,
             "third_party/flashinfer/attention/mla_params.cuh": MLA_PARAMS,
             "third_party/gemm_lib/include/gemm_lib/impls/fp8_gemm.cuh": FP8_GEMM,
             "third_party/gemm_lib/include/gemm_lib/common/math.cuh": MATH,
             "include/utils/common.h": COMMON}
    files.update(extra or {})
    return files


def test_headers_only_the_cuda_member_includes_are_part_of_it(tmp_path):
    found = _tree(tmp_path / "a", _engine())
    for header in ("mla.cuh", "mla_params.cuh", "fp8_gemm.cuh", "common/math.cuh"):
        codes = _in(found, header)
        assert codes and all(set(c.values()) == {"info"} for c in codes.values()), header


def test_a_header_another_source_includes_keeps_its_findings(tmp_path):
    found = _tree(tmp_path / "a", _engine({"tools/bench/gemm_bench.cu": '#include "gemm_lib/common/math.cuh"\n'}))
    assert "error" in {s for c in _in(found, "common/math.cuh").values() for s in c.values()}


# -- a copied binding whose own setup.py builds a CPU extension without CUDA (policy (n), warp-ctc) ---------------------

WARP_SETUP = """\
import os
from setuptools import setup, find_packages

from torch.utils.cpp_extension import BuildExtension, CppExtension
import torch

extra_compile_args = ['-std=c++14', '-fPIC']
if torch.cuda.is_available() or "CUDA_HOME" in os.environ:
    enable_gpu = True
else:
    print("Torch was not built with CUDA support, not building warp-ctc GPU extensions.")
    enable_gpu = False

if enable_gpu:
    from torch.utils.cpp_extension import CUDAExtension

    build_extension = CUDAExtension
    extra_compile_args += ['-DWARPCTC_ENABLE_GPU']
else:
    build_extension = CppExtension

ext_modules = [
    build_extension(
        name='warpctc_pytorch._warp_ctc',
        language='c++',
        sources=['src/binding.cpp'],
        libraries=['warpctc'],
        extra_compile_args=extra_compile_args,
    )
]

setup(name="warpctc_pytorch", packages=find_packages(), ext_modules=ext_modules,
      cmdclass={'build_ext': BuildExtension})
"""
WARP_INIT = """\
import torch
import warpctc_pytorch as warp_ctc
from torch.autograd import Function

from ._warp_ctc import *  # noqa


class _CTC(Function):
    @staticmethod
    def forward(ctx, acts, labels, act_lens, label_lens):
        loss_func = warp_ctc.gpu_ctc if acts.is_cuda else warp_ctc.cpu_ctc
        grads = torch.zeros(acts.size()).type_as(acts)
        costs = torch.zeros(acts.size(1)).cpu()
        loss_func(acts, grads, labels, label_lens, act_lens, acts.size(1), costs, 0)
        return costs.sum()
"""
LOSS = """\
import torch.nn as nn
from warpctc_pytorch import CTCLoss


class WarpCTCLoss(nn.Module):
    def __init__(self, blank=0):
        super().__init__()
        self.criterion = CTCLoss(blank=blank, size_average=False)

    def forward(self, logits, targets, logits_len, targets_len):
        return self.criterion(logits, targets, logits_len, targets_len)
"""
TRAIN = """\
import argparse

from ocr.losses import WarpCTCLoss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    args = parser.parse_args()
    print(WarpCTCLoss(), args.config)


if __name__ == "__main__":
    main()
"""
TRAIN_SH = "#!/bin/bash\npython tools/train.py configs/crnn.py\n"


def _ocr(with_setup: bool) -> dict[str, str]:
    files = {"ocr/__init__.py": "", "ocr/losses.py": LOSS, "tools/train.py": TRAIN, "train.sh": TRAIN_SH,
             "third_party/warp-ctc/pytorch_binding/warpctc_pytorch/__init__.py": WARP_INIT}
    if with_setup:
        files["third_party/warp-ctc/pytorch_binding/setup.py"] = WARP_SETUP
    return files


def test_a_binding_built_for_the_cpu_without_cuda_imports_on_ascend(tmp_path):
    found = _tree(tmp_path / "a", _ocr(True))
    loss = _in(found, "ocr/losses.py")
    assert loss.get(2, {}).get("NPU416") == "info"
    assert not any("NPU436" in codes for codes in _in(found, "train.sh").values())
    assert _in(found, "pytorch_binding/setup.py").get(8, {}).get("NPU002") == "info"
    init = _in(found, "warpctc_pytorch/__init__.py")
    assert init.get(2, {}).get("NPU416") == "info"


def test_a_binding_without_its_build_file_still_fails_at_import(tmp_path):
    found = _tree(tmp_path / "a", _ocr(False))
    assert _in(found, "ocr/losses.py").get(2, {}).get("NPU416") == "error"
    assert any("NPU436" in codes for codes in _in(found, "train.sh").values())


# -- a CUDA-named variable the tree's own code compares is the tree's own switch ----------------------------------------

LAYERS = """\
import os

import torch


class LinearWithGradAccumulation(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad_output):
        if ctx.sequence_parallel:
            handle = torch.distributed.all_gather_into_tensor(ctx.buffer, ctx.input, async_op=True)
            if os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS') == "1":
                handle.wait()
        return grad_output
"""
PROFILE_SH = """\
#!/bin/bash
CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 1 train_dist.py --profile 1
export CUDA_LAUNCH_BLOCKING=1
"""
OTHER_READ = """\
import os

blocking = os.environ.get("CUDA_LAUNCH_BLOCKING")
print("blocking:", blocking)
"""


VISIBLE = """\
import os

if 'CUDA_VISIBLE_DEVICES' not in os.environ or os.environ['CUDA_VISIBLE_DEVICES'] == '0,1,2,3':
    os.environ['CUDA_VISIBLE_DEVICES'] = '0'
"""


def test_a_device_visibility_variable_the_tree_compares_keeps_its_finding(tmp_path):
    found = _in(_tree(tmp_path / "a", {"api/hf_chat_model.py": VISIBLE}), "hf_chat_model.py")
    assert found.get(3, {}).get("NPU004") not in (None, "info")


def test_a_variable_the_tree_compares_is_its_own_switch(tmp_path):
    found = _tree(tmp_path / "a", {"model/layers.py": LAYERS, "scripts/profile.sh": PROFILE_SH,
                                   "model/debug.py": OTHER_READ})
    assert _in(found, "layers.py").get(11, {}).get("NPU004") == "info"
    script = _in(found, "profile.sh")
    assert script.get(2, {}).get("NPU004") == "info"
    assert script.get(3, {}).get("NPU004") not in (None, "info")     # a variable nothing compares keeps its finding


# -- a library name tested in a preload loop's bookkeeping loads nothing -------------------------------------------------

PRELOAD = """\
import ctypes


def _preload_cuda_runtime_dependencies():
    unresolved = {"libcudart.so.12", "libnccl.so.2"}
    for libname in ["libcudart.so.12", "libnccl.so.2"]:
        try:
            ctypes.CDLL(libname, mode=ctypes.RTLD_GLOBAL)
            if libname.startswith("libcudart.so.12"):
                unresolved.discard("libcudart.so.12")
            elif libname.startswith("libnccl.so.2"):
                unresolved.discard(libname)
        except OSError:
            continue
    return unresolved
"""


def test_a_library_name_tested_loads_nothing(tmp_path):
    found = _in(_tree(tmp_path / "a", {"tools/llm.py": PRELOAD}), "tools/llm.py")
    assert "NPU134" not in found.get(11, {})
    assert found.get(6, {}).get("NPU134") == "error"       # the list the loop loads from keeps it


# -- a script that loads a model on the host only to export its weights ------------------------------------------------

EXPORT = """\
import sys
import torch
from transformers import AutoTokenizer, AutoModelForCausalLM
from ftllm import torch2flm

if __name__ == "__main__":
    path = sys.argv[3] if len(sys.argv) >= 4 else 'meta-llama/Meta-Llama-3-8B'
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True, torch_dtype=torch.float16)
    model = model.eval()
    dtype = sys.argv[2] if len(sys.argv) >= 3 else "float16"
    torch2flm.tofile(sys.argv[1], model, tokenizer, dtype=dtype)
"""
EXPORT_ON_GPU = EXPORT.replace("model = model.eval()", "model = model.eval().cuda()")


def test_a_script_that_loads_a_model_only_to_export_it_has_no_dtype_hint(tmp_path):
    found = _in(_tree(tmp_path / "a", {"tools/scripts/llama3_to_flm.py": EXPORT}), "llama3_to_flm.py")
    assert "NPU202" not in found.get(9, {})


def test_an_export_script_that_moves_the_model_keeps_its_dtype_hint(tmp_path):
    found = _in(_tree(tmp_path / "a", {"tools/scripts/llama3_to_flm.py": EXPORT_ON_GPU}), "llama3_to_flm.py")
    assert "NPU202" in found.get(9, {})


# -- a version look-up after the package's own import succeeded ---------------------------------------------------------

TE_VERSION = """\
from importlib.metadata import version

from packaging.version import Version as PkgVersion

_te_version = None


def get_te_version():
    def get_te_version_str():
        import transformer_engine as te

        if hasattr(te, '__version__'):
            return str(te.__version__)
        else:
            return version("transformer-engine")

    global _te_version
    if _te_version is None:
        _te_version = PkgVersion(get_te_version_str())
    return _te_version


def te_installed():
    try:
        return version("transformer-engine") is not None
    except Exception:
        return False
"""


def test_a_version_look_up_after_the_import_asks_no_presence(tmp_path):
    found = _in(_tree(tmp_path / "a", {"runtime/utils.py": TE_VERSION}), "runtime/utils.py")
    assert "NPU430" not in found.get(15, {})
    assert "NPU430" in found.get(25, {})        # a look-up with no import before it asks whether it is installed

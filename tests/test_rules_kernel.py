"""The kernel family on realistic extension code: setup.py with CUDAExtension, JIT loads, .cu files, Triton
kernels and their launches, numba.cuda, cupy and custom torch.ops namespaces."""
from __future__ import annotations

from test_rules_apex import ENGINE, audit, codes

SETUP_PY = '''\
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

ext_modules = [CppExtension("cpu_ops", ["csrc/cpu_ops.cpp"])]
if CUDA_HOME is not None and os.environ.get("BUILD_CUDA_EXT", "1") == "1":
    ext_modules.append(
        CUDAExtension(
            "fused_ops",
            ["csrc/fused.cpp", "csrc/fused_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    )
setup(name="fused", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
'''


def test_setup_py_extensions():
    found = audit(SETUP_PY, "setup.py")
    # 3: CppExtension beside CUDAExtension / BuildExtension on one import is left to them (pd20, heldout24)
    assert codes(found) == {3: ["NPU370", "NPU371", "NPU371"], 5: ["NPU371"], 6: ["NPU371"], 8: ["NPU370"],
                            10: ["NPU383"], 11: ["NPU353", "NPU369"], 14: ["NPU371"]}   # 10: the .cu source it builds;
    # 3 and 5: CppExtension, the host twin, at info (t14t: where a package builds its extensions is worth knowing)
    assert all(f.severity == "info" for f in found[5])
    # 11: nvcc flags (kernel build): the `"nvcc"` slot of extra_compile_args (NPU353, t14r: a setting, not the nvcc
    # command NPU407 reports) and an nvcc-only flag in it (NPU369)
    cuda_ext = found[8][0]
    assert cuda_ext.category == "kernel" and cuda_ext.severity == "error"
    assert "torch_npu.utils.cpp_extension.NpuExtension" in cuda_ext.substitution


def test_jit_load_is_unsupported_on_ascend():
    found = audit('''\
        from torch.utils.cpp_extension import load
        import torch.utils.cpp_extension as cpp_ext

        def build(srcs):
            return load(name="fused_adam", sources=srcs, extra_cuda_cflags=["-O3"], verbose=False)

        mod = cpp_ext.load_inline("inline_ext", cpp_sources=cpp_src, functions=["fwd"])
    ''')
    assert codes(found) == {1: ["NPU370"], 2: ["NPU388"], 5: ["NPU370"], 7: ["NPU370"]}
    assert "unsupported on Ascend" in found[5][0].substitution
    assert "cpp_sources" in found[7][0].substitution


def test_cuda_sources_are_reported_as_files():
    for name in ("csrc/kernel.cu", "include/common.cuh"):
        result = ENGINE.analyze_bytes(b"#include <cuda_runtime.h>\n__global__ void k() {}\n", name)
        # reported at the first kernel, with an inventory of the file
        assert [(f.code, f.line) for f in result.findings] == [("NPU372", 2)]
        assert result.findings[0].data["inventory"]["kernels"] == ["k"]
    assert ENGINE.analyze_bytes(b"int main() { return 0; }\n", "csrc/kernel.cpp").findings == []


TRITON_KERNEL = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_kernel(X, Y, W, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / N
    tl.store(Y + row * stride + cols, x * tl.rsqrt(var + eps) * tl.load(W + cols), mask=cols < N)


def rms_norm(x, w, eps=1e-6):
    y = torch.empty_like(x)
    M, N = x.shape
    BLOCK = triton.next_power_of_2(N)
    num_warps = min(max(BLOCK // 256, 1), 8)   # CUDA warp tuning
    _rms_kernel[(M,)](x, y, w, x.stride(0), N, eps, BLOCK=BLOCK, num_warps=num_warps)
    return y
'''


def test_triton_kernel_is_reported_at_the_kernel_and_its_launch_not_per_tl_line():
    found = audit(TRITON_KERNEL)
    assert codes(found) == {2: ["NPU373"], 3: ["NPU373"], 6: ["NPU373"], 18: ["NPU373"], 20: ["NPU373"]}
    launch = found[20][0]
    assert launch.symbol == "triton.jit[]" and "_rms_kernel" in launch.message
    assert "triton-ascend" in launch.substitution


def test_project_triton_modules_numba_cupy_pycuda():
    found = audit('''\
        import cupy as cp
        import pycuda.autoinit
        from numba import cuda
        from mylib.kernels.triton import fused_softmax

        @cuda.jit
        def scale(a, out):
            i = cuda.grid(1)

        def run(x):
            scale[64, 256](x, out)
            return fused_softmax(cp.asarray(x))
    ''')
    # `import pycuda.autoinit` creates a CUDA context: PyCUDA's runtime calls are third_party (NPU475, t14k), its
    # kernel builders (SourceModule, ElementwiseKernel) kernel (NPU376); CuPy likewise: its arrays third_party
    # (NPU414, t14u), its RawKernel / ElementwiseKernel builders kernel (NPU374)
    assert codes(found) == {1: ["NPU414"], 2: ["NPU475"], 3: ["NPU375"], 4: ["NPU373"], 6: ["NPU375"],
                            8: ["NPU375"], 11: ["NPU375"], 12: ["NPU373", "NPU414"]}
    assert "Numba CUDA kernel `scale`" in found[11][0].message


def test_custom_torch_ops_namespaces():
    found = audit('''\
        import torch
        torch.ops.load_library("build/libfused.so")
        aten = torch.ops.aten

        def f(x, q, k, v):
            y = torch.ops.my_ext.fused_gelu(x)
            z = aten.gelu.default(x) + torch.ops.aten.relu(x)
            w = torch.ops.npu.npu_rms_norm(x, x, 1e-6)
            return torch.ops.vllm.unified_attention(q, k, v, "layer0")
    ''')
    assert codes(found) == {2: ["NPU380"], 6: ["NPU380"], 9: ["NPU380"]}
    assert found[6][0].symbol == "torch.ops.my_ext.fused_gelu"
    assert "NpuExtension" in found[2][0].substitution


def test_cuda_only_op_registration():
    found = audit('''\
        import torch

        @torch.library.custom_op("mylib::scale", mutates_args=(), device_types="cuda")
        def scale(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @torch.library.custom_op("mylib::shift", mutates_args=())
        def shift(x: torch.Tensor) -> torch.Tensor:
            return x + 1
    ''')
    # the "cuda" string is also a device string (NPU003): the kernel rule says what registering means
    assert codes(found) == {3: ["NPU003", "NPU377"]}
    assert "PrivateUse1" in [f for f in found[3] if f.code == "NPU377"][0].substitution


def test_kernel_words_in_messages_are_quiet():
    assert audit('''\
        # build with: python setup.py build_ext (needs nvcc and CUDA_HOME)
        def check():
            """Raises when CUDA_HOME is unset or triton is missing."""
            raise RuntimeError("CUDA_HOME is not set; cannot build CUDAExtension")
        print("launch _rms_kernel[(M,)] with num_warps=8")
    ''') == {}


# -- the generators read real sources: their parsers on the shapes those sources have ----------------------

def _gen(module: str):
    import importlib
    import sys
    from pathlib import Path

    gen_dir = str(Path(__file__).resolve().parent.parent / "rules" / "gen")
    if gen_dir not in sys.path:
        sys.path.insert(0, gen_dir)
    return importlib.import_module(module)


def test_colossalai_loader_registries_are_read_with_ast():
    loaders = _gen("colossalai_kernels").loaders('''\
from .extensions import FlashAttentionNpuExtension, LayerNormCudaExtension

class KernelLoader:
    REGISTRY = []

class LayerNormLoader(KernelLoader):
    REGISTRY = [LayerNormCudaExtension]

class FlashAttentionLoader(KernelLoader):
    REGISTRY = [
        FlashAttentionNpuExtension,
        FlashAttentionDaoCudaExtension,
    ]
''')
    assert loaders == {"LayerNormLoader": ["LayerNormCudaExtension"],
                       "FlashAttentionLoader": ["FlashAttentionNpuExtension", "FlashAttentionDaoCudaExtension"]}


def test_torch_namespaces_come_from_the_installed_dispatcher():
    namespaces = _gen("torch_op_namespaces").torch_namespaces()
    assert {"aten", "prims", "c10d"} <= namespaces and "my_ext" not in namespaces

"""GPU kernel DSLs beyond Triton (t14i, issue 14): TileLang and TVM kernels (NPU365) and TVM builds / schedule
registrations for the CUDA target (NPU366). Realistic module shapes written for this test (a TileLang flash-decode
kernel with its launcher, a bitblas-style TIR weight transform, a TVM operator library with CUDA and x86 schedules,
a backend-dispatching launcher with an Ascend branch) and the near misses that must stay quiet."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "kernels.py"):
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return result.findings


def _mine(src: str, name: str = "kernels.py") -> dict[int, tuple[str, str]]:
    return {f.line: (f.code, f.severity) for f in _findings(src, name) if f.code in ("NPU365", "NPU366")}


TILELANG_DECODE = '''\
import torch
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs():
    return [dict(block_N=bn, num_stages=ns, threads=256) for bn in (64, 128) for ns in (1, 2)]


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True})
def flash_decode(batch, heads, seqlen_kv, dim, block_N=64, num_stages=2, threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape_q = [batch, heads, dim]
    shape_kv = [batch, seqlen_kv, heads, dim]
    dtype = "float16"
    accum_dtype = "float"

    @T.prim_func
    def main(Q: T.Tensor(shape_q, dtype), K: T.Tensor(shape_kv, dtype), V: T.Tensor(shape_kv, dtype),
             Output: T.Tensor(shape_q, dtype)):
        with T.Kernel(heads, batch, threads=threads) as (hid, bid):
            Q_shared = T.alloc_shared([dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_N], accum_dtype)
            acc_o = T.alloc_fragment([dim], accum_dtype)
            T.copy(Q[bid, hid, :], Q_shared)
            T.fill(acc_o, 0)
            for k in T.Pipelined(T.ceildiv(seqlen_kv, block_N), num_stages=num_stages):
                T.copy(K[bid, k * block_N:(k + 1) * block_N, hid, :], K_shared)
                for i in T.Parallel(block_N):
                    acc_s[i] = 0
            T.copy(acc_o, Output[bid, hid, :])

    return main


def decode(q, k, v):
    kernel = flash_decode(q.shape[0], q.shape[1], k.shape[1], q.shape[2])
    return kernel(q, k, v)
'''


def test_tilelang_kernel_decorators_are_unverified_and_body_lines_quiet():
    # TileLang has Ascend backends (Ascend 950 in stock TileLang, A2 in tilelang-ascend): whether this kernel
    # compiles there is unverified, a warning; lines in the kernel body are carried by the decorator
    found = _mine(TILELANG_DECODE)
    assert found == {11: ("NPU365", "warning"), 19: ("NPU365", "warning")}
    jit = next(f for f in _findings(TILELANG_DECODE) if f.line == 11 and f.code == "NPU365")
    assert jit.category == "kernel"
    assert "tilelang-ascend" in jit.substitution and "unverified" in jit.substitution


BITBLAS_STYLE_TIR = '''\
from typing import Literal
from tvm import IRModule
from tvm.script import tir as T


def select_implementation(M: int, N: int, datatype: Literal["float16", "int8"] = "float16", bits: int = 4):
    elems_per_byte = 8 // bits

    @T.prim_func
    def interleave_weight(B: T.Buffer((N, M // elems_per_byte), "int8"),
                          B_out: T.Buffer((N, M // elems_per_byte), "int8")):
        for ax0, ax1 in T.grid(N, M // elems_per_byte):
            with T.block("B_interleave"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B_out[v0, v1] = B[v0, v1]

    return IRModule.from_expr(interleave_weight.with_attr("global_symbol", "main"))
'''


def test_tvm_tir_prim_func_is_an_unverified_warning():
    found = _mine(BITBLAS_STYLE_TIR)
    assert found == {9: ("NPU365", "warning")}
    (f,) = [f for f in _findings(BITBLAS_STYLE_TIR) if f.code == "NPU365"]
    assert "unverified" in f.message


TVM_OPERATOR_LIBRARY = '''\
import tvm
from tvm import autotvm, te
from tvm.target import Target


@autotvm.register_topi_compute("group_conv2d_nchw.cuda")
def group_conv2d_nchw(cfg, data, kernel, stride, padding, dilation, groups, out_dtype="float32"):
    return te.compute(data.shape, lambda *i: data(*i))


@autotvm.register_topi_schedule("group_conv2d_nchw.x86")
def schedule_group_conv2d_nchw_x86(cfg, outs):
    return te.create_schedule([x.op for x in outs])


def build(mod, use_gpu: bool):
    if use_gpu:
        target = Target("cuda -arch=sm_80")
    else:
        target = tvm.target.Target("llvm -mcpu=cascadelake")
    return tvm.build(mod, target=target)


def build_for(mod, target: str):
    return tvm.build(mod, target=target)
'''


def test_tvm_cuda_targets_only():
    # the CUDA registration and the CUDA target; x86 / llvm and a target chosen by the caller stay quiet
    assert _mine(TVM_OPERATOR_LIBRARY) == {6: ("NPU366", "error"), 18: ("NPU366", "error")}


DISPATCHING_LAUNCHER = '''\
import torch

try:
    import torch_npu
except ImportError:
    torch_npu = None


def fused_rms_norm(x, weight, eps=1e-6):
    if x.device.type == "npu":
        return torch_npu.npu_rms_norm(x, weight, epsilon=eps)[0]
    import tvm
    lib = tvm.build(_rms_norm_module(x.shape[-1]), target="cuda")
    return _run(lib, x, weight)
'''


def test_beside_an_npu_path_it_is_info():
    # an explicit CUDA build target is NPU366 (error as written), lowered to info beside the torch_npu branch
    assert _mine(DISPATCHING_LAUNCHER) == {13: ("NPU366", "info")}


def test_cuda_backend_modules_are_errors():
    found = _mine('''\
        from tilelang import language as T
        from tilelang.contrib.cutedsl import gemm_v2
        from tilelang.cuda.op.gemm.gemm_fma import GemmFMA
        from tvm.contrib.cutlass import partition_for_cutlass

        def tile_gemm(a, b, c, trans_a, trans_b):
            return gemm_v2.gemm_ss(a, b, c, trans_a, trans_b)
        ''')
    assert found == {2: ("NPU365", "error"), 3: ("NPU365", "error"), 4: ("NPU365", "error"), 7: ("NPU365", "error")}


def test_near_misses_stay_quiet():
    assert _mine('''\
        # a TileLang kernel would be faster here: @tilelang.jit with T.gemm
        import numpy as np
        from tvm import te, relay
        from tvm.contrib import graph_executor

        def run(lib, dev, x):
            """Build with tvm.target.Target("cuda") on GPUs."""
            module = graph_executor.GraphModule(lib["default"](dev))
            module.set_input("x", x)
            return module
        ''') == {}

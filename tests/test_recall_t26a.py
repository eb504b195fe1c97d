"""t26a (issue 14, kernel misses pooled over test16..test37): compiled extensions a code base builds itself, reached by
`cuda_*` / `*_ext` names (NPU891), and TVM's CUDA code-generation hooks (NPU892). Shapes from FastPointTransformer,
Pointnet2_PyTorch, longformer and HAWQ, each with a control."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(src: str, path: str = "main.py") -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in ENGINE.analyze_bytes(src.encode(), path).findings:
        out.setdefault(f.line, set()).add(f.code)
    return out


# FastPointTransformer src/cscore/... (abridged): the extension its setup.py builds, imported by its installed name
SPARSE_OPS = """import torch
from torch.autograd import Function
import cuda_sparse_ops


class SparseConvFunction(Function):
    @staticmethod
    def forward(ctx, in_feat, kernel, kernel_map, out_nrows):
        out_feat = torch.zeros(out_nrows, kernel.shape[-1], device=in_feat.device)
        cuda_sparse_ops.sparse_conv_forward(in_feat, kernel, kernel_map, out_feat)
        return out_feat
"""

# Pointnet2_PyTorch pointnet2_ops/pointnet2_utils.py (abridged)
POINTNET2 = """import torch
from torch.autograd import Function
from pointnet2_ops import _ext


class FurthestPointSampling(Function):
    @staticmethod
    def forward(ctx, xyz, npoint):
        out = _ext.furthest_point_sampling(xyz, npoint)
        ctx.mark_non_differentiable(out)
        return out
"""


def test_extension_names_are_kernel_warnings_on_import_and_calls():
    found = _codes(SPARSE_OPS)
    assert "NPU891" in found[3] and "NPU891" in found[10]
    found = _codes(POINTNET2)
    # pointnet2_ops itself is a source-built CUDA library since tk39 (NPU878, lead decision 13): kernel either way
    assert {"NPU891", "NPU878"} & found[3] and {"NPU891", "NPU878"} & found[9]
    f = next(f for f in ENGINE.analyze_bytes(SPARSE_OPS.encode(), "main.py").findings if f.code == "NPU891")
    assert (f.category, f.severity) == ("kernel", "warning")


def test_python_names_and_known_packages_stay_clean():
    src = ("import cuda.bindings.runtime as cudart\nimport cudaq\nimport torch\nfrom torch import _C\n"
           "from numpy.core import _multiarray_umath\nfrom mmcv.utils import ext_loader\n"
           "ext_module = ext_loader.load_ext('_ext', ['nms'])\n"
           # DROID-SLAM's `cuda_timer.py` and NVIDIA's PyPI package: Python, whatever the name says
           "from cuda_timer import CudaTimer\nimport nvidia_resiliency_ext.fault_tolerance as ft\n")
    assert not {c for codes in _codes(src).values() for c in codes} & {"NPU891", "NPU892"}


def test_a_python_module_of_that_name_in_the_tree_is_its_own_code(tmp_path: Path):
    # tools/cuda_utils.py beside a script that imports it by its bare name (the script's folder is on sys.path)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "cuda_utils.py").write_text("def free_memory():\n    return 0\n")
    (tmp_path / "tools" / "train.py").write_text("import cuda_utils\nimport cuda_sparse_ops\n"
                                                 "print(cuda_utils.free_memory())\n")
    lines = {f.line for r in run_static([tmp_path], jobs=1).results for f in r.findings if f.code == "NPU891"}
    assert lines == {2}


# longformer longformer/diagonaled_mm_tvm.py and HAWQ tvm_benchmark/test_resnet_inference_time.py (abridged)
TVM_HOOKS = """import os
import tvm
from tvm.contrib import nvcc


@tvm.register_func
def tvm_callback_cuda_compile(code):
    ptx = nvcc.compile_cuda(code, target="ptx", arch="sm_52")
    return ptx


@tvm.register_func
def tvm_callback_cuda_postproc(code):
    return code


@tvm.register_func
def my_packed_func(x):
    return x


def tvm_callback_cuda_compile_local(code):
    return code
"""


def test_tvm_cuda_codegen_hooks_are_kernel_errors():
    found = _codes(TVM_HOOKS)
    assert "NPU892" in found[7] and "NPU892" in found[13]
    assert "NPU892" not in found.get(18, set()) and "NPU892" not in found.get(22, set())


# BEVFusion mmdet3d/ops/knn/knn.py (abridged): mmdet3d 0.x's ops import the `*_ext` their setup.py builds, relatively
KNN = """import torch
from torch.autograd import Function

from . import knn_ext


class KNN(Function):
    @staticmethod
    def forward(ctx, k, xyz, center_xyz=None, transposed=False):
        idx = center_xyz.new_zeros((B, k, npoint)).int()
        knn_ext.knn_wrapper(B, N, npoint, k, xyz, center_xyz, idx, dist2)
        return idx
"""


def test_relative_ext_imports_and_the_tree_own_python_module(tmp_path: Path):
    found = _codes(KNN, "ops/knn/knn.py")
    assert "NPU891" in found[4] and "NPU891" in found[11]
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "__init__.py").write_text("")
    (tmp_path / "ops" / "knn.py").write_text(KNN)
    (tmp_path / "ops" / "knn_wrapper.py").write_text("")      # a module named like the called function: no effect
    lines = {f.line for r in run_static([tmp_path], jobs=1).results for f in r.findings if f.code == "NPU891"}
    assert lines == {4, 11}
    (tmp_path / "ops" / "knn_ext.py").write_text("def knn_wrapper(*a):\n    return None\n")   # Python after all
    lines = {f.line for r in run_static([tmp_path], jobs=1).results for f in r.findings if f.code == "NPU891"}
    assert lines == set()

"""Families bench/corpus_test9 missed on its first run (t14h, issue 14; test9 is tuned on since): value flow from a
compiled CUDA library to its uses in the same file (mmcv's `ext_loader.load_ext`, an import named `_C`), operators
named for NCCL, Polygraphy's TensorRT backend and cuEquivariance's CUDA kernels. Each with real spellings (mmcv,
mmdet3d, BEVFormer, nerfacc, Torch-TensorRT, NeMo, cuequivariance-torch) that must be flagged and near misses
that must not."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "example.py"):
    return snippet_findings(ENGINE, src, name)


def _found(src: str, name: str = "example.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in _findings(src, name)}


# --- mmcv's compiled ops through ext_loader.load_ext (NPU323 calls, NPU359 the loading line) -------------------

# mmcv/ops/knn.py (mmcv 2.2.0): mmcv's own relative import of its loader
MMCV_KNN = """\
    from typing import Optional

    import torch
    from torch.autograd import Function

    from ..utils import ext_loader

    ext_module = ext_loader.load_ext('_ext', ['knn_forward'])


    class KNN(Function):

        @staticmethod
        def forward(ctx, k: int, xyz: torch.Tensor, center_xyz: Optional[torch.Tensor] = None,
                    transposed: bool = False) -> torch.Tensor:
            B, npoint, _ = center_xyz.shape
            N = xyz.shape[1]
            idx = center_xyz.new_zeros((B, npoint, k)).int()
            dist2 = center_xyz.new_zeros((B, npoint, k)).float()
            ext_module.knn_forward(
                xyz, center_xyz, idx, dist2, b=B, n=N, m=npoint, nsample=k)
            idx = idx.transpose(2, 1).contiguous()
            return idx
"""


def test_mmcv_op_without_npu_implementation_and_its_loading_line():
    found = _found(MMCV_KNN)
    assert (8, "NPU359") in found          # ext_module = ext_loader.load_ext('_ext', ['knn_forward'])
    assert (20, "NPU323") in found         # ext_module.knn_forward(...)
    assert {f.severity for f in _findings(MMCV_KNN) if f.code in ("NPU323", "NPU359")} == {"error"}


# mmdet3d 1.0 (mmdet3d/ops/iou3d/iou3d_utils.py style): mmcv's loader imported by its package path
MMDET3D_IOU3D = """\
    import torch
    from mmcv.utils import ext_loader

    ext_module = ext_loader.load_ext('_ext', [
        'iou3d_boxes_overlap_bev_forward', 'iou3d_nms3d_forward',
        'iou3d_nms3d_normal_forward'
    ])


    def boxes_overlap_bev(boxes_a, boxes_b):
        ans_overlap = boxes_a.new_zeros(
            torch.Size((boxes_a.shape[0], boxes_b.shape[0])))
        ext_module.iou3d_boxes_overlap_bev_forward(boxes_a.contiguous(),
                                                   boxes_b.contiguous(), ans_overlap)
        return ans_overlap


    def nms3d(boxes, scores, iou_threshold):
        order = scores.sort(0, descending=True)[1]
        boxes = boxes[order].contiguous()
        keep = torch.zeros(boxes.size(0), dtype=torch.long)
        num_out = torch.zeros(size=(), dtype=torch.long)
        ext_module.iou3d_nms3d_forward(boxes, keep, num_out, nms_overlap_thresh=iou_threshold)
        return order[keep[:num_out].cuda(boxes.device)].contiguous()
"""


def test_mmdet3d_copy_of_mmcv_ops():
    found = _found(MMDET3D_IOU3D)
    assert {(4, "NPU359"), (13, "NPU323"), (23, "NPU323")} <= found


# mmcv/ops/focal_loss.py and nms.py: ops mmcv implements for the NPU (REGISTER_NPU_IMPL), and host-only ops
MMCV_NPU_OPS = """\
    import torch
    from torch.autograd import Function

    from ..utils import ext_loader

    ext_module = ext_loader.load_ext('_ext', [
        'sigmoid_focal_loss_forward', 'sigmoid_focal_loss_backward', 'nms', 'nms_match'
    ])


    class SigmoidFocalLossFunction(Function):

        @staticmethod
        def forward(ctx, input, target, gamma=2.0, alpha=0.25, weight=None):
            output = input.new_zeros(input.size())
            ext_module.sigmoid_focal_loss_forward(input, target, weight, output, gamma=gamma, alpha=alpha)
            return output


    def nms_match(dets, iou_threshold):
        dets_t = dets.detach().cpu()
        matched = ext_module.nms_match(dets_t, float(iou_threshold))
        return matched
"""


def test_mmcv_ops_with_an_npu_implementation_or_host_only_are_quiet():
    codes = {code for _, code in _found(MMCV_NPU_OPS)}
    assert "NPU323" not in codes and "NPU359" not in codes


def test_a_projects_own_load_ext_is_not_mmcv():
    src = """\
        from .loader import load_ext

        ops = load_ext('_ext', ['knn_forward'])
        ops.knn_forward(xyz, center_xyz)
    """
    codes = {code for _, code in _found(src)}
    assert "NPU323" not in codes and "NPU359" not in codes


def test_mmcv_version_query_is_info():
    src = """\
        from ..utils import ext_loader

        ext_module = ext_loader.load_ext('_ext', ['get_compiler_version', 'get_compiling_cuda_version'])

        def get_compiling_cuda_version():
            return ext_module.get_compiling_cuda_version()
    """
    hits = [f for f in _findings(src) if f.code in ("NPU323", "NPU359")]
    assert [(f.line, f.code, f.severity) for f in hits] == [(6, "NPU323", "info")]


# --- an import named `_C`: the package's compiled extension by its author's naming (NPU358) ----------------------

# nerfacc/scan.py and nerfacc/cuda/_backend.py (nerfacc 0.5.3)
NERFACC_SCAN = """\
    from typing import Optional

    import torch
    from torch import Tensor

    from . import cuda as _C


    class _InclusiveSum(torch.autograd.Function):

        @staticmethod
        def forward(ctx, chunk_starts, chunk_cnts, inputs, normalize: bool = False):
            chunk_starts = chunk_starts.contiguous()
            chunk_cnts = chunk_cnts.contiguous()
            inputs = inputs.contiguous()
            outputs = _C.inclusive_sum(chunk_starts, chunk_cnts, inputs, normalize, False)
            return outputs
"""

NERFACC_BACKEND = """\
    import glob
    import os

    from torch.utils.cpp_extension import _get_build_directory, load

    PATH = os.path.dirname(os.path.abspath(__file__))

    try:
        from nerfacc import csrc as _C
    except ImportError:
        _C = None
"""


def test_module_imported_as_C_is_the_compiled_extension():
    found = _found(NERFACC_SCAN)
    assert {(6, "NPU358"), (16, "NPU358")} <= found
    assert (9, "NPU358") in _found(NERFACC_BACKEND)


def test_torch_and_plain_modules_named_otherwise_are_quiet():
    src = """\
        import torch
        from torch import _C as _C
        from . import cuda_utils as utils

        _C._set_grad_enabled(True)
        utils.inclusive_sum(x)
    """
    assert not {code for _, code in _found(src)} & {"NPU358"}


# --- operators named for NCCL (NPU150), Polygraphy's TensorRT backend (NPU409), cuEquivariance ops (NPU411) -------

TRT_FUSED_COLLECTIVES = """\
    import torch
    import torch.distributed as dist


    @torch.library.custom_op("tensorrt::fused_nccl_all_gather", mutates_args=())
    def fused_nccl_all_gather(inp: torch.Tensor, group_size: int, group_name: str) -> torch.Tensor:
        return torch.ops._c10d_functional.wait_tensor(
            torch.ops._c10d_functional.all_gather_into_tensor(inp, group_size, group_name))


    @torch.library.custom_op("mylib::all_gather_tokens", mutates_args=())
    def all_gather_tokens(inp: torch.Tensor, group_size: int) -> torch.Tensor:
        return inp.repeat(group_size, 1)
"""


def test_custom_op_named_for_nccl():
    hits = [(f.line, f.severity) for f in _findings(TRT_FUSED_COLLECTIVES) if f.code == "NPU150"]
    assert hits == [(5, "info")]


# NeMo nemo/utils/trt_utils.py / cuequivariance_torch/_tests/utils.py style
POLYGRAPHY_AND_CUEQ = """\
    import torch


    def build_engine(onnx_path, profiles):
        from polygraphy.backend.trt import CreateConfig, Profile, engine_from_network, network_from_onnx_path

        network = network_from_onnx_path(onnx_path)
        return engine_from_network(network, config=CreateConfig(profiles=profiles, fp16=True))


    def onnx_session(onnx_path):
        from polygraphy.backend.onnxrt import SessionFromOnnx

        return SessionFromOnnx(onnx_path)


    def run_transpose(x, info):
        from cuequivariance_ops_torch import segmented_transpose

        return segmented_transpose(x, info, True)
"""


def test_polygraphy_tensorrt_backend_and_cuequivariance_ops():
    found = _found(POLYGRAPHY_AND_CUEQ)
    assert {(5, "NPU409"), (8, "NPU409"), (18, "NPU411"), (20, "NPU411")} <= found
    assert not any(line in (12, 14) for line, _ in found)      # Polygraphy's ONNX-Runtime backend


def test_mmcv_op_lists_are_what_mmcv_sources_say():
    """NPU323 / NPU359's op lists re-derived from mmcv 2.2.0's sources (the test9 corpus): every op pybind.cpp
    defines, those an NPU implementation registers (REGISTER_NPU_IMPL in csrc/pytorch/npu/, nms_rotated's direct
    NPU call) and the host-only ops (no device dispatch: they run on the CPU on Ascend too)."""
    import re

    import yaml

    root = Path(__file__).resolve().parents[1]
    src = root / "bench" / "_corpus" / "mmcv-2.2.0" / "mmcv-2.2.0" / "mmcv" / "ops" / "csrc" / "pytorch"
    if not src.is_dir():
        pytest.skip("mmcv 2.2.0 not fetched (python bench/recall.py --split test9 fetch)")
    defined = set(re.findall(r'm\.def\("(\w+)"', (src / "pybind.cpp").read_text()))
    on_npu = {impl.replace("_op_impl", "").replace("_impl", "") for f in (src / "npu").glob("*.cpp")
              for impl in re.findall(r"REGISTER_NPU_IMPL\((\w+)", f.read_text())}
    if "nms_rotated_npu(" in (src / "nms_rotated.cpp").read_text():
        on_npu.add("nms_rotated")
    host_only = {"contour_expand", "pixel_group", "points_in_boxes_cpu_forward", "nms_match", "softnms",
                 "get_compiler_version"}
    rules = {r["code"]: r for r in yaml.safe_load((root / "rules" / "kernel_extensions.yaml").read_text())["rules"]}
    excluded = {q[len("!mmcv._ext."):] for q in rules["NPU323"]["match"][0]["qualname"] if q.startswith("!")}
    assert on_npu <= defined and excluded == on_npu | host_only
    assert set(rules["NPU359"]["when"]["arg"]["values"]) == defined - excluded - {"get_compiling_cuda_version"}

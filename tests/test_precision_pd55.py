"""pd55 (session 32, TUNED on dev32): general false families found on four new trees (dev32's sleap-nn, spotiflow,
CnSTD, cann-recipes-embodied-intelligence), each on code shaped like the tree it came from, with a control."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _values(tmp_path, files, rel, field="severity"):
    return run_values_by_line(tmp_path, files, rel, field)


# -- an extension built at run time from C / C++ sources only --------------------------------------------------------
RASTERIZER = """\
import torch
from torch.utils.cpp_extension import load


def rasterize(pos, tri, resolution, clamp_depth=torch.zeros(0), use_depth_prior=0):
    extension = load(name="rasterize_image",
                     sources=["./hy3dgen/texgen/custom_rasterizer/rasterizer.cpp"])

    assert pos.device == tri.device
    cpu_pos, cpu_tri, cpu_clamp_depth = pos.cpu(), tri.cpu(), clamp_depth.cpu()
    findices, barycentric = extension.rasterize_image(cpu_pos[0], cpu_tri, cpu_clamp_depth, resolution[1],
                                                      resolution[0], 1e-6, use_depth_prior)
    return findices.to(pos.device), barycentric.to(pos.device)
"""

CPU_ADAM = """\
import torch
from torch.utils.cpp_extension import load

cpu_adam = load(
    name="cpu_adam",
    sources=["cpu_adam_impl.cpp"],
    extra_cflags=["-O3", "-std=c++17"],
    verbose=True,
)


def step(params, grads, lr):
    cpu_adam.adam_update(params, grads, lr)
"""

DEFORM = """\
import torch
from torch.utils.cpp_extension import load

deform_ext = load("deform_conv", sources=["deform_conv.cpp", "deform_conv_cuda_kernel.cu"])
fused_ext = load("fused", sources=["fused_bias_act.cpp"], extra_cuda_cflags=["--use_fast_math"])


def forward(x, w):
    return deform_ext.deform_conv_forward(x, w) + fused_ext.fused_bias_act(x)
"""


def test_calls_of_an_extension_built_from_cpp_sources_only_are_info(tmp_path):
    sev = _values(tmp_path, {"hy3dgen/texgen/differentiable_renderer/rasterizer.py": RASTERIZER},
                  "hy3dgen/texgen/differentiable_renderer/rasterizer.py")
    assert sev.get(line_of(RASTERIZER, "extension.rasterize_image(")) == {"info"}
    sev = _values(tmp_path / "adam", {"cpu_adam/load_cpu_adam.py": CPU_ADAM}, "cpu_adam/load_cpu_adam.py")
    assert sev.get(line_of(CPU_ADAM, "cpu_adam.adam_update(")) == {"info"}


def test_an_extension_with_a_cu_source_or_a_cuda_flag_keeps_the_error(tmp_path):
    sev = _values(tmp_path, {"ops/deform.py": DEFORM}, "ops/deform.py")
    assert sev.get(line_of(DEFORM, "deform_ext.deform_conv_forward(")) == {"error"}


# -- an operator package of Ascend C kernels --------------------------------------------------------------------------
ASCENDC_OP = """\
import torch
import meta_gauss_render


class SphericalHarmonics(torch.autograd.Function):
    @staticmethod
    def backward(ctx, *args):
        dirs, coeffs = ctx.saved_tensors
        v_dirs, v_coeffs = meta_gauss_render._C.spherical_harmonics_bwd(dirs, coeffs, args[0], ctx.degree)
        return v_dirs, v_coeffs
"""


def test_an_own_extension_under_an_ascendc_folder_is_the_npu_build(tmp_path):
    rel = "ops/ascendc/meta_gauss_render/ops/spherical_harmonics.py"
    sev = _values(tmp_path, {rel: ASCENDC_OP, "ops/ascendc/meta_gauss_render/__init__.py": ""}, rel)
    assert sev.get(line_of(ASCENDC_OP, "_C.spherical_harmonics_bwd")) == {"info"}


def test_an_own_extension_elsewhere_keeps_the_error(tmp_path):
    rel = "ops/gauss/meta_gauss_render/ops/spherical_harmonics.py"
    sev = _values(tmp_path, {rel: ASCENDC_OP, "ops/gauss/meta_gauss_render/__init__.py": ""}, rel)
    assert sev.get(line_of(ASCENDC_OP, "_C.spherical_harmonics_bwd")) == {"error"}


# -- DataParallel named only in a type comparison ---------------------------------------------------------------------
YOLO_TORCH_UTILS = """\
import torch.nn as nn


def is_parallel(model):
    # Returns True if model is of type DP or DDP
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


def de_parallel(model):
    return model.module if model.__class__ is nn.DataParallel else model
"""

YOLO_LOSS = """\
import torch.nn as nn

from .torch_utils import is_parallel


class ComputeLoss:
    def __init__(self, model, autobalance=False):
        det = model.module.model[-1] if is_parallel(model) else model.model[-1]  # Detect() module
        self.balance = {3: [4.0, 1.0, 0.4]}.get(det.nl, [4.0, 1.0, 0.25, 0.06, 0.02])
"""

YOLO_TRAIN = """\
import torch.nn as nn


def train(model, opt, rank):
    if opt.multi_gpu and rank == -1:
        model = nn.DataParallel(model)
    return model
"""


def test_dataparallel_in_a_type_comparison_is_info_and_its_callers_quiet(tmp_path):
    files = {"yolo/__init__.py": "", "yolo/torch_utils.py": YOLO_TORCH_UTILS, "yolo/loss.py": YOLO_LOSS,
             "yolo/train.py": YOLO_TRAIN}
    sev = _values(tmp_path, files, "yolo/torch_utils.py")
    assert sev.get(line_of(YOLO_TORCH_UTILS, "type(model) in")) == {"info"}
    assert sev.get(line_of(YOLO_TORCH_UTILS, "model.__class__ is")) == {"info"}
    assert line_of(YOLO_LOSS, "is_parallel(model)") not in _values(tmp_path / "b", files, "yolo/loss.py")
    # the control: where DataParallel wraps the model, the error stays
    assert _values(tmp_path / "c", files, "yolo/train.py").get(line_of(YOLO_TRAIN, "nn.DataParallel(model)")) \
        == {"error"}


# -- an environment report built as a dict ----------------------------------------------------------------------------
SYSTEM_INFO = """\
import platform
import sys


def get_system_info_dict() -> dict:
    import torch

    info = {
        "python_version": sys.version.split()[0],
        "platform": platform.platform(),
        "pytorch_version": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "cuda_version": None,
        "gpu_count": 0,
        "accelerator": "cpu",
    }
    if torch.cuda.is_available():
        info["cuda_version"] = torch.version.cuda
        info["cudnn_version"] = str(torch.backends.cudnn.version())
        info["gpu_count"] = torch.cuda.device_count()
        info["accelerator"] = "cuda"
    return info
"""

SETTINGS = """\
import os

import torch


def make_env_config() -> dict:
    cfg = {"num_envs": 8, "seed": 0, "horizon": 200, "frame_skip": 4, "render": False}
    cfg["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    return cfg
"""


def test_a_report_dict_of_versions_is_an_environment_report(tmp_path):
    sev = _values(tmp_path, {"sleap_nn/system_info.py": SYSTEM_INFO}, "sleap_nn/system_info.py")
    for needle in ('"cuda_available": torch.cuda', "cudnn.version()", "torch.cuda.device_count()",
                   'info["accelerator"] = "cuda"'):
        assert sev.get(line_of(SYSTEM_INFO, needle)) == {"info"}, needle
    # a row of the returned report that only shows a value read elsewhere is quiet (tk47, test130's qdtrack label)
    assert line_of(SYSTEM_INFO, "torch.version.cuda") not in sev


def test_a_settings_dict_is_no_report(tmp_path):
    sev = _values(tmp_path, {"rl/envs.py": SETTINGS}, "rl/envs.py")
    assert "error" in sev.get(line_of(SETTINGS, 'cfg["device"]'), set())

"""t31b (issue 14, misses and wrong categories pooled over the static dev splits test36..test51): an own `*_cuda`
extension reached by a relative import (DirectVoxGO, DCVC), cute-kernels as a third-party package rather than an own
build (lm-engine), and Relay's build for a CUDA target (HAWQ). Each shape abridged from its code base, with a control."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    out: dict[int, set[tuple[str, str]]] = {}
    for f in ENGINE.analyze_bytes(src.encode(), path).findings:
        out.setdefault(f.line, set()).add((f.code, f.category))
    return out


def _codes(src: str, line: int) -> set[str]:
    return {code for code, _ in _found(src).get(line, set())}


# DirectVoxGO lib/dbvgo.py (abridged): dvgo.py builds `render_utils_cuda = load(name='render_utils_cuda', ...)`
DBVGO = """import torch
import torch.nn as nn
from .dvgo import Raw2Alpha, Alphas2Weights, render_utils_cuda
from .utils import to_cuda


class DirectBiasedVoxGO(nn.Module):
    def sample_ray(self, rays_o, rays_d, near, far, stepsize):
        stepdist = stepsize * self.voxel_size
        ray_pts, mask_outbbox, ray_id, step_id, N_steps, t_min, t_max = render_utils_cuda.sample_pts_on_rays(
            rays_o, rays_d, self.xyz_min, self.xyz_max, near, far, stepdist)
        return ray_pts, ray_id, step_id

    def to_device(self, batch):
        return to_cuda(batch)
"""


def test_relative_extension_used_as_a_module_is_kernel():
    assert "NPU379" in _codes(DBVGO, 3) and "NPU379" in _codes(DBVGO, 10)
    # control: a `*_cuda` helper function only called (`to_cuda(batch)`) is no extension
    assert "NPU379" not in _codes(DBVGO, 4) and "NPU379" not in _codes(DBVGO, 15)


# DCVC-FM src/models/block_mc.py (abridged): the in-package build, then the installed one, then the torch fallback
BLOCK_MC = """import torch

CUSTOMIZED_CUDA = False
try:
    from .extensions.block_mc_cpp_cuda import block_mc_forward
    CUSTOMIZED_CUDA = True
except Exception:
    pass

if not CUSTOMIZED_CUDA:
    try:
        from block_mc_cpp_cuda import block_mc_forward
        CUSTOMIZED_CUDA = True
    except Exception:
        pass


def block_mc_func(im, flow):
    if not CUSTOMIZED_CUDA:
        return flow_warp(im, flow)
    out = torch.empty_like(im)
    block_mc_forward(out, im, flow)
    return out
"""

# a project's own Python module named for CUDA, imported only relatively
OPS_CUDA = """from .ops_cuda import fused_rotary


def apply(q, k, cos, sin):
    return fused_rotary(q, k, cos, sin)
"""


def test_relative_import_of_the_installed_extension_is_kernel_and_guarded():
    assert "NPU379" in _codes(BLOCK_MC, 5)
    f = next(f for f in ENGINE.analyze_bytes(BLOCK_MC.encode(), "main.py").findings
             if f.code == "NPU379" and f.line == 22)
    assert f.severity != "error"        # imported under try / except with a torch fallback
    # control: a relative `*_cuda` module the file never imports installed is a Python module
    assert "NPU379" not in _codes(OPS_CUDA, 1) and "NPU379" not in _codes(OPS_CUDA, 5)


# lm-engine hf_models/models/ladder_residual_TP/layer.py (abridged)
LADDER = """import torch
from cute_kernels.ops.rmsnorm import rmsnorm_forward_triton
from cute_kernels.utils import ensure_contiguous, get_sm_count
from .my_kernels import fused_add


@ensure_contiguous
def rmsnorm_forward(x, weight, eps):
    sm_count = get_sm_count(x.device)
    return rmsnorm_forward_triton(x=x, weight=weight, eps=eps, sm_count=sm_count)


def rmsnorm_launch(x, weight, output, eps, B, H, BLOCK_SIZE_B, BLOCK_SIZE_H):
    rmsnorm_forward_triton[(B + BLOCK_SIZE_B - 1) // BLOCK_SIZE_B,](
        x_ptr=x, weight_ptr=weight, output_ptr=output, eps=eps, B=B, H=H, BLOCK_SIZE_B=BLOCK_SIZE_B, BLOCK_SIZE_H=BLOCK_SIZE_H)
    return fused_add[B](x, output)
"""


def test_cute_kernels_is_a_third_party_package_not_an_own_build():
    found = _found(LADDER)
    for line in (2, 3, 7, 9, 10):
        assert ("NPU427", "third_party") in found[line], line
        assert "NPU379" not in {code for code, _ in found[line]}, line
    assert not any(code in ("NPU427", "NPU379") for code, _ in found.get(4, ()))   # control: an own module
    # the launch `kernel[grid](...)` of the package's Triton kernel is a kernel finding beside the package's
    assert ("NPU373", "kernel") in found[14] and ("NPU427", "third_party") in found[14]
    assert "NPU373" not in {code for code, _ in found.get(16, ())}      # control: a subscripted own name


# HAWQ tvm_benchmark/test_resnet_inference_time.py (abridged)
HAWQ = """import tvm
from tvm import relay, autotvm

TARGET_NAME = 'cuda'


def build(func, params):
    tasks = autotvm.task.extract_from_program(func, target=TARGET_NAME, params=params)
    with relay.build_config(opt_level=3):
        graph, lib, params = relay.build(func, target=TARGET_NAME, params=params)
    return tasks, graph, lib


def build_cpu(func, params):
    return relay.build(func, target="llvm", params=params)
"""


def test_relay_build_for_cuda_is_a_tvm_cuda_target():
    assert "NPU366" in _codes(HAWQ, 8) and "NPU366" in _codes(HAWQ, 10)
    assert "NPU366" not in _codes(HAWQ, 15)      # control: the host target
